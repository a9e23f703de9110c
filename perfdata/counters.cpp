// Formatted counter values (see counters.h for the contract).
//
// Sources, cited per formula below:
//  [CCV]  MicrosoftDocs win32 "Calculating Counter Values" (desktop-src/PerfCtrs/
//         calculating-counter-values.md) and its companion "Retrieving Counter Data", which says
//         which clock and base each type reads.
//  [K03]  Windows Server 2003 Deployment Kit, "Counter Types" (one page per type, e.g.
//         "PERF_100NSEC_MULTI_TIMER_INV", cc779374).
//  [SDK]  Platform SDK / Windows CE "Calculations for Raw Counter Data" per-type tables.
#include "perfdata/counters.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <map>
#include <tuple>
#include <utility>

#include "core/utf16.h"

namespace perfsim::perfdata {
namespace {

using namespace winperf;

constexpr uint32_t kDisplayMask = 0xF0000000;  // PERF_DISPLAY_* and the histogram bit
constexpr int64_t k100nsFreq = 10'000'000;

enum class Formula {
  kRaw,             // N1
  kDelta,           // N1 - N0
  kRate,            // (N1 - N0) / ((D1 - D0) / F)
  kTimer,           // 100 * (N1 - N0) / (D1 - D0)
  kTimerInv,        // 100 * (1 - (N1 - N0) / (D1 - D0))
  kQueueLen,        // (N1 - N0) / (D1 - D0)
  kRawFraction,     // 100 * N1 / B1
  kSampleFraction,  // 100 * (N1 - N0) / (B1 - B0)
  kAverageTimer,    // ((N1 - N0) / F) / (B1 - B0)
  kAverageBulk,     // (N1 - N0) / (B1 - B0)
  kElapsed,         // (D1 - N1) / F
  kMultiTimer,      // see compute()
  kMultiTimerInv,   // 100 * (B1 - (N1 - N0) / (D1 - D0))
  kPrecision,       // 100 * (N1 - N0) / (B1 - B0), B the PERF_PRECISION_TIMESTAMP counter
  kNone,            // text, no data, histogram, base types
};

struct TypeInfo {
  uint32_t type;
  const char* name;
  Formula formula;
};

// Every type winperf.h names. PERF_PRECISION_TIMESTAMP is PERF_LARGE_RAW_BASE (same value).
constexpr TypeInfo kTypes[] = {
    {PERF_COUNTER_COUNTER, "PERF_COUNTER_COUNTER", Formula::kRate},
    {PERF_COUNTER_TIMER, "PERF_COUNTER_TIMER", Formula::kTimer},
    {PERF_COUNTER_QUEUELEN_TYPE, "PERF_COUNTER_QUEUELEN_TYPE", Formula::kQueueLen},
    {PERF_COUNTER_LARGE_QUEUELEN_TYPE, "PERF_COUNTER_LARGE_QUEUELEN_TYPE", Formula::kQueueLen},
    {PERF_COUNTER_100NS_QUEUELEN_TYPE, "PERF_COUNTER_100NS_QUEUELEN_TYPE", Formula::kQueueLen},
    {PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, "PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE", Formula::kQueueLen},
    {PERF_COUNTER_BULK_COUNT, "PERF_COUNTER_BULK_COUNT", Formula::kRate},
    {PERF_COUNTER_TEXT, "PERF_COUNTER_TEXT", Formula::kNone},
    {PERF_COUNTER_RAWCOUNT, "PERF_COUNTER_RAWCOUNT", Formula::kRaw},
    {PERF_COUNTER_LARGE_RAWCOUNT, "PERF_COUNTER_LARGE_RAWCOUNT", Formula::kRaw},
    {PERF_COUNTER_RAWCOUNT_HEX, "PERF_COUNTER_RAWCOUNT_HEX", Formula::kRaw},
    {PERF_COUNTER_LARGE_RAWCOUNT_HEX, "PERF_COUNTER_LARGE_RAWCOUNT_HEX", Formula::kRaw},
    {PERF_SAMPLE_FRACTION, "PERF_SAMPLE_FRACTION", Formula::kSampleFraction},
    {PERF_SAMPLE_COUNTER, "PERF_SAMPLE_COUNTER", Formula::kRate},
    {PERF_COUNTER_NODATA, "PERF_COUNTER_NODATA", Formula::kNone},
    {PERF_COUNTER_TIMER_INV, "PERF_COUNTER_TIMER_INV", Formula::kTimerInv},
    {PERF_SAMPLE_BASE, "PERF_SAMPLE_BASE", Formula::kNone},
    {PERF_AVERAGE_TIMER, "PERF_AVERAGE_TIMER", Formula::kAverageTimer},
    {PERF_AVERAGE_BASE, "PERF_AVERAGE_BASE", Formula::kNone},
    {PERF_AVERAGE_BULK, "PERF_AVERAGE_BULK", Formula::kAverageBulk},
    {PERF_OBJ_TIME_TIMER, "PERF_OBJ_TIME_TIMER", Formula::kTimer},
    {PERF_100NSEC_TIMER, "PERF_100NSEC_TIMER", Formula::kTimer},
    {PERF_100NSEC_TIMER_INV, "PERF_100NSEC_TIMER_INV", Formula::kTimerInv},
    {PERF_COUNTER_MULTI_TIMER, "PERF_COUNTER_MULTI_TIMER", Formula::kMultiTimer},
    {PERF_COUNTER_MULTI_TIMER_INV, "PERF_COUNTER_MULTI_TIMER_INV", Formula::kMultiTimerInv},
    {PERF_COUNTER_MULTI_BASE, "PERF_COUNTER_MULTI_BASE", Formula::kNone},
    {PERF_100NSEC_MULTI_TIMER, "PERF_100NSEC_MULTI_TIMER", Formula::kMultiTimer},
    {PERF_100NSEC_MULTI_TIMER_INV, "PERF_100NSEC_MULTI_TIMER_INV", Formula::kMultiTimerInv},
    {PERF_RAW_FRACTION, "PERF_RAW_FRACTION", Formula::kRawFraction},
    {PERF_LARGE_RAW_FRACTION, "PERF_LARGE_RAW_FRACTION", Formula::kRawFraction},
    {PERF_RAW_BASE, "PERF_RAW_BASE", Formula::kNone},
    {PERF_LARGE_RAW_BASE, "PERF_LARGE_RAW_BASE", Formula::kNone},
    {PERF_ELAPSED_TIME, "PERF_ELAPSED_TIME", Formula::kElapsed},
    {PERF_COUNTER_HISTOGRAM_TYPE, "PERF_COUNTER_HISTOGRAM_TYPE", Formula::kNone},
    {PERF_COUNTER_DELTA, "PERF_COUNTER_DELTA", Formula::kDelta},
    {PERF_COUNTER_LARGE_DELTA, "PERF_COUNTER_LARGE_DELTA", Formula::kDelta},
    {PERF_PRECISION_SYSTEM_TIMER, "PERF_PRECISION_SYSTEM_TIMER", Formula::kPrecision},
    {PERF_PRECISION_100NS_TIMER, "PERF_PRECISION_100NS_TIMER", Formula::kPrecision},
    {PERF_PRECISION_OBJECT_TIMER, "PERF_PRECISION_OBJECT_TIMER", Formula::kPrecision},
};

const TypeInfo* find_type(uint32_t type) {
  for (const TypeInfo& t : kTypes)
    if (t.type == type) return &t;
  return nullptr;
}

std::string hex(uint64_t v) {
  static const char* digits = "0123456789ABCDEF";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xF]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

FormattedValue make_value(ValueStatus status, uint64_t raw, std::string error, double value = 0) {
  FormattedValue v;
  v.status = status;
  v.raw = raw;
  v.error = std::move(error);
  v.value = value;
  return v;
}
FormattedValue invalid(uint64_t raw, std::string why) { return make_value(ValueStatus::kInvalid, raw, std::move(why)); }

// The clock a type counts against, chosen by its PERF_TIMER_* bits ([CCV] "Retrieving Counter
// Data": PerfTime for tick types, PerfTime100nSec for 100NS types, the object's PerfTime/PerfFreq
// for PERF_OBJ_TIME_TIMER, the OBJ_TIME queue length and PERF_ELAPSED_TIME).
struct Clock {
  int64_t time = 0;
  int64_t freq = 0;
};
Clock clock_of(uint32_t type, const Sample& s) {
  switch (type & PERF_TIMER_MASK) {
    case PERF_TIMER_100NS:
      return {s.perf_time_100ns, k100nsFreq};
    case PERF_OBJECT_TIMER:
      return {s.object_perf_time, s.object_perf_freq};
    default:
      return {s.perf_time, s.perf_freq};
  }
}

// The raw inputs of one sample: counter value N, base B (when the type has one) and its clock.
struct Raw {
  uint64_t n = 0;
  uint64_t b = 0;
  Clock clock;
};

// Reads CounterSize bytes (4 or 8: the only sizes the Performance tool supports, [CCV] "Retrieving
// Counter Data") at CounterOffset, which counts from the start of the counter block.
bool read_value(const Bytes& block, const CounterDef& def, uint64_t& v, std::string& err) {
  if (def.size != 4 && def.size != 8) {
    err = "CounterSize " + std::to_string(def.size) + " is neither 4 nor 8";
    return false;
  }
  if (size_t(def.offset) + def.size > block.size()) {
    err = "counter data at offset " + std::to_string(def.offset) + " (+" + std::to_string(def.size) +
          ") lies outside its " + std::to_string(block.size()) + "-byte counter block";
    return false;
  }
  v = def.size == 8 ? load_le64(&block[def.offset]) : load_le32(&block[def.offset]);
  return true;
}

// The base counter is the definition right after the counter ([CCV]: "The base counter should be
// the next counter in the object's list of counters").
const CounterDef* base_of(const Object& obj, size_t i) {
  if (i + 1 >= obj.counters.size() || !is_base_type(obj.counters[i + 1].type)) return nullptr;
  return &obj.counters[i + 1];
}

bool read_raw(const Object& obj, size_t i, const Sample& s, Raw& r, std::string& err) {
  const CounterDef& def = obj.counters[i];
  if (!s.counter_block) {
    err = "no counter block";
    return false;
  }
  if (!read_value(*s.counter_block, def, r.n, err)) return false;
  if (needs_base(def.type)) {
    const CounterDef* base = base_of(obj, i);
    if (!base) {
      err = "no base counter follows this " + std::string(find_type(def.type)->name);
      return false;
    }
    if (!read_value(*s.counter_block, *base, r.b, err)) {
      err = "base counter: " + err;
      return false;
    }
  }
  r.clock = clock_of(def.type, s);
  return true;
}

// d1 - d0 for clocks (signed on the wire). Garbage clocks must not overflow.
bool time_delta(int64_t d0, int64_t d1, double& out, std::string& err) {
  int64_t d = 0;
  if (__builtin_sub_overflow(d1, d0, &d)) {
    err = "time delta overflows";
    return false;
  }
  if (d <= 0) {
    // PDH reports a negative denominator as PDH_CALC_NEGATIVE_DENOMINATOR; a zero one has no value.
    err = d == 0 ? "time did not advance between samples" : "time went backwards (" + std::to_string(d) + ")";
    return false;
  }
  out = double(d);
  return true;
}

bool base_delta(uint64_t b0, uint64_t b1, double& out, std::string& err) {
  if (b1 <= b0) {
    err = b1 == b0 ? "base did not change between samples"
                   : "base went backwards (" + std::to_string(b0) + " -> " + std::to_string(b1) + ")";
    return false;
  }
  out = double(b1 - b0);
  return true;
}

bool positive_freq(int64_t f, std::string& err) {
  if (f > 0) return true;
  err = "frequency " + std::to_string(f) + " is not positive";
  return false;
}

// Formulas that need only the current sample.
FormattedValue compute_single(Formula f, const Raw& cur) {
  std::string err;
  switch (f) {
    case Formula::kRaw:  // N as collected ([K03] PERF_COUNTER_RAWCOUNT: "Shows raw data as collected")
      return make_value(ValueStatus::kOk, cur.n, "", double(cur.n));
    case Formula::kRawFraction:  // 100 * N / B ([CCV], [K03] PERF_RAW_FRACTION)
      if (cur.b == 0) return invalid(cur.n, "base is zero");
      return make_value(ValueStatus::kOk, cur.n, "", 100.0 * double(cur.n) / double(cur.b));
    case Formula::kElapsed: {  // (D0 - N0) / F, D and F the object's clock ([CCV], [K03] PERF_ELAPSED_TIME)
      int64_t d = 0;
      if (!positive_freq(cur.clock.freq, err)) return invalid(cur.n, err);
      if (__builtin_sub_overflow(cur.clock.time, int64_t(cur.n), &d) || d < 0)
        return invalid(cur.n, "start time " + std::to_string(int64_t(cur.n)) + " lies after the object time " +
                                  std::to_string(cur.clock.time));
      return make_value(ValueStatus::kOk, cur.n, "", double(d) / double(cur.clock.freq));
    }
    default:
      return invalid(cur.n, "not a single-sample formula");
  }
}

// Formulas over two samples. dn = N1 - N0 (already checked non-negative).
FormattedValue compute_pair(Formula f, uint32_t type, const Raw& prev, const Raw& cur, double dn) {
  std::string err;
  double dt = 0, db = 0, v = 0;
  const auto bad = [&] { return invalid(cur.n, err); };
  switch (f) {
    case Formula::kDelta:  // N1 - N0 ([CCV], [K03] PERF_COUNTER_DELTA)
      v = dn;
      break;
    case Formula::
        kRate:  // (N1 - N0) / ((D1 - D0) / F) ([CCV], [K03] PERF_COUNTER_COUNTER, _BULK_COUNT, PERF_SAMPLE_COUNTER)
      if (!time_delta(prev.clock.time, cur.clock.time, dt, err) || !positive_freq(cur.clock.freq, err)) return bad();
      v = dn / (dt / double(cur.clock.freq));
      break;
    case Formula::kTimer:  // 100 * (N1 - N0) / (D1 - D0) ([CCV]; [SDK] PERF_100NSEC_TIMER, PERF_OBJ_TIME_TIMER)
      if (!time_delta(prev.clock.time, cur.clock.time, dt, err)) return bad();
      v = 100.0 * dn / dt;
      break;
    case Formula::kTimerInv:  // 100 * (1 - (N1 - N0) / (D1 - D0)) ([CCV]; [SDK] PERF_100NSEC_TIMER_INV)
      if (!time_delta(prev.clock.time, cur.clock.time, dt, err)) return bad();
      v = 100.0 * (1.0 - dn / dt);
      break;
    case Formula::kQueueLen:  // (N1 - N0) / (D1 - D0) ([CCV], [K03] PERF_COUNTER_QUEUELEN_TYPE and variants)
      if (!time_delta(prev.clock.time, cur.clock.time, dt, err)) return bad();
      v = dn / dt;
      break;
    case Formula::kSampleFraction:  // 100 * (N1 - N0) / (B1 - B0) ([CCV], [K03] PERF_SAMPLE_FRACTION)
      if (!base_delta(prev.b, cur.b, db, err)) return bad();
      v = 100.0 * dn / db;
      break;
    case Formula::kAverageTimer:  // ((N1 - N0) / F) / (B1 - B0), F = PerfFreq ([CCV], [K03] PERF_AVERAGE_TIMER)
      if (!base_delta(prev.b, cur.b, db, err) || !positive_freq(cur.clock.freq, err)) return bad();
      v = dn / double(cur.clock.freq) / db;
      break;
    case Formula::kAverageBulk:  // (N1 - N0) / (B1 - B0) ([CCV], [K03] PERF_AVERAGE_BULK)
      if (!base_delta(prev.b, cur.b, db, err)) return bad();
      v = dn / db;
      break;
    case Formula::
        kPrecision:  // 100 * (N1 - N0) / (D1 - D0), D the timestamp counter ([CCV], [K03] PERF_PRECISION_100NS_TIMER)
      if (!base_delta(prev.b, cur.b, db, err)) {
        err = "precision timestamp: " + err;
        return bad();
      }
      v = 100.0 * dn / db;
      break;
    case Formula::kMultiTimer:
      if (!time_delta(prev.clock.time, cur.clock.time, dt, err)) return bad();
      if (cur.b == 0) return invalid(cur.n, "multi base (number of items) is zero");
      if ((type & PERF_TIMER_MASK) == PERF_TIMER_100NS) {
        v = 100.0 * (dn / dt) / double(cur.b);  // 100 * ((N1 - N0) / (D1 - D0)) / B1 ([CCV], [SDK], [K03])
      } else {
        // 100 * ((N1 - N0) / ((D1 - D0) / TB)) / B1 ([CCV], [SDK] PERF_COUNTER_MULTI_TIMER). [K03]
        // prints it without TB and B. .NET's CounterSampleCalculator multiplies N by the frequency
        // before calling PDH "to make PDH work like PERFMON", so perfmon's value is this one.
        if (!positive_freq(cur.clock.freq, err)) return bad();
        v = 100.0 * (dn / (dt / double(cur.clock.freq))) / double(cur.b);
      }
      break;
    case Formula::kMultiTimerInv:  // 100 * (B1 - (N1 - N0) / (D1 - D0)) ([CCV], [K03]; [SDK] divides by B1)
      if (!time_delta(prev.clock.time, cur.clock.time, dt, err)) return bad();
      v = 100.0 * (double(cur.b) - dn / dt);
      break;
    default:
      return invalid(cur.n, "not a two-sample formula");
  }
  return make_value(ValueStatus::kOk, cur.n, "", v);
}

bool needs_two_samples(uint32_t type) { return winperf::two_sample(type); }  // [CCV]

}  // namespace

bool unchanged_shows_nothing(uint32_t type) {
  const TypeInfo* info = find_type(type);
  if (!info) return false;
  const Formula f = info->formula;
  return f == Formula::kSampleFraction || f == Formula::kAverageTimer || f == Formula::kAverageBulk ||
         f == Formula::kPrecision;
}

namespace {

// Check the result the way PDH does: a negative value has no display (PDH_CALC_NEGATIVE_VALUE).
FormattedValue finish(FormattedValue v, uint32_t type, const FormatOptions& opt) {
  if (!v.valid()) return v;
  if (!std::isfinite(v.value)) return invalid(v.raw, "value is not finite");
  if (v.value < 0) return invalid(v.raw, "negative value " + std::to_string(v.value));
  if (opt.cap100 && (type & kDisplayMask) == PERF_DISPLAY_PERCENT && v.value > 100.0) v.value = 100.0;
  return v;
}

// ---- object-level matching ------------------------------------------------------------------

// PDH names an instance "parent/name"; unnamed instances with a unique id are named by the id.
std::u16string instance_name(const DataBlock& block, const Instance& in) {
  std::u16string name = in.name();
  if (name.empty() && uint32_t(in.unique_id) != PERF_NO_UNIQUE_ID) name = utf8_to_utf16(std::to_string(in.unique_id));
  if (in.parent_title_index == 0) return name;
  const Object* parent = block.find(in.parent_title_index);
  if (!parent || in.parent_instance >= parent->instances.size()) return name;
  return parent->instances[in.parent_instance].name() + u"/" + name;
}

// (full name, unique id, occurrence among equal name+id): the identity PDH follows across samples.
using InstanceKey = std::tuple<std::u16string, int32_t, uint32_t>;

std::vector<InstanceKey> instance_keys(const DataBlock& block, const Object& obj) {
  std::vector<InstanceKey> keys;
  std::map<std::pair<std::u16string, int32_t>, uint32_t> seen;
  for (const Instance& in : obj.instances) {
    std::u16string name = instance_name(block, in);
    const uint32_t n = seen[{name, in.unique_id}]++;
    keys.emplace_back(std::move(name), in.unique_id, n);
  }
  return keys;
}

std::string display_name(const InstanceKey& k) {
  std::string s = utf16_to_utf8(std::get<0>(k));
  if (std::get<2>(k) > 0) s += "#" + std::to_string(std::get<2>(k));
  return s;
}

bool same_layout(const CounterDef& a, const CounterDef& b) {
  return a.type == b.type && a.size == b.size && a.offset == b.offset;
}

// The previous sample's definitions must describe the same data as the current ones, or the
// two samples cannot be combined ([CCV]: "The samples have inconsistent counter types").
bool definitions_match(const Object& prev, const Object& cur, size_t i) {
  const size_t last = needs_base(cur.counters[i].type) ? i + 1 : i;
  if (last >= prev.counters.size() || last >= cur.counters.size()) return false;
  for (size_t k = i; k <= last; ++k)
    if (!same_layout(prev.counters[k], cur.counters[k])) return false;
  return true;
}

std::vector<CounterValue> format_block(const Object* prev_obj, const Sample* prev, const Object& cur_obj,
                                       const Sample& cur, const FormatOptions& opt) {
  std::vector<CounterValue> values;
  for (size_t i = 0; i < cur_obj.counters.size(); ++i) {
    const CounterDef& def = cur_obj.counters[i];
    if (is_base_type(def.type)) continue;
    CounterValue cv{i, def.name_index, def.type, {}};
    if (prev && prev_obj && !definitions_match(*prev_obj, cur_obj, i) && needs_two_samples(def.type))
      cv.value = invalid(0, "counter definition changed between samples");
    else
      cv.value = format_counter(cur_obj, i, prev, cur, opt);
    values.push_back(std::move(cv));
  }
  return values;
}

}  // namespace

Sample make_sample(const DataBlock& block, const Object& object, const Bytes& counter_block) {
  return Sample{block.perf_time,  block.perf_freq,  block.perf_time_100ns,
                object.perf_time, object.perf_freq, &counter_block};
}

FormattedValue format_counter(const Object& obj, size_t i, const Sample* prev, const Sample& cur,
                              const FormatOptions& opt) {
  if (i >= obj.counters.size()) return invalid(0, "counter index " + std::to_string(i) + " out of range");
  const uint32_t type = obj.counters[i].type;
  const TypeInfo* info = find_type(type);
  if (!info) return invalid(0, "unknown counter type " + hex(type));
  if (info->formula == Formula::kNone)
    return make_value(ValueStatus::kNoValue, 0, std::string(info->name) + " has no displayable value");

  Raw now, before;
  std::string err;
  if (!read_raw(obj, i, cur, now, err)) return invalid(0, err);
  if (!needs_two_samples(type)) return finish(compute_single(info->formula, now), type, opt);

  if (!prev) return make_value(ValueStatus::kNeedsTwoSamples, now.n, std::string(info->name) + " needs two samples");
  if (!read_raw(obj, i, *prev, before, err)) return invalid(now.n, "previous sample: " + err);
  if (before.n > now.n && opt.unwrap32 && obj.counters[i].size == 4)
    return finish(compute_pair(info->formula, type, before, now, double((now.n - before.n) & 0xFFFFFFFFu)), type, opt);
  if (before.n > now.n) {
    // Difference types display zero when the difference is negative ([K03] "Counter Types",
    // generic type Difference). Others have no value: [CCV] drops the sample ("integer overflow
    // or bad data"), so a 32-bit counter that wraps is not unwrapped either.
    if (info->formula == Formula::kDelta) return make_value(ValueStatus::kOk, now.n, "", 0.0);
    return invalid(now.n, "counter went backwards (" + std::to_string(before.n) + " -> " + std::to_string(now.n) + ")");
  }
  return finish(compute_pair(info->formula, type, before, now, double(now.n - before.n)), type, opt);
}

Status format_object(const DataBlock* prev, const DataBlock& cur, uint32_t object_name_index,
                     std::vector<InstanceValues>& out, const FormatOptions& opt) {
  out.clear();
  const Object* cur_obj = cur.find(object_name_index);
  if (!cur_obj) return Status::NotFound("object " + std::to_string(object_name_index) + " not in the sample");
  const Object* prev_obj = prev ? prev->find(object_name_index) : nullptr;
  if (prev_obj && prev_obj->multi_instance() != cur_obj->multi_instance()) prev_obj = nullptr;

  if (!cur_obj->multi_instance()) {
    const Sample now = make_sample(cur, *cur_obj, cur_obj->counter_block);
    Sample before;
    if (prev_obj) before = make_sample(*prev, *prev_obj, prev_obj->counter_block);
    out.push_back({"", format_block(prev_obj, prev_obj ? &before : nullptr, *cur_obj, now, opt)});
    return Status::Ok();
  }

  std::map<InstanceKey, const Instance*> earlier;
  if (prev_obj) {
    const std::vector<InstanceKey> keys = instance_keys(*prev, *prev_obj);
    for (size_t k = 0; k < keys.size(); ++k) earlier.emplace(keys[k], &prev_obj->instances[k]);
  }
  const std::vector<InstanceKey> keys = instance_keys(cur, *cur_obj);
  for (size_t k = 0; k < keys.size(); ++k) {
    const Sample now = make_sample(cur, *cur_obj, cur_obj->instances[k].counter_block);
    const auto it = earlier.find(keys[k]);
    Sample before;
    if (it != earlier.end()) before = make_sample(*prev, *prev_obj, it->second->counter_block);
    const bool matched = it != earlier.end();
    out.push_back({display_name(keys[k]),
                   format_block(matched ? prev_obj : nullptr, matched ? &before : nullptr, *cur_obj, now, opt)});
  }
  return Status::Ok();
}

const char* counter_type_name(uint32_t type) {
  const TypeInfo* t = find_type(type);
  return t ? t->name : "UNKNOWN";
}

bool is_hex_type(uint32_t type) { return type == PERF_COUNTER_RAWCOUNT_HEX || type == PERF_COUNTER_LARGE_RAWCOUNT_HEX; }

double display_scaled(double value, int32_t default_scale) { return value * std::pow(10.0, default_scale); }

}  // namespace perfsim::perfdata

