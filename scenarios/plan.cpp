// A scenario as a serve run's hosts, captures and faults (plan.h).
#include "scenarios/plan.h"

#include <fmt/core.h>

#include "synth/synth.h"

namespace perfsim::scenarios {

Status plan_serve(const Scenario& s, const std::vector<std::string>& listen, ServePlan& out,
                  const replayer::FaultLimits& limits) {
  if (listen.size() > s.hosts.size())
    return Status::InvalidArgument(fmt::format("scenario {} has {} host(s); {} --listen given (one per host, in order)",
                                               s.name, s.hosts.size(), listen.size()));
  ServePlan plan;
  for (size_t i = 0; i < s.hosts.size(); ++i) {
    const ScenarioHost& h = s.hosts[i];
    replayer::FleetHost f = h.fleet;
    if (i < listen.size()) f.listen = listen[i];
    if (h.spec) {
      f.capture = fmt::format("scenario:{}/host{}", s.name, i);
      captures::Capture cap;
      if (Status st = synth::synthesize(*h.spec, cap); !st.ok())
        return Status::InvalidArgument(fmt::format("{}: host[{}]: {}", s.origin, i, st.message()));
      plan.captures.emplace(f.capture, std::move(cap));
    } else {
      f.capture = h.capture;
    }
    plan.hosts.push_back(std::move(f));
  }
  if (!s.faults.is_null()) {
    config::Doc doc;
    doc.origin = s.origin;
    doc.root = {{"fault", s.faults}};
    if (Status st = replayer::fault_plan_of(doc, plan.faults, limits); !st.ok()) return st;
  }
  out = std::move(plan);
  return Status::Ok();
}

}  // namespace perfsim::scenarios
