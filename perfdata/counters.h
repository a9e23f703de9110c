// Formatted counter values: what perfmon/typeperf/PDH show for a counter, computed from two raw
// samples of the perf data (or one, for the types that need only one).
//
// Contract:
//  - Every counter type named in winperf.h is handled: it yields a value, or says why not
//    (text/no-data/base types have no value; two-sample types need a previous sample; a zero or
//    negative denominator, a counter that went backwards, a missing base counter or counter data
//    outside its block make the value invalid). Nothing throws; nothing reads outside a block.
//  - Formulas follow the documented ones (MicrosoftDocs win32 "Calculating Counter Values" and the
//    Windows Server 2003 Deployment Kit counter-type pages); counters.cpp cites the source per type.
//  - Time bases: PERF_TIMER_TICK types use the PERF_DATA_BLOCK's PerfTime/PerfFreq, PERF_TIMER_100NS
//    types PerfTime100nSec (10 MHz), PERF_OBJECT_TIMER types the object's PerfTime/PerfFreq.
//  - CounterSize (4 or 8 bytes) decides how the raw value is read, whatever the type's size bits say.
//  - DefaultScale is NOT applied: it only sets where perfmon's chart draws a line (see
//    display_scaled()); typeperf prints unscaled values.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"
#include "perfdata/model.h"

namespace perfsim::perfdata {

// The clocks and counter data of one sample of one instance (or of a single-instance object).
struct Sample {
  int64_t perf_time = 0;                 // PERF_DATA_BLOCK PerfTime
  int64_t perf_freq = 0;                 // PERF_DATA_BLOCK PerfFreq
  int64_t perf_time_100ns = 0;           // PERF_DATA_BLOCK PerfTime100nSec
  int64_t object_perf_time = 0;          // PERF_OBJECT_TYPE PerfTime
  int64_t object_perf_freq = 0;          // PERF_OBJECT_TYPE PerfFreq
  const Bytes* counter_block = nullptr;  // starts with its ByteLength DWORD
};
Sample make_sample(const DataBlock& block, const Object& object, const Bytes& counter_block);

enum class ValueStatus {
  kOk,
  kNoValue,          // text, no-data, histogram and base types: nothing to show
  kNeedsTwoSamples,  // first sample of a type that needs two
  kInvalid,          // see FormattedValue::error
};

struct FormattedValue {
  ValueStatus status = ValueStatus::kInvalid;
  double value = 0;   // meaningful only when valid()
  uint64_t raw = 0;   // the current raw counter value as read (exact, for raw and hex types)
  std::string error;  // why there is no value, for people
  bool valid() const { return status == ValueStatus::kOk; }
};

struct FormatOptions {
  // PDH caps percentages at 100 unless the caller passes PDH_FMT_NOCAP100 ("Counter values greater
  // than 100 ... will not be reset to 100. The default behavior is that counter values are capped",
  // PdhGetFormattedCounterValue docs). Off by default: the formula's own value.
  bool cap100 = false;
  // A 32-bit counter (CounterSize 4) whose raw value went back is differenced modulo 2^32, as an
  // unsigned 32-bit subtraction (windows_exporter PR 1637), instead of giving no value ([CCV]):
  // what `perfsim check` expects of a collector across counter-wrap-32bit's wrap. Off by default.
  bool unwrap32 = false;
};

// Value of object.counters[counter_index] (definitions taken from `object`, the current sample's).
// `prev` may be null (first sample). Types that need a base use the definition right after.
FormattedValue format_counter(const Object& object, size_t counter_index, const Sample* prev, const Sample& cur,
                              const FormatOptions& opt = {});

struct CounterValue {
  size_t counter_index = 0;  // into Object::counters
  uint32_t name_index = 0;
  uint32_t type = 0;
  FormattedValue value;
};

struct InstanceValues {
  std::string name;                    // UTF-8, as PDH names it: "parent/name#n"; empty for a single-instance object
  std::vector<CounterValue> counters;  // every counter except the base types, in definition order
};

// typeperf-like values of the object named `object_name_index` in `cur`, instance by instance.
// Instances are matched to `prev` as PDH matches them: by parent name, name, unique id and, among
// duplicates, occurrence (#n). `prev` may be null (first sample). NotFound if `cur` lacks the object.
Status format_object(const DataBlock* prev, const DataBlock& cur, uint32_t object_name_index,
                     std::vector<InstanceValues>& out, const FormatOptions& opt = {});

// The formulas backwards, for data made to show given values (`perfsim import --perfmon`): the raw
// counter N and base B of `cur` that make format_counter give `value`, after `prev_raw` read in the
// sample `prev` (both nullptr at the first sample: N and B start, and a two-sample type shows
// nothing yet). Counts are integers, so a rate is exact to half a count over the interval;
// timers to half a 100 ns tick. Bases that only count operations (averages, sample fractions)
// advance by a fixed step. InvalidArgument when the formula cannot give the value (a negative one,
// a % of an inverse timer above 100).
struct RawValues {
  uint64_t n = 0;
  uint64_t b = 0;
};
Status raw_for_value(uint32_t type, double value, const Sample* prev, const RawValues* prev_raw, const Sample& cur,
                     RawValues& out);

// True when a raw value and base unchanged since the previous sample format as no value (the
// base's delta is the denominator: averages, sample fractions, precision timers); a rate, timer or
// raw count shows a number then (0, or 100 for an inverse timer). `perfsim import --perfmon`
// holds a blank cell's counter only where this is true.
bool unchanged_shows_nothing(uint32_t type);

// "PERF_COUNTER_COUNTER" etc.; "UNKNOWN" for a type winperf.h does not name.
const char* counter_type_name(uint32_t type);

// True for the hex display types (PERF_COUNTER_RAWCOUNT_HEX, PERF_COUNTER_LARGE_RAWCOUNT_HEX).
bool is_hex_type(uint32_t type);

// value * 10^DefaultScale: the number perfmon's chart plots. Never part of a formatted value.
double display_scaled(double value, int32_t default_scale);

}  // namespace perfsim::perfdata
