#include "replayer/recording.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "captures/reader.h"
#include "captures/system_values.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"
#include "replayer/workers.h"
#include "windows/registry_keys.h"
#include "windows/os.h"

namespace perfsim::replayer {

namespace {
template <class T>
void add_to(PatchColumn<T>& col, const CounterPatch& c) {
  col.offset.push_back(c.offset);
  col.step.push_back(T(c.step));
  col.per_loop.push_back(c.per_loop);
}
template <class T>
size_t bytes_of(const PatchColumn<T>& col) {
  return col.offset.capacity() * sizeof(uint32_t) + col.step.capacity() * sizeof(T) +
         col.per_loop.capacity() * sizeof(uint64_t);
}
template <class T>
void shrink(PatchColumn<T>& col) {
  col.offset.shrink_to_fit();
  col.step.shrink_to_fit();
  col.per_loop.shrink_to_fit();
}
}  // namespace

void CounterPatches::add(const CounterPatch& c) {
  if (c.size == 8)
    add_to(wide, c);
  else
    add_to(narrow, c);  // its step is below 2^32 (step_to): the narrow column holds it whole
}
std::vector<CounterPatch> CounterPatches::list() const {
  std::vector<CounterPatch> out;
  for (size_t i = 0; i < narrow.offset.size(); ++i)
    out.push_back({narrow.offset[i], 4, narrow.per_loop[i], narrow.step[i]});
  for (size_t i = 0; i < wide.offset.size(); ++i) out.push_back({wide.offset[i], 8, wide.per_loop[i], wide.step[i]});
  return out;
}
size_t CounterPatches::bytes() const { return bytes_of(narrow) + bytes_of(wide); }
void CounterPatches::shrink_to_fit() {
  shrink(narrow);
  shrink(wide);
}

namespace {

namespace wp = perfsim::winperf;
namespace pd = perfsim::perfdata;
constexpr uint32_t kNone = UINT32_MAX;
// Ticks decoded ahead of a timeline: enough that back-to-back reads of a step timeline find each
// tick decoded while the decoder runs on another core (a few samples of the 64 MB cache).
constexpr uint32_t kAhead = 4;

// A counter's growth from `from` to `to`: modulo 2^32 for a 32-bit counter (it wraps, as
// Windows' do), none where a 64-bit one would go back (an instance that restarted).
uint64_t step_to(uint64_t from, uint64_t to, uint32_t size) {
  if (size == 4) return (to - from) & UINT32_MAX;
  return to >= from ? to - from : 0;
}

// A counter's identity (series, object, instance identity, counter number) hashed to 128 bits:
// the per-loop table holds these instead of the text, so it stays small for long captures.
struct Key {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x6c62272e07bb0142ull;
  void add(std::string_view s) { add(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }
  void add(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      a = (a ^ p[i]) * 0x100000001b3ull;
      b = ((b ^ p[i]) * 0x9E3779B97F4A7C15ull) ^ (b >> 29);
    }
  }
  void add_u32(uint32_t v) {
    uint8_t le[4];
    store_le32(le, v);
    add(le, 4);
  }
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const { return size_t(k.a ^ (k.b * 0xBF58476D1CE4E5B9ull)); }
};

// What walking one sample finds: each counter block holding cumulative counters (an instance, or
// a single-instance object) with its identity, and those counters. One identity per block keeps
// the growth tables' lookups per instance, not per counter.
struct FoundCounter {
  uint32_t number;  // the counter's position among its object's definitions
  CounterPatch patch;
  uint64_t value;
};
struct FoundBlock {
  size_t slice;  // into Sample::objects
  Key key;
  uint32_t begin, end;  // range of Walk::counters
};
struct Walk {
  std::vector<FoundBlock> blocks;
  std::vector<FoundCounter> counters;
  void clear() {
    blocks.clear();
    counters.clear();
  }
};

// What the recording says of one counter over the capture.
struct History {
  uint32_t first_tick = 0, last_tick = 0;
  uint64_t first = 0, last = 0, at1 = 0;
  bool seen = false, seen0 = false, seen1 = false;
};

// Walks the objects of a payload (bounded by TotalByteLength and the payload), filling the slices
// and (when `found` is given) the cumulative counters. Stops quietly at the first inconsistent
// length.
void walk_sample(ByteView p, char series, Sample& view, Walk* found) {
  pd::BlockView block;
  if (!pd::view_block(p, block)) return;
  view.header_length = block.header_length;
  std::unordered_map<Key, int, KeyHash> occurrences;
  std::vector<pd::CounterDefView> defs;
  pd::ObjectCursor objects(block);
  for (pd::ObjectView o; objects.next(o);) {
    const ObjectSlice s{o.name_index(), o.at, o.length, 0, {}};
    const size_t slice = view.objects.size();
    view.objects.push_back(s);
    if (!found || !o.lengths_consistent()) continue;  // slices only: instances are not walked
    defs.clear();
    pd::CounterDefCursor definitions(o);
    for (pd::CounterDefView d; definitions.next(d);) defs.push_back(d);
    // The cumulative counters of this object (the same for every instance).
    struct Cumulative {
      uint32_t number, size, offset;
    };
    std::vector<Cumulative> cumulative;
    for (size_t j = 0; j < defs.size(); ++j)
      if (wp::accumulates(defs[j].type(), j ? defs[j - 1].type() : 0) && (defs[j].size() == 4 || defs[j].size() == 8))
        cumulative.push_back({uint32_t(j), defs[j].size(), defs[j].offset()});
    Key object_key;
    object_key.add(std::string_view(&series, 1));
    object_key.add_u32(s.index);
    auto add_block = [&](const pd::CounterBlockView& cb, const Key& key) {
      const uint32_t begin = uint32_t(found->counters.size());
      for (const Cumulative& c : cumulative) {
        if (!cb.holds(c.offset, c.size)) continue;
        const uint32_t at = cb.at + c.offset;
        found->counters.push_back({c.number, {at, c.size, 0}, pd::load_counter(o.p + at, c.size)});
      }
      if (found->counters.size() > begin)
        found->blocks.push_back({slice, key, begin, uint32_t(found->counters.size())});
    };
    if (!o.multi_instance()) {
      if (pd::CounterBlockView cb; pd::single_block(o, cb)) add_block(cb, object_key);
      continue;
    }
    pd::InstanceCursor instances(o);
    for (pd::InstanceView in; instances.next(in);) {
      // Identity: parent title index, parent instance, unique id, name; then how many instances
      // of this object had the same identity before it (duplicates stay apart).
      Key id = object_key;
      id.add_u32(in.parent_title_index());
      id.add_u32(in.parent_instance());
      id.add_u32(in.unique_id());
      if (ByteView name; in.name(name)) {
        id.add_u32(uint32_t(name.size()));
        id.add(name.data(), name.size());
      }
      id.add_u32(uint32_t(occurrences[id]++));
      add_block(in.block, id);
    }
  }
}

// Clock arithmetic wraps as the 64-bit clocks themselves do: a capture's clocks are outside input
// and may be anything (found by fuzz_replay), and signed overflow would be undefined.
int64_t wrapping_sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t span_of(int64_t first, int64_t second, int64_t last) {
  return int64_t(uint64_t(wrapping_sub(last, first)) + uint64_t(wrapping_sub(second, first)));
}

// Per-loop growth of one counter (see the contract in recording.h).
uint64_t per_loop(const History& h, uint32_t last_tick, int64_t loop_100ns, const std::vector<int64_t>& offsets) {
  if (h.seen0 && h.seen1 && h.last_tick == last_tick) return (h.last - h.first) + (h.at1 - h.first);
  if (h.last_tick == h.first_tick) return 0;
  // A counter of an instance that lives only part of the capture grows at its average rate.
  const int64_t lived = offsets[h.last_tick] - offsets[h.first_tick];
  if (lived <= 0 || h.last < h.first) return 0;
  // A capture's values are outside input: growth past 2^64 (a counter near its top over a short
  // life) saturates instead of an out-of-range conversion (found by fuzz_replay).
  const double growth = double(h.last - h.first) * double(loop_100ns) / double(lived);
  return growth < 18446744073709551616.0 ? uint64_t(growth) : UINT64_MAX;
}

// One more value of a counter, seen at tick t.
void note(History& h, uint32_t t, uint64_t value) {
  if (!h.seen) {
    h.seen = true;
    h.first_tick = t;
    h.first = value;
    h.seen0 = t == 0;
  }
  if (t == 1 && h.seen0) {
    h.seen1 = true;
    h.at1 = value;
  }
  h.last_tick = t;
  h.last = value;
}

// Where the records come from: a capture in memory or a file read through captures::Reader
// (not thread-safe: one lock around it).
struct Source {
  const captures::Capture* mem = nullptr;
  std::unique_ptr<captures::Reader> reader;
  std::mutex mu;

