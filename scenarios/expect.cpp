// A journal against a scenario's expected diagnosis (expect.h).
#include "scenarios/expect.h"

#include <fmt/core.h>

#include "windows/constants.h"

namespace perfsim::scenarios {
namespace {

// Empty when `d` shows everything of `e` the sessions carry, else what it lacks.
std::string session_lacks(const Expected& e, const journal::SessionDiagnosis& d) {
  if (!e.loop.empty()) {
    bool looped = false;
    for (const journal::Loop& l : d.loops) looped |= l.value == e.loop;
    if (!looped) return "no loop on " + e.loop;
  }
  if (!e.growth.empty() && e.growth != journal::growth_name(d.growth))
    return fmt::format("growth {}, expected {}", journal::growth_name(d.growth), e.growth);
  if (d.steps.size() < e.min_steps)
    return fmt::format("{} retries after ERROR_MORE_DATA, expected >= {}", d.steps.size(), e.min_steps);
  if (e.busy && d.busy_answers == 0) return "no ERROR_BUSY answer";
  return "";
}

// Some call of `events` returned `st` ("WERR_BUSY", or "WERR_BUSY (170)").
bool returned(const std::string& st, const std::vector<journal::CallEvent>& events) {
  for (const journal::CallEvent& ev : events) {
    const std::string name = windows::werror_name(ev.status);  // "WERR_BUSY (170)"
    if (ev.rpc_fault == 0 && (name == st || name.rfind(st + " (", 0) == 0)) return true;
  }
  return false;
}

}  // namespace

std::string diagnosis_lacks(const Expected& e, const journal::SessionDiagnosis& d,
                            const std::vector<journal::CallEvent>& session_events) {
  if (std::string lacks = session_lacks(e, d); !lacks.empty()) return lacks;
  for (const std::string& st : e.statuses)
    if (!returned(st, session_events)) return "no call returned " + st;
  return "";
}

Status check_expected(const Expected& e, const std::vector<journal::SessionDiagnosis>& sessions,
                      const std::vector<journal::CallEvent>& events) {
  const bool per_session = !e.loop.empty() || !e.growth.empty() || e.min_steps || e.busy;
  if (per_session) {
    std::string why = "no session in the journal";
    bool found = false;
    for (const journal::SessionDiagnosis& d : sessions) {
      const std::string lacks = session_lacks(e, d);
      if (lacks.empty())
        found = true;
      else
        why = fmt::format("session {}: {}", d.session, lacks);
    }
    if (!found) return Status::NotFound("the journal does not show the scenario's diagnosis: " + why);
  }
  for (const std::string& st : e.statuses)
    if (!returned(st, events)) return Status::NotFound("no call in the journal returned " + st);
  return Status::Ok();
}

}  // namespace perfsim::scenarios
