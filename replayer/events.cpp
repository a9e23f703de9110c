#include "replayer/events.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>

#include "core/bytes.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
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
constexpr std::array<EventRow, 7> kEvents = {{
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
    {"churn", EventKind::kChurn, "`start` (0), `exit` (0), `name` (the most repeated process name)",
     "in the Process object the first `exit` processes named `name` are gone (and the Thread instances "
     "whose parent they were) and `start` new ones of that name are listed before _Total, with new "
     "process ids, counters from 0 and Elapsed Time from the event; the raw names stay duplicates, so a "
     "client numbering them (`svchost`, `svchost#1`, ...) sees every later one shift while its process id "
     "stays; until the next reboot",
     "Microsoft, Handling Duplicate Instance Names (\"svchost, svchost#1, and svchost#2\"; \"if the svchost "
     "with PID 100 shuts down, the next sample would see svchost (PID 200) and svchost#1 (PID 300)\"; "
     "ProcessNameFormat, not modelled, makes names unique): "
     "https://learn.microsoft.com/en-us/windows/win32/perfctrs/handling-duplicate-instance-names; "
     "PERF_INSTANCE_DEFINITION (ParentObjectInstance: the parent's zero-based position): "
     "https://learn.microsoft.com/en-us/windows/win32/api/winperf/ns-winperf-perf_instance_definition; "
     "windows_exporter #1801 (process metrics missing for duplicate names), perflib_exporter PR 30",
     kAppliedEventBase + 3, "event:churn"},
    {"provider-fail", EventKind::kProviderFail, "`objects` (title indices, required), `for_s` (0: disabled for good)",
     "the objects of one provider (`objects`) are missing from every perf-data answer (Global, Costly, an "
     "index list naming them) from the event on, the rest of the answer as it was (NumObjectTypes and the "
     "lengths follow); after `for_s` they are back, or, with `for_s` 0, never again (Perflib disabled the "
     "provider; a reboot does not bring it back)",
     "Microsoft, Open Timeout (a slow Open: Perflib \"records an error in the Application Log\" and, as "
     "Configuration Flags require, \"disables the counters and does not display the counters again until "
     "you manually re-enable them\", by setting Disable Performance Counters to 1): "
     "https://technet.microsoft.com/en-us/library/cc737280.aspx; Perflib event 1008 (the Open procedure of a "
     "service's DLL failed); datadog-agent #12899",
     kAppliedEventBase + 4, "event:provider-fail"},
    {"lodctr", EventKind::kLodctr,
     "`object` (its name, required; it names its provider too), `counters` (their names, 1 .. 64, required)",
     "an extensible provider is installed: the object's name gets index First Counter = Last Counter + 2 and "
     "its help First Help = Last Help + 2, counter k (from 0) the offset 2(k + 1) after them; Counter 009 / "
     "Help 009 (HKEY_PERFORMANCE_DATA) and HKLM Perflib\\009 Counter / Help gain those pairs, the Counter "
     "table's \"1\" entry and Perflib's Last Counter / Last Help become the highest index (First + 2n); from "
     "then on Global (and an index list naming it) ends with the object, single instance, counter k a "
     "PERF_COUNTER_BULK_COUNT counting 10 (k + 1) a second from the event (from the last reboot after one)",
     "Microsoft, Adding Counter Names and Descriptions to the Registry (offsets \"consecutive, even numbers "
     "beginning with zero\", object first, its counters after; the provider adds them to First Counter / First "
     "Help): https://learn.microsoft.com/en-us/windows/win32/perfctrs/adding-counter-names-and-descriptions-to-"
     "the-registry; Retrieving Counter Names and Help Text (Counter 009 / Help 009 under "
     "HKEY_PERFORMANCE_DATA): https://learn.microsoft.com/en-us/windows/win32/perfctrs/retrieving-counter-names-"
     "and-help-text; MS-RRP 3.1.5.17 BaseRegQueryValue (how a client reads them)",
     kAppliedEventBase + 5, "event:lodctr"},
    {"unlodctr", EventKind::kUnlodctr, "`object` (one a lodctr event loaded, required)",
     "the provider is removed: its object leaves every answer, its names and help texts leave Counter 009 / Help "
     "009 and Perflib\\009; Perflib's Last Counter / Last Help (and the \"1\" entry) go down to the highest "
     "index left only when its range was the top, else they stay (the indices are not reused then)",
     "Microsoft, Removing Counter Names and Descriptions from the Registry (\"Last Counter = updated if "
     "changed\", \"Counters = application text removed\"): https://learn.microsoft.com/en-us/windows/win32/"
     "perfctrs/removing-counter-names-and-descriptions-from-the-registry",
     kAppliedEventBase + 6, "event:unlodctr"},
}};