  size_t size() const { return mem ? mem->records.size() : reader->records().size(); }
  uint32_t tick(size_t i) const { return mem ? mem->records[i].tick : reader->records()[i].tick; }
  const std::string& name(size_t i) const {
    return mem ? mem->records[i].value_name : reader->queries()[reader->records()[i].query];
  }
  uint32_t raw_size(size_t i) const {
    return mem ? uint32_t(mem->records[i].payload.size()) : reader->records()[i].raw_size;
  }
  Status fetch(size_t i, Sample& s) {
    if (mem) {
      const captures::QueryRecord& q = mem->records[i];
      s.status = q.status;
      s.reg_type = q.reg_type;
      s.payload = q.payload;
      return Status::Ok();
    }
    std::lock_guard lock(mu);
    captures::QueryHeader h;
    if (Status st = reader->head(i, h); !st.ok()) return st;
    ByteView p;
    if (Status st = reader->payload(i, p); !st.ok()) return st;
    s.status = h.status;
    s.reg_type = h.reg_type;
    s.owned.assign(p.begin(), p.end());
    s.payload = s.owned;
    return Status::Ok();
  }
  Status prefix(size_t i, size_t n, Bytes& out) {
    if (mem) {
      const Bytes& p = mem->records[i].payload;
      out.assign(p.begin(), p.begin() + std::min(n, p.size()));
      return Status::Ok();
    }
    std::lock_guard lock(mu);
    return reader->payload_prefix(i, n, out);
  }
};

struct TickRecords {
  uint32_t tick = 0;
  uint32_t global = kNone, costly = kNone;  // record numbers
  std::vector<uint32_t> others;             // values recorded under other names
};

}  // namespace

struct Recording::Impl {
  uint64_t id = SampleCache::new_source();
  std::shared_ptr<SampleCache> cache;
  std::string path;  // empty: in memory
  Source src;
  std::vector<TickRecords> ticks;
  std::vector<int64_t> offsets;
  std::map<uint32_t, int64_t> spans[2];  // object PerfTime advance per loop, per series and object

