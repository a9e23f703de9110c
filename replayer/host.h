// A simulated host: what one Windows machine answers, built from a capture.
//
// The winreg service (winreg/service.h) asks the host for values; the host decides what to answer
// for a value name and a caller's buffer. Two steps keep the seam the quirk engine plugs into:
//   content(): what the value holds at a moment of the timeline (selection, live clocks/counters);
//   query():   what the caller gets now for the buffer it offered (buffer policy: rrp-exact unless
//              the host's quirks say otherwise).
// Everything that depends only on the capture lives in a shared, immutable Recording
// (replayer/recording.h); a host adds its identity (system name, clock offset, value variation)
// and its timeline position. Timeline rules (README.md):
//  - realtime: the serving moment's clock (optionally sped up) picks the sample; after the last one
//    the timeline loops (or stops at the last sample, clocks still running);
//  - step: each completed data answer advances one sample, looping;
//  - frozen:K: sample K exactly as recorded (clocks and counters untouched).
// In the live modes every answer carries the serving moment's SystemTime/PerfTime/PerfTime100nSec
// and object PerfTime, and cumulative counters keep growing across loops at the recorded rates.
// A host is safe to share across connections and threads without locks. Its quirks, fault plan
// and timeline can be changed while it serves (set_quirks, set_faults, control): the serving path
// reads quirks and timeline through plain atomics (a snapshot per call; the fault plan through an
// atomic shared_ptr, as before) and never takes the mutex that serialises the changes.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "captures/capture.h"
#include "core/bytes.h"
#include "core/shared_bytes.h"
#include "core/status.h"
#include "perfdata/select.h"
#include "replayer/answer.h"
#include "replayer/events.h"
#include "replayer/faults.h"
#include "replayer/quirks.h"
#include "replayer/recording.h"
#include "replayer/registry.h"
#include "windows/constants.h"
#include "windows/os.h"

namespace perfsim::replayer {

enum class TimelineMode { kRealtime, kStep, kFrozen };
// What cumulative counters do between two recorded samples on a realtime timeline (README.md,
// "Between samples"): hold the earlier sample's values until the next one's time (kStep), or
// advance toward the next one in proportion to the time elapsed (kInterpolate), as a real host's
// do, so a collector polling faster than the capture's interval sees the recorded rates.
enum class Between { kStep, kInterpolate };
const char* between_name(Between b);  // "step" or "interpolate"

// Who a host is, resolved once when a serve run makes it (serve_hosts.h, resolve_identity) and
// read by everything that depends on it: the host's quirks start from base_quirks; the admin API
// shows quirk_profile and resets to base_quirks; SMB dialects, the NTLM policy and srvsvc/wkssvc
// versions come from `os`; every answer and the journal carry the name (system_name, else the
// recorded one: SimulatedHost::name()). A fleet member also differs by the last three fields.
// A host made without a serve run (SimulatedHost::load in a test) has only what its maker set.
struct HostIdentity {
  // The Windows the host is (windows/os.h): the row its own or the run's profile names, else the
  // one the capture's header names; nullptr: none perfsim knows. A 2016 capture served with
  // --profile 2003 is a 2003 host in every transport (dialects, logon policy, srvsvc, CHALLENGE);
  // only the registry values the capture recorded (CurrentVersion...) stay as recorded.
  const windows::OsProfile* os = nullptr;
  // Where its quirks come from: its own profile, else the run's, else the capture fingerprint's;
  // "" when none is named.
  std::string quirk_profile;
  Quirks base_quirks;              // defaults, fingerprint, profile: before explicit settings
  std::string system_name;         // PERF_DATA_BLOCK system name; empty = the recorded one
  int64_t clock_offset_100ns = 0;  // added to the host's wall clock (SystemTime, PerfTime100nSec)
  uint64_t seed = 0;               // picks the per-host factor below
  double variation = 0;            // cumulative counters scaled by a factor in [1 - variation, 1]
};

struct HostOptions {
  // `{mode, tick}` stays the short form callers use.
  HostOptions(TimelineMode m = TimelineMode::kRealtime, uint32_t tick = 0) : mode(m), frozen_tick(tick) {}
  TimelineMode mode = TimelineMode::kRealtime;
  uint32_t frozen_tick = 0;
  bool loop = true;    // realtime: loop at the end, or stay on the last sample
  double speed = 1.0;  // realtime: recorded seconds per real second
  Between between = Between::kInterpolate;
  HostIdentity identity;
  Quirks quirks;                  // the defaults behave as MS-RRP says
  std::vector<HostEvent> events;  // events on the timeline (events.h); a live timeline only
};

// A change to a running timeline (POST /api/hosts/NAME/timeline, admin/README.md).
enum class TimelineOpKind { kPause, kResume, kStep, kSeek, kSpeed };
struct TimelineOp {
  TimelineOpKind kind = TimelineOpKind::kPause;
  uint32_t tick = 0;   // seek: timeline position (0 .. ticks() - 1)
  double speed = 1.0;  // speed: recorded seconds per real second (realtime)
};

// A point of the timeline. `recorded` serves the sample's bytes as they were (frozen mode).
struct Moment {
  uint32_t tick = 0;
  uint64_t loop = 0;        // completed loops
  int64_t extra_100ns = 0;  // time past the sample's own time (realtime between samples)
  bool recorded = true;
};

class SimulatedHost {
 public:
  // Builds a Recording from `cap` (copied) and a host over it.
  static Status load(const captures::Capture& cap, const HostOptions& opt, std::shared_ptr<SimulatedHost>& out);
  // A host over a shared recording: what a fleet does, one recording for all its hosts.
  static Status create(std::shared_ptr<const Recording> rec, const HostOptions& opt,
                       std::shared_ptr<SimulatedHost>& out);

