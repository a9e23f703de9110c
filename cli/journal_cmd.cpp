// `perfsim journal FILE...`: the collector diagnosis of journal files, as `perfsim serve` computes
// it live (journal/diagnosis.h). The file a crashed or killed server leaves (its last line cut) is
// the one an engineer needs most, so unreadable lines are skipped and counted unless --strict.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/json.h"
#include "journal/diagnosis.h"
#include "journal/event.h"
#include "scenarios/catalog.h"
#include "scenarios/expect.h"

namespace perfsim::cli {
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

void print_text(const std::vector<journal::CallEvent>& events, const std::vector<journal::SessionDiagnosis>& sessions,
                const journal::JournalRead& r) {
  const std::string files = r.files.size() == 1
                                ? r.files.front()
                                : fmt::format("{} ({} files from {})", r.files.back(), r.files.size(), r.files.front());
  fmt::print("{}: {} calls in {} sessions\n", files, events.size(), sessions.size());
  if (r.dropped)
    fmt::print("the server dropped {} calls before writing them (its journal writer fell behind or the disk refused)\n",
               r.dropped);
  fmt::print("{}", journal::render_text(sessions));
}

void print_json(const std::vector<journal::CallEvent>& events, const std::vector<journal::SessionDiagnosis>& sessions,
                const journal::JournalRead& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const journal::SessionDiagnosis& d : sessions) list.push_back(journal::to_json(d));
  fmt::print("{}\n", json_text(nlohmann::json{{"files", r.files},
                                              {"calls", events.size()},
                                              {"sessions", std::move(list)},
                                              {"skipped_lines", r.skipped},
                                              {"first_skipped", r.first_skipped},
                                              {"dropped_events", r.dropped}}));
}

}  // namespace

int run_journal(const JournalOptions& o) {
  std::vector<journal::CallEvent> events;
  journal::JournalRead read;
  if (Status s = journal::read_journal(files_to_read(o), o.strict, events, read); !s.ok())
    return fail("journal", s.message());
  report_skipped(read);
  const std::vector<journal::SessionDiagnosis> sessions = journal::diagnose(events);
  Status expected = Status::Ok();
  if (!o.scenario.empty()) {
    scenarios::Scenario sc;
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok())
      return fail("journal", s.message(), kExitUsage);
    expected = scenarios::check_expected(sc.expected, sessions, events);
  }
  if (o.json)
    print_json(events, sessions, read);
  else
    print_text(events, sessions, read);
  if (!o.scenario.empty()) {
    if (!expected.ok()) return fail("journal", "scenario " + o.scenario + ": " + expected.message());
    if (!o.json) fmt::print("scenario {}: the journal shows its diagnosis\n", o.scenario);
  }
  return kExitOk;
}

}  // namespace perfsim::cli