// Each row's Applied bit lies in the answer's mask (bits 25 to 31 hold seven kinds: a new one needs a bit).
static_assert(kAppliedEventBase + kEvents.size() <= kAppliedBits);

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

std::vector<Def> definitions(const pd::ObjectView& o) {
  std::vector<Def> defs;
  pd::CounterDefCursor cursor(o);
  uint32_t previous = 0;
  for (pd::CounterDefView d; cursor.next(d);) {
    defs.push_back({d.type(), d.size(), d.offset(), d.name_index(),
                    wp::accumulates(d.type(), previous) && (d.size() == 4 || d.size() == 8)});
    previous = d.type();
  }
  return defs;
}

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
    defs = definitions(o);
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

// ---- churn: instances of the Process object come and go -------------------------------------

std::u16string instance_name(const pd::InstanceView& in) {
  std::u16string out;
  if (ByteView n; in.name(n))
    for (size_t i = 0; i + 1 < n.size(); i += 2) {
      const char16_t c = char16_t(n[i] | (n[i + 1] << 8));
      if (!c) break;
      out += c;
    }
  return out;
}

// The object with title index `index` of a block (false: none that can be walked).
bool find_object(const pd::BlockView& block, uint32_t index, pd::ObjectView& out) {
  pd::ObjectCursor objects(block);
  for (pd::ObjectView o; objects.next(o);)
    if (o.name_index() == index && o.multi_instance() && o.lengths_consistent()) {
      out = o;
      return true;
    }
  return false;
}

// One instance of an object: its bytes (definition, name, counter block) and what a churn reads.
struct Instance {
  uint32_t begin = 0, end = 0;  // from the object's start
  uint32_t block_at = 0;        // its counter block, from `begin`
  std::u16string name;
  uint32_t pid = 0;  // ID Process (Process object only)
  uint32_t parent_title = 0, parent = 0;
};

std::vector<Instance> instances(const pd::ObjectView& o, const std::vector<Def>& defs, uint32_t id_process) {
  std::vector<Instance> out;
  pd::InstanceCursor cursor(o);
  for (pd::InstanceView in; cursor.next(in);) {
    Instance i{in.at, in.block.at + in.block.length, in.block.at - in.at, instance_name(in),
               0,     in.parent_title_index(),       in.parent_instance()};
    for (const Def& d : defs)
      if (d.name_index == id_process && in.block.holds(d.offset, d.size))
        i.pid = uint32_t(pd::load_counter(o.p + in.block.at + d.offset, d.size));
    out.push_back(std::move(i));
  }
  return out;
}

// Replaces the object `o` of `answer` by its header and definitions followed by `body` (its
// instances as bytes, `count` of them), fixing both lengths and the instance count.
void replace_instances(Bytes& answer, const pd::ObjectView& o, const Bytes& body, uint32_t count) {
  Bytes obj(o.p, o.p + o.definition_length());
  obj.insert(obj.end(), body.begin(), body.end());
  store_le32(obj.data() + wp::object_type::kTotalByteLength, uint32_t(obj.size()));
  store_le32(obj.data() + wp::object_type::kNumInstances, count);
  const uint32_t at = o.at, old_length = o.length;
  answer.erase(answer.begin() + at, answer.begin() + at + old_length);
  answer.insert(answer.begin() + at, obj.begin(), obj.end());
  const pd::MutableBlock b{answer.data()};
  b.set_total_byte_length(uint32_t(b.total_byte_length() - old_length + obj.size()));
}

// A new process: a copy of the template instance with its id, counters from 0 and started
// `since_100ns` ago in the object's clock.
Bytes new_process(const pd::ObjectView& o, const std::vector<Def>& defs, const Instance& tmpl, const ChurnPlan& c,
                  uint32_t pid, uint32_t id_process, int64_t since_100ns) {
  Bytes out(o.p + tmpl.begin, o.p + tmpl.end);
  uint8_t* block = out.data() + tmpl.block_at;
  const uint32_t length = load_le32(block);
  for (size_t j = 0; j < defs.size(); ++j) {
    const Def& d = defs[j];
    if (uint64_t(d.offset) + d.size > length || (d.size != 4 && d.size != 8)) continue;
    uint8_t* p = block + d.offset;
    const uint64_t v = pd::load_counter(p, d.size);
    if (d.name_index == id_process) {
      pd::store_counter(p, d.size, pid);
    } else if (d.cumulative && j < c.template_values.size() && c.template_values[j]) {
      const uint64_t r = *c.template_values[j];
      pd::store_counter(p, d.size, d.size == 4 ? (v - r) & UINT32_MAX : v >= r ? v - r : 0);
    } else if (d.type == wp::PERF_ELAPSED_TIME && d.size == 8 && o.perf_freq()) {
      pd::store_counter(p, d.size, o.perf_time() - uint64_t(ticks_at(since_100ns, o.perf_freq())));
    }
  }
  return out;
}