  const std::string& name() const { return name_; }
  // The name as NetBIOS shows it (upper case): what srvsvc/wkssvc and ComputerName report.
  std::string netbios_name() const;
  // What a registry value holds for this host now: its own name for ComputerName
  // (RegValue::host_name); Perflib's Last Counter, Last Help and 009 Counter/Help as the lodctr and
  // unlodctr events in force left them (events.h); else the recorded data.
  SharedBytes value_data(const RegValue& v) const;
  const captures::Capture& capture() const { return rec_->cap; }
  const Recording& recording() const { return *rec_; }
  const Registry& registry() const { return rec_->registry; }
  // The options the host was made with; quirks() and timeline_paused()/timeline_speed() say what
  // is in force now.
  const HostOptions& options() const { return opt_; }
  // The quirks in force; replaced whole by set_quirks. Every version stays alive as long as the
  // host (a few hundred bytes per change), so a reference stays valid.
  const Quirks& quirks() const { return *quirks_.load(std::memory_order_acquire); }
  // Replaces the behaviour quirks while serving. Content quirks (content_quirks.h) rewrite the
  // host's recording when it is made, so they cannot change here: InvalidArgument if `q`'s differ.
  Status set_quirks(const Quirks& q);
  // Perf queries (query() calls) answered so far.
  uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  // Pause, resume, step, seek or re-pace the timeline (README.md, "Runtime control"). A mode
  // cannot do what it has no meaning for (speed of a step timeline, resume of a frozen one):
  // InvalidArgument says so; seek past the last sample likewise.
  Status control(const TimelineOp& op);
  bool timeline_paused() const;  // frozen timelines are always still
  double timeline_speed() const;
  uint32_t ticks() const { return rec_->tick_count(); }

  // Adds an event to the timeline (events.h); one with neither at_s nor sample happens now.
  // InvalidArgument on a frozen timeline (it never reaches one), a sample past the last, or past
  // the memory events may keep (limits.h kMaxEventBytesPerHost, kMaxEventBytesFleet: then
  // *over_budget is set, for the admin API's 507).
  Status add_event(HostEvent e, bool* over_budget = nullptr);
  // The events in force order (position), prepared; null when the host has none.
  std::shared_ptr<const EventTimeline> events() const {
    return has_events_.load(std::memory_order_acquire) ? events_.load() : nullptr;
  }
  // Reboots the host has gone through now, and whether it is down (a reboot's down time): a
  // connection made in an earlier boot, or any call while down, is closed without an answer
  // (winreg::Service), as a host going down resets its TCP connections.
  struct BootState {
    uint32_t boots = 0;
    bool down = false;
  };
  BootState boot_state() const;
  // The events the timeline has passed that no one has taken yet, each handed out once (to the
  // journal, through the first observed call at or after it) with the wall-clock time it happened
  // (UTC, microseconds since 1970; on a step timeline, now). Cheap when none is due: one atomic load.
  struct Happened {
    HostEvent event;  // at_s set to its timeline position
    int64_t wall_us = 0;
  };
  std::vector<Happened> take_happened();
  // The timeline position (recorded 100 ns since the first sample, loops included) of `m`.
  int64_t position_of(const Moment& m) const;

