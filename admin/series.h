// A host's counters over its capture's timeline, formatted as typeperf shows them
// (perfdata/counters.h's format_object, as `perfsim dump` and `perfsim query` print): what the
// dashboard plots. Samples are read as recorded (SimulatedHost::content at a tick), so the
// serving timeline is neither moved nor waited on.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "replayer/host.h"

namespace perfsim::admin {

// {"objects": [{"object", "index", "query" ("Global"/"Costly"), "instances": [...], "counters": [...]}]}
// from the first sample, names from the host's 009 Counter table (#N when it has none).
Status host_counters(const replayer::SimulatedHost& host, nlohmann::json& out);

struct SeriesRequest {
  std::string object;         // name (case-insensitive) or title index
  std::string instance;       // "" for a single-instance object; typeperf's name otherwise ("_Total", "svchost#1")
  std::string counter;        // name or title index
  uint32_t max_points = 500;  // a longer timeline is sampled evenly (each point against its previous sample)
};

// {"object", "instance", "counter", "type", "points": [{"tick", "t" (s since the first sample),
// "value"} or {"tick", "t", "error"}]}. NotFound names what the host does not have.
Status host_series(const replayer::SimulatedHost& host, const SeriesRequest& req, nlohmann::json& out);

}  // namespace perfsim::admin
