// `perfsim journal FILE...`: the collector diagnosis of journal files, as `perfsim serve` computes
// it live (journal/diagnosis.h). The file a crashed or killed server leaves (its last line cut) is
// the one an engineer needs most, so unreadable lines are skipped and counted unless --strict.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "journal/diagnosis.h"
#include "journal/event.h"
#include "scenarios/catalog.h"
#include "scenarios/expect.h"
#include "scenarios/verdict.h"

namespace perfsim::cli {
namespace {

struct JournalOptions {
  // `perfsim serve --journal FILE` files: one FILE is read with its rotated files (FILE.K-1 ..
  // FILE.1, then FILE); several are read as given, in that order.
  std::vector<std::string> files;
  bool json = false;
  bool strict = false;  // an unreadable line fails the whole read (else it is skipped and counted)
  // Also judge every session against this scenario: did the collector handle it ([expect];
  // exit 1 when one did not), and does it show the bug's [diagnosis]?
  std::string scenario;
  bool shows_diagnosis = false;  // instead: exit 0 when some session shows the diagnosis (the bug)
  std::vector<std::string> scenario_dirs;
};

}  // namespace
namespace {

// One FILE is read with its rotated files (oldest first); several are read as given.
std::vector<std::string> files_to_read(const JournalOptions& o) {
  return o.files.size() == 1 ? journal::journal_set(o.files.front()) : o.files;
}

// To stderr: each of the first few skipped lines, then how many there were in all.
void report_skipped(const journal::JournalRead& r) {
  if (r.skipped == 0) return;
  for (const std::string& why : r.first_skipped) fmt::print(stderr, "perfsim journal: {} (line skipped)\n", why);
  fmt::print(stderr, "perfsim journal: skipped {} unreadable line{} (first: {}); --strict refuses them\n", r.skipped,
             r.skipped == 1 ? "" : "s", r.first_skipped.front());
}

size_t count_host_events(const std::vector<journal::CallEvent>& events) {
  return size_t(
      std::count_if(events.begin(), events.end(), [](const journal::CallEvent& e) { return e.is_host_event(); }));
}

void print_text(const std::vector<journal::CallEvent>& events, const std::vector<journal::SessionDiagnosis>& sessions,
                const journal::JournalRead& r) {
  const std::string files = r.files.size() == 1
                                ? r.files.front()
                                : fmt::format("{} ({} files from {})", r.files.back(), r.files.size(), r.files.front());
  const size_t host_events = count_host_events(events);
  fmt::print("{}: {} calls in {} sessions, {} host event{}\n", files, events.size() - host_events, sessions.size(),
             host_events, host_events == 1 ? "" : "s");
  // The host's timeline events (replayer/README.md, "Events") where they happened among the calls.
  for (const journal::CallEvent& e : events)
    if (e.is_host_event()) {
      const nlohmann::json j = journal::to_json(e);
      fmt::print("host event: {} on {} at {} (seq {}): {}\n", journal::host_event_kind(e), journal::text(e.host),
                 j.at("time").get<std::string>(), e.seq, j.at("event").dump());
    }
  if (r.dropped)
    fmt::print("the server dropped {} calls before writing them (its journal writer fell behind or the disk refused)\n",
               r.dropped);
  fmt::print("{}", journal::render_text(sessions));
}

// Per session: handled or not (and what it missed), and whether it shows the bug's diagnosis.
void print_verdicts(const std::string& name, const std::vector<scenarios::SessionVerdict>& verdicts) {
  size_t handled = 0;
  for (const scenarios::SessionVerdict& v : verdicts) {
    handled += v.handled() ? 1 : 0;
    fmt::print("scenario {}: {}; {}\n", name, scenarios::render_text(v),
               v.shows_diagnosis ? "shows the bug's diagnosis"
                                 : "does not show the bug's diagnosis (" + v.diagnosis_lacks + ")");
  }
  fmt::print("scenario {}: {} of {} sessions handled it\n", name, handled, verdicts.size());
}

bool all_handled(const std::vector<scenarios::SessionVerdict>& verdicts) {
  if (verdicts.empty()) return false;
  for (const scenarios::SessionVerdict& v : verdicts)
    if (!v.handled()) return false;
  return true;
}

void print_json(const std::vector<journal::CallEvent>& events, const std::vector<journal::SessionDiagnosis>& sessions,
                const journal::JournalRead& r, const std::string& scenario,
                const std::vector<scenarios::SessionVerdict>& verdicts) {
  nlohmann::json list = nlohmann::json::array();
  for (const journal::SessionDiagnosis& d : sessions) list.push_back(journal::to_json(d));
  nlohmann::json host_events = nlohmann::json::array();
  for (const journal::CallEvent& e : events)
    if (e.is_host_event()) host_events.push_back(journal::to_json(e));
  nlohmann::json out{{"files", r.files},
                     {"calls", events.size() - host_events.size()},
                     {"host_events", std::move(host_events)},
                     {"sessions", std::move(list)},
                     {"skipped_lines", r.skipped},
                     {"first_skipped", r.first_skipped},
                     {"dropped_events", r.dropped}};
  if (!scenario.empty()) {
    nlohmann::json v = nlohmann::json::array();
    for (const scenarios::SessionVerdict& s : verdicts) v.push_back(scenarios::to_json(s));
    out["scenario"] = {{"name", scenario}, {"handled", all_handled(verdicts)}, {"verdicts", std::move(v)}};
  }
  fmt::print("{}\n", json_text(out));
}

}  // namespace

int run_journal(const JournalOptions& o) {
  std::vector<journal::CallEvent> events;
  journal::JournalRead read;
  if (Status s = journal::read_journal(files_to_read(o), o.strict, events, read); !s.ok())
    return fail("journal", s.message());
  report_skipped(read);
  const std::vector<journal::SessionDiagnosis> sessions = journal::diagnose(events);
  if (o.shows_diagnosis && o.scenario.empty())
    return fail("journal", "--shows-diagnosis needs --scenario NAME", kExitUsage);
  Status expected = Status::Ok();
  std::vector<scenarios::SessionVerdict> verdicts;
  if (!o.scenario.empty()) {
    scenarios::Scenario sc;
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok())
      return fail("journal", s.message(), kExitUsage);
    expected = scenarios::check_expected(sc.expected, sessions, events);
    verdicts = scenarios::judge(sc.handling, sc.expected, events);
  }
  if (o.json)
    print_json(events, sessions, read, o.scenario, verdicts);
  else
    print_text(events, sessions, read);
  if (o.scenario.empty()) return kExitOk;
  if (o.shows_diagnosis) {  // the question asked before per-session verdicts: is the bug in the journal?
    if (!expected.ok()) return fail("journal", "scenario " + o.scenario + ": " + expected.message());
    if (!o.json) fmt::print("scenario {}: the journal shows its diagnosis\n", o.scenario);
    return kExitOk;
  }
  if (!o.json) print_verdicts(o.scenario, verdicts);
  if (verdicts.empty()) return fail("journal", "scenario " + o.scenario + ": no collector session in the journal");
  return all_handled(verdicts) ? kExitOk : kExitFailure;
}

