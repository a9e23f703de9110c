// Does a journal show what a scenario says a collector that trips on it leaves behind
// (Scenario::expected)? The tests of every scenario ask this of the journal of their collector run.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "journal/diagnosis.h"
#include "journal/event.h"
#include "scenarios/scenario.h"

namespace perfsim::scenarios {

// Ok when some session of `sessions` shows every expectation of `e` (a loop on e.loop, the growth,
// at least e.min_steps retries, ERROR_BUSY answers) and every status of e.statuses was returned by
// some call of `events`, and `events` (in journal order) hold e.calls in that order; else NotFound
// saying the first that is missing.
Status check_expected(const Expected& e, const std::vector<journal::SessionDiagnosis>& sessions,
                      const std::vector<journal::CallEvent>& events);

// One session: empty when it shows every expectation of `e` (statuses among its own calls,
// `session_events`), else the first it lacks ("no loop on Global").
std::string diagnosis_lacks(const Expected& e, const journal::SessionDiagnosis& d,
                            const std::vector<journal::CallEvent>& session_events);

}  // namespace perfsim::scenarios
