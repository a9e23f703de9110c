// Many hosts from one capture: N SimulatedHosts over one shared Recording, each with its own
// system name, clock offset and seeded value variation. Deterministic: the same spec gives the same
// fleet. Memory per host is its identity and timeline state (hundreds of bytes), never a payload.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "replayer/host.h"

namespace perfsim::replayer {

struct FleetSpec {
  uint32_t count = 1;
  std::string name_pattern = "HOST-{n}";  // {n}: the host number from 1, zero-padded to 4 digits
  double clock_spread_s = 0;              // clock offsets drawn within +-spread
  double variation = 0;                   // per-host counter factor within [1 - variation, 1]
  uint64_t seed = 1;
  HostOptions base;  // timeline and quirks shared by every host
};

// The name of host `n` (1-based) of `count` under `pattern`: {n} replaced, else "-NNNN" appended
// so names differ; a fleet of one without {n} is the pattern itself (a fleet entry
// `name = "W2K3"` serves W2K3, not W2K3-0001).
std::string fleet_host_name(const std::string& pattern, uint32_t n, uint32_t count);
// Host number `n` (1-based) of the fleet `spec` describes, alone.
Status make_fleet_member(std::shared_ptr<const Recording> rec, const FleetSpec& spec, uint32_t n,
                         std::shared_ptr<SimulatedHost>& out);
Status make_fleet(std::shared_ptr<const Recording> rec, const FleetSpec& spec,
                  std::vector<std::shared_ptr<SimulatedHost>>& out);

}  // namespace perfsim::replayer
