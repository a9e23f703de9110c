// A small capture for unit tests: objects 2 and 238 (PerfOS), 230 and 232 (PerfProc, multi-instance),
// costly 740; three ticks; a 009 name table; Perflib's Last Counter.
#pragma once
#include "captures/capture.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "replayer/host.h"
#include "windows/constants.h"

namespace perfsim::testing {

inline perfdata::Object object(uint32_t index, int instances) {
  perfdata::Object o;
  o.name_index = index;
  o.help_index = index + 1;
  perfdata::CounterDef c;
  c.name_index = index + 100;
  c.type = perfsim::winperf::PERF_COUNTER_RAWCOUNT;
  c.size = 4;
  c.offset = 4;
  o.counters.push_back(c);
  if (instances < 0) {
    o.num_instances = perfsim::winperf::PERF_NO_INSTANCES;
    o.counter_block = perfdata::make_counter_block(4);
    perfdata::write_counter(o.counter_block, c, index);
  } else {
    o.num_instances = 0;
    for (int i = 0; i < instances; ++i) {
      o.instances.push_back(perfdata::make_instance(utf8_to_utf16("inst" + std::to_string(i)), 4));
      perfdata::write_counter(o.instances.back().counter_block, c, index * 10 + i);
    }
  }
  return o;
}

inline Bytes sample(std::initializer_list<uint32_t> indices, uint32_t tick) {
  perfdata::DataBlock d;
  perfdata::set_system_name(d, u"TESTHOST");
  d.perf_time = 1000 + tick;
  d.perf_freq = 10000000;
  for (uint32_t i : indices) d.objects.push_back(object(i, i == 230 || i == 232 ? 3 : -1));
  perfdata::fix_counts(d);
  return perfdata::build(d);
}

inline captures::Capture test_capture() {
  captures::Capture cap;
  cap.host.name = "TESTHOST";
  cap.host.interval_ms = 1000;
  cap.catalog = {{2, "PerfOS", false},
                 {238, "PerfOS", false},
                 {230, "PerfProc", false},
                 {232, "PerfProc", false},
                 {740, "PerfProc", true}};
  for (uint32_t tick = 0; tick < 3; ++tick) {
    cap.records.push_back({tick, 0, 0, "Global", 0, windows::kRegBinary, 0, sample({2, 238, 230, 232}, tick)});
    cap.records.push_back({tick, 0, 0, "Costly", 0, windows::kRegBinary, 0, sample({740}, tick)});
  }
  cap.names.push_back({"009",
                       perfdata::build_names(perfdata::make_names({{1, "740"}, {2, "System"}, {238, "Processor"}})),
                       perfdata::build_names(perfdata::make_names({{3, "System help"}}))});
  cap.registry.push_back({"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib",
                          "Last Counter",
                          windows::kRegDword,
                          {0xe4, 2, 0, 0}});
  return cap;
}
}  // namespace perfsim::testing
