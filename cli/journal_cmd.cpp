// `perfsim journal FILE`: the collector diagnosis of a journal file, as `perfsim serve` computes
// it live (journal/diagnosis.h).
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

int run_journal(const JournalOptions& o) {
  std::vector<journal::CallEvent> events;
  if (Status s = journal::read_journal_file(o.file, events); !s.ok()) return fail("journal", s.message());
  const std::vector<journal::SessionDiagnosis> sessions = journal::diagnose(events);
  Status expected = Status::Ok();
  if (!o.scenario.empty()) {
    scenarios::Scenario sc;
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok())
      return fail("journal", s.message(), kExitUsage);
    expected = scenarios::check_expected(sc.expected, sessions, events);
  }
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const journal::SessionDiagnosis& d : sessions) list.push_back(journal::to_json(d));
    fmt::print("{}\n", json_text(list));
  } else {
    fmt::print("{}: {} calls in {} sessions\n{}", o.file, events.size(), sessions.size(),
               journal::render_text(sessions));
  }
  if (!o.scenario.empty()) {
    if (!expected.ok()) return fail("journal", "scenario " + o.scenario + ": " + expected.message());
    if (!o.json) fmt::print("scenario {}: the journal shows its diagnosis\n", o.scenario);
  }
  return kExitOk;
}

}  // namespace perfsim::cli
