// `perfsim journal FILE`: the collector diagnosis of a journal file, as `perfsim serve` computes
// it live (journal/diagnosis.h).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/json.h"
#include "journal/diagnosis.h"
#include "journal/event.h"

namespace perfsim::cli {

int run_journal(const JournalOptions& o) {
  std::vector<journal::CallEvent> events;
  if (Status s = journal::read_journal_file(o.file, events); !s.ok()) return fail("journal", s.message());
  const std::vector<journal::SessionDiagnosis> sessions = journal::diagnose(events);
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const journal::SessionDiagnosis& d : sessions) list.push_back(journal::to_json(d));
    fmt::print("{}\n", json_text(list));
  } else {
    fmt::print("{}: {} calls in {} sessions\n{}", o.file, events.size(), sessions.size(),
               journal::render_text(sessions));
  }
  return kExitOk;
}

}  // namespace perfsim::cli