// A name a lodctr event puts in the name tables: 1 .. kMaxLodctrName characters, no control
// characters (a NUL would end the REG_MULTI_SZ entry early).
Status check_name(const config::Reader& r, const std::string& where, const std::string& name) {
  const std::u16string u = utf8_to_utf16(name);
  if (u.empty() || u.size() > limits::kMaxLodctrName)
    return r.fail(where, "a name of 1 .. " + std::to_string(limits::kMaxLodctrName) + " characters, got " +
                             std::to_string(u.size()));
  if (std::any_of(u.begin(), u.end(), [](char16_t c) { return c < 0x20; }))
    return r.fail(where, "control characters cannot stand in a name table");
  return Status::Ok();
}

// lodctr: `object` and `counters` (required); unlodctr: `object` (required).
Status read_names_event(const config::Reader& r, const Json& e, const std::string& path, HostEvent& out) {
  const bool lodctr = out.kind == EventKind::kLodctr, unlodctr = out.kind == EventKind::kUnlodctr;
  if (!lodctr && !unlodctr) {
    if (e.contains("object") || e.contains("counters"))
      return r.fail(config::join(path, e.contains("object") ? "object" : "counters"),
                    "object and counters belong to lodctr (object: unlodctr too)");
    return Status::Ok();
  }
  if (unlodctr && e.contains("counters"))
    return r.fail(config::join(path, "counters"), "unlodctr names the object only: its counters go with it");
  Status s = r.require(e, path, "object");
  if (s.ok()) s = r.string(e, path, "object", out.object);
  if (s.ok()) s = check_name(r, config::join(path, "object"), out.object);
  if (!s.ok() || unlodctr) return s;
  s = r.require(e, path, "counters");
  if (s.ok()) s = r.strings(e, path, "counters", out.counters);
  if (s.ok() && (out.counters.empty() || out.counters.size() > limits::kMaxLodctrCounters))
    return r.fail(config::join(path, "counters"), "1 .. " + std::to_string(limits::kMaxLodctrCounters) +
                                                      " counter names (one object's), got " +
                                                      std::to_string(out.counters.size()));
  for (size_t i = 0; s.ok() && i < out.counters.size(); ++i)
    s = check_name(r, config::index(config::join(path, "counters"), i), out.counters[i]);
  return s;
}

}  // namespace

Status plan_churn(ByteView answer, const HostEvent& e, const EventTimeline& tl, ChurnPlan& out) {
  pd::BlockView block;
  pd::ObjectView o;
  if (!tl.process_object || !tl.id_process || !pd::view_block(answer, block) ||
      !find_object(block, tl.process_object, o))
    return Status::InvalidArgument("churn: the host has no Process object (with ID Process) at the event");
  const std::vector<Def> defs = definitions(o);
  const std::vector<Instance> list = instances(o, defs, tl.id_process);
  out = ChurnPlan{};
  if (!e.name.empty()) {
    out.name = utf8_to_utf16(e.name);
  } else {  // the most repeated name: the one whose numbering a churn disturbs most
    std::map<std::u16string, size_t> count;
    size_t best = 0;
    for (const Instance& i : list)
      if (i.name != u"_Total" && ++count[i.name] > best) {
        best = count[i.name];
        out.name = i.name;
      }
  }
  std::vector<const Instance*> named;
  uint32_t max_pid = 0;
  for (const Instance& i : list) {
    if (i.name == out.name) named.push_back(&i);
    max_pid = std::max(max_pid, i.pid);
  }
  const size_t needed = e.exit + (e.start ? 1 : 0);  // a process to copy must stay
  if (named.size() < needed)
    return Status::InvalidArgument("churn: " + std::to_string(named.size()) + " processes named '" +
                                   utf16_to_utf8(out.name) + "' at the event; exit=" + std::to_string(e.exit) +
                                   (e.start ? " and start (a copy of one that stays)" : "") + " need " +
                                   std::to_string(needed));
  for (uint32_t k = 0; k < e.exit; ++k) out.exit_pids.push_back(named[k]->pid);
  for (uint32_t k = 0; k < e.start; ++k) out.start_pids.push_back((max_pid / 4 + 1 + k) * 4);  // ids are multiples of 4
  if (e.start) {
    const Instance& t = *named.back();
    out.template_pid = t.pid;
    for (const Def& d : defs)
      out.template_values.push_back(d.cumulative && uint64_t(t.block_at) + d.offset + d.size <= t.end - t.begin
                                        ? std::optional(pd::load_counter(o.p + t.begin + t.block_at + d.offset, d.size))
                                        : std::nullopt);
  }
  return Status::Ok();
}

