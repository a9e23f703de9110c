// FILETIME (100 ns since 1601-01-01, UTC) <-> SYSTEMTIME, proleptic Gregorian (Howard Hinnant's
// civil-date algorithms): the clocks of a PERF_DATA_BLOCK (PerfTime100nSec, SystemTime) and of
// text that names times (specs, perfmon logs). filetime_of ignores day_of_week and does not check
// the fields' ranges.
#pragma once
#include <cstdint>

#include "perfdata/model.h"

namespace perfsim::perfdata {

SystemTime system_time_of(int64_t filetime);
int64_t filetime_of(const SystemTime& t);

}  // namespace perfsim::perfdata