void add_journal(CLI::App& app, int& rc) {
  auto o = std::make_shared<JournalOptions>();
  JournalOptions& journal = *o;
  auto* c_journal = app.add_subcommand(
      "journal", "Diagnose the collector sessions of a journal file written by perfsim serve --journal FILE");
  c_journal
      ->add_option("files", journal.files,
                   "The JSON-lines journal file (read with its rotated files FILE.K-1 .. FILE.1 first), or several "
                   "files read in the order given")
      ->required();
  c_journal->add_flag("--json", journal.json,
                      "Print the diagnosis as JSON: {files, calls, host_events: [...], sessions: [...], skipped_lines, "
                      "dropped_events}");
  c_journal->add_flag("--strict", journal.strict,
                      "Refuse the file at its first unreadable line (default: skip such lines and count them)");
  c_journal->add_option("--scenario", journal.scenario,
                        "Also judge every session against this scenario: handled it or not (its [expect]; exit 1 "
                        "when one did not) and whether it shows the bug's diagnosis");
  c_journal->add_flag("--shows-diagnosis", journal.shows_diagnosis,
                      "With --scenario: exit 0 when some session shows the scenario's diagnosis (the bug's trace), "
                      "1 when none does, instead of the per-session verdict");
  c_journal->add_option("--scenario-dir", journal.scenario_dirs, "A directory of your own scenario files")
      ->check(input_dir());
  c_journal->callback([o, &rc] { rc = run_journal(*o); });
}

}  // namespace perfsim::cli