void apply_churn(Bytes& answer, const ChurnPlan& c, const EventTimeline& tl, int64_t since_100ns) {
  pd::BlockView block;
  pd::ObjectView o;
  if (!pd::view_block(answer, block) || !find_object(block, tl.process_object, o)) return;
  const std::vector<Def> defs = definitions(o);
  const std::vector<Instance> list = instances(o, defs, tl.id_process);
  const Instance* tmpl = nullptr;
  size_t total_at = SIZE_MAX;  // the kept instance the new ones go before (_Total)
  std::vector<const Instance*> kept;
  std::vector<int64_t> position(list.size(), -1);  // old position -> kept position (-1: exited)
  for (size_t k = 0; k < list.size(); ++k) {
    const Instance& i = list[k];
    if (std::find(c.exit_pids.begin(), c.exit_pids.end(), i.pid) != c.exit_pids.end() && i.name == c.name) continue;
    if (c.template_pid && i.pid == c.template_pid && i.name == c.name) tmpl = &i;
    if (total_at == SIZE_MAX && i.name == u"_Total") total_at = kept.size();
    position[k] = int64_t(kept.size());
    kept.push_back(&i);
  }
  const size_t fresh = tmpl ? c.start_pids.size() : 0;
  Bytes body;
  for (size_t k = 0; k <= kept.size(); ++k) {
    if (k == std::min(total_at, kept.size()))
      for (size_t n = 0; n < fresh; ++n) {
        const Bytes b = new_process(o, defs, *tmpl, c, c.start_pids[n], tl.id_process, since_100ns);
        body.insert(body.end(), b.begin(), b.end());
      }
    if (k < kept.size()) body.insert(body.end(), o.p + kept[k]->begin, o.p + kept[k]->end);
  }
  for (int64_t& p : position)
    if (p >= int64_t(std::min(total_at, kept.size()))) p += int64_t(fresh);
  replace_instances(answer, o, body, uint32_t(kept.size() + fresh));

  // Children (Thread): an exited process's threads are gone, the others name their parent's new place.
  if (!pd::view_block(answer, block)) return;
  pd::ObjectCursor objects(block);
  std::vector<uint32_t> children;
  for (pd::ObjectView x; objects.next(x);)
    if (x.multi_instance() && x.lengths_consistent() && x.name_index() != tl.process_object) {
      pd::InstanceCursor ic(x);
      pd::InstanceView in;
      if (ic.next(in) && in.parent_title_index() == tl.process_object) children.push_back(x.name_index());
    }
  for (uint32_t index : children) {
    pd::ObjectView x;
    if (!pd::view_block(answer, block) || !find_object(block, index, x)) continue;
    Bytes rest;
    uint32_t count = 0;
    for (const Instance& i : instances(x, {}, 0)) {
      if (i.parent_title == tl.process_object && i.parent < position.size() && position[i.parent] < 0) continue;
      const size_t at = rest.size();
      rest.insert(rest.end(), x.p + i.begin, x.p + i.end);
      if (i.parent_title == tl.process_object && i.parent < position.size())
        store_le32(rest.data() + at + wp::instance_def::kParentObjectInstance, uint32_t(position[i.parent]));
      ++count;
    }
    replace_instances(answer, x, rest, count);
  }
}

std::span<const EventRow> event_table() { return kEvents; }
const EventRow& event_row(EventKind k) { return kEvents[size_t(k)]; }
const EventRow* find_event(std::string_view name) {
  for (const EventRow& r : kEvents)
    if (r.name == name) return &r;
  return nullptr;
}

