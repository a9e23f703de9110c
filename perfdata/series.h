// Counter paths as Windows writes them and a counter's formatted values sample after sample: what
// `perfsim series` prints in relog's CSV layout.
//
// A path is PDH's: [\\MACHINE]\Object[(Parent/Instance#Index)]\Counter (Microsoft, "Specifying a
// Counter Path", learn.microsoft.com/windows/win32/perfctrs/specifying-a-counter-path); `*` as the
// instance stands for every instance of the object in the first sample. Names are matched without
// regard to case against a name table (the Counter value of a language), or given as title indices.
//
// Contract: resolve_columns() checks every path against the first sample(s) and says which part
// is missing; series_row() never fails: a value the formula cannot give (the first sample of a
// rate, an instance gone) is nullopt.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "perfdata/counters.h"
#include "perfdata/model.h"

namespace perfsim::perfdata {

struct CounterPath {
  std::string machine;   // without the leading "\\"; empty: not given
  std::string object;    // name or title index
  std::string instance;  // as PDH names it ("_Total", "svchost#1", "0,1"); "*" = all
  bool has_instance = false;
  std::string counter;  // name or title index
};

// InvalidArgument says what to write ("\Processor(_Total)\% Processor Time").
Status parse_counter_path(std::string_view text, CounterPath& out);

// One column: a resolved path (the machine named, the instance expanded) and where its value is.
struct SeriesColumn {
  std::string path;      // \\MACHINE\Object(Instance)\Counter with the host's own names
  size_t source = 0;     // which of the caller's sample sources (e.g. 0 Global, 1 Costly)
  uint32_t object = 0;   // title index
  std::string instance;  // "" for a single-instance object
  uint32_t counter = 0;  // title index
};

// `firsts[i]`: source i's first sample (nullptr when it has none); `names`: title index -> name.
Status resolve_columns(const std::vector<const DataBlock*>& firsts, const std::map<uint32_t, std::string>& names,
                       const std::vector<CounterPath>& asked, std::vector<SeriesColumn>& out);

// The formatted value (perfdata/counters.h's typeperf formulas) of every column between `prev`
// (per source; nullptr for the first sample) and `cur` (per source; nullptr: no sample).
void series_row(const std::vector<const DataBlock*>& prev, const std::vector<const DataBlock*>& cur,
                const std::vector<SeriesColumn>& columns, std::vector<std::optional<double>>& values,
                const FormatOptions& opt = {});

}  // namespace perfsim::perfdata