  // Per-loop growth by counter number, for each counter block with a counter whose growth is not
  // 0, once the pass has run.
  std::unordered_map<Key, std::vector<uint64_t>, KeyHash> per_loop;
  std::atomic<bool> known{false};
  std::mutex known_mu;
  std::condition_variable known_cv;
  std::optional<Workers::Id> pass;  // the counter pass, posted to Workers::passes()
  std::atomic<bool> stopping{false};

  std::mutex prepare_mu;
  std::mutex ahead_mu;                                // prefetch: one position waiting, one worker
  std::optional<std::pair<uint32_t, Patches>> ahead;  // position, patches needed
  std::optional<Workers::Id> ahead_job;               // posted to Workers::prefetch(), until it ends

  uint32_t record(uint32_t pos, Series s) const {
    return pos < ticks.size() ? (s == Series::kGlobal ? ticks[pos].global : ticks[pos].costly) : kNone;
  }

  // A decoded record kept from the last step computation: the next tick's sample, which the
  // prefetch prepares right after (a step or realtime timeline moves forward), so it is decoded
  // once. Under prepare_mu.
  std::shared_ptr<Sample> spare;
  uint32_t spare_rec = kNone;

  Status fetch(Source& from, uint32_t rec, Sample& s) {
    if (spare && spare_rec == rec) {
      s = std::move(*spare);
      spare.reset();
      if (!s.owned.empty()) s.payload = s.owned;
      return Status::Ok();
    }
    return from.fetch(rec, s);
  }