Status read_event(const config::Reader& r, const Json& e, const std::string& path, HostEvent& out) {
  if (!e.is_object()) return r.type_error(path, "an event table ({kind = \"reboot\", at_s = 30})", e);
  Status s = r.keys(e, path,
                    {"kind", "at_s", "sample", "down_s", "seconds", "start", "exit", "name", "objects", "for_s",
                     "object", "counters"});
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
  for (const auto& [key, field] : {std::pair{"start", &out.start}, std::pair{"exit", &out.exit}}) {
    if (!s.ok() || !e.contains(key)) continue;
    if (out.kind != EventKind::kChurn) return r.fail(config::join(path, key), std::string(key) + " belongs to churn");
    s = r.integer(e, path, key, *field, uint32_t(limits::kEventProcesses.lo), uint32_t(limits::kEventProcesses.hi));
  }
  if (s.ok() && e.contains("name")) {
    if (out.kind != EventKind::kChurn) return r.fail(config::join(path, "name"), "name belongs to churn");
    s = r.string(e, path, "name", out.name);
  }
  if (s.ok() && (e.contains("objects") || e.contains("for_s")) && out.kind != EventKind::kProviderFail)
    return r.fail(config::join(path, e.contains("objects") ? "objects" : "for_s"),
                  "objects and for_s belong to provider-fail");
  if (s.ok() && out.kind == EventKind::kProviderFail) {
    s = r.require(e, path, "objects");
    if (s.ok())
      s = r.integers(e, path, "objects", out.objects, uint32_t(limits::kTitleIndex.lo),
                     uint32_t(limits::kTitleIndex.hi));
    if (s.ok() && out.objects.empty())
      return r.fail(config::join(path, "objects"), "name at least one object (its title index)");
    if (s.ok() && out.objects.size() > limits::kMaxProviderObjects)
      return r.fail(config::join(path, "objects"),
                    "at most " + std::to_string(limits::kMaxProviderObjects) + " objects (one provider's)");
    if (s.ok() && e.contains("for_s"))
      s = r.number(e, path, "for_s", out.for_s, limits::kEventAt, " (seconds: a year)");
  }
  if (s.ok()) s = read_names_event(r, e, path, out);
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
  if (e.kind == EventKind::kChurn) {
    j["start"] = e.start;
    j["exit"] = e.exit;
    if (!e.name.empty()) j["name"] = e.name;
  }
  if (e.kind == EventKind::kProviderFail) {
    j["objects"] = e.objects;
    j["for_s"] = e.for_s;
  }
  if (e.kind == EventKind::kLodctr || e.kind == EventKind::kUnlodctr) j["object"] = e.object;
  if (e.kind == EventKind::kLodctr) j["counters"] = e.counters;
  return j;
}

EventState EventTimeline::state_at(int64_t v, size_t limit) const {
  EventState st;
  st.at_100ns = v;
  const std::span<const PreparedEvent> in(events.data(), std::min(limit, events.size()));
  // The boot v lies in: from the last reboot at or before it to the next reboot after it.
  int64_t boot_end = INT64_MAX;
  for (const PreparedEvent& e : in) {  // sorted by position
    if (e.event.kind != EventKind::kReboot) continue;
    if (e.at_100ns <= v) {
      st.boot = &e;
      st.boot_index = size_t(&e - events.data());
      ++st.boots;
    } else {
      boot_end = std::min(boot_end, e.at_100ns);
    }
  }
  const int64_t boot_start = st.boot ? st.boot->at_100ns : INT64_MIN;
  for (const PreparedEvent& e : in) {
    // A wrap acts over its whole boot, before its moment too: the counters were near the top all
    // along, so the wrap comes from their growth, not from a jump at the event.
    if (e.event.kind == EventKind::kWrap && e.at_100ns >= boot_start && e.at_100ns < boot_end) st.wraps.push_back(&e);
    // A churn's processes belong to its boot: the next reboot starts those it recorded.
    if (e.event.kind == EventKind::kChurn && e.at_100ns >= boot_start && e.at_100ns <= v) st.churns.push_back(&e);
    if (e.event.kind == EventKind::kProviderFail && e.at_100ns <= v &&
        (e.event.for_s <= 0 || v < e.at_100ns + int64_t(std::llround(e.event.for_s * double(k100nsPerSecond)))))
      st.hidden_objects.insert(st.hidden_objects.end(), e.event.objects.begin(), e.event.objects.end());
    if (e.event.kind == EventKind::kClockJump && e.at_100ns <= v)
      st.clock_jump_100ns += int64_t(std::llround(e.event.seconds * double(k100nsPerSecond)));
  }
  if (!st.wraps.empty()) st.applied |= 1u << event_row(EventKind::kWrap).applied_bit;
  if (st.clock_jump_100ns) st.applied |= 1u << event_row(EventKind::kClockJump).applied_bit;
  if (!st.churns.empty()) st.applied |= 1u << event_row(EventKind::kChurn).applied_bit;
  if (!st.hidden_objects.empty()) st.applied |= 1u << event_row(EventKind::kProviderFail).applied_bit;
  st.names = nullptr;
  for (const PreparedEvent& e : in)
    if (e.at_100ns <= v && (e.event.kind == EventKind::kLodctr || e.event.kind == EventKind::kUnlodctr)) st.names = &e;
  if (st.names) st.applied |= 1u << event_row(st.names->event.kind).applied_bit;
  if (st.boot) {
    st.since_boot_100ns = v - st.boot->at_100ns;
    st.down = st.since_boot_100ns < st.boot->down_100ns;
    st.applied |= 1u << event_row(EventKind::kReboot).applied_bit;
  }
  return st;
}

