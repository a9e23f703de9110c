#include "replayer/events.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/bytes.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"
#include "replayer/answer.h"
#include "replayer/host.h"
#include "replayer/limits.h"

namespace perfsim::replayer {
namespace {

namespace wp = perfsim::winperf;
namespace pd = perfsim::perfdata;
using config::Json;

constexpr int64_t k100nsPerSecond = 10000000;

// One row per kind; the README's event table is this table in words.
constexpr std::array<EventRow, 3> kEvents = {{
    {"reboot", EventKind::kReboot, "`down_s` (5)",
     "the Remote Registry is down for `down_s` (every connection made before, and any call meanwhile, is "
     "closed without an answer); then System Up Time and every elapsed time count from the boot, PerfTime "
     "(QueryPerformanceCounter) restarts from 0, every cumulative counter restarts from its value at the "
     "reboot (0), every process id but Idle's and System's differs",
     "Microsoft, PERF_ELAPSED_TIME (the data is the start time; elapsed = (PerfTime - data) / PerfFreq of the "
     "object; example System\\System Up Time): "
     "https://learn.microsoft.com/en-us/previous-versions/windows/it-pro/windows-server-2003/cc756820(v=ws.10); "
     "KeQueryPerformanceCounter (\"a high-resolution monotonically nondecreasing counter\", its frequency "
     "\"fixed at system boot\"; that its count starts near 0 at boot is perfsim's model, not a Microsoft "
     "statement): https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/wdm/nf-wdm-kequeryperformancecounter; "
     "opentelemetry-collector-contrib PR 39835 (counters reset by a reboot)",
     kAppliedEventBase + 0, "event:reboot"},
    {"wrap", EventKind::kWrap, "",
     "every 32-bit cumulative counter (PERF_COUNTER_COUNTER, a 32-bit base such as % Processor Utility's) of "
     "the boot in progress holds, from the boot on, its value plus an offset that puts it half its next "
     "interval's growth below 2^32 at the event: its raw value wraps during that interval, and the delta "
     "mod 2^32 is the recorded one",
     "Microsoft MS-PCQ 2.2.4.2 (PERF_COUNTER_COUNTER: \"the counter data is a 32-bit value\", rate = difference "
     "of two queries over their time difference): "
     "https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-pcq/a89712bd-4ba1-4dab-8dbb-dea712c237ba; "
     "windows_exporter #1299 (the 32-bit rtc base of % Processor Utility wraps at 2^32, the exporter's float "
     "rate() shows CPU above 100 %; fixed by PR 1637, integer deltas)",
     kAppliedEventBase + 1, "event:wrap"},
    {"clock-jump", EventKind::kClockJump, "`seconds` (0; negative goes back)",
     "SystemTime, PerfTime100nSec and the clocks of objects timed in 100 ns of the wall clock (System, "
     "Process) move by `seconds`; PerfTime (QueryPerformanceCounter) stays monotonic; elapsed times stay "
     "as they were",
     "Microsoft, PERF_DATA_BLOCK (SystemTime and PerfTime100nSec are the system time, PerfTime the "
     "high-resolution counter): https://learn.microsoft.com/en-us/windows/win32/api/winperf/ns-winperf-perf_data_block",
     kAppliedEventBase + 2, "event:clock-jump"},
}};

// An instance's identity inside an answer: object index, parent, unique id, name bytes, and how
// many instances of the object had the same identity before it.
std::string identity(uint32_t object, const pd::InstanceView* in, std::unordered_map<std::string, int>& seen) {
  std::string k(reinterpret_cast<const char*>(&object), 4);
  if (in) {
    const uint32_t f[3] = {in->parent_title_index(), in->parent_instance(), in->unique_id()};
    k.append(reinterpret_cast<const char*>(f), sizeof f);
    if (ByteView name; in->name(name)) k.append(reinterpret_cast<const char*>(name.data()), name.size());
  }
  const int n = seen[k]++;
  k.append(reinterpret_cast<const char*>(&n), sizeof n);
  return k;
}

struct Def {
  uint32_t type, size, offset, name_index;
  bool cumulative;
};

// Calls f(object view, its definitions, counter block view, identity) for every counter block
// of a perf-data answer.
template <class F>
bool each_block(ByteView answer, F&& f) {
  pd::BlockView block;
  if (!pd::view_block(answer, block)) return false;
  std::unordered_map<std::string, int> seen;
  std::vector<Def> defs;
  pd::ObjectCursor objects(block);
  for (pd::ObjectView o; objects.next(o);) {
    if (!o.lengths_consistent()) continue;
    defs.clear();
    pd::CounterDefCursor cursor(o);
    uint32_t previous = 0;
    for (pd::CounterDefView d; cursor.next(d);) {
      defs.push_back({d.type(), d.size(), d.offset(), d.name_index(),
                      wp::accumulates(d.type(), previous) && (d.size() == 4 || d.size() == 8)});
      previous = d.type();
    }
    if (!o.multi_instance()) {
      if (pd::CounterBlockView cb; pd::single_block(o, cb)) f(o, defs, cb, identity(o.name_index(), nullptr, seen));
      continue;
    }
    pd::InstanceCursor instances(o);
    for (pd::InstanceView in; instances.next(in);) f(o, defs, in.block, identity(o.name_index(), &in, seen));
  }
  return true;
}

int64_t ticks_at(int64_t t100, uint64_t freq) { return int64_t(double(t100) * double(freq) / 1e7); }

}  // namespace

std::span<const EventRow> event_table() { return kEvents; }
const EventRow& event_row(EventKind k) { return kEvents[size_t(k)]; }
const EventRow* find_event(std::string_view name) {
  for (const EventRow& r : kEvents)
    if (r.name == name) return &r;
  return nullptr;
}

Status read_event(const config::Reader& r, const Json& e, const std::string& path, HostEvent& out) {
  if (!e.is_object()) return r.type_error(path, "an event table ({kind = \"reboot\", at_s = 30})", e);
  Status s = r.keys(e, path, {"kind", "at_s", "sample", "down_s", "seconds"});
  if (s.ok()) s = r.require(e, path, "kind");
  std::string kind;
  if (s.ok()) s = r.string(e, path, "kind", kind);
  if (!s.ok()) return s;
  const EventRow* row = find_event(kind);
  if (!row) {
    std::string names;
    for (const EventRow& k : kEvents) names += std::string(names.empty() ? "" : ", ") + std::string(k.name);
    return r.fail(config::join(path, "kind"), "'" + kind + "' is not an event kind (" + names + ")");
  }
  out = HostEvent{};
  out.kind = row->kind;
  if (e.contains("at_s") && e.contains("sample"))
    return r.fail(path, "give at_s (seconds) or sample (a sample number), not both");
  if (e.contains("at_s")) s = r.number(e, path, "at_s", out.at_s.emplace(), limits::kEventAt, " (seconds: a year)");
  if (s.ok() && e.contains("sample")) s = r.integer(e, path, "sample", out.sample.emplace(), 0, UINT32_MAX);
  if (s.ok() && e.contains("down_s")) {
    if (out.kind != EventKind::kReboot) return r.fail(config::join(path, "down_s"), "down_s belongs to reboot");
    s = r.number(e, path, "down_s", out.down_s, limits::kEventDown, " (seconds: an hour)");
  }
  if (s.ok() && e.contains("seconds")) {
    if (out.kind != EventKind::kClockJump)
      return r.fail(config::join(path, "seconds"), "seconds belongs to clock-jump");
    s = r.number(e, path, "seconds", out.seconds, limits::kEventJump, " (seconds: a year either way)");
  }
  return s;
}

Status parse_event_json(std::string_view text, const std::string& origin, HostEvent& out) {
  config::Doc doc;
  if (Status s = config::parse_json(text, origin, doc); !s.ok()) return s;
  return read_event(config::Reader(doc), doc.root, "event", out);
}

Json to_json(const HostEvent& e) {
  Json j{{"kind", std::string(event_row(e.kind).name)}};
  if (e.at_s) j["at_s"] = *e.at_s;
  if (e.sample) j["sample"] = *e.sample;
  if (e.kind == EventKind::kReboot) j["down_s"] = e.down_s;
  if (e.kind == EventKind::kClockJump) j["seconds"] = e.seconds;
  return j;
}

EventState EventTimeline::state_at(int64_t v) const {
  EventState st;
  // The boot v lies in: from the last reboot at or before it to the next reboot after it.
  int64_t boot_end = INT64_MAX;
  for (const PreparedEvent& e : events) {  // sorted by position
    if (e.event.kind != EventKind::kReboot) continue;
    if (e.at_100ns <= v) {
      st.boot = &e;
      ++st.boots;
    } else {
      boot_end = std::min(boot_end, e.at_100ns);
    }
  }
  const int64_t boot_start = st.boot ? st.boot->at_100ns : INT64_MIN;
  for (const PreparedEvent& e : events) {
    // A wrap acts over its whole boot, before its moment too: the counters were near the top all
    // along, so the wrap comes from their growth, not from a jump at the event.
    if (e.event.kind == EventKind::kWrap && e.at_100ns >= boot_start && e.at_100ns < boot_end) st.wraps.push_back(&e);
    if (e.event.kind == EventKind::kClockJump && e.at_100ns <= v)
      st.clock_jump_100ns += int64_t(std::llround(e.event.seconds * double(k100nsPerSecond)));
  }
  if (!st.wraps.empty()) st.applied |= 1u << event_row(EventKind::kWrap).applied_bit;
  if (st.clock_jump_100ns) st.applied |= 1u << event_row(EventKind::kClockJump).applied_bit;
  if (st.boot) {
    st.since_boot_100ns = v - st.boot->at_100ns;
    st.down = st.since_boot_100ns < st.boot->down_100ns;
    st.applied |= 1u << event_row(EventKind::kReboot).applied_bit;
  }
  return st;
}

void collect_counters(ByteView answer, CounterValues& out) {
  each_block(answer, [&](const pd::ObjectView& o, const std::vector<Def>& defs, const pd::CounterBlockView& cb,
                         std::string key) {
    std::vector<std::optional<uint64_t>>& v = out[std::move(key)];
    v.assign(defs.size(), std::nullopt);
    for (size_t j = 0; j < defs.size(); ++j)
      if (defs[j].cumulative && cb.holds(defs[j].offset, defs[j].size))
        v[j] = pd::load_counter(o.p + cb.at + defs[j].offset, defs[j].size);
  });
}

CounterValues wrap_offsets(const CounterValues& at, const CounterValues& later) {
  CounterValues out;
  for (const auto& [key, values] : at) {
    const auto l = later.find(key);
    std::vector<std::optional<uint64_t>> off(values.size());
    for (size_t j = 0; j < values.size(); ++j) {
      if (!values[j] || *values[j] > UINT32_MAX) continue;  // 64-bit counters do not wrap in a lifetime
      uint64_t growth = 0;
      if (l != later.end() && j < l->second.size() && l->second[j]) growth = (*l->second[j] - *values[j]) & UINT32_MAX;
      const uint64_t target = (uint64_t(1) << 32) - std::max<uint64_t>(growth / 2, 1);
      off[j] = (target - *values[j]) & UINT32_MAX;
    }
    out.emplace(key, std::move(off));
  }
  return out;
}

uint32_t pid_after(uint32_t pid, uint32_t boots) {
  if (pid == 0 || pid == 4 || boots == 0) return pid;
  return pid + 4u * 1009u * boots;  // a prime stride: no two ids of one boot collide, none becomes 0 or 4 soon
}

bool apply_events(Bytes& answer, const EventState& st, const EventTimeline& tl) {
  pd::BlockView block;
  if (!pd::view_block(answer, block)) return false;
  const pd::MutableBlock b{answer.data()};
  const uint64_t freq = b.perf_freq(), old_pt = b.perf_time(), old_100ns = b.perf_time_100ns();
  if (st.boot && freq) b.set_perf_time(uint64_t(ticks_at(st.since_boot_100ns, freq)));
  if (st.clock_jump_100ns) {
    b.set_perf_time_100ns(old_100ns + uint64_t(st.clock_jump_100ns));
    store_systemtime(b.system_time(), int64_t(old_100ns) + st.clock_jump_100ns);
  }
  // Objects keep their own clock: QueryPerformanceCounter's (near the block's PerfTime) restarts
  // with the boot; the wall clock's in 100 ns (System, Process: near PerfTime100nSec) jumps.
  std::unordered_map<uint32_t, std::pair<int64_t, int64_t>> object_shift;  // at -> (new - old, elapsed cap)
  uint8_t* base = answer.data();
  each_block(answer, [&](const pd::ObjectView& o, const std::vector<Def>& defs, const pd::CounterBlockView& cb,
                         const std::string& key) {
    uint8_t* op = base + o.at;
    const pd::MutableObject obj{op};
    auto shift = object_shift.find(o.at);
    if (shift == object_shift.end()) {
      const uint64_t of = obj.perf_freq(), pt = obj.perf_time();
      int64_t delta = 0, cap = INT64_MAX;
      if (of) {
        const bool qpc = (pt > old_pt ? pt - old_pt : old_pt - pt) < (pt > old_100ns ? pt - old_100ns : old_100ns - pt);
        if (qpc && st.boot && of == freq) delta = int64_t(b.perf_time() - old_pt);
        if (!qpc && st.clock_jump_100ns) delta = ticks_at(st.clock_jump_100ns, of);
        if (st.boot) cap = ticks_at(st.since_boot_100ns, of);
        if (delta) obj.set_perf_time(pt + uint64_t(delta));
      }
      shift = object_shift.emplace(o.at, std::pair{delta, cap}).first;
    }
    const std::vector<std::optional<uint64_t>>* rebase = nullptr;
    if (st.boot)
      if (auto it = st.boot->values.find(key); it != st.boot->values.end()) rebase = &it->second;
    for (size_t j = 0; j < defs.size(); ++j) {
      const Def& d = defs[j];
      if (!cb.holds(d.offset, d.size) || (d.size != 4 && d.size != 8)) continue;
      uint8_t* p = op + cb.at + d.offset;
      uint64_t v = pd::load_counter(p, d.size);
      if (d.cumulative) {
        if (rebase && j < rebase->size() && (*rebase)[j]) {
          const uint64_t r = *(*rebase)[j];
          v = d.size == 4 ? (v - r) & UINT32_MAX : v >= r ? v - r : v;  // a restarted instance keeps its own
        }
        for (const PreparedEvent* w : st.wraps)
          if (auto it = w->values.find(key); it != w->values.end() && j < it->second.size() && it->second[j])
            v = (v + *it->second[j]) & UINT32_MAX;
      } else if (d.type == wp::PERF_ELAPSED_TIME && d.size == 8) {
        // The counter is the start time in the object's clock: keep the elapsed time (no longer
        // than the uptime after a reboot) against the object's new clock.
        const uint64_t pt = obj.perf_time();
        const int64_t elapsed = std::min<int64_t>(int64_t(pt - shift->second.first - v), shift->second.second);
        v = pt - uint64_t(elapsed);
      } else if (st.boots &&
                 std::find(tl.pid_counters.begin(), tl.pid_counters.end(), d.name_index) != tl.pid_counters.end()) {
        v = pid_after(uint32_t(v), st.boots);
      } else {
        continue;
      }
      pd::store_counter(p, d.size, v);
    }
  });
  return true;
}

}  // namespace perfsim::replayer