  // The cumulative counters of record `rec` by identity (an empty walk when it is not there).
  struct Next {
    Walk walk;
    std::unordered_map<Key, uint32_t, KeyHash> blocks;  // into walk.blocks
  };
  void walk_next(Source& from, uint32_t rec, char tag, Next& next) {
    if (rec == kNone) return;
    SampleRef held = cache->find(id, rec);
    if (!held) {
      auto s = std::make_shared<Sample>();
      if (!fetch(from, rec, *s).ok()) return;
      if (from.reader) {  // decoded: keep it for its own preparation
        spare = s;
        spare_rec = rec;
      }
      held = std::move(s);
    }
    if (held->status != 0) return;
    Sample cut;
    walk_sample(held->payload, tag, cut, &next.walk);
    next.blocks.reserve(next.walk.blocks.size());
    for (uint32_t b = 0; b < next.walk.blocks.size(); ++b) next.blocks.emplace(next.walk.blocks[b].key, b);
  }

  // Decodes the record of `series` at `pos` and cuts it; counter patches to `level` (kAll: known
  // must hold), object time spans applied when `spans_ready`.
  SampleRef prepare(Source& from, uint32_t pos, Series series, Patches level, bool spans_ready) {
    auto s = std::make_shared<Sample>();
    if (!fetch(from, record(pos, series), *s).ok()) return nullptr;
    if (s->status != 0) return s;
    const char tag = series == Series::kGlobal ? 'G' : 'C';
    Walk found;
    walk_sample(s->payload, tag, *s, level != Patches::kNone ? &found : nullptr);
    if (spans_ready)
      for (ObjectSlice& o : s->objects)
        if (auto it = spans[int(series)].find(o.index); it != spans[int(series)].end()) o.time_span = it->second;
    if (level == Patches::kNone) return s;
    // Steps go to the next tick; after the last, to the first of the next loop (its value plus
    // the per-loop growth, known only with kAll).
    const uint32_t n = uint32_t(ticks.size());
    const bool wraps = pos + 1 >= n;
    Next next;
    if (n >= 2 && (!wraps || level == Patches::kAll)) walk_next(from, record(wraps ? 0 : pos + 1, series), tag, next);
    for (const FoundBlock& b : found.blocks) {
      const std::vector<uint64_t>* growth = nullptr;
      if (level == Patches::kAll)
        if (auto it = per_loop.find(b.key); it != per_loop.end()) growth = &it->second;
      const FoundBlock* nb = nullptr;
      if (auto it = next.blocks.find(b.key); it != next.blocks.end()) nb = &next.walk.blocks[it->second];
      uint32_t j = nb ? nb->begin : 0;
      for (uint32_t i = b.begin; i < b.end; ++i) {
        FoundCounter& f = found.counters[i];
        const uint64_t loop = growth && f.number < growth->size() ? (*growth)[f.number] : 0;
        uint64_t step = 0;
        if (nb) {  // both blocks list their counters in definition order
          while (j < nb->end && next.walk.counters[j].number < f.number) ++j;
          const FoundCounter* g = j < nb->end ? &next.walk.counters[j] : nullptr;
          if (g && g->number == f.number && g->patch.size == f.patch.size)
            step = step_to(f.value, g->value + (wraps ? loop : 0), f.patch.size);
        }
        if (!loop && !step) continue;
        f.patch.per_loop = loop;
        f.patch.step = step;
        s->objects[b.slice].counters.add(f.patch);
      }
    }
    for (ObjectSlice& o : s->objects) o.counters.shrink_to_fit();
    s->patches = level;
    return s;
  }

  size_t cost(const Sample& s) const {
    size_t n = sizeof(Sample) + s.owned.size() + s.objects.size() * sizeof(ObjectSlice);
    for (const ObjectSlice& o : s.objects) n += o.counters.bytes();
    return n;
  }