const PreparedEvent* EventTimeline::names_at(int64_t v) const {
  const PreparedEvent* out = nullptr;
  for (const PreparedEvent& e : events) {  // sorted by position
    if (e.at_100ns > v) break;
    if (e.event.kind == EventKind::kLodctr || e.event.kind == EventKind::kUnlodctr) out = &e;
  }
  return out;
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

namespace {
std::atomic<size_t> g_event_bytes{0};
std::atomic<size_t> g_budget_host{limits::kMaxEventBytesPerHost};
std::atomic<size_t> g_budget_fleet{limits::kMaxEventBytesFleet};
}  // namespace

EventBudget event_budget() { return {g_budget_host.load(), g_budget_fleet.load()}; }

void set_event_budget(const EventBudget& b) {
  g_budget_host.store(b.per_host);
  g_budget_fleet.store(b.fleet);
}

void EventCharge::set(size_t bytes) {
  g_event_bytes.fetch_add(bytes - bytes_, std::memory_order_relaxed);  // wraps around as unsigned: exact
  bytes_ = bytes;
}

size_t event_bytes_in_use() { return g_event_bytes.load(std::memory_order_relaxed); }

size_t counter_values_bytes(const CounterValues& v) {
  constexpr size_t kNode = 64;  // a node (key, vector, hash, next pointer) and its bucket, rounded up
  size_t n = v.bucket_count() * sizeof(void*);
  for (const auto& [key, values] : v) n += kNode + key.capacity() + values.capacity() * sizeof(values[0]);
  return n;
}

size_t event_bytes(const PreparedEvent& e) {
  size_t n = sizeof(PreparedEvent) + e.event.name.capacity() + e.event.object.capacity() +
             e.event.objects.capacity() * sizeof(uint32_t);
  for (const std::string& c : e.event.counters) n += sizeof(std::string) + c.capacity();
  const ChurnPlan& c = e.churn;
  n += c.name.capacity() * 2 + (c.exit_pids.capacity() + c.start_pids.capacity()) * 4 +
       c.template_values.capacity() * sizeof(c.template_values[0]);
  const NameVersion& v = e.names;
  n += v.counter.capacity() + v.help.capacity() + v.reg_counter.capacity() + v.reg_help.capacity();
  for (const LodctrObject& o : v.loaded) {
    n += sizeof(LodctrObject) + o.name.capacity();
    for (const std::string& c2 : o.counters) n += sizeof(std::string) + c2.capacity();
  }
  return n;
}

void add_wrap_offsets(CounterValues& sum, const CounterValues& offsets) {
  for (const auto& [key, off] : offsets) {
    std::vector<std::optional<uint64_t>>& to = sum[key];
    if (to.size() < off.size()) to.resize(off.size());
    for (size_t j = 0; j < off.size(); ++j)
      if (off[j]) to[j] = (to[j].value_or(0) + *off[j]) & UINT32_MAX;
  }
}

uint32_t pid_after(uint32_t pid, uint32_t boots) {
  if (pid == 0 || pid == 4 || boots == 0) return pid;
  return pid + 4u * 1009u * boots;  // a prime stride: no two ids of one boot collide, none becomes 0 or 4 soon
}

bool apply_events(Bytes& answer, const EventState& st, const EventTimeline& tl, std::string_view value) {
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
    const std::vector<std::optional<uint64_t>>* wrap = nullptr;
    if (st.values) {
      if (auto it = st.values->rebase.find(key); st.boot && it != st.values->rebase.end()) rebase = &it->second;
      if (auto it = st.values->wraps.find(key); !st.wraps.empty() && it != st.values->wraps.end()) wrap = &it->second;
    }
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
        // Only a 4-byte counter wraps at 2^32; an 8-byte one holding a small value does not.
        if (wrap && d.size == 4 && j < wrap->size() && (*wrap)[j]) v = (v + *(*wrap)[j]) & UINT32_MAX;
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
  // Last: a churn changes the layout the walk above relied on.
  for (const PreparedEvent* c : st.churns) apply_churn(answer, c->churn, tl, st.at_100ns - c->at_100ns);
  if (st.names && !st.names->names.loaded.empty()) {
    // A provider's objects join Global and an index list naming them (Costly: never costly).
    const pd::Query q = pd::parse_query(value);
    std::vector<uint32_t> only;
    if (q.kind == pd::QueryKind::kIndexList)
      for (const LodctrObject& o : st.names->names.loaded)
        if (std::find(q.indices.begin(), q.indices.end(), o.first_counter) != q.indices.end())
          only.push_back(o.first_counter);
    if (q.kind == pd::QueryKind::kGlobal || !only.empty())
      append_lodctr_objects(answer, st.names->names, only, st.at_100ns, st.boot);
  }
  if (!st.hidden_objects.empty()) drop_objects(answer, st.hidden_objects);
  return true;
}

void drop_objects(Bytes& answer, const std::vector<uint32_t>& indices) {
  pd::BlockView block;
  if (!pd::view_block(answer, block)) return;
  std::vector<std::pair<uint32_t, uint32_t>> gone;  // (at, length), in order
  pd::ObjectCursor objects(block);
  for (pd::ObjectView o; objects.next(o);)
    if (std::find(indices.begin(), indices.end(), o.name_index()) != indices.end()) gone.emplace_back(o.at, o.length);
  if (gone.empty()) return;
  const pd::MutableBlock b{answer.data()};
  b.set_total_byte_length(
      b.total_byte_length() -
      std::accumulate(gone.begin(), gone.end(), 0u, [](uint32_t n, const auto& g) { return n + g.second; }));
  b.set_num_object_types(b.num_object_types() - uint32_t(gone.size()));
  for (auto g = gone.rbegin(); g != gone.rend(); ++g)
    answer.erase(answer.begin() + g->first, answer.begin() + g->first + g->second);
}

// ---- lodctr / unlodctr: a provider's names and its object ------------------------------------

namespace {

// One copy of a table (Counter or Help, HKPD's or Perflib\009's) with pairs added or a range taken
// out; an empty slot (the host serves no such value) stays empty.
Status edit_table(Bytes& slot, const char* what, const std::vector<std::pair<uint32_t, std::string>>& add,
                  uint32_t remove_lo, uint32_t remove_hi, std::optional<uint32_t> declared_last,
                  uint32_t* highest_left) {
  if (slot.empty()) return Status::Ok();
  pd::NameTable t;
  if (Status s = pd::parse_names(slot, t); !s.ok())
    return Status::InvalidArgument(std::string("the host's ") + what + " does not parse: " + s.message());
  if (remove_hi)
    std::erase_if(t.entries, [&](const pd::NameEntry& n) { return n.index >= remove_lo && n.index <= remove_hi; });
  if (highest_left)
    for (const pd::NameEntry& n : t.entries)
      if (n.index < remove_lo) *highest_left = std::max(*highest_left, n.index);
  const pd::NameTable added = pd::make_names(add);
  t.entries.insert(t.entries.end(), added.entries.begin(), added.entries.end());
  if (declared_last) pd::set_declared_last(t, *declared_last);
  slot = pd::build_names(t);
  return Status::Ok();
}

const LodctrObject* find_loaded(const NameVersion& v, const std::string& name) {
  for (const LodctrObject& o : v.loaded)
    if (iequals(o.name, name)) return &o;
  return nullptr;
}

}  // namespace

Status next_names(const NameVersion& before, const HostEvent& e, int64_t at_100ns, NameVersion& out) {
  const LodctrObject* have = find_loaded(before, e.object);
  const std::string at = " (at " + std::to_string(double(at_100ns) / 1e7) + " s)";
  out = before;
  if (e.kind == EventKind::kLodctr) {
    if (have)
      return Status::InvalidArgument("lodctr: object '" + e.object + "' is loaded already (by the lodctr at " +
                                     std::to_string(double(have->at_100ns) / 1e7) + " s): unlodctr it first" + at);
    LodctrObject o{e.object, e.counters, before.last_counter + 2, before.last_help + 2, at_100ns};
    std::vector<std::pair<uint32_t, std::string>> names{{o.first_counter, o.name}};
    std::vector<std::pair<uint32_t, std::string>> help{
        {o.first_help, "The " + o.name + " object, installed by a lodctr event."}};
    for (size_t k = 0; k < o.counters.size(); ++k) {
      const uint32_t off = 2 * uint32_t(k + 1);
      names.emplace_back(o.first_counter + off, o.counters[k]);
      help.emplace_back(o.first_help + off, o.counters[k] + " of " + o.name + ": counts " +
                                                std::to_string(10 * (k + 1)) +
                                                " a second from its lodctr event or the last boot.");
    }
    out.last_counter = o.last_counter();
    out.last_help = o.last_help();
    for (auto [slot, what] :
         {std::pair{&out.counter, "Counter 009"}, std::pair{&out.reg_counter, "Perflib\\009 Counter"}})
      if (Status s = edit_table(*slot, what, names, 0, 0, out.last_counter, nullptr); !s.ok()) return s;
    for (auto [slot, what] : {std::pair{&out.help, "Help 009"}, std::pair{&out.reg_help, "Perflib\\009 Help"}})
      if (Status s = edit_table(*slot, what, help, 0, 0, std::nullopt, nullptr); !s.ok()) return s;
    out.loaded.push_back(std::move(o));
    return Status::Ok();
  }
  if (!have)
    return Status::InvalidArgument("unlodctr: no object '" + e.object + "' is loaded by a lodctr event before it" + at);
  const LodctrObject o = *have;
  std::erase_if(out.loaded, [&](const LodctrObject& x) { return iequals(x.name, o.name); });
  uint32_t counter_left = 0, help_left = 0;  // the highest indices left below its ranges
  const uint32_t fc = o.first_counter, lc = o.last_counter(), fh = o.first_help, lh = o.last_help();
  Status s = edit_table(out.counter, "Counter 009", {}, fc, lc, std::nullopt, &counter_left);
  if (s.ok()) s = edit_table(out.help, "Help 009", {}, fh, lh, std::nullopt, &help_left);
  if (s.ok()) s = edit_table(out.reg_help, "Perflib\\009 Help", {}, fh, lh, std::nullopt, nullptr);
  out.last_counter = pd::last_after_unlodctr(before.last_counter, lc, counter_left);
  out.last_help = pd::last_after_unlodctr(before.last_help, lh, help_left);
  if (s.ok()) s = edit_table(out.counter, "Counter 009", {}, 0, 0, out.last_counter, nullptr);  // its "1" entry
  if (s.ok()) s = edit_table(out.reg_counter, "Perflib\\009 Counter", {}, fc, lc, out.last_counter, nullptr);
  return s;
}

void append_lodctr_objects(Bytes& answer, const NameVersion& v, const std::vector<uint32_t>& only, int64_t at_100ns,
                           const PreparedEvent* boot) {
  if (answer.size() < wp::kDataBlockSize) return;
  const pd::MutableBlock b{answer.data()};
  const uint64_t perf_time = b.perf_time(), perf_freq = b.perf_freq();  // read before appending moves the bytes
  uint32_t added = 0;
  for (const LodctrObject& o : v.loaded) {
    if (!only.empty() && std::find(only.begin(), only.end(), o.first_counter) == only.end()) continue;
    pd::Object obj;
    obj.name_index = o.first_counter;
    obj.help_index = o.first_help;
    obj.perf_time = int64_t(perf_time);
    obj.perf_freq = int64_t(perf_freq);
    obj.num_counters = uint32_t(o.counters.size());
    // Counted from the load, or from the boot that came after it.
    const int64_t from = std::max(o.at_100ns, boot ? boot->at_100ns : INT64_MIN);
    const uint64_t since = uint64_t(std::max<int64_t>(at_100ns - from, 0));
    // 8-byte counters, 8-aligned: the block's ByteLength DWORD, 4 bytes of padding, then the data.
    obj.counter_block = pd::make_counter_block(4 + 8 * uint32_t(o.counters.size()));
    for (size_t k = 0; k < o.counters.size(); ++k) {
      pd::CounterDef d;
      d.name_index = o.first_counter + 2 * uint32_t(k + 1);
      d.help_index = o.first_help + 2 * uint32_t(k + 1);
      d.type = wp::PERF_COUNTER_BULK_COUNT;
      d.size = 8;
      d.offset = 8 + 8 * uint32_t(k);
      obj.counters.push_back(d);
      pd::write_counter(obj.counter_block, d, since * 10 * (k + 1) / uint64_t(k100nsPerSecond));
    }
    pd::append_object(answer, obj);
    ++added;
  }
  const pd::MutableBlock grown{answer.data()};
  grown.set_total_byte_length(uint32_t(answer.size()));
  grown.set_num_object_types(grown.num_object_types() + added);
}

}  // namespace perfsim::replayer
