// For tests that a command's work grows linearly with instances (issue 44): a capture with one
// object of n instances (child_cpu.h measures the command).
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "captures/writer.h"
#include "perfdata/model.h"
#include "tests/common/child_cpu.h"
#include "tests/common/test_capture.h"

namespace perfsim::testing {

// test_capture() with three samples of object 230 (PerfProc's Process) holding `n` instances
// ("inst0".."inst<n-1>"; counter 330), written to `path`.
inline void write_many_instances(const std::string& path, int n, const std::string& host = "TESTHOST") {
  captures::Capture cap = test_capture();
  cap.host.name = host;
  cap.records.clear();
  for (uint32_t tick = 0; tick < 3; ++tick) {
    perfdata::DataBlock d;
    perfdata::set_system_name(d, utf8_to_utf16(host));
    d.perf_time = 1000 + tick;
    d.perf_freq = 10000000;
    d.objects.push_back(object(230, n));
    perfdata::fix_counts(d);
    cap.records.push_back({tick, 0, 0, "Global", 0, windows::kRegBinary, 0, perfdata::build(d)});
  }
  REQUIRE(captures::write_capture(path, cap).ok());
}

}  // namespace perfsim::testing
