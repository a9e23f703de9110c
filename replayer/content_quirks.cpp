#include "replayer/content_quirks.h"

#include <algorithm>
#include <map>

#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "windows/constants.h"

namespace perfsim::replayer {
namespace {

using perfdata::CounterDef;
using perfdata::DataBlock;
using perfdata::Object;

// Counters whose raw value is a count of PerfFreq ticks (winperf.h): they scale with PerfFreq.
bool in_timer_ticks(uint32_t type) {
  using namespace winperf;
  return type == PERF_COUNTER_TIMER || type == PERF_COUNTER_TIMER_INV || type == PERF_COUNTER_MULTI_TIMER ||
         type == PERF_COUNTER_MULTI_TIMER_INV || type == PERF_AVERAGE_TIMER;
}

int64_t scale(int64_t v, int64_t to, int64_t from) { return int64_t((__int128)v * to / from); }

// The counter blocks of an object (one, or one per instance).
template <typename F>
void each_block(Object& o, F&& f) {
  if (o.multi_instance()) {
    for (perfdata::Instance& i : o.instances) f(i.counter_block);
  } else {
    f(o.counter_block);
  }
}

void change_type(Object& o, uint32_t counter, uint32_t type) {
  const std::vector<CounterDef> old = o.counters;
  bool resized = false;
  for (CounterDef& c : o.counters) {
    if (c.name_index != counter) continue;
    c.type = type;
    const uint32_t size = (type & winperf::PERF_SIZE_LARGE) ? 8 : 4;
    resized |= size != c.size;
    c.size = size;
  }
  if (!resized) return;
  // Lay the block out again: distinct old offsets in order, each at its new size, 8-byte ones aligned.
  std::map<uint32_t, uint32_t> size_at;  // old offset -> new size
  for (size_t i = 0; i < old.size(); ++i) {
    uint32_t& size = size_at[old[i].offset];
    size = std::max(size, o.counters[i].size);
  }
  std::map<uint32_t, uint32_t> moved;
  uint32_t at = 4;  // after the block's ByteLength
  for (const auto& [off, size] : size_at) {
    if (size == 8) at = (at + 7) & ~7u;
    moved[off] = at;
    at += size;
  }
  for (size_t i = 0; i < old.size(); ++i) o.counters[i].offset = moved[old[i].offset];
  each_block(o, [&](Bytes& block) {
    Bytes fresh = perfdata::make_counter_block(at - 4);
    for (size_t i = 0; i < old.size(); ++i)
      perfdata::write_counter(fresh, o.counters[i], perfdata::read_counter(block, old[i]));
    block = std::move(fresh);
  });
}

void rescale_clock(DataBlock& d, int64_t hz) {
  const int64_t from = d.perf_freq;
  if (from <= 0 || from == hz) return;
  d.perf_time = scale(d.perf_time, hz, from);
  d.perf_freq = hz;
  // These types count the block's ticks even in objects with their own clock (no PERF_OBJECT_TIMER).
  for (Object& o : d.objects) {
    for (const CounterDef& c : o.counters) {
      if (!in_timer_ticks(c.type)) continue;
      each_block(o, [&](Bytes& block) {
        perfdata::write_counter(block, c, uint64_t(scale(int64_t(perfdata::read_counter(block, c)), hz, from)));
      });
    }
  }
}

// Applies the per-sample quirks to one PERF_DATA_BLOCK; `seen` collects the objects it met.
void rewrite_sample(const ContentQuirks& q, DataBlock& d, std::map<uint32_t, bool>& seen) {
  for (Object& o : d.objects) {
    if (o.name_index == q.duplicate_counter_object && !o.counters.empty()) {
      o.counters.insert(o.counters.begin() + 1, o.counters.front());
      o.num_counters = uint32_t(o.counters.size());
      seen[o.name_index] = true;
    }
    if (o.name_index == q.duplicate_instances_object && o.instances.size() >= 2) {
      const size_t n = std::min<size_t>(q.duplicate_instances_count, o.instances.size());
      for (size_t i = 1; i < n; ++i) {
        o.instances[i].name_offset = o.instances[0].name_offset;
        o.instances[i].name_length = o.instances[0].name_length;
        o.instances[i].name_region = o.instances[0].name_region;
      }
      seen[o.name_index] = true;
    }
    if (q.type_change_counter)
      for (const CounterDef& c : o.counters)
        if (c.name_index == q.type_change_counter) {
          change_type(o, q.type_change_counter, q.type_change_type);
          seen[q.type_change_counter] = true;
          break;
        }
  }
  if (q.perf_freq) rescale_clock(d, q.perf_freq);
}

Status add_gaps(captures::Capture& cap) {
  for (captures::NameTable& t : cap.names) {
    perfdata::NameTable counter, help;
    if (!perfdata::parse_names(t.counter, counter).ok() || counter.entries.size() < 2) continue;
    const uint32_t at = counter.highest_index() + 20;
    const perfdata::NameEntry& twin = counter.entries[1];  // entry 0 is "1 <highest>"
    counter.entries.push_back({at, utf8_to_utf16(std::to_string(at)), twin.text});
    t.counter = perfdata::build_names(counter);
    if (perfdata::parse_names(t.help, help).ok() && !help.entries.empty()) {
      const std::u16string* text = help.find(twin.index + 1);
      help.entries.push_back({at + 1, utf8_to_utf16(std::to_string(at + 1)), text ? *text : twin.text});
      t.help = perfdata::build_names(help);
    }
  }
  return Status::Ok();
}

Status add_partial_table(const ContentQuirks& q, captures::Capture& cap) {
  const captures::NameTable* base = nullptr;
  for (const captures::NameTable& t : cap.names) {
    if (iequals(t.lang, q.localized_lang))
      return Status::InvalidArgument("localized-partial: the capture already has language " + q.localized_lang);
    if (t.lang == "009") base = &t;
  }
  if (!base) return Status::InvalidArgument("localized-partial: the capture has no 009 table to start from");
  captures::NameTable out{q.localized_lang, {}, {}};
  for (auto [from, to] : {std::pair{&base->counter, &out.counter}, std::pair{&base->help, &out.help}}) {
    perfdata::NameTable t;
    if (!perfdata::parse_names(*from, t).ok()) continue;
    const size_t keep = std::max<size_t>(1, size_t(double(t.entries.size()) * q.localized_share));
    t.entries.resize(std::min(keep, t.entries.size()));
    *to = perfdata::build_names(t);
  }
  cap.names.push_back(std::move(out));
  return Status::Ok();
}

}  // namespace

Status apply_content_quirks(const ContentQuirks& q, captures::Capture& cap) {
  std::map<uint32_t, bool> seen;
  const bool per_sample =
      q.duplicate_counter_object || q.duplicate_instances_object || q.type_change_counter || q.perf_freq;
  if (per_sample) {
    for (captures::QueryRecord& r : cap.records) {
      DataBlock d;
      if (r.status != 0 || r.reg_type != windows::kRegBinary || !perfdata::parse(r.payload, d).ok()) continue;
      rewrite_sample(q, d, seen);
      r.payload = perfdata::build(d);
      r.size = uint32_t(r.payload.size());
    }
    if (q.perf_freq) cap.host.perf_freq = q.perf_freq;
  }
  for (uint32_t want : {q.duplicate_counter_object, q.duplicate_instances_object, q.type_change_counter})
    if (want && !seen.count(want))
      return Status::InvalidArgument("content quirk names " + std::to_string(want) +
                                     ", which no sample of the capture carries" +
                                     (want == q.duplicate_instances_object ? " with two instances or more" : ""));
  if (q.name_table_gaps)
    if (Status s = add_gaps(cap); !s.ok()) return s;
  if (!q.localized_lang.empty())
    if (Status s = add_partial_table(q, cap); !s.ok()) return s;
  return Status::Ok();
}

}  // namespace perfsim::replayer