  // Counter patches are cut only for answers that patch counters (walking every instance costs
  // more than decoding); one preparation at a time, so a host asking for what the prefetch is
  // decoding waits for it instead of decoding it twice. Steps alone never wait for the pass; once
  // it has run, every preparation with patches has them all.
  SampleRef cached(uint32_t pos, Series series, Patches need) {
    const uint32_t rec = record(pos, series);
    if (SampleRef c = cache->find(id, rec); c && c->patches >= need) return c;
    if (need == Patches::kAll) wait_known();
    std::lock_guard lock(prepare_mu);
    if (SampleRef c = cache->find(id, rec); c && c->patches >= need) return c;
    const Patches level = need == Patches::kNone ? Patches::kNone : known ? Patches::kAll : Patches::kSteps;
    SampleRef s = prepare(src, pos, series, level, true);
    if (s) cache->put(id, rec, s, cost(*s));
    return s;
  }

  void wait_known() {
    std::unique_lock lock(known_mu);
    known_cv.wait(lock, [&] { return known.load(); });
  }

  void set_known() {
    {
      std::lock_guard lock(known_mu);
      known = true;
    }
    known_cv.notify_all();
  }

  // Every counter's history over the capture, then its per-loop growth (recording.h).
  void count_growth(Source& from) {
    std::unordered_map<Key, std::vector<History>, KeyHash> hist;  // per block, by counter number
    const uint32_t n = uint32_t(ticks.size());
    Walk found;
    for (uint32_t t = 0; t < n && !stopping; ++t) {
      for (Series series : {Series::kGlobal, Series::kCostly}) {
        const uint32_t rec = record(t, series);
        if (rec == kNone) continue;
        Sample s;
        if (!from.fetch(rec, s).ok() || s.status != 0) continue;
        found.clear();
        walk_sample(s.payload, series == Series::kGlobal ? 'G' : 'C', s, &found);
        for (const FoundBlock& b : found.blocks) {
          std::vector<History>& block = hist[b.key];
          for (uint32_t i = b.begin; i < b.end; ++i) {
            const FoundCounter& f = found.counters[i];
            if (block.size() <= f.number) block.resize(f.number + 1);
            note(block[f.number], t, f.value);
          }
        }
      }
    }
    for (const auto& [key, block] : hist) {
      std::vector<uint64_t> growth(block.size());
      bool any = false;
      for (size_t j = 0; j < block.size(); ++j)
        if (block[j].seen) any |= (growth[j] = replayer::per_loop(block[j], n - 1, loop_100ns_for_pass, offsets)) != 0;
      if (any) per_loop.emplace(key, std::move(growth));
    }
    set_known();
  }
  int64_t loop_100ns_for_pass = 0;

  // Decodes from each position asked until none waits; then the job ends (a later prefetch posts
  // another), so an idle recording holds no thread.
  void prefetch_loop() {
    for (;;) {
      uint32_t pos;
      Patches need;
      {
        std::lock_guard lock(ahead_mu);
        if (stopping || !ahead) {
          ahead_job.reset();
          return;
        }
        std::tie(pos, need) = *ahead;
        ahead.reset();
      }
      for (uint32_t k = 0; k < kAhead; ++k) {
        {
          std::lock_guard lock(ahead_mu);
          if (stopping || ahead) break;  // a newer position to start from
        }
        const uint32_t p = uint32_t((uint64_t(pos) + k) % ticks.size());
        for (Series s : {Series::kGlobal, Series::kCostly})
          if (record(p, s) != kNone) cached(p, s, need);
      }
    }
  }

