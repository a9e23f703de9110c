// Events on a host's timeline (issue 31, part 2): what a real Windows host goes through between two
// polls of a collector, at a chosen moment: a reboot, 32-bit counters wrapping, the wall clock
// jumping, a provider's names registered (lodctr) or removed (unlodctr). Each kind is one row of event_table() (name, parameters, effect, primary source); a
// host's events come from a fleet or scenario file (`[[host.event]]`) or the admin API (`POST
// /api/hosts/NAME/events`) and are applied to the answers the host makes (README.md, "Events").
//
// How they act, in one place (apply_events): an answer is made as without events, then its
// PERF_DATA_BLOCK clocks, object clocks and counters are rewritten by the events in force at the
// answer's timeline position: counters re-based on their values at the reboot (taken from the
// recording when an answer of that boot first needs them: BootValues), PerfTime since the boot, elapsed times capped at the uptime, process ids
// renumbered, 32-bit counters offset toward 2^32, SystemTime shifted, a lodctr'd object appended.
// lodctr/unlodctr also change the name tables (Counter 009 / Help 009, HKLM Perflib's Last
// Counter, Last Help and 009 values): each such event carries the tables as they are from it on
// (NameVersion), made when the event is prepared. Hosts without events pay nothing (one null
// pointer test per answer). What events keep is bounded (limits.h kMaxEventBytesPerHost,
// kMaxEventBytesFleet; EventCharge).
#pragma once
#include <cstdint>
#include <map>
#include <atomic>
#include <memory>
#include <mutex>
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

enum class EventKind : uint8_t { kReboot, kWrap, kClockJump, kChurn, kProviderFail, kLodctr, kUnlodctr };

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
  std::optional<double> at_s;         // seconds of the host's timeline (recorded seconds, loops included)
  std::optional<uint32_t> sample;     // or the start of this sample (timeline position)
  double down_s = 5;                  // reboot: the Remote Registry answers again this long after
  double seconds = 0;                 // clock-jump: how far SystemTime moves (negative: back)
  uint32_t start = 0, exit = 0;       // churn: processes that start, processes that exit
  std::string name;                   // churn: their image name ("svchost"); empty: the most repeated one
  std::vector<uint32_t> objects;      // provider-fail: the provider's objects (title indices)
  double for_s = 0;                   // provider-fail: back after this long; 0: disabled for good
  std::string object;                 // lodctr/unlodctr: the object's name (it names its provider too)
  std::vector<std::string> counters;  // lodctr: its counters' names, in offset order
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

// An object a lodctr event registered: its indices as lodctr assigns them (offset 0 the object,
// counter k at offset 2(k+1); names from First Counter = Last Counter + 2, help texts from First
// Help = Last Help + 2) and when it was loaded.
struct LodctrObject {
  std::string name;
  std::vector<std::string> counters;
  uint32_t first_counter = 0, first_help = 0;
  int64_t at_100ns = 0;
  uint32_t last_counter() const { return first_counter + 2 * uint32_t(counters.size()); }
  uint32_t last_help() const { return first_help + 2 * uint32_t(counters.size()); }
};

// The host's names from a lodctr/unlodctr event on: the objects loaded, Perflib's Last Counter
// and Last Help, and the English tables as served (HKPD `Counter 009`/`Help 009`; HKLM
// Perflib\009 Counter/Help, which a capture may hold apart from them).
struct NameVersion {
  std::vector<LodctrObject> loaded;  // in load order
  uint32_t last_counter = 0, last_help = 0;
  Bytes counter, help;          // Counter 009 / Help 009
  Bytes reg_counter, reg_help;  // Perflib\009 Counter / Help (empty: the host serves none)
};

// Bytes of event state counted against limits::kMaxEventBytesFleet while it exists (a timeline's
// events, a boot's tables): set() changes this process's count, the destructor takes it back.
class EventCharge {
 public:
  EventCharge() = default;
  EventCharge(const EventCharge&) = delete;
  EventCharge& operator=(const EventCharge&) = delete;
  ~EventCharge() { set(0); }
  void set(size_t bytes);
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};
// What every EventCharge of this process holds now.
size_t event_bytes_in_use();
// The bounds add_event holds events to (limits.h kMaxEventBytesPerHost, kMaxEventBytesFleet
// unless set otherwise: tests set small ones to reach them).
struct EventBudget {
  size_t per_host = 0;
  size_t fleet = 0;
};
EventBudget event_budget();
void set_event_budget(const EventBudget& b);

