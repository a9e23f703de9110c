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

inline bool needs_two(uint32_t t) {
  return (t & wp::PERF_DELTA_COUNTER) || t == wp::PERF_AVERAGE_TIMER || t == wp::PERF_AVERAGE_BULK;
}

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

inline uint64_t read_value(const uint8_t* p, uint32_t size) { return size == 8 ? load_le64(p) : load_le32(p); }

// Walks the objects of a payload (bounded by TotalByteLength and the payload), filling the slices
// and the cumulative counters. Stops quietly at the first inconsistent length.
inline void walk_sample(const Bytes& p, char series, SampleView& view, std::vector<Found>& found) {
  if (p.size() < wp::kDataBlockSize) return;
  const size_t total = std::min<size_t>(load_le32(&p[20]), p.size());
  const uint32_t count = load_le32(&p[28]);
  size_t pos = load_le32(&p[24]);
  if (pos < wp::kDataBlockSize || pos > total) return;
  view.header_length = uint32_t(pos);
  std::map<std::string, int> occurrences;
  for (uint32_t i = 0; i < count && pos + wp::kObjectTypeSize <= total; ++i) {
    const uint8_t* o = &p[pos];
    const uint32_t len = load_le32(o);
    if (len < wp::kObjectTypeSize || pos + len > total) break;
    ObjectSlice s{load_le32(o + 12), uint32_t(pos), len, 0, {}};
    const size_t slice = view.objects.size();
    view.objects.push_back(s);
    pos += len;
    // Counter definitions: (type, size, offset) of each.
    const uint32_t def_len = load_le32(o + 4), hdr_len = load_le32(o + 8), ncounters = load_le32(o + 32);
    const int32_t ninst = int32_t(load_le32(o + 40));
    if (def_len > len || hdr_len > def_len) continue;
    struct Def {
      uint32_t type, size, offset;
    };
    std::vector<Def> defs;
    for (size_t d = hdr_len; defs.size() < ncounters && d + wp::kCounterDefSize <= def_len;) {
      const uint32_t blen = load_le32(o + d);
      defs.push_back({load_le32(o + d + 28), load_le32(o + d + 32), load_le32(o + d + 36)});
      if (blen < wp::kCounterDefSize) break;
      d += blen;
    }
    const std::string object_key = std::string(1, series) + std::to_string(s.index) + "/";
    auto add_block = [&](size_t cb, const std::string& inst_key) {
      if (cb + 4 > len) return false;
      const uint32_t cb_len = load_le32(o + cb);
      if (cb_len < 4 || cb + cb_len > len) return false;
      for (size_t j = 0; j < defs.size(); ++j) {
        const Def& d = defs[j];
        if (!is_cumulative(d.type, j ? defs[j - 1].type : 0) || (d.size != 4 && d.size != 8)) continue;
        if (d.offset + d.size > cb_len) continue;
        const uint32_t at = uint32_t(cb + d.offset);
        found.push_back({slice, {at, d.size, 0}, inst_key + "#" + std::to_string(j), read_value(o + at, d.size)});
      }
      return true;
    };
    if (ninst < 0) {
      add_block(def_len, object_key);
      continue;
    }
    size_t ip = def_len;
    for (int32_t k = 0; k < ninst; ++k) {
      if (ip + wp::kInstanceDefSize > len) break;
      const uint32_t ilen = load_le32(o + ip);
      const uint32_t name_off = load_le32(o + ip + 16), name_len = load_le32(o + ip + 20);
      if (ilen < wp::kInstanceDefSize || ip + ilen > len) break;
      std::string id = object_key + std::to_string(load_le32(o + ip + 4)) + "/" +
                       std::to_string(load_le32(o + ip + 8)) + "/" + std::to_string(load_le32(o + ip + 12)) + "/";
      if (name_off + name_len <= ilen) id.append(reinterpret_cast<const char*>(o + ip + name_off), name_len);
      id += "/" + std::to_string(occurrences[id]++);
      const size_t cb = ip + ilen;
      if (!add_block(cb, id)) break;
      ip = cb + load_le32(o + cb);
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
    for (Found& f : per_tick[t]) {
      f.patch.per_loop = per_loop(hist[f.key], last, loop_100ns, ticks);
      if (f.patch.per_loop) v.objects[f.slice].counters.push_back(f.patch);
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
      const uint8_t* o = &v.record->payload[s.offset];
      if (load_le64(o + 56) == 0) continue;  // PerfFreq 0: no own time base
      auto& vec = times[s.index];
      vec.resize(ticks.size(), 0);
      vec[t] = int64_t(load_le64(o + 48));
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
  auto at = [&](size_t t, size_t off) -> int64_t {
    const SampleView& v = ticks[t].*member;
    return v.header_length ? int64_t(load_le64(&v.record->payload[off])) : 0;
  };
  SeriesClock c;
  const size_t n = ticks.size();
  if (n >= 2 && at(0, 56) && at(1, 56) && at(n - 1, 56))
    c.perf_time_span = span_of(at(0, 56), at(1, 56), at(n - 1, 56));
  if (n >= 2 && at(0, 72) && at(1, 72) && at(n - 1, 72)) c.time100_span = span_of(at(0, 72), at(1, 72), at(n - 1, 72));
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
    t100[t] = g && g->payload.size() >= winperf::kDataBlockSize ? int64_t(load_le64(&g->payload[72])) : 0;
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