  // The moment a query made now is served at (does not advance a stepping timeline).
  Moment now() const;
  uint32_t current_tick() const { return now().tick; }
  // What `value_name` under HKPD/HKPT/HKPN holds at `m` (at `tick`: as recorded).
  ValueContent content(PerfKey key, std::string_view value_name, const Moment& m) const;
  ValueContent content(PerfKey key, std::string_view value_name, uint32_t tick) const {
    return content(key, value_name, Moment{tick, 0, 0, true});
  }
  // The full answer a caller gets now, buffer policy applied. Advances a stepping timeline.
  ValueAnswer query(PerfKey key, std::string_view value_name, BufferOffer offer);
  // Replaces the injected faults (null: none); safe while other threads serve.
  void set_faults(std::shared_ptr<const FaultPlan> plan) {
    const bool any = plan != nullptr;
    faults_.store(std::move(plan));
    if (any) has_faults_.store(true, std::memory_order_release);  // never cleared: no race with a later set
  }
  std::shared_ptr<const FaultPlan> faults() const {
    return has_faults_.load(std::memory_order_acquire) ? faults_.load() : nullptr;
  }
  // True when OpenHKPD must be refused (access-denied on = open).
  bool refuses_open(PerfKey key) const { return key == PerfKey::kData && quirks().access_denied_open; }
  // The value names EnumValue lists on HKPD (index order).
  std::vector<std::string> perf_value_names() const { return {"Global", "Costly"}; }

 private:
  SimulatedHost() = default;
  // realtime: the timeline's position (recorded 100 ns since the first sample, loops included) is
  // base_v + (now - base_ns) * speed, or base_v while paused.
  struct RealtimeClock {
    bool paused = false;
    int64_t base_ns = 0;
    int64_t base_v = 0;
    double speed = 1.0;
  };
  RealtimeClock realtime_clock() const;             // a consistent snapshot (seqlock read)
  void set_realtime_clock(const RealtimeClock& c);  // under control_mu_
  static int64_t position(const RealtimeClock& c, int64_t now_ns);
  Moment realtime_moment(int64_t v) const;
  Status control_realtime(const TimelineOp& op);
  ValueContent content(const Quirks& q, PerfKey key, std::string_view value_name, const Moment& m) const;
  // What a value name asks for and the objects an answer assembled for it holds under `q`
  // (extra-objects, hidden providers; none for another computer's Foreign). selection() keeps the last ones per thread (keyed by
  // host id, quirks version and name): parsing and selecting were ~30% of a small call's CPU
  // (bench/README.md); the reference holds until the thread's next selection().
  struct Selection {
    perfdata::Query query;
    std::vector<uint32_t> indices;
  };
  const Selection& selection(const Quirks& q, std::string_view value_name) const;
  void select(const Quirks& q, std::string_view value_name, Selection& out) const;
  SharedBytes serve_sample(const SampleRef& v, const SeriesClock& clock, const Moment& m, uint64_t frac) const;
  // Recorded bytes without a copy: a decoded sample keeps its own bytes, an in-memory capture's
  // live as long as the recording.
  SharedBytes share(const SampleRef& s) const {
    return s->owned.empty() ? SharedBytes(rec_, s->payload) : SharedBytes(s, s->payload);
  }
  SharedBytes share(const Bytes& recorded) const { return SharedBytes(rec_, recorded); }  // no copy
  Bytes assemble(const SampleRef& global, const SampleRef& costly, const std::vector<uint32_t>& indices,
                 const Moment& m, uint64_t frac) const;
  Bytes header(const Sample& base, const SeriesClock& clock, const Moment& m) const;
  void append_object(Bytes& out, const uint8_t* src, const ObjectSlice& s, const Moment& m, uint64_t frac) const;
  // How far (of 2^32) counters at `m` are from its tick toward the next one: 0 on a frozen or
  // stepped timeline, at a recorded tick, or past the last tick of a timeline that does not loop.
  uint64_t between_fraction(const Moment& m) const;
  bool interpolates() const { return opt_.between == Between::kInterpolate && opt_.mode == TimelineMode::kRealtime; }
  // The counter patches an answer at `m` needs: per-loop growth for a later loop, a per-host
  // variation or a step past the last tick (to the first of the next loop); steps alone between
  // two ticks of the first loop.
  Patches patches_needed(const Moment& m, uint64_t frac) const {
    if (m.recorded) return Patches::kNone;
    if (m.loop > 0 || scale_ppm_ != 1000000 || (frac && m.tick + 1 >= ticks())) return Patches::kAll;
    return frac ? Patches::kSteps : Patches::kNone;
  }
  const captures::NameTable* names(const std::string& lang) const;
  // The table of the user interface language, which HKEY_PERFORMANCE_NLSTEXT answers:
  // Perflib\CurrentLanguage's (recorded on Vista and later), else the one localized table of a
  // single-language host, else English.
  const captures::NameTable* ui_names() const;
  // The table a Counter/Help query names (null: none).
  const captures::NameTable* names_for(PerfKey key, const perfdata::Query& q) const;
  // A Counter/Help answer as the names version `v` (held by `tl`) has it, when `value` asks for
  // the English table; false otherwise (`c` unchanged).
  bool event_names(const std::shared_ptr<const EventTimeline>& tl, const NameVersion& v, PerfKey key,
                   std::string_view value, ValueContent& c) const;
  bool served(const Quirks& q, uint32_t object_index) const;  // false for objects a quirk hides
  ValueContent count_lies(const Quirks& q, ValueContent& c) const;
  std::vector<uint32_t> sample_objects(const Quirks& q, const Sample* global, const Sample* costly) const;