  bool is_cached(uint32_t pos, Patches need) const {
    for (Series s : {Series::kGlobal, Series::kCostly})
      if (uint32_t rec = record(pos, s); rec != kNone) {
        const SampleRef c = cache->find(id, rec);
        if (!c || c->patches < need) return false;
      }
    return true;
  }
};

Recording::Recording(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Recording::~Recording() {
  impl_->stopping = true;
  std::optional<Workers::Id> ahead;
  {
    std::lock_guard lock(impl_->ahead_mu);
    ahead = impl_->ahead_job;
  }
  if (ahead) Workers::prefetch().retract(*ahead);
  if (impl_->pass) Workers::passes().retract(*impl_->pass);
  impl_->cache->forget(impl_->id);
}

uint32_t Recording::tick_count() const { return uint32_t(impl_->ticks.size()); }
uint32_t Recording::tick_number(uint32_t pos) const { return impl_->ticks.at(pos).tick; }
const std::vector<int64_t>& Recording::offsets() const { return impl_->offsets; }
bool Recording::counters_known() const { return impl_->known.load(); }
SampleCache& Recording::cache() const { return *impl_->cache; }

SampleRef Recording::sample(uint32_t pos, Series s, Patches need) const {
  return impl_->record(pos, s) == kNone ? nullptr : impl_->cached(pos, s, need);
}

bool Recording::has_sample(uint32_t pos, Series s) const { return impl_->record(pos, s) != kNone; }

uint32_t Recording::sample_size(uint32_t pos, Series s) const {
  const uint32_t rec = impl_->record(pos, s);
  return rec == kNone ? 0 : impl_->src.raw_size(rec);
}

SampleRef Recording::other(uint32_t pos, std::string_view name) const {
  for (uint32_t at : {pos, 0u}) {
    if (at >= impl_->ticks.size()) continue;
    for (uint32_t rec : impl_->ticks[at].others) {
      if (!iequals(impl_->src.name(rec), name)) continue;
      if (SampleRef c = impl_->cache->find(impl_->id, rec)) return c;
      auto s = std::make_shared<Sample>();
      if (!impl_->src.fetch(rec, *s).ok()) return nullptr;
      impl_->cache->put(impl_->id, rec, s, impl_->cost(*s));
      return s;
    }
  }
  return nullptr;
}

void Recording::prefetch(uint32_t pos, Patches need) const {
  Impl& m = *impl_;
  if (m.path.empty() || pos >= m.ticks.size()) return;  // in memory: nothing to decode
  bool cached = true;
  for (uint32_t k = 0; k < kAhead && cached; ++k)
    cached = m.is_cached(uint32_t((uint64_t(pos) + k) % m.ticks.size()), need);
  if (cached) return;
  std::lock_guard lock(m.ahead_mu);
  m.ahead = {pos, need};
  if (!m.ahead_job) m.ahead_job = Workers::prefetch().post([&m] { m.prefetch_loop(); });
}

Status Recording::load_capture(captures::Capture& out) const {
  if (impl_->path.empty()) {
    out = cap;
    return Status::Ok();
  }
  return captures::read_capture(impl_->path, out);
}

namespace {

// The host's processors by its data: the first Global sample's Processor instances, else what the
// capture's header says.
uint32_t processors_of(const Recording& r) {
  if (SampleRef s = r.sample(0, Series::kGlobal)) {
    pd::DataBlock block;
    if (pd::parse(s->payload, block).ok())
      if (const uint32_t n = pd::processor_count(block)) return n;
  }
  return r.cap.host.processors;
}

void fill_registry(Recording& r) {
  Registry& reg = r.registry;
  for (const captures::RegistryValue& v : r.cap.registry) reg.set(v.key, RegValue{v.name, v.type, v.data, false});
  for (const captures::NameTable& t : r.cap.names) {
    const std::string key = std::string(windows::kPerflibKey) + "\\" + t.lang;
    const RegKey* k = reg.open(reg.root(), key);
    if (!k || !k->value("Counter")) reg.set(key, RegValue{"Counter", 7, t.counter, false});
    k = reg.open(reg.root(), key);
    if (!k->value("Help")) reg.set(key, RegValue{"Help", 7, t.help, false});
  }
  // The system keys tools read (captures/system_values.h) that a capture of a known OS lacks, whole
  // keys only: a key the capture holds is served as recorded (a value missing there was missing on
  // the host, as CSDVersion on a host without a service pack).
  if (const windows::OsProfile* os = windows::find_os(r.cap.host.profile)) {
    auto held = [&](const std::string& key) {
      return std::any_of(r.cap.registry.begin(), r.cap.registry.end(),
                         [&](const captures::RegistryValue& v) { return iequals(v.key, key); });
    };
    for (captures::RegistryValue& v : captures::system_values(*os, processors_of(r), r.cap.host.name))
      if (!held(v.key)) reg.set(v.key, RegValue{v.name, v.type, std::move(v.data), false});
  }
  // ComputerName answers each host's own name, recorded or not.
  if (const RegKey* k = reg.open(reg.root(), captures::kComputerNameKey); k && k->value("ComputerName")) {
    RegValue v = *k->value("ComputerName");
    v.host_name = true;
    reg.set(captures::kComputerNameKey, std::move(v));
  }
  reg.set_last_write(r.cap.host.start_time_100ns);
}

// The recorded ticks in order, each with its records (a later Global or Costly of a tick wins).
void index_ticks(Recording::Impl& m) {
  Source& src = m.src;
  std::vector<uint32_t> order(src.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return src.tick(a) < src.tick(b); });
  for (uint32_t i : order) {
    if (m.ticks.empty() || m.ticks.back().tick != src.tick(i))
      m.ticks.push_back(TickRecords{src.tick(i), kNone, kNone, {}});
    TickRecords& t = m.ticks.back();
    const std::string& name = src.name(i);
    if (iequals(name, "Global"))
      t.global = i;
    else if (iequals(name, "Costly"))
      t.costly = i;
    else
      t.others.push_back(i);
  }
  m.ticks.shrink_to_fit();
}

// Tick offsets from the recorded PerfTime100nSec of Global when it increases, else nominal: only
// the first bytes of each Global, to the end of that field, are decoded.
void clock_offsets(Recording& r, Recording::Impl& m) {
  const int64_t nominal = int64_t(std::max<uint32_t>(r.cap.host.interval_ms, 1)) * 10000;
  const size_t n = m.ticks.size();
  std::vector<int64_t> t100(n, 0);
  bool increasing = true;
  Bytes head;
  constexpr uint32_t kClock = wp::data_block::kPerfTime100nSec, kHead = kClock + 8;
  for (size_t t = 0; t < n; ++t) {
    const uint32_t g = m.ticks[t].global;
    if (g != kNone && m.src.raw_size(g) >= wp::kDataBlockSize && m.src.prefix(g, kHead, head).ok() &&
        head.size() >= kHead)
      t100[t] = int64_t(load_le64(&head[kClock]));
    if (!t100[t] || (t && t100[t] <= t100[t - 1])) increasing = false;
  }
  m.offsets.resize(n);
  for (size_t t = 0; t < n; ++t)
    m.offsets[t] = increasing ? wrapping_sub(t100[t], t100[0]) : int64_t(t * uint64_t(nominal));
  r.start_100ns = increasing ? t100[0] : r.cap.host.start_time_100ns;
  r.loop_100ns = n >= 2 ? span_of(0, m.offsets[1], m.offsets[n - 1]) : nominal;
}

// Block clocks and object time spans from the first, second and last samples of each series.
void clocks(Recording& r, Recording::Impl& m) {
  const int64_t nominal = int64_t(std::max<uint32_t>(r.cap.host.interval_ms, 1)) * 10000;
  const uint32_t n = uint32_t(m.ticks.size());
  for (Series series : {Series::kGlobal, Series::kCostly}) {
    SampleRef at[3];
    const uint32_t pos[3] = {0, std::min(1u, n - 1), n - 1};
    for (int i = 0; i < 3; ++i)
      if (m.record(pos[i], series) != kNone) at[i] = m.prepare(m.src, pos[i], series, Patches::kNone, false);
    auto clock = [&](int i, uint32_t field) -> int64_t {
      return at[i] && at[i]->header_length ? int64_t(load_le64(&at[i]->payload[field])) : 0;
    };
    SeriesClock c;
    constexpr uint32_t kPerfTime = wp::data_block::kPerfTime, kTime100 = wp::data_block::kPerfTime100nSec;
    if (n >= 2 && clock(0, kPerfTime) && clock(1, kPerfTime) && clock(2, kPerfTime))
      c.perf_time_span = span_of(clock(0, kPerfTime), clock(1, kPerfTime), clock(2, kPerfTime));
    if (n >= 2 && clock(0, kTime100) && clock(1, kTime100) && clock(2, kTime100))
      c.time100_span = span_of(clock(0, kTime100), clock(1, kTime100), clock(2, kTime100));
    if (c.time100_span <= 0) c.time100_span = int64_t(uint64_t(nominal) * n);
    if (c.perf_time_span <= 0) c.perf_time_span = 0;
    (series == Series::kGlobal ? r.global_clock : r.costly_clock) = c;
    // An object's own PerfTime at the three samples (0: absent or no own time base); the last
    // occurrence of an index in a sample wins.
    std::map<uint32_t, int64_t> times[3];
    for (int i = 0; i < 3; ++i) {
      if (!at[i]) continue;
      for (const ObjectSlice& s : at[i]->objects) {
        const pd::ObjectView o{&at[i]->payload[s.offset], s.offset, s.length};  // a slice the walk checked
        if (o.perf_freq() == 0) continue;
        times[i][s.index] = int64_t(o.perf_time());
      }
    }
    if (n < 2) continue;
    for (const auto& [index, t0] : times[0]) {
      auto t1 = times[1].find(index), tl = times[2].find(index);
      if (!t0 || t1 == times[1].end() || !t1->second || tl == times[2].end() || !tl->second) continue;
      m.spans[int(series)][index] = span_of(t0, t1->second, tl->second);
    }
  }
}

Status finish(std::unique_ptr<Recording::Impl> impl, captures::Capture meta, bool background,
              std::shared_ptr<const Recording>& out) {
  Recording::Impl& m = *impl;
  if (m.src.mem) m.src.mem = &meta;
  index_ticks(m);
  if (m.ticks.empty()) return Status::InvalidArgument("capture of host '" + meta.host.name + "' holds no samples");
  auto r = std::make_shared<Recording>(std::move(impl));
  r->cap = std::move(meta);
  if (m.src.mem) m.src.mem = &r->cap;  // the records moved with the capture
  clock_offsets(*r, m);
  clocks(*r, m);
  fill_registry(*r);  // after the clocks: it reads the first Global sample
  m.loop_100ns_for_pass = r->loop_100ns;
  if (!background) {
    m.count_growth(m.src);
  } else {
    // Answers come first: passes run on Workers::passes() (a few low-priority threads shared by
    // every recording), not one thread per capture competing for every core.
    m.pass = Workers::passes().post([&m] {
      Source own;  // a reader of its own: the pass never waits on the serving one
      if (Status st = captures::Reader::open(m.path, own.reader, captures::ReaderOptions{true, true}); !st.ok()) {
        m.set_known();  // cannot happen for a file just opened; serve with no counter growth
        return;
      }
      m.count_growth(own);
    });
  }
  out = std::move(r);
  return Status::Ok();
}

}  // namespace

Status build_recording(captures::Capture cap, std::shared_ptr<const Recording>& out) {
  auto impl = std::make_unique<Recording::Impl>();
  impl->cache = SampleCache::shared_default();
  impl->src.mem = &cap;  // finish() points it at the capture it keeps
  return finish(std::move(impl), std::move(cap), false, out);
}

Status open_recording(const std::string& path, std::shared_ptr<SampleCache> cache,
                      std::shared_ptr<const Recording>& out, std::vector<std::string>* warnings) {
  auto impl = std::make_unique<Recording::Impl>();
  impl->cache = cache ? std::move(cache) : SampleCache::shared_default();
  impl->path = path;
  if (Status st = captures::Reader::open(path, impl->src.reader, captures::ReaderOptions{true, true}); !st.ok())
    return st;
  if (warnings) *warnings = impl->src.reader->warnings();
  captures::Capture meta = impl->src.reader->metadata();
  return finish(std::move(impl), std::move(meta), true, out);
}

}  // namespace perfsim::replayer
