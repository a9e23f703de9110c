// A host made from a perfmon log (`perfsim import --perfmon`): the CSV or TSV relog and typeperf
// write (perfdata/pdh_csv.h) becomes a capture whose served counters format, between consecutive
// samples, to the values the log shows at the log's times.
//
// Contract:
//  - Objects and counters the profile knows keep its title indices, counter types and base
//    counters (synth/catalog.h); the raw values are the formulas run backwards
//    (perfdata::raw_for_value), with PerfTime100nSec the log's time and PerfTime/PerfFreq the
//    profile's clock. Objects and counters it does not know get fresh indices after the profile's
//    last one (a custom object set, provider "PerfmonImport") and show their values as logged:
//    PERF_COUNTER_LARGE_RAWCOUNT when every value is whole, else PERF_LARGE_RAW_FRACTION; they are
//    listed in the report.
//  - Only the objects, instances and counters the log names are served. An instance is present
//    in a sample when it has a value there or in the next sample (a rate needs both); a blank
//    cell of a present instance keeps the counter where it was.
//  - Bad input (a torn row, a path that does not parse, a time that does not advance, a value that
//    is not a number) is InvalidArgument naming the file and line, found before anything is
//    written; the capture is written to a temporary file renamed over `out` only when complete.
//  - Memory: the log is read twice, a row at a time (the first pass checks and types it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace perfsim::synth {

struct PerfmonImportReport {
  std::string host;
  std::string profile;
  uint64_t samples = 0;
  uint64_t columns = 0;
  std::vector<std::string> custom;                 // counter paths the profile does not know (custom object set)
  uint64_t unreproduced = 0;                       // values no raw counter can give (negative ones); kept as before
  std::vector<std::string> unreproduced_examples;  // "line N, column C: why" (the first few)
};

Status import_perfmon(const std::string& log, const std::string& out, const std::string& profile,
                      PerfmonImportReport& report);

}  // namespace perfsim::synth