  std::shared_ptr<const Recording> rec_;
  uint64_t id_ = 0;  // unique in the process, never reused (selection()'s cache key)
  HostOptions opt_;
  std::string name_;
  Bytes computer_name_;  // netbios_name() as REG_SZ data
  // Perflib's Last Counter, Last Help and Perflib\009 Counter, Help in the registry (null: absent):
  // the values lodctr/unlodctr events change (value_data).
  std::array<const RegValue*, 4> perflib_values_{};
  Bytes name_region_;             // UTF-16 system name + NUL + padding; empty = keep the recorded header
  int64_t wall_shift_100ns_ = 0;  // served FILETIME minus recorded FILETIME
  uint64_t scale_ppm_ = 1000000;  // per-host factor of cumulative counters
  int64_t epoch_ns_ = 0;          // steady clock when the host started serving
  mutable std::atomic<uint64_t> step_{0};
  std::atomic<uint64_t> calls_{0};  // perf queries so far: drives the quirks' chances
  std::atomic<std::shared_ptr<const FaultPlan>> faults_;
  std::atomic<std::shared_ptr<const EventTimeline>> events_;  // replaced whole under control_mu_
  // Whether faults_/events_ ever held anything: a call reads these plain flags first, because loading an
  // atomic shared_ptr takes its lock bit and a reference (read-modify-writes on one cache line that
  // every thread serving the host would otherwise bounce between cores, on every call).
  std::atomic<bool> has_faults_{false}, has_events_{false};
  std::vector<HostEvent> event_list_;  // as added, under control_mu_
  // The timeline of `list` into `out`, not yet the host's; under control_mu_.
  Status prepare_events(const std::vector<HostEvent>& list, std::shared_ptr<EventTimeline>& out);
  Status charge_events(EventTimeline& tl) const;  // under control_mu_
  // take_happened(): which events (by PreparedEvent::id) were handed out, and the earliest
  // position of one that was not (INT64_MAX: none), so a call before it takes no lock.
  std::atomic<int64_t> unhanded_at_{INT64_MAX};
  std::mutex happened_mu_;
  std::vector<bool> handed_out_;  // under happened_mu_
  Bytes data_at(const Quirks& q, std::string_view value, int64_t position) const;
  // The tables of boot `boot` (an index into tl's events, or kNoBoot) from the recording:
  // its reboot's raw counters, then its wraps in position order, each taken with the boot's
  // earlier wraps in force (events.h BootValues).
  std::shared_ptr<const BootValues> make_boot_values(const EventTimeline& tl, size_t boot) const;
  // The same, made once per boot and kept by the timeline while answers stay in that boot.
  std::shared_ptr<const BootValues> boot_values(const EventTimeline& tl, size_t boot) const;
  // tl.state_at(position) with its boot's tables, which `hold` keeps alive.
  EventState state_for(const EventTimeline& tl, int64_t position, std::shared_ptr<const BootValues>& hold) const;
  // The serving path reads one plain atomic pointer (no reference count, no lock); the versions
  // it may point to are owned here and freed with the host.
  std::atomic<const Quirks*> quirks_{nullptr};
  std::vector<std::unique_ptr<const Quirks>> quirk_versions_;  // under control_mu_
  // Timeline control: the realtime clock's fields behind a sequence number (odd while written),
  // a step or frozen position, and the writers' mutex (control(), never taken while serving).
  std::atomic<uint64_t> clock_seq_{0};
  std::atomic<bool> paused_{false};
  std::atomic<int64_t> base_ns_{0}, base_v_{0};
  std::atomic<double> speed_{1.0};
  std::atomic<uint32_t> frozen_tick_{0};
  std::mutex control_mu_;
};

// SYSTEMTIME (16 bytes, UTC) of a FILETIME, as PERF_DATA_BLOCK carries it.
void store_systemtime(uint8_t* out, int64_t filetime_100ns);

}  // namespace perfsim::replayer
