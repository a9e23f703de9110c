// A scenario turned into what `perfsim serve` runs: its hosts as a serve run describes hosts
// (replayer/fleet_file.h), the captures its synth specs make (in memory, under a key that stands
// for a capture path in the RecordingCache), and its fault plan.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "replayer/faults.h"
#include "replayer/fleet_file.h"
#include "scenarios/scenario.h"

namespace perfsim::scenarios {

struct ServePlan {
  std::vector<replayer::FleetHost> hosts;             // capture: a file, or a key of `captures`
  std::map<std::string, captures::Capture> captures;  // "scenario:NAME/host0" -> the synthesized host
  std::shared_ptr<const replayer::FaultPlan> faults;  // null: the scenario has none
};

// Synthesizes every spec host (deterministic: the spec's seed) and parses the fault plan.
// `listen` (serve's --listen, in order) replaces the scenario hosts' addresses; more --listen
// than hosts is InvalidArgument naming the count. The fault plan is checked against `limits` (the
// server's idle timeout, as --faults is).
Status plan_serve(const Scenario& s, const std::vector<std::string>& listen, ServePlan& out,
                  const replayer::FaultLimits& limits = {});

}  // namespace perfsim::scenarios
