// The replayer's preparation as it was before recordings became lazy (issue 20): every sample
// held and cut up front. Kept only as the reference the lazy Recording must match field by field
// (lazy_recording_test.cpp); not used by perfsim itself.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "core/bytes.h"
#include "core/utf16.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"
#include "replayer/recording.h"

namespace perfsim::replayer::eager {

struct SampleView {
  const captures::QueryRecord* record = nullptr;
  uint32_t header_length = 0;
  std::vector<ObjectSlice> objects;
};

struct RecordedTick {
  SampleView global, costly;
  std::vector<const captures::QueryRecord*> others;
  int64_t offset_100ns = 0;
};

struct EagerRecording {
  captures::Capture cap;
  std::vector<RecordedTick> ticks;
  SeriesClock global_clock, costly_clock;
  int64_t loop_100ns = 0;
  int64_t start_100ns = 0;
};

namespace detail {

namespace wp = perfsim::winperf;

// A cumulative counter found while walking one sample: where it is and whose it is.
struct Found {
  size_t slice;  // into SampleView::objects
  CounterPatch patch;
  std::string key;  // series + object + instance identity + counter number
  uint64_t value;
};

// What the recording says of one counter over the capture.
struct History {
  uint32_t first_tick = 0, last_tick = 0;
  uint64_t first = 0, last = 0, at1 = 0;
  bool seen0 = false, seen1 = false;
};

// Walks the objects of a payload (bounded by TotalByteLength and the payload), filling the slices
// and the cumulative counters. Stops quietly at the first inconsistent length. The layout is read
// through perfdata/view.h (the one walker of the structure) and what is cumulative from
// winperf::accumulates (the one classification); the identities, growth and steps are this
// reference's own.
inline void walk_sample(const Bytes& p, char series, SampleView& view, std::vector<Found>& found) {
  perfdata::BlockView block;
  if (!perfdata::view_block(p, block)) return;
  view.header_length = block.header_length;
  std::map<std::string, int> occurrences;
  perfdata::ObjectCursor objects(block);
  for (perfdata::ObjectView o; objects.next(o);) {
    ObjectSlice s{o.name_index(), o.at, o.length, 0, {}};
    const size_t slice = view.objects.size();
    view.objects.push_back(s);
    if (!o.lengths_consistent()) continue;
    std::vector<perfdata::CounterDefView> defs;
    perfdata::CounterDefCursor definitions(o);
    for (perfdata::CounterDefView d; definitions.next(d);) defs.push_back(d);
    const std::string object_key = std::string(1, series) + std::to_string(s.index) + "/";
    auto add_block = [&](const perfdata::CounterBlockView& cb, const std::string& inst_key) {
      for (size_t j = 0; j < defs.size(); ++j) {
        const uint32_t type = defs[j].type(), size = defs[j].size(), offset = defs[j].offset();
        if (!wp::accumulates(type, j ? defs[j - 1].type() : 0) || (size != 4 && size != 8)) continue;
        if (uint64_t(offset) + size > cb.length) continue;
        const uint32_t at = cb.at + offset;
        found.push_back(
            {slice, {at, size, 0}, inst_key + "#" + std::to_string(j), perfdata::load_counter(o.p + at, size)});
      }
    };
    if (!o.multi_instance()) {
      if (perfdata::CounterBlockView cb; perfdata::single_block(o, cb)) add_block(cb, object_key);
      continue;
    }
    perfdata::InstanceCursor instances(o);
    for (perfdata::InstanceView in; instances.next(in);) {
      std::string id = object_key + std::to_string(in.parent_title_index()) + "/" +
                       std::to_string(in.parent_instance()) + "/" + std::to_string(in.unique_id()) + "/";
      if (ByteView name; in.name(name)) id.append(reinterpret_cast<const char*>(name.data()), name.size());
      id += "/" + std::to_string(occurrences[id]++);
      add_block(in.block, id);
    }
  }
}

inline int64_t span_of(int64_t first, int64_t second, int64_t last) { return last - first + (second - first); }

// Per-loop growth of one counter (see the contract in recording.h).
inline uint64_t per_loop(const History& h, uint32_t last_tick, int64_t loop_100ns,
                         const std::vector<RecordedTick>& ticks) {
  if (h.seen0 && h.seen1 && h.last_tick == last_tick) return (h.last - h.first) + (h.at1 - h.first);
  if (h.last_tick == h.first_tick) return 0;
  // A counter of an instance that lives only part of the capture grows at its average rate.
  const int64_t lived = ticks[h.last_tick].offset_100ns - ticks[h.first_tick].offset_100ns;
  if (lived <= 0 || h.last < h.first) return 0;
  return uint64_t(double(h.last - h.first) * double(loop_100ns) / double(lived));
}

inline void index_series(std::vector<RecordedTick>& ticks, SampleView RecordedTick::*member, char series,
                         int64_t loop_100ns) {
  std::vector<std::vector<Found>> per_tick(ticks.size());
  std::map<std::string, History> hist;
  for (uint32_t t = 0; t < ticks.size(); ++t) {
    SampleView& v = ticks[t].*member;
    if (!v.record || v.record->status != 0) continue;
    walk_sample(v.record->payload, series, v, per_tick[t]);
    for (const Found& f : per_tick[t]) {
      auto [it, fresh] = hist.try_emplace(f.key);
      History& h = it->second;
      if (fresh) {
        h.first_tick = t;
        h.first = f.value;
        h.seen0 = t == 0;
      }
      if (t == 1 && h.seen0) {
        h.seen1 = true;
        h.at1 = f.value;
      }
      h.last_tick = t;
      h.last = f.value;
    }
  }
  const uint32_t last = uint32_t(ticks.size() - 1);
  for (uint32_t t = 0; t < ticks.size(); ++t) {
    SampleView& v = ticks[t].*member;
    // The same counters at the next tick (after the last: the first, plus the per-loop growth).
    std::map<std::string, const Found*> next;
    if (ticks.size() >= 2)
      for (const Found& f : per_tick[t == last ? 0 : t + 1]) next[f.key] = &f;
    for (Found& f : per_tick[t]) {
      f.patch.per_loop = per_loop(hist[f.key], last, loop_100ns, ticks);
      if (auto it = next.find(f.key); it != next.end() && it->second->patch.size == f.patch.size) {
        const uint64_t to = it->second->value + (t == last ? f.patch.per_loop : 0);
        if (f.patch.size == 4)
          f.patch.step = (to - f.value) & 0xFFFFFFFFu;  // a 32-bit counter wraps
        else
          f.patch.step = to >= f.value ? to - f.value : 0;  // a 64-bit one never goes back
      }
      if (f.patch.per_loop || f.patch.step) v.objects[f.slice].counters.add(f.patch);
    }
    for (ObjectSlice& s : v.objects) s.counters.shrink_to_fit();
  }
}

// Object PerfTime advance per loop, from the object's own recorded times at ticks 0, 1 and last.
inline void object_spans(std::vector<RecordedTick>& ticks, SampleView RecordedTick::*member) {
  std::map<uint32_t, std::vector<int64_t>> times;  // object index -> PerfTime per tick (0 = absent)
  for (size_t t = 0; t < ticks.size(); ++t) {
    const SampleView& v = ticks[t].*member;
    for (const ObjectSlice& s : v.objects) {
      const perfdata::ObjectView o{&v.record->payload[s.offset], s.offset, s.length};
      if (o.perf_freq() == 0) continue;  // no own time base
      auto& vec = times[s.index];
      vec.resize(ticks.size(), 0);
      vec[t] = int64_t(o.perf_time());
    }
  }
  for (auto& [index, vec] : times) {
    if (vec.size() < 2 || !vec[0] || !vec[1] || !vec.back()) continue;
    const int64_t span = span_of(vec[0], vec[1], vec.back());
    for (RecordedTick& t : ticks)
      for (ObjectSlice& s : (t.*member).objects)
        if (s.index == index) s.time_span = span;
  }
}

inline SeriesClock block_clock(const std::vector<RecordedTick>& ticks, SampleView RecordedTick::*member,
                               int64_t nominal_100ns) {
  auto at = [&](size_t t, uint32_t field) -> int64_t {
    const SampleView& v = ticks[t].*member;
    return v.header_length ? int64_t(load_le64(&v.record->payload[field])) : 0;
  };
  SeriesClock c;
  const size_t n = ticks.size();
  constexpr uint32_t kTime = wp::data_block::kPerfTime, kTime100 = wp::data_block::kPerfTime100nSec;
  if (n >= 2 && at(0, kTime) && at(1, kTime) && at(n - 1, kTime))
    c.perf_time_span = span_of(at(0, kTime), at(1, kTime), at(n - 1, kTime));
  if (n >= 2 && at(0, kTime100) && at(1, kTime100) && at(n - 1, kTime100))
    c.time100_span = span_of(at(0, kTime100), at(1, kTime100), at(n - 1, kTime100));
  if (c.time100_span <= 0) c.time100_span = nominal_100ns * int64_t(n);
  if (c.perf_time_span <= 0) c.perf_time_span = 0;
  return c;
}

}  // namespace detail

inline EagerRecording build(captures::Capture cap) {
  using namespace detail;
  EagerRecording rr;
  EagerRecording* r = &rr;
  r->cap = std::move(cap);
  for (const captures::QueryRecord& q : r->cap.records) {
    if (q.tick >= r->ticks.size()) r->ticks.resize(q.tick + 1);
    RecordedTick& t = r->ticks[q.tick];
    if (iequals(q.value_name, "Global"))
      t.global.record = &q;
    else if (iequals(q.value_name, "Costly"))
      t.costly.record = &q;
    else
      t.others.push_back(&q);
  }
  if (r->ticks.empty()) return rr;

  // Tick offsets from the recorded PerfTime100nSec of Global when it increases; else nominal.
  const int64_t nominal = int64_t(std::max<uint32_t>(r->cap.host.interval_ms, 1)) * 10000;
  std::vector<int64_t> t100(r->ticks.size(), 0);
  bool increasing = true;
  for (size_t t = 0; t < r->ticks.size(); ++t) {
    const captures::QueryRecord* g = r->ticks[t].global.record;
    t100[t] = g && g->payload.size() >= winperf::kDataBlockSize
                  ? int64_t(load_le64(&g->payload[winperf::data_block::kPerfTime100nSec]))
                  : 0;
    if (!t100[t] || (t && t100[t] <= t100[t - 1])) increasing = false;
  }
  for (size_t t = 0; t < r->ticks.size(); ++t)
    r->ticks[t].offset_100ns = increasing ? t100[t] - t100[0] : int64_t(t) * nominal;
  r->start_100ns = increasing ? t100[0] : r->cap.host.start_time_100ns;
  const size_t n = r->ticks.size();
  r->loop_100ns = n >= 2 ? span_of(0, r->ticks[1].offset_100ns, r->ticks[n - 1].offset_100ns) : nominal;

  index_series(r->ticks, &RecordedTick::global, 'G', r->loop_100ns);
  index_series(r->ticks, &RecordedTick::costly, 'C', r->loop_100ns);
  object_spans(r->ticks, &RecordedTick::global);
  object_spans(r->ticks, &RecordedTick::costly);
  r->global_clock = block_clock(r->ticks, &RecordedTick::global, nominal);
  r->costly_clock = block_clock(r->ticks, &RecordedTick::costly, nominal);
  return rr;
}

}  // namespace perfsim::replayer::eager
