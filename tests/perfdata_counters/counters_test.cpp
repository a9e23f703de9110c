// Formatted counter values: each counter type against its documented formula, worked by hand with
// specific numbers, plus the edge cases (first sample, zero/negative deltas, missing base, sizes).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "perfdata/counters.h"
#include "perfdata/model.h"

using namespace perfsim;
using namespace perfsim::perfdata;
using namespace perfsim::winperf;

namespace {

struct Clocks {
  int64_t perf_time = 0, perf_freq = 0, time_100ns = 0, obj_time = 0, obj_freq = 0;
};
struct Def {
  uint32_t type;
  uint32_t size;
};

constexpr uint32_t kObject = 230;

// The counters of one sample laid out as Windows does: 8 bytes apart, after the block's ByteLength.
std::vector<CounterDef> layout(const std::vector<Def>& defs) {
  std::vector<CounterDef> out;
  uint32_t off = 8;
  for (size_t i = 0; i < defs.size(); ++i) {
    CounterDef c;
    c.name_index = uint32_t(2 * i + 2);
    c.help_index = uint32_t(2 * i + 3);
    c.type = defs[i].type;
    c.size = defs[i].size;
    c.offset = off;
    off += 8;
    out.push_back(c);
  }
  return out;
}

Bytes block_of(const std::vector<CounterDef>& defs, const std::vector<uint64_t>& values) {
  Bytes b = make_counter_block(uint32_t(defs.size() * 8 + 4));
  for (size_t i = 0; i < defs.size(); ++i) write_counter(b, defs[i], values[i]);
  return b;
}

DataBlock empty_sample(const Clocks& c) { return empty_block(u"HOST", {}, c.perf_time, c.perf_freq, c.time_100ns); }

Object object_with(const std::vector<Def>& defs, const Clocks& c) {
  Object o;
  o.name_index = kObject;
  o.perf_time = c.obj_time;
  o.perf_freq = c.obj_freq;
  o.counters = layout(defs);
  return o;
}

// A PERF_DATA_BLOCK holding one single-instance object with the given counters and values.
DataBlock single(const std::vector<Def>& defs, const std::vector<uint64_t>& values, const Clocks& c) {
  DataBlock d = empty_sample(c);
  Object o = object_with(defs, c);
  o.counter_block = block_of(o.counters, values);
  d.objects.push_back(o);
  fix_counts(d);
  return d;
}

Sample sample_of(const DataBlock& d) { return make_sample(d, d.objects[0], d.objects[0].counter_block); }

FormattedValue two(const std::vector<Def>& defs, const std::vector<uint64_t>& v0, const Clocks& c0,
                   const std::vector<uint64_t>& v1, const Clocks& c1, FormatOptions opt = {}) {
  const DataBlock a = single(defs, v0, c0), b = single(defs, v1, c1);
  const Sample sa = sample_of(a), sb = sample_of(b);
  return format_counter(b.objects[0], 0, &sa, sb, opt);
}

FormattedValue one(const std::vector<Def>& defs, const std::vector<uint64_t>& v, const Clocks& c) {
  const DataBlock b = single(defs, v, c);
  return format_counter(b.objects[0], 0, nullptr, sample_of(b));
}

// Two samples 1 s apart on every clock, each clock with its own frequency, so a formula that
// reads the wrong clock gives a different number.
// System clock 20 MHz, 100ns clock 10 MHz, object clock 1 kHz.
const Clocks kT0{1'000'000, 20'000'000, 50'000'000'000, 7'000, 1'000};
const Clocks kT1{21'000'000, 20'000'000, 50'010'000'000, 8'000, 1'000};

}  // namespace

TEST_CASE("PERF_COUNTER_COUNTER: (N1-N0)/((D1-D0)/F), 4 bytes") {
  // 2000 events over 20,000,000 ticks at 20 MHz = 1 s -> 2000/s
  const FormattedValue v = two({{PERF_COUNTER_COUNTER, 4}}, {1000}, kT0, {3000}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(2000.0));
  CHECK(v.raw == 3000);
}

TEST_CASE("PERF_COUNTER_BULK_COUNT: rate over 8-byte counts with an HPET-like frequency") {
  // freq 3,579,545, 3 s = 10,738,635 ticks; 3,000,000 bytes -> 1,000,000/s
  const Clocks c0{100, 3'579'545, 0, 0, 0}, c1{100 + 10'738'635, 3'579'545, 0, 0, 0};
  const FormattedValue v = two({{PERF_COUNTER_BULK_COUNT, 8}}, {5'000'000'000}, c0, {5'003'000'000}, c1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(1'000'000.0));
}

TEST_CASE("PERF_SAMPLE_COUNTER: same formula as PERF_COUNTER_COUNTER") {
  // 50 over 0.5 s -> 100
  const Clocks c1{kT0.perf_time + 10'000'000, 20'000'000, 0, 0, 0};
  const FormattedValue v = two({{PERF_SAMPLE_COUNTER, 4}}, {10}, kT0, {60}, c1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(100.0));
}

TEST_CASE("PERF_COUNTER_TIMER and _INV: percent of system ticks") {
  // busy 5,000,000 of 20,000,000 ticks -> 25%, inverse -> 75%
  const FormattedValue t = two({{PERF_COUNTER_TIMER, 8}}, {0}, kT0, {5'000'000}, kT1);
  const FormattedValue inv = two({{PERF_COUNTER_TIMER_INV, 8}}, {0}, kT0, {5'000'000}, kT1);
  REQUIRE(t.valid());
  REQUIRE(inv.valid());
  CHECK(t.value == Approx(25.0));
  CHECK(inv.value == Approx(75.0));
}

TEST_CASE("PERF_100NSEC_TIMER and _INV use PerfTime100nSec") {
  // 100ns clock advances 10,000,000 (1 s); 4,000,000 busy -> 40%; 2,500,000 idle -> 75% busy
  const FormattedValue t = two({{PERF_100NSEC_TIMER, 8}}, {1'000'000}, kT0, {5'000'000}, kT1);
  const FormattedValue inv = two({{PERF_100NSEC_TIMER_INV, 8}}, {1'000'000}, kT0, {3'500'000}, kT1);
  REQUIRE(t.valid());
  REQUIRE(inv.valid());
  CHECK(t.value == Approx(40.0));
  CHECK(inv.value == Approx(75.0));
  // A 100ns clock advancing twice as fast as the system clock halves the value: it is the one read.
  Clocks c1 = kT1;
  c1.time_100ns = kT0.time_100ns + 20'000'000;
  CHECK(two({{PERF_100NSEC_TIMER, 8}}, {1'000'000}, kT0, {5'000'000}, c1).value == Approx(20.0));
}

TEST_CASE("PERF_OBJ_TIME_TIMER uses the object's PerfTime") {
  // object clock advances 1000 ticks; 250 busy -> 25%
  const FormattedValue v = two({{PERF_OBJ_TIME_TIMER, 8}}, {100}, kT0, {350}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(25.0));
}

TEST_CASE("queue length types: (N1-N0)/(D1-D0) on their own clocks") {
  // system ticks: 60,000,000 queue-ticks over 20,000,000 ticks -> 3.0 (4- and 8-byte variants)
  CHECK(two({{PERF_COUNTER_QUEUELEN_TYPE, 4}}, {0}, kT0, {60'000'000}, kT1).value == Approx(3.0));
  CHECK(two({{PERF_COUNTER_LARGE_QUEUELEN_TYPE, 8}}, {0}, kT0, {60'000'000}, kT1).value == Approx(3.0));
  // 100ns clock advances 10,000,000: 15,000,000 -> 1.5
  CHECK(two({{PERF_COUNTER_100NS_QUEUELEN_TYPE, 8}}, {0}, kT0, {15'000'000}, kT1).value == Approx(1.5));
  // object clock advances 1000: 2500 -> 2.5
  CHECK(two({{PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 8}}, {0}, kT0, {2'500}, kT1).value == Approx(2.5));
}

TEST_CASE("PERF_RAW_FRACTION and PERF_LARGE_RAW_FRACTION: 100*N/B from one sample") {
  // 30 of 120 -> 25%
  const FormattedValue v = one({{PERF_RAW_FRACTION, 4}, {PERF_RAW_BASE, 4}}, {30, 120}, kT0);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(25.0));
  // 8-byte values beyond 32 bits: 30e9 of 120e9 -> 25%
  const FormattedValue l =
      one({{PERF_LARGE_RAW_FRACTION, 8}, {PERF_LARGE_RAW_BASE, 8}}, {30'000'000'000, 120'000'000'000}, kT0);
  REQUIRE(l.valid());
  CHECK(l.value == Approx(25.0));
  CHECK(one({{PERF_RAW_FRACTION, 4}, {PERF_RAW_BASE, 4}}, {30, 0}, kT0).status == ValueStatus::kInvalid);
}

TEST_CASE("PERF_AVERAGE_TIMER: ((N1-N0)/F)/(B1-B0) in seconds") {
  // 10,000,000 ticks at 20 MHz = 0.5 s over 100 operations -> 0.005 s
  const FormattedValue v =
      two({{PERF_AVERAGE_TIMER, 4}, {PERF_AVERAGE_BASE, 4}}, {1'000, 7}, kT0, {10'001'000, 107}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(0.005));
}

TEST_CASE("PERF_AVERAGE_BULK: (N1-N0)/(B1-B0)") {
  // 409,600 bytes over 100 transfers -> 4096
  const FormattedValue v = two({{PERF_AVERAGE_BULK, 8}, {PERF_AVERAGE_BASE, 4}}, {0, 0}, kT0, {409'600, 100}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(4096.0));
}

TEST_CASE("PERF_ELAPSED_TIME: (D-N)/F on the object's clock, one sample") {
  // object time 500,000,000 at 10 MHz, start 100,000,000 -> 40 s
  const Clocks c{1, 3, 5, 500'000'000, 10'000'000};
  const FormattedValue v = one({{PERF_ELAPSED_TIME, 8}}, {100'000'000}, c);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(40.0));
  CHECK(one({{PERF_ELAPSED_TIME, 8}}, {600'000'000}, c).status == ValueStatus::kInvalid);  // starts later
}

TEST_CASE("PERF_COUNTER_MULTI_TIMER: 100*((N1-N0)/((D1-D0)/F))/B") {
  // bits on a segment: 2,000,000 over 1 s (20,000,000 ticks at 20 MHz) with bandwidth B = 10,000,000
  // -> 100 * 2,000,000 / 10,000,000 = 20%
  const FormattedValue v = two({{PERF_COUNTER_MULTI_TIMER, 8}, {PERF_COUNTER_MULTI_BASE, 8}}, {0, 10'000'000}, kT0,
                               {2'000'000, 10'000'000}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(20.0));
}

TEST_CASE("PERF_COUNTER_MULTI_TIMER_INV: 100*(B-(N1-N0)/(D1-D0))") {
  // 4 items, 60,000,000 idle ticks over 20,000,000 -> 100 * (4 - 3) = 100%
  const FormattedValue v =
      two({{PERF_COUNTER_MULTI_TIMER_INV, 8}, {PERF_COUNTER_MULTI_BASE, 8}}, {0, 4}, kT0, {60'000'000, 4}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(100.0));
}

TEST_CASE("PERF_100NSEC_MULTI_TIMER and _INV on the 100ns clock") {
  // 4 items busy 20,000,000 over 10,000,000 -> 100 * 2 / 4 = 50%
  CHECK(two({{PERF_100NSEC_MULTI_TIMER, 8}, {PERF_COUNTER_MULTI_BASE, 8}}, {0, 4}, kT0, {20'000'000, 4}, kT1).value ==
        Approx(50.0));
  // 2 items idle 5,000,000 over 10,000,000 -> 100 * (2 - 0.5) = 150%
  CHECK(
      two({{PERF_100NSEC_MULTI_TIMER_INV, 8}, {PERF_COUNTER_MULTI_BASE, 8}}, {0, 2}, kT0, {5'000'000, 2}, kT1).value ==
      Approx(150.0));
  // B = 0 items: no value
  CHECK(two({{PERF_100NSEC_MULTI_TIMER, 8}, {PERF_COUNTER_MULTI_BASE, 8}}, {0, 0}, kT0, {20'000'000, 0}, kT1).status ==
        ValueStatus::kInvalid);
}

TEST_CASE("PRECISION timers use the PERF_PRECISION_TIMESTAMP that follows, not the block clocks") {
  // busy 3,000,000 over a private timestamp advancing 12,000,000 -> 25%; the block clocks would say 30%
  for (uint32_t type : {PERF_PRECISION_SYSTEM_TIMER, PERF_PRECISION_100NS_TIMER, PERF_PRECISION_OBJECT_TIMER}) {
    INFO(counter_type_name(type));
    const FormattedValue v =
        two({{type, 8}, {PERF_PRECISION_TIMESTAMP, 8}}, {1'000'000, 40'000'000}, kT0, {4'000'000, 52'000'000}, kT1);
    REQUIRE(v.valid());
    CHECK(v.value == Approx(25.0));
    // The timestamp did not advance: no value.
    CHECK(two({{type, 8}, {PERF_PRECISION_TIMESTAMP, 8}}, {1, 40}, kT0, {4, 40}, kT1).status == ValueStatus::kInvalid);
  }
}

TEST_CASE("PERF_COUNTER_DELTA and _LARGE_DELTA: N1-N0, negative shows 0") {
  CHECK(two({{PERF_COUNTER_DELTA, 4}}, {7}, kT0, {19}, kT1).value == Approx(12.0));
  CHECK(two({{PERF_COUNTER_LARGE_DELTA, 8}}, {5'000'000'000}, kT0, {5'000'000'100}, kT1).value == Approx(100.0));
  const FormattedValue down = two({{PERF_COUNTER_DELTA, 4}}, {19}, kT0, {7}, kT1);
  REQUIRE(down.valid());
  CHECK(down.value == 0.0);
}

TEST_CASE("PERF_SAMPLE_FRACTION: 100*(N1-N0)/(B1-B0)") {
  // 30 hits of 40 samples -> 75%
  const FormattedValue v = two({{PERF_SAMPLE_FRACTION, 4}, {PERF_SAMPLE_BASE, 4}}, {100, 200}, kT0, {130, 240}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(75.0));
  // base unchanged: no value
  CHECK(two({{PERF_SAMPLE_FRACTION, 4}, {PERF_SAMPLE_BASE, 4}}, {100, 200}, kT0, {100, 200}, kT1).status ==
        ValueStatus::kInvalid);
}

TEST_CASE("raw counts and hex types: the value as collected, one sample") {
  CHECK(one({{PERF_COUNTER_RAWCOUNT, 4}}, {4'000'000'000u}, kT0).value == Approx(4'000'000'000.0));
  const FormattedValue large = one({{PERF_COUNTER_LARGE_RAWCOUNT, 8}}, {0x1'0000'0005}, kT0);
  CHECK(large.raw == 0x1'0000'0005);
  const FormattedValue h = one({{PERF_COUNTER_LARGE_RAWCOUNT_HEX, 8}}, {0xFFFF'FFFF'FFFF'FFF0}, kT0);
  REQUIRE(h.valid());
  CHECK(h.raw == 0xFFFF'FFFF'FFFF'FFF0);  // exact, beyond double precision
  CHECK(is_hex_type(PERF_COUNTER_RAWCOUNT_HEX));
  CHECK(is_hex_type(PERF_COUNTER_LARGE_RAWCOUNT_HEX));
  CHECK_FALSE(is_hex_type(PERF_COUNTER_RAWCOUNT));
  CHECK(one({{PERF_COUNTER_RAWCOUNT_HEX, 4}}, {0xBEEF}, kT0).raw == 0xBEEF);
}

TEST_CASE("text, no-data, histogram and base types have no value") {
  for (uint32_t type : {PERF_COUNTER_TEXT, PERF_COUNTER_NODATA, PERF_COUNTER_HISTOGRAM_TYPE, PERF_RAW_BASE,
                        PERF_AVERAGE_BASE, PERF_SAMPLE_BASE, PERF_COUNTER_MULTI_BASE, PERF_LARGE_RAW_BASE}) {
    INFO(counter_type_name(type));
    CHECK(two({{type, 4}}, {1}, kT0, {2}, kT1).status == ValueStatus::kNoValue);
  }
}

TEST_CASE("two-sample types without a previous sample") {
  for (uint32_t type : {PERF_COUNTER_COUNTER, PERF_100NSEC_TIMER_INV, PERF_COUNTER_DELTA, PERF_AVERAGE_BULK}) {
    INFO(counter_type_name(type));
    const FormattedValue v = one({{type, 8}, {PERF_AVERAGE_BASE, 4}}, {5, 1}, kT0);
    CHECK(v.status == ValueStatus::kNeedsTwoSamples);
    CHECK(v.raw == 5);
  }
}

TEST_CASE("zero and negative time deltas give no value") {
  CHECK(two({{PERF_COUNTER_COUNTER, 4}}, {1}, kT0, {2}, kT0).status == ValueStatus::kInvalid);
  CHECK(two({{PERF_100NSEC_TIMER, 8}}, {1}, kT1, {2}, kT0).status == ValueStatus::kInvalid);
  // garbage clocks must not overflow (UBSan build)
  const Clocks lo{INT64_MIN, 10, INT64_MIN, INT64_MIN, 10}, hi{INT64_MAX, 10, INT64_MAX, INT64_MAX, 10};
  CHECK(two({{PERF_COUNTER_TIMER, 8}}, {1}, lo, {2}, hi).status == ValueStatus::kInvalid);
  CHECK(two({{PERF_COUNTER_COUNTER, 4}}, {1}, {0, 0, 0, 0, 0}, {2}, {10, 0, 0, 0, 0}).status == ValueStatus::kInvalid);
}

TEST_CASE("a counter that goes backwards has no value, 32-bit wrap is not unwrapped") {
  // "Calculating Counter Values" drops the sample when N0 > N1 (overflow or bad provider data).
  CHECK(two({{PERF_COUNTER_COUNTER, 4}}, {0xFFFF'FF00}, kT0, {0x100}, kT1).status == ValueStatus::kInvalid);
  CHECK(two({{PERF_100NSEC_TIMER, 8}}, {500}, kT0, {400}, kT1).status == ValueStatus::kInvalid);
}

TEST_CASE("an inverse timer whose idle time exceeds the interval is negative: no value") {
  CHECK(two({{PERF_100NSEC_TIMER_INV, 8}}, {0}, kT0, {11'000'000}, kT1).status == ValueStatus::kInvalid);
}

TEST_CASE("CounterSize decides how many bytes are read") {
  // A DWORD-typed rate counter declared 8 bytes wide: the upper half counts.
  const FormattedValue v = two({{PERF_COUNTER_COUNTER, 8}}, {0}, kT0, {0x1'0000'0000}, kT1);
  REQUIRE(v.valid());
  CHECK(v.value == Approx(4294967296.0));
  // A size that is neither 4 nor 8 has no value.
  CHECK(one({{PERF_COUNTER_RAWCOUNT, 2}}, {1}, kT0).status == ValueStatus::kInvalid);
}

TEST_CASE("counter data outside the block, missing base, unknown type, bad index") {
  DataBlock d = single({{PERF_COUNTER_RAWCOUNT, 4}}, {1}, kT0);
  d.objects[0].counters[0].offset = 4000;
  CHECK(format_counter(d.objects[0], 0, nullptr, sample_of(d)).status == ValueStatus::kInvalid);
  CHECK(format_counter(d.objects[0], 1, nullptr, sample_of(d)).status == ValueStatus::kInvalid);
  CHECK(one({{PERF_RAW_FRACTION, 4}}, {1}, kT0).status == ValueStatus::kInvalid);  // last counter
  CHECK(one({{PERF_RAW_FRACTION, 4}, {PERF_COUNTER_RAWCOUNT, 4}}, {1, 2}, kT0).status ==
        ValueStatus::kInvalid);  // not a base
  const FormattedValue u = one({{0x12345678, 4}}, {1}, kT0);
  CHECK(u.status == ValueStatus::kInvalid);
  CHECK(u.error.find("0x12345678") != std::string::npos);
}

TEST_CASE("cap100 caps percent types only, as PDH does without PDH_FMT_NOCAP100") {
  FormatOptions cap;
  cap.cap100 = true;
  // busy 40,000,000 over 20,000,000 system ticks -> 200% uncapped
  const std::vector<Def> timer{{PERF_COUNTER_TIMER, 8}};
  CHECK(two(timer, {0}, kT0, {40'000'000}, kT1).value == Approx(200.0));
  CHECK(two(timer, {0}, kT0, {40'000'000}, kT1, cap).value == Approx(100.0));
  // a rate is not a percentage
  CHECK(two({{PERF_COUNTER_COUNTER, 4}}, {0}, kT0, {500}, kT1, cap).value == Approx(500.0));
}

TEST_CASE("counter_type_name and display_scaled") {
  CHECK(std::string(counter_type_name(PERF_100NSEC_TIMER_INV)) == "PERF_100NSEC_TIMER_INV");
  CHECK(std::string(counter_type_name(PERF_PRECISION_TIMESTAMP)) == "PERF_LARGE_RAW_BASE");
  CHECK(std::string(counter_type_name(0xDEAD)) == "UNKNOWN");
  CHECK(display_scaled(12345.0, -3) == Approx(12.345));
  CHECK(display_scaled(2.0, 2) == Approx(200.0));
}

// ---- object level ---------------------------------------------------------------------------

namespace {

const std::vector<Def> kProcDefs{
    {PERF_100NSEC_TIMER, 8}, {PERF_COUNTER_RAWCOUNT, 4}, {PERF_RAW_FRACTION, 4}, {PERF_RAW_BASE, 4}};
constexpr uint32_t kParentObject = 232;

Instance instance(std::u16string_view name, const std::vector<CounterDef>& defs, const std::vector<uint64_t>& values,
                  uint32_t parent_index = 0, uint32_t parent_instance = 0) {
  Instance in = make_instance(name, uint32_t(defs.size() * 8 + 4), parent_index, parent_instance);
  in.counter_block = block_of(defs, values);
  return in;
}

struct Inst {
  std::u16string name;
  uint64_t busy;
  uint32_t parent = 0;  // index into the parent object's instances, 0 = none
};

// Object 230 with instances named by `insts` (optionally children of object 232's instances).
DataBlock multi(const std::vector<Inst>& insts, const Clocks& c, const std::vector<std::u16string>& parents = {}) {
  DataBlock d = empty_sample(c);
  if (!parents.empty()) {
    Object p = object_with({{PERF_COUNTER_RAWCOUNT, 4}}, c);
    p.name_index = kParentObject;
    p.num_instances = 0;
    for (const auto& name : parents) p.instances.push_back(instance(name, p.counters, {0}));
    d.objects.push_back(p);
  }
  Object o = object_with(kProcDefs, c);
  o.num_instances = 0;
  for (const Inst& i : insts)
    o.instances.push_back(
        instance(i.name, o.counters, {i.busy, 42, 1, 4}, parents.empty() ? 0 : kParentObject, i.parent));
  d.objects.push_back(o);
  fix_counts(d);
  return d;
}

const InstanceValues* named(const std::vector<InstanceValues>& v, const std::string& name) {
  for (const InstanceValues& i : v)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace

TEST_CASE("format_object matches instances by name and occurrence, not position") {
  // prev: a, dup, dup ; cur: dup, new, a, dup (reordered, one new)
  const DataBlock prev = multi({{u"a", 1'000'000}, {u"dup", 0}, {u"dup", 5'000'000}}, kT0);
  const DataBlock cur = multi({{u"dup", 2'000'000}, {u"new", 9'000'000}, {u"a", 3'500'000}, {u"dup", 6'000'000}}, kT1);
  std::vector<InstanceValues> out;
  REQUIRE(format_object(&prev, cur, kObject, out).ok());
  REQUIRE(out.size() == 4);
  CHECK(out[0].name == "dup");
  CHECK(out[1].name == "new");
  CHECK(out[2].name == "a");
  CHECK(out[3].name == "dup#1");
  // base counters are not listed: 100NSEC_TIMER, RAWCOUNT, RAW_FRACTION
  REQUIRE(out[2].counters.size() == 3);
  CHECK(out[2].counters[0].type == PERF_100NSEC_TIMER);
  CHECK(out[2].counters[2].counter_index == 2);
  // a: 2,500,000 busy of 10,000,000 -> 25%; dup: 2,000,000 -> 20%; dup#1: 1,000,000 -> 10%
  CHECK(named(out, "a")->counters[0].value.value == Approx(25.0));
  CHECK(named(out, "dup")->counters[0].value.value == Approx(20.0));
  CHECK(named(out, "dup#1")->counters[0].value.value == Approx(10.0));
  // new instance: first sample for the timer, the one-sample types still show
  CHECK(named(out, "new")->counters[0].value.status == ValueStatus::kNeedsTwoSamples);
  CHECK(named(out, "new")->counters[1].value.value == Approx(42.0));
  CHECK(named(out, "new")->counters[2].value.value == Approx(25.0));  // 100 * 1 / 4
}

TEST_CASE("format_object names child instances parent/name") {
  const DataBlock prev = multi({{u"0", 0, 1}, {u"0", 0, 0}}, kT0, {u"svchost", u"explorer"});
  const DataBlock cur = multi({{u"0", 3'000'000, 0}, {u"0", 1'000'000, 1}}, kT1, {u"svchost", u"explorer"});
  std::vector<InstanceValues> out;
  REQUIRE(format_object(&prev, cur, kObject, out).ok());
  REQUIRE(out.size() == 2);
  CHECK(out[0].name == "svchost/0");
  CHECK(out[1].name == "explorer/0");
  CHECK(out[0].counters[0].value.value == Approx(30.0));
  CHECK(out[1].counters[0].value.value == Approx(10.0));
}

TEST_CASE("format_object: single-instance object, missing object, first sample, changed definitions") {
  const std::vector<Def> defs{{PERF_COUNTER_COUNTER, 4}, {PERF_COUNTER_RAWCOUNT, 4}};
  const DataBlock prev = single(defs, {100, 7}, kT0), cur = single(defs, {600, 9}, kT1);
  std::vector<InstanceValues> out;
  REQUIRE(format_object(&prev, cur, kObject, out).ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].name.empty());
  CHECK(out[0].counters[0].value.value == Approx(500.0));  // 500 over 1 s
  CHECK(out[0].counters[1].value.value == Approx(9.0));

  CHECK(format_object(&prev, cur, 999, out).code() == Status::Code::kNotFound);

  REQUIRE(format_object(nullptr, cur, kObject, out).ok());
  CHECK(out[0].counters[0].value.status == ValueStatus::kNeedsTwoSamples);
  CHECK(out[0].counters[1].value.valid());

  DataBlock moved = prev;
  moved.objects[0].counters[0].offset = 16;  // the previous sample's data lived elsewhere
  REQUIRE(format_object(&moved, cur, kObject, out).ok());
  CHECK(out[0].counters[0].value.status == ValueStatus::kInvalid);
  CHECK(out[0].counters[1].value.valid());
}

TEST_CASE("end to end: parse(build(...)) formats to the same values") {
  const DataBlock prev = multi({{u"a", 1'000'000}, {u"b", 0}}, kT0);
  const DataBlock cur = multi({{u"b", 7'000'000}, {u"a", 3'500'000}}, kT1);
  DataBlock prev2, cur2;
  REQUIRE(parse(build(prev), prev2).ok());
  REQUIRE(parse(build(cur), cur2).ok());
  std::vector<InstanceValues> direct, wire;
  REQUIRE(format_object(&prev, cur, kObject, direct).ok());
  REQUIRE(format_object(&prev2, cur2, kObject, wire).ok());
  REQUIRE(wire.size() == 2);
  CHECK(wire[0].name == "b");
  CHECK(wire[0].counters[0].value.value == Approx(70.0));  // 7,000,000 of 10,000,000
  CHECK(wire[1].counters[0].value.value == Approx(25.0));
  REQUIRE(direct.size() == wire.size());
  for (size_t i = 0; i < wire.size(); ++i) {
    CHECK(direct[i].name == wire[i].name);
    REQUIRE(direct[i].counters.size() == wire[i].counters.size());
    for (size_t k = 0; k < wire[i].counters.size(); ++k) {
      CHECK(direct[i].counters[k].value.status == wire[i].counters[k].value.status);
      CHECK(direct[i].counters[k].value.value == wire[i].counters[k].value.value);
    }
  }
}