// An event made ready for answers: its position and what it needs from the recording. A reboot's
// and a wrap's counter tables are not kept here: they are a sample's worth of counters each (1.4 MB
// for the bundled 2016 host), made for the boot in force when an answer needs them (BootValues).
struct PreparedEvent {
  HostEvent event;
  uint32_t id = 0;       // its place in the host's list as added (append-only)
  int64_t at_100ns = 0;  // timeline position
  int64_t down_100ns = 0;
  ChurnPlan churn;
  NameVersion names;  // lodctr, unlodctr: the names from this event on
};

// The counter tables the answers of one boot need: the raw counters at its reboot (answers
// subtract them) and the 32-bit offsets of its wraps, summed (each wrap adds its own, mod 2^32).
// Made from the recording when an answer first needs them and kept for that boot only, so a host
// holds one boot's tables whatever its number of events (make_boot_values).
inline constexpr size_t kNoBoot = SIZE_MAX;
struct BootValues {
  size_t boot = kNoBoot;  // index in EventTimeline::events of its reboot; kNoBoot: the recorded boot
  size_t events = 0;      // of the timeline's events, the first this many were taken into account
  CounterValues rebase;
  CounterValues wraps;
  EventCharge charge;  // what the two tables take (counter_values_bytes)
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
  const PreparedEvent* names = nullptr;  // the last lodctr/unlodctr at or before it
  uint32_t applied = 0;                  // Applied bits of the events that shape answers here
  size_t boot_index = kNoBoot;           // `boot`'s index in the timeline
  const BootValues* values = nullptr;    // the boot's counter tables, when boot or wraps are set
  bool any() const {
    return boot || !wraps.empty() || clock_jump_100ns || !churns.empty() || !hidden_objects.empty() || names;
  }
};

// A host's events, sorted by position; immutable once made (the host swaps the whole timeline).
struct EventTimeline {
  std::vector<PreparedEvent> events;
  std::vector<uint32_t> pid_counters;  // title indices of "ID Process", "Creating Process ID"
  uint32_t id_process = 0;             // title index of "ID Process"
  uint32_t process_object = 0;         // title index of the "Process" object
  // What is in force at a position, from the first `limit` events only (those prepared so far).
  EventState state_at(int64_t position_100ns, size_t limit = SIZE_MAX) const;
  // The boot tables last made (boot_values); answers move through boots in order, so one is kept.
  mutable std::mutex values_mu;                                   // making them: one at a time
  mutable std::atomic<std::shared_ptr<const BootValues>> values;  // read without the lock
  EventCharge charge;  // what the events keep (event_bytes), once the host takes the timeline
  // The last lodctr/unlodctr at or before a position (null: the recorded names are in force).
  const PreparedEvent* names_at(int64_t position_100ns) const;
};

// The cumulative counters of a perf-data answer (Global, Costly) by instance identity; `diff`
// set: the growth from `diff`'s values instead (a wrap's growth over the next interval).
void collect_counters(ByteView answer, CounterValues& out);
// Rewrites a perf-data answer (a PERF_DATA_BLOCK and its objects) for `st`; false when it is not
// one (left as it is). `value` is the value name asked for: the lodctr'd objects join `Global`
// and an index list naming them, as a provider's objects do.
bool apply_events(Bytes& answer, const EventState& st, const EventTimeline& tl, std::string_view value = "Global");
// The names after a lodctr (`e`: object, counters) or unlodctr (`e`: object) at `at_100ns` on
// `before` (the names in force until then): InvalidArgument when lodctr's object is loaded
// already or unlodctr's is not.
Status next_names(const NameVersion& before, const HostEvent& e, int64_t at_100ns, NameVersion& out);
// Appends the lodctr'd objects of `v` (those in `only`; empty: all) as a provider's Collect lays
// them out at timeline position `at_100ns`: single instance, counter k a PERF_COUNTER_BULK_COUNT
// counting 10 (k + 1) a second since the object was loaded or `boot` (the last reboot, or null).
void append_lodctr_objects(Bytes& answer, const NameVersion& v, const std::vector<uint32_t>& only, int64_t at_100ns,
                           const PreparedEvent* boot);
// A wrap's offsets from the raw values at the event and one interval later: each 32-bit
// cumulative counter placed so it wraps halfway through that interval (just below 2^32 at the
// event); a counter that does not grow is placed at 2^32 - 1.
CounterValues wrap_offsets(const CounterValues& at, const CounterValues& later);
// The heap bytes a counter table takes (keys, value vectors and the hash map's nodes, estimated).
size_t counter_values_bytes(const CounterValues& v);
// The bytes a prepared event keeps: itself, its parameters, a churn's plan, a names version's tables.
size_t event_bytes(const PreparedEvent& e);
// Adds a wrap's offsets to a boot's sum (mod 2^32: applying the sum is applying each in turn).
void add_wrap_offsets(CounterValues& sum, const CounterValues& offsets);
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