namespace perfsim::perfdata {
namespace {

// round(x) as a count, or false when it is negative or beyond 64 bits.
bool count_of(double x, uint64_t& out) {
  const double r = std::nearbyint(x);
  if (!(r >= 0) || r >= 18446744073709551615.0) return false;
  out = uint64_t(r);
  return true;
}

}  // namespace

Status raw_for_value(uint32_t type, double value, const Sample* prev, const RawValues* prev_raw, const Sample& cur,
                     RawValues& out) {
  const TypeInfo* info = find_type(type);
  if (!info || info->formula == Formula::kNone)
    return Status::InvalidArgument(std::string(counter_type_name(type)) + " has no value to reproduce");
  if (value < 0) return Status::InvalidArgument("negative value " + std::to_string(value));
  const Clock now = clock_of(type, cur);
  // Steps of the bases that count operations: as fine as a 32-bit base allows over a day of samples.
  constexpr uint64_t kSampleStep = 100000, kBulkStep = 1000;
  out = prev_raw ? *prev_raw : RawValues{};
  const Formula f = info->formula;
  uint64_t add = 0;
  bool ok = true;
  switch (f) {
    case Formula::kRaw:
      ok = count_of(value, out.n);
      break;
    case Formula::kRawFraction:  // 100 * N / B
      out.b = 1000000;
      ok = count_of(value / 100.0 * double(out.b), out.n);
      break;
    case Formula::kElapsed: {  // (D - N) / F
      uint64_t age = 0;
      ok = count_of(value * double(now.freq), age) && age <= uint64_t(now.time);
      out.n = uint64_t(now.time) - age;
      break;
    }
    default:
      break;
  }
  if (!needs_two_samples(type)) {
    if (!ok) return Status::InvalidArgument(fmt::format("{} cannot show {}", info->name, value));
    return Status::Ok();
  }
  if (f == Formula::kPrecision) out.b = uint64_t(now.time);  // the timestamp counter
  if (f == Formula::kMultiTimer || f == Formula::kMultiTimerInv) out.b = 1;
  if (!prev || !prev_raw) return Status::Ok();  // two-sample types start here
  const double dt = double(now.time - clock_of(type, *prev).time);
  if (dt <= 0) return Status::InvalidArgument("time did not advance between samples");
  const double freq = double(now.freq);
  switch (f) {
    case Formula::kDelta:  // N1 - N0
      ok = count_of(value, add);
      break;
    case Formula::kRate:  // (N1 - N0) / ((D1 - D0) / F)
      ok = count_of(value * dt / freq, add);
      break;
    case Formula::kTimer:  // 100 * (N1 - N0) / (D1 - D0)
      ok = count_of(value / 100.0 * dt, add);
      break;
    case Formula::kTimerInv:  // 100 * (1 - (N1 - N0) / (D1 - D0))
      ok = value <= 100.0 && count_of((1.0 - value / 100.0) * dt, add);
      break;
    case Formula::kQueueLen:  // (N1 - N0) / (D1 - D0)
      ok = count_of(value * dt, add);
      break;
    case Formula::kSampleFraction:  // 100 * (N1 - N0) / (B1 - B0)
      out.b += kSampleStep;
      ok = count_of(value / 100.0 * double(kSampleStep), add);
      break;
    case Formula::kAverageTimer:  // ((N1 - N0) / F) / (B1 - B0), one operation per interval
      out.b += 1;
      ok = count_of(value * freq, add);
      break;
    case Formula::kAverageBulk:  // (N1 - N0) / (B1 - B0)
      out.b += kBulkStep;
      ok = count_of(value * double(kBulkStep), add);
      break;
    case Formula::kPrecision:  // 100 * (N1 - N0) / (B1 - B0)
      ok = count_of(value / 100.0 * double(out.b - prev_raw->b), add);
      break;
    case Formula::kMultiTimer:  // 100 * (dN / dT [* F]) / B1, B1 = 1
      ok = count_of((type & PERF_TIMER_MASK) == PERF_TIMER_100NS ? value / 100.0 * dt : value / 100.0 * dt / freq, add);
      break;
    case Formula::kMultiTimerInv:  // 100 * (B1 - dN / dT)
      out.b = std::max<uint64_t>(1, uint64_t(std::ceil(value / 100.0)));
      ok = count_of((double(out.b) - value / 100.0) * dt, add);
      break;
    default:
      ok = false;
  }
  if (!ok) return Status::InvalidArgument(fmt::format("{} cannot show {}", info->name, value));
  out.n += add;
  return Status::Ok();
}

}  // namespace perfsim::perfdata
