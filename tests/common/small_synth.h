// A small synthetic 2016 host for tests that need real-looking data (every object the 2016
// profile has, with few processes so it builds fast).
#pragma once
#include <catch2/catch.hpp>

#include "captures/capture.h"
#include "synth/synth.h"

namespace perfsim::testing {

inline captures::Capture small_synth_capture(uint32_t processes = 8, uint32_t threads_max = 3,
                                             uint32_t duration_s = 60) {
  synth::Spec spec;
  spec.profile = "2016";
  spec.process_count = processes;
  spec.threads_max = threads_max;
  spec.duration_s = duration_s;
  spec.interval_ms = 15000;
  captures::Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  return cap;
}

}  // namespace perfsim::testing
