// A field-bug scenario: a known collector failure as a small data file (README.md, "A scenario
// file"): what it reproduces, the public source, the host behaviour, what a correct collector does,
// how to point the collectors people use at it, its host(s) (a capture, or a synth spec inline or
// beside the file, with profile, quirks and timeline), a fault plan, and the journal diagnosis a
// collector that trips on it leaves.
//
// Read with core/config.h's checked reader: unknown keys and wrongly typed values are errors naming
// the file, line and key; `source` must be an https URL.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "replayer/fleet_file.h"
#include "synth/spec.h"

namespace perfsim::scenarios {

// One call the journal must hold (journal::CallEvent); an empty field matches anything. Key and
// value compare without case, as registry names do (MS-RRP 3.1.1.2).
struct ExpectedCall {
  std::string op;          // "QueryValue", "OpenKey" (journal::opnum_label)
  std::string key;         // the handle's key path: "HKEY_PERFORMANCE_DATA", "HKLM\\SYSTEM\\..."
  std::string value;       // the value asked (QueryValue) or the subkey opened (OpenKey)
  std::string status;      // "WERR_OK", as in statuses
  uint32_t max_bytes = 0;  // the answer carried at most this many bytes (0: no bound)
  std::string applied;     // one of the names the answer's `applied` lists ("event:reboot")
};

// What the journal of a collector session against the scenario shows (journal/diagnosis.h).
struct Expected {
  std::string text;        // the diagnosis in words, for `scenarios show`
  std::string loop;        // a loop (same size offered again and again) on this value
  std::string growth;      // the session's growth: fixed, exact, doubling, plus-n, mixed (journal::growth_name)
  uint32_t min_steps = 0;  // at least this many retries after ERROR_MORE_DATA
  bool busy = false;       // ERROR_BUSY answers
  std::vector<std::string> statuses;  // statuses some call got ("WERR_ACCESS_DENIED")
  std::vector<ExpectedCall> calls;    // calls the journal holds in this order (others between them)
  // Values none of whose asking the session shows ("Global", "1848"; an index list naming 1848
  // asks 1848): a collector that read one of them did not fall for the bug (processor-groups:
  // 238 read beside Global is not a 238-only collector).
  std::vector<std::string> never_asked;
};

// What a collector that handles the scenario does, judged per session by `perfsim check` and
// `perfsim journal --scenario` (verdict.h; README.md, "[expect]"). Every field has the default a
// correct collector meets against any host; a scenario's [expect] changes the ones its bug is about.
struct Handling {
  std::string text;                 // in words, for `scenarios show`
  bool data = true;                 // some perf-data query (Global, Costly, an index list) answered WERR_OK with data
  uint32_t max_tries = 10;          // at most this many calls for one value to get past ERROR_MORE_DATA; 0: no bound
  bool no_loop = true;              // never the same size again after ERROR_MORE_DATA, 3 times (journal::Loop)
  bool close_handles = true;        // every handle it opened, closed
  double busy_backoff_ms = 0;       // > 0: retries after ERROR_BUSY, each at least this long after the answer
  uint32_t max_busy_retries = 0;    // retries after ERROR_BUSY in a session; 0: no bound
  std::vector<std::string> values;  // values it asks (QueryValue names), every one
  std::vector<std::string> once;    // statuses that answer at most one call of a session (nothing retried into them)
  std::string exit = "zero";        // the collector command's exit: "zero", "nonzero" or "any" (perfsim check)
  // The session must not show the scenario's [diagnosis]: where the diagnosis is the bug itself
  // (a loop, a 238-only read), not only the conditions any collector meets (a reboot crossed).
  bool no_diagnosis = false;
};

// The expectations `perfsim check --skip-expect NAME` can drop, as [expect] names them: "data, max_tries, ...".
std::string expect_names();
// Drops expectation `name` (a correct collector of yours does not do it: a CPU-only one asks no
// PerfProc value); InvalidArgument listing expect_names() for another name.
Status skip_expect(const std::string& name, Handling& h);
// "zero", "nonzero", "any"; InvalidArgument says so.
Status check_exit_expectation(const std::string& exit);
// Does a command's exit `code` (a signal: never) meet `exit`? Empty when it does, else why.
std::string exit_unmet(const std::string& exit, int code);

struct ScenarioHost {
  replayer::FleetHost fleet;        // listen (default 127.0.0.1:0), timeline, profile, quirks, smb_allow
  std::string capture;              // a capture file (relative: beside the scenario), or
  std::optional<synth::Spec> spec;  // a synth spec (`synth` inline, or `spec = "FILE"` beside it)
};

struct Scenario {
  std::string name, title;
  std::string reproduces;                      // the field bug in a sentence or two
  std::string source;                          // https URL of the issue or article
  std::vector<std::string> see_also;           // more https URLs
  std::string source_says;                     // what the source reports (quoted or paraphrased)
  std::string behaviour;                       // what the simulated host does
  std::string correct;                         // what a correct collector does
  std::map<std::string, std::string> clients;  // python3-samba, impacket, typeperf, get-counter
  bool smb = false;                            // needs `perfsim serve --smb` (root, smbd)
  std::string origin;                          // the file it came from ("builtin:NAME" for built-in ones)
  std::vector<ScenarioHost> hosts;
  config::Json faults;  // the [[fault]] tables (replayer/faults.h), or null
  Expected expected;
  Handling handling;  // [expect]; the defaults when the file has none
};

// Reads a scenario file's tree. `beside(name, text)` reads a file named in the scenario (a spec,
// a names file) relative to it; NotFound when there is none.
using BesideReader = std::function<Status(const std::string& name, std::string& text, std::string& path)>;
Status read_scenario(const config::Doc& doc, const BesideReader& beside, Scenario& out);

nlohmann::json to_json(const Scenario& s);
nlohmann::json to_json(const Handling& h);
// The expectations in a line: the text, then each rule ("gets perf data; closes its handles").
std::string handling_text(const Handling& h);
// `perfsim scenarios show NAME`: every field, for a person.
std::string render_text(const Scenario& s);

}  // namespace perfsim::scenarios
