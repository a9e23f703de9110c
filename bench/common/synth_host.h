// The synthetic host the server benches measure, so they measure the same kind of host: the 2016
// profile, one 15 s sample, 1-30 threads per process (520 processes give a Global of about 1 MB),
// and the server roles asked for (synth/roles.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "synth/synth.h"

namespace perfsim::bench {

inline Status synth_bench_host(uint32_t processes, captures::Capture& out, std::vector<std::string> roles = {}) {
  synth::Spec spec;
  spec.profile = "2016";
  spec.process_count = processes;
  spec.threads_min = 1;
  spec.threads_max = 30;
  spec.duration_s = 15;
  spec.interval_ms = 15000;
  spec.roles = std::move(roles);
  return synth::synthesize(spec, out);
}

}  // namespace perfsim::bench
