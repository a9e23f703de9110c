// Events on a host's timeline (issue 31, part 2): what a real Windows host goes through between two
// polls of a collector, at a chosen moment: a reboot, 32-bit counters wrapping, the wall clock
// jumping. Each kind is one row of event_table() (name, parameters, effect, primary source); a
// host's events come from a fleet or scenario file (`[[host.event]]`) or the admin API (`POST
// /api/hosts/NAME/events`) and are applied to the answers the host makes (README.md, "Events").
//
// How they act, in one place (apply_events): an answer is made as without events, then its
// PERF_DATA_BLOCK clocks, object clocks and counters are rewritten by the events in force at the
// answer's timeline position: counters re-based on their values at the reboot (taken once, when
// the event is prepared), PerfTime since the boot, elapsed times capped at the uptime, process ids
// renumbered, 32-bit counters offset toward 2^32, SystemTime shifted. Hosts without events pay
// nothing (one null pointer test per answer).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/bytes.h"
#include "core/config.h"
#include "core/status.h"

namespace perfsim::replayer {

enum class EventKind : uint8_t { kReboot, kWrap, kClockJump, kChurn, kProviderFail };

// One kind of event: what the admin API, fleet files and `perfsim scenarios` call it, what it
// does and where that behaviour is documented.
struct EventRow {
  std::string_view name;  // "reboot", "wrap", "clock-jump"
  EventKind kind;
  std::string_view params;        // its parameters, with defaults
  std::string_view effect;        // what a client sees
  std::string_view source;        // the primary source of that behaviour
  int applied_bit;                // its Applied bit (answer.h)
  std::string_view applied_name;  // "event:NAME"
};
std::span<const EventRow> event_table();
const EventRow& event_row(EventKind k);
const EventRow* find_event(std::string_view name);

// One event as written: when (a timeline position in seconds, or a sample's start in the first
// loop; neither: the moment it is posted) and the kind's parameters.
struct HostEvent {
  EventKind kind = EventKind::kReboot;
  std::optional<double> at_s;      // seconds of the host's timeline (recorded seconds, loops included)
  std::optional<uint32_t> sample;  // or the start of this sample (timeline position)
  double down_s = 5;               // reboot: the Remote Registry answers again this long after
  double seconds = 0;              // clock-jump: how far SystemTime moves (negative: back)
  uint32_t start = 0, exit = 0;    // churn: processes that start, processes that exit
  std::string name;                // churn: their image name ("svchost"); empty: the most repeated one
  std::vector<uint32_t> objects;   // provider-fail: the provider's objects (title indices)
  double for_s = 0;                // provider-fail: back after this long; 0: disabled for good
  bool operator==(const HostEvent&) const = default;
};

// Reads one event table ({"kind": "reboot", "at_s": 30, "down_s": 5}): unknown keys, kinds and
// out-of-range numbers are errors naming the path and key.
Status read_event(const config::Reader& r, const config::Json& e, const std::string& path, HostEvent& out);
// The same from a JSON text (the admin API's body).
Status parse_event_json(std::string_view text, const std::string& origin, HostEvent& out);
config::Json to_json(const HostEvent& e);

// A counter block's cumulative counters by counter number, keyed by instance identity (object
// index, parent, unique id, name, occurrence): what a reboot re-bases on and a wrap offsets.
using CounterValues = std::unordered_map<std::string, std::vector<std::optional<uint64_t>>>;

// A churn made ready: which processes of the Process object exit and start, by process id as
// served at the event (ids stay those of its boot: a churn acts until the next reboot).
struct ChurnPlan {
  std::u16string name;               // the instance name of the processes that start and exit
  std::vector<uint32_t> exit_pids;   // the first `exit` instances of `name`: every later one's #N shifts
  std::vector<uint32_t> start_pids;  // new ids, above every id at the event
  uint32_t template_pid = 0;         // the new processes are copies of this one (the last `name`)...
  std::vector<std::optional<uint64_t>> template_values;  // ...less its cumulative counters at the event
};

// An event made ready for answers: its position and what it needs from the recording.
struct PreparedEvent {
  HostEvent event;
  uint32_t id = 0;       // its place in the host's list as added (append-only)
  int64_t at_100ns = 0;  // timeline position
  int64_t down_100ns = 0;
  CounterValues values;  // reboot: raw values at the reboot; wrap: the 32-bit offsets
  ChurnPlan churn;
};

// What is in force at one timeline position.
struct EventState {
  int64_t at_100ns = 0;                 // the position
  const PreparedEvent* boot = nullptr;  // the last reboot at or before it
  uint32_t boots = 0;                   // reboots at or before it
  int64_t since_boot_100ns = 0;
  bool down = false;                         // inside a reboot's down time: connections are reset
  std::vector<const PreparedEvent*> wraps;   // wraps of the current boot (from its start)
  std::vector<const PreparedEvent*> churns;  // churns of the current boot at or before it, in order
  std::vector<uint32_t> hidden_objects;      // objects of failed providers (provider-fail)
  int64_t clock_jump_100ns = 0;
  uint32_t applied = 0;  // Applied bits of the events that shape answers here
  bool any() const { return boot || !wraps.empty() || clock_jump_100ns || !churns.empty() || !hidden_objects.empty(); }
};

// A host's events, sorted by position; immutable once made (the host swaps the whole timeline).
struct EventTimeline {
  std::vector<PreparedEvent> events;
  std::vector<uint32_t> pid_counters;  // title indices of "ID Process", "Creating Process ID"
  uint32_t id_process = 0;             // title index of "ID Process"
  uint32_t process_object = 0;         // title index of the "Process" object
  EventState state_at(int64_t position_100ns) const;
};

// The cumulative counters of a perf-data answer (Global, Costly) by instance identity; `diff`
// set: the growth from `diff`'s values instead (a wrap's growth over the next interval).
void collect_counters(ByteView answer, CounterValues& out);
// Rewrites a perf-data answer (a PERF_DATA_BLOCK and its objects) for `st`; false when it is not
// one (left as it is).
bool apply_events(Bytes& answer, const EventState& st, const EventTimeline& tl);
// A wrap's offsets from the raw values at the event and one interval later: each 32-bit
// cumulative counter placed so it wraps halfway through that interval (just below 2^32 at the
// event); a counter that does not grow is placed at 2^32 - 1.
CounterValues wrap_offsets(const CounterValues& at, const CounterValues& later);
// The process id a renumbered process gets after `boots` reboots: Idle (0) and System (4) keep
// theirs, as on Windows; every other id moves by a multiple of 4 (Windows ids are).
uint32_t pid_after(uint32_t pid, uint32_t boots);
// Drops the objects with these title indices from a perf-data answer (a failed provider's).
void drop_objects(Bytes& answer, const std::vector<uint32_t>& indices);
// Plans a churn from the answer at its moment (events before it applied): InvalidArgument when
// the answer has no Process object, no process of the name or fewer than `exit` of them.
Status plan_churn(ByteView answer, const HostEvent& e, const EventTimeline& tl, ChurnPlan& out);
// Rewrites the Process object of a perf-data answer as `c` leaves it `since_100ns` after the
// churn: its exited processes gone (and the threads whose parent they were), its new ones listed
// before _Total; other objects' parent instance numbers follow.
void apply_churn(Bytes& answer, const ChurnPlan& c, const EventTimeline& tl, int64_t since_100ns);

}  // namespace perfsim::replayer
