#include "replayer/fleet.h"

#include <cstdio>

namespace perfsim::replayer {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::string fleet_host_name(const std::string& pattern, uint32_t n, uint32_t count) {
  char num[16];
  std::snprintf(num, sizeof num, "%04u", n);
  std::string out = pattern;
  const size_t at = out.find("{n}");
  if (at == std::string::npos) return count <= 1 ? out : out + "-" + num;  // names must differ
  return out.replace(at, 3, num);
}

Status make_fleet_member(std::shared_ptr<const Recording> rec, const FleetSpec& spec, uint32_t n,
                         std::shared_ptr<SimulatedHost>& out) {
  if (spec.variation < 0 || spec.variation > 1) return Status::InvalidArgument("fleet variation must be within 0..1");
  HostOptions opt = spec.base;
  const uint64_t seed = mix(spec.seed * 0x100000001B3ull + n);
  opt.identity.system_name = fleet_host_name(spec.name_pattern, n, spec.count);
  opt.identity.seed = seed;
  opt.identity.variation = spec.variation;
  const double u = double(mix(seed) >> 11) / double(1ull << 53);  // [0, 1)
  opt.identity.clock_offset_100ns = int64_t((2 * u - 1) * spec.clock_spread_s * 1e7);
  return SimulatedHost::create(std::move(rec), opt, out);
}

Status make_fleet(std::shared_ptr<const Recording> rec, const FleetSpec& spec,
                  std::vector<std::shared_ptr<SimulatedHost>>& out) {
  if (spec.count == 0) return Status::InvalidArgument("a fleet needs count >= 1");
  out.clear();
  out.reserve(spec.count);
  for (uint32_t n = 1; n <= spec.count; ++n) {
    std::shared_ptr<SimulatedHost> h;
    if (Status s = make_fleet_member(rec, spec, n, h); !s.ok()) return s;
    out.push_back(std::move(h));
  }
  return Status::Ok();
}

}  // namespace perfsim::replayer
