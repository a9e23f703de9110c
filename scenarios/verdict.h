// Did a collector handle the scenario? One verdict per collector session of a journal, against
// the scenario's [expect] (Handling): what `perfsim check` prints and exits on, and what
// `perfsim journal FILE --scenario NAME` reports beside the bug's diagnosis (expect.h).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/diagnosis.h"
#include "journal/event.h"
#include "scenarios/scenario.h"
#include "scenarios/values.h"

namespace perfsim::scenarios {

struct SessionVerdict {
  uint64_t session = 0;
  std::string host, peer, transport;
  uint64_t calls = 0;
  double seconds = 0;              // first call to last
  std::vector<std::string> unmet;  // each expectation of Handling it missed, in words; empty: handled
  bool shows_diagnosis = false;    // it shows the scenario's [diagnosis] (the bug's trace)
  std::string diagnosis_lacks;     // when not: the first thing missing
  std::string silent_after;        // its last call was answered ERROR_MORE_DATA: "N bytes" (then nothing came)
  bool handled() const { return unmet.empty(); }
};

// The expectations of `h` that one session missed; `session_events` are its calls in order.
std::vector<std::string> unmet(const Handling& h, const journal::SessionDiagnosis& d,
                               const std::vector<journal::CallEvent>& session_events);

// One verdict per session of `events` (journal::diagnose's order), against the scenario's
// handling and its diagnosis.
std::vector<SessionVerdict> judge(const Handling& h, const Expected& e, const std::vector<journal::CallEvent>& events);

nlohmann::json to_json(const SessionVerdict& v);
// "session 3 (W2K-EXCH01, 127.0.0.1:51234, tcp, 12 calls): handled" or "...: NOT handled: a; b".
std::string render_text(const SessionVerdict& v);

// Did the collector meet one of the scenario's events (a reboot, a wrap, a lodctr ...)? A run
// that never polled across it says nothing of how the collector handles it: NOT EXERCISED.
struct EventVerdict {
  std::string host, kind;  // "APP-REBOOT01", "reboot"
  uint32_t index = 0;      // its place among the host's events, from 1
  double at_s = 0;         // when it comes: seconds after the host started (real ones: the speed applied)
  bool exercised = false;  // the host's calls came before it and at or after it
  std::string why;         // when not: "the reboot is at 10 s; the collector stopped at 0.3 s: poll past it"
};
// An event at `at_s` of a host whose timeline started at `start_us` (wall clock, UTC us) against
// the calls of `events` to `host`.
EventVerdict judge_event(const std::string& host, const std::string& kind, double at_s, int64_t start_us,
                         const std::vector<journal::CallEvent>& events);
nlohmann::json to_json(const EventVerdict& v);
// "event 1 on APP-REBOOT01 (reboot at 10 s): exercised" or "...: NOT EXERCISED: the reboot is ...".
std::string render_text(const EventVerdict& v);

// A `perfsim check` run as JUnit XML reads it.
struct JunitRun {
  std::string suite;            // the scenario (or captures, fleet)
  std::string command;          // the collector as a person names it: "perf_collector.py"
  std::string command_failure;  // empty: its exit met the expectation
  std::string out, err;         // its stdout and stderr
  std::vector<SessionVerdict> verdicts;
  std::vector<ValueVerdict> values;
  std::string values_failure;
  std::vector<EventVerdict> events;
  double seconds = 0;
};

// JUnit XML (the schema CI systems read: testsuites/testsuite/testcase/failure/system-out/
// system-err). Names stay the same from run to run (no port, no time): classname "perfsim check
// SUITE"; testcases "collector COMMAND" (failing with command_failure, carrying the collector's
// stdout and stderr), "HOST session N" per session, "value PATH" per reported value, "HOST event
// K KIND" per scenario event (failing when not exercised).
std::string junit_xml(const JunitRun& run);

}  // namespace perfsim::scenarios
