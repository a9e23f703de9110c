// Host events (replayer/events.h): the table of kinds, reading an event, and a clock jump read
// from the answers' PERF_DATA_BLOCK (offsets from Microsoft's winperf.h layout, written here):
// SystemTime and PerfTime100nSec move, PerfTime does not. Reboot and wrap are read by a real
// client in tests/cli/events_test.cpp.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "perfdata/filetime.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"
#include "replayer/events.h"
#include "replayer/host.h"
#include "replayer/limits.h"
#include "tests/common/small_synth.h"

namespace {

namespace rp = perfsim::replayer;

uint64_t u64(const perfsim::SharedBytes& b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

// The block's SystemTime (SYSTEMTIME at 36: eight little-endian WORDs, UTC) as FILETIME.
int64_t system_time_100ns(const perfsim::SharedBytes& b) {
  uint16_t w[8];
  std::memcpy(w, b.data() + 36, sizeof w);
  const perfsim::perfdata::SystemTime t{w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]};
  return perfsim::perfdata::filetime_of(t);
}

}  // namespace

TEST_CASE("events: every kind is a row with its source and Applied name and is found by name") {
  for (const rp::EventRow& r : rp::event_table()) {
    INFO(r.name);
    CHECK(rp::find_event(r.name) == &r);
    CHECK(&rp::event_row(r.kind) == &r);
    CHECK(std::string(r.source).find("https://") != std::string::npos);
    CHECK(r.applied_name == "event:" + std::string(r.name));
    CHECK(rp::applied_name(1u << r.applied_bit) == r.applied_name);
  }
  CHECK(rp::find_event("meltdown") == nullptr);
}

TEST_CASE("events: a bad event is refused naming the key and what is accepted") {
  rp::HostEvent e;
  perfsim::Status s = rp::parse_event_json(R"({"kind": "meltdown"})", "body", e);
  CHECK(s.message().find("reboot, wrap, clock-jump") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "reboot", "at_s": 1, "sample": 2})", "body", e);
  CHECK(s.message().find("not both") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "wrap", "down_s": 1})", "body", e);
  CHECK(s.message().find("down_s belongs to reboot") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "clock-jump", "seconds": 1e12})", "body", e);
  CHECK(s.message().find("seconds") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "churn", "exit": 1001})", "body", e);
  CHECK(s.message().find("exit") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "wrap", "start": 1})", "body", e);
  CHECK(s.message().find("start belongs to churn") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "provider-fail", "for_s": 5})", "body", e);
  CHECK(s.message().find("objects") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "provider-fail", "objects": [0]})", "body", e);
  CHECK(s.message().find("objects") != std::string::npos);
  // One provider's objects, not an unbounded list every answer is checked against.
  std::string many = R"({"kind": "provider-fail", "objects": [)";
  for (int i = 1; i <= 257; ++i) many += std::to_string(i) + (i < 257 ? "," : "]}");
  s = rp::parse_event_json(many, "body", e);
  CHECK(s.message().find("at most 256 objects") != std::string::npos);
  REQUIRE(rp::parse_event_json(R"({"kind": "provider-fail", "objects": [234, 236], "for_s": 15})", "body", e).ok());
  CHECK(e.objects == std::vector<uint32_t>{234, 236});
  CHECK(e.for_s == 15);
  s = rp::parse_event_json(R"({"kind": "reboot", "at_s": 30, "down_s": 2, "extra": 1})", "body", e);
  CHECK(!s.ok());
  REQUIRE(rp::parse_event_json(R"({"kind": "clock-jump", "sample": 1, "seconds": -3600})", "body", e).ok());
  CHECK(e.kind == rp::EventKind::kClockJump);
  CHECK(e.sample == 1u);
  CHECK(e.seconds == -3600);
  rp::HostEvent back;
  REQUIRE(rp::parse_event_json(rp::to_json(e).dump(), "again", back).ok());
  CHECK(back == e);
}

TEST_CASE("clock-jump: SystemTime and PerfTime100nSec move by the jump from its sample on and PerfTime does not") {
  const perfsim::captures::Capture cap = perfsim::testing::small_synth_capture(4, 2, 60);
  rp::HostOptions plain{rp::TimelineMode::kStep, 0};
  rp::HostOptions jumped = plain;
  rp::HostEvent e;
  e.kind = rp::EventKind::kClockJump;
  e.sample = 2;
  e.seconds = -3600;
  jumped.events = {e};
  std::shared_ptr<rp::SimulatedHost> a, b;
  REQUIRE(rp::SimulatedHost::load(cap, jumped, a).ok());
  REQUIRE(rp::SimulatedHost::load(cap, plain, b).ok());
  constexpr size_t kPerfTime = 56, kPerfTime100nSec = 72;  // PERF_DATA_BLOCK
  for (int k = 0; k < 4; ++k) {
    INFO("sample " << k);
    const rp::ValueAnswer x = a->query(rp::PerfKey::kData, "Global", {true, 1u << 30});
    const rp::ValueAnswer y = b->query(rp::PerfKey::kData, "Global", {true, 1u << 30});
    REQUIRE(x.status == 0);
    REQUIRE(y.status == 0);
    CHECK(u64(x.data, kPerfTime) == u64(y.data, kPerfTime));
    // The two hosts' wall clocks started microseconds apart.
    const double apart_s = (double(int64_t(u64(x.data, kPerfTime100nSec) - u64(y.data, kPerfTime100nSec)))) / 1e7;
    CHECK(apart_s == Approx(k >= 2 ? -3600.0 : 0.0).margin(1.0));
    // SystemTime is the same wall clock to the millisecond: it jumps with PerfTime100nSec.
    const double sys_apart_s = double(system_time_100ns(x.data) - system_time_100ns(y.data)) / 1e7;
    CHECK(sys_apart_s == Approx(k >= 2 ? -3600.0 : 0.0).margin(1.0));
    CHECK(system_time_100ns(x.data) / 10000 == int64_t(u64(x.data, kPerfTime100nSec)) / 10000);
    const bool shaped = (x.applied >> rp::event_row(rp::EventKind::kClockJump).applied_bit) & 1;
    CHECK(shaped == (k >= 2));
  }
}

TEST_CASE("reboot and wrap on a step timeline: PerfTime counts from the reboot's sample and every answer stays whole") {
  const perfsim::captures::Capture cap = perfsim::testing::small_synth_capture(4, 2, 60);
  rp::HostOptions opt{rp::TimelineMode::kStep, 0};
  rp::HostEvent wrap, reboot;
  wrap.kind = rp::EventKind::kWrap;
  wrap.sample = 1;
  reboot.kind = rp::EventKind::kReboot;
  reboot.sample = 2;
  opt.events = {wrap, reboot};
  std::shared_ptr<rp::SimulatedHost> h;
  REQUIRE(rp::SimulatedHost::load(cap, opt, h).ok());
  constexpr size_t kTotalByteLength = 20, kPerfTime = 56, kPerfFreq = 64;  // PERF_DATA_BLOCK
  uint64_t before = 0;
  for (int k = 0; k < 4; ++k) {
    INFO("sample " << k);
    const rp::ValueAnswer a = h->query(rp::PerfKey::kData, "Global", {true, 1u << 30});
    REQUIRE(a.status == 0);
    uint32_t total = 0;
    std::memcpy(&total, a.data.data() + kTotalByteLength, 4);
    CHECK(total == a.data.size());
    const double perf_s = double(u64(a.data, kPerfTime)) / double(u64(a.data, kPerfFreq));
    if (k == 1) before = u64(a.data, kPerfTime);
    if (k == 2) CHECK(perf_s == Approx(0.0).margin(0.001));  // the boot's moment
    const std::vector<int64_t>& t = h->recording().offsets();
    if (k == 3) CHECK(perf_s == Approx(double(t[3] - t[2]) / 1e7).margin(0.001));  // one sample later
    if (k >= 2) CHECK(u64(a.data, kPerfTime) < before);
  }
}

// A wrap pushes 32-bit cumulative counters toward 2^32; 64-bit ones holding values below 2^32
// (100 ns timers of a young process) are left as they were (they once wrapped at 2^32 too).
TEST_CASE("wrap: 4-byte cumulative counters move and 8-byte ones stay") {
  const perfsim::captures::Capture cap = perfsim::testing::small_synth_capture(4, 2, 60);
  rp::HostOptions opt{rp::TimelineMode::kStep, 0};  // each Global a sample on: the second is sample 1
  std::shared_ptr<rp::SimulatedHost> plain, wrapped;
  REQUIRE(rp::SimulatedHost::load(cap, opt, plain).ok());
  rp::HostEvent wrap;
  wrap.kind = rp::EventKind::kWrap;
  wrap.sample = 1;
  opt.events = {wrap};
  REQUIRE(rp::SimulatedHost::load(cap, opt, wrapped).ok());
  perfsim::perfdata::DataBlock a, b;
  REQUIRE(plain->query(rp::PerfKey::kData, "Global", {true, 1u << 30}).status == 0);
  REQUIRE(wrapped->query(rp::PerfKey::kData, "Global", {true, 1u << 30}).status == 0);
  const rp::ValueAnswer x = plain->query(rp::PerfKey::kData, "Global", {true, 1u << 30});
  const rp::ValueAnswer y = wrapped->query(rp::PerfKey::kData, "Global", {true, 1u << 30});
  REQUIRE(perfsim::perfdata::parse(x.data.to_bytes(), a).ok());
  REQUIRE(perfsim::perfdata::parse(y.data.to_bytes(), b).ok());
  REQUIRE(a.objects.size() == b.objects.size());
  size_t narrow_moved = 0, wide_small = 0, wide_moved = 0;
  for (size_t o = 0; o < a.objects.size(); ++o) {
    const perfsim::perfdata::Object& oa = a.objects[o];
    const perfsim::perfdata::Object& ob = b.objects[o];
    std::vector<std::pair<const Bytes*, const Bytes*>> blocks;
    if (!oa.multi_instance()) blocks.emplace_back(&oa.counter_block, &ob.counter_block);
    for (size_t i = 0; i < std::min(oa.instances.size(), ob.instances.size()); ++i)
      blocks.emplace_back(&oa.instances[i].counter_block, &ob.instances[i].counter_block);
    uint32_t previous = 0;
    for (const perfsim::perfdata::CounterDef& d : oa.counters) {
      const bool cumulative = perfsim::winperf::accumulates(d.type, previous);
      previous = d.type;
      if (!cumulative) continue;
      for (const auto& [ba, bb] : blocks) {
        if (d.offset + d.size > ba->size() || d.offset + d.size > bb->size()) continue;
        const uint64_t va = perfsim::perfdata::load_counter(ba->data() + d.offset, d.size);
        const uint64_t vb = perfsim::perfdata::load_counter(bb->data() + d.offset, d.size);
        if (d.size == 4) narrow_moved += va != vb;
        if (d.size == 8 && va <= UINT32_MAX) {
          ++wide_small;
          wide_moved += va != vb;
        }
      }
    }
  }
  CHECK(narrow_moved > 0);
  CHECK(wide_small > 0);  // the case is there to be checked
  CHECK(wide_moved == 0);
}

TEST_CASE("events: a host keeps a bounded number of events and refuses the next one naming the bound") {
  const perfsim::captures::Capture cap = perfsim::testing::small_synth_capture(4, 2, 60);
  std::shared_ptr<rp::SimulatedHost> h;
  REQUIRE(rp::SimulatedHost::load(cap, {rp::TimelineMode::kStep, 0}, h).ok());
  rp::HostEvent e;
  e.kind = rp::EventKind::kClockJump;
  e.sample = 1;
  e.seconds = 1;
  for (size_t i = 0; i < rp::limits::kMaxEventsPerHost; ++i) REQUIRE(h->add_event(e).ok());
  const perfsim::Status s = h->add_event(e);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find(std::to_string(rp::limits::kMaxEventsPerHost)) != std::string::npos);
}

TEST_CASE("events: lodctr and unlodctr read back as written and refuse what Windows would not take") {
  rp::HostEvent e;
  REQUIRE(rp::parse_event_json(R"({"kind": "lodctr", "sample": 2, "object": "MyApp", "counters": ["A/sec", "B"]})",
                               "body", e)
              .ok());
  CHECK(e.object == "MyApp");
  CHECK(e.counters == std::vector<std::string>{"A/sec", "B"});
  rp::HostEvent again;
  REQUIRE(rp::parse_event_json(rp::to_json(e).dump(), "again", again).ok());
  CHECK(again == e);
  perfsim::Status s = rp::parse_event_json(R"({"kind": "unlodctr"})", "body", e);
  CHECK(s.message().find("object") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "lodctr", "object": "", "counters": ["A"]})", "body", e);
  CHECK(s.message().find("1 .. 128 characters") != std::string::npos);
  s = rp::parse_event_json(R"({"kind": "wrap", "counters": ["A"]})", "body", e);
  CHECK(s.message().find("belong to lodctr") != std::string::npos);
}

TEST_CASE("events: names after lodctr and unlodctr: indices after Last Counter, lowered only from the top") {
  rp::NameVersion v;
  v.counter = perfsim::perfdata::build_names(perfsim::perfdata::make_names({{1, "100"}, {2, "System"}, {100, "Last"}}));
  v.help = perfsim::perfdata::build_names(perfsim::perfdata::make_names({{3, "System help"}, {101, "Last help"}}));
  v.last_counter = 100;
  v.last_help = 101;
  auto event = [](rp::EventKind k, const char* object, std::vector<std::string> counters) {
    rp::HostEvent e;
    e.kind = k;
    e.object = object;
    e.counters = std::move(counters);
    return e;
  };
  auto table = [](const perfsim::Bytes& b) {
    perfsim::perfdata::NameTable t;
    REQUIRE(perfsim::perfdata::parse_names(b, t).ok());
    return t.to_map();
  };
  rp::NameVersion a, b, c, d;
  REQUIRE(rp::next_names(v, event(rp::EventKind::kLodctr, "A", {"x", "y"}), 10, a).ok());
  CHECK(a.last_counter == 106);  // 102 the object, 104 and 106 its counters
  CHECK(a.last_help == 107);
  CHECK(table(a.counter).at(102) == "A");
  CHECK(table(a.counter).at(106) == "y");
  CHECK(table(a.counter).at(1) == "106");
  CHECK(table(a.help).count(103) == 1);
  CHECK(a.reg_counter.empty());  // a host without Perflib\009 values keeps none
  CHECK(!rp::next_names(a, event(rp::EventKind::kLodctr, "a", {"z"}), 11, b).ok());  // loaded already
  REQUIRE(rp::next_names(a, event(rp::EventKind::kLodctr, "B", {"z"}), 20, b).ok());
  CHECK(b.last_counter == 110);
  REQUIRE(rp::next_names(b, event(rp::EventKind::kUnlodctr, "A", {}), 30, c).ok());
  CHECK(c.last_counter == 110);  // B is above: a gap, not lowered
  CHECK(c.last_help == 111);
  CHECK(table(c.counter).count(102) == 0);
  CHECK(table(c.counter).at(1) == "110");
  CHECK(!rp::next_names(c, event(rp::EventKind::kUnlodctr, "A", {}), 31, d).ok());  // not loaded now
  REQUIRE(rp::next_names(c, event(rp::EventKind::kUnlodctr, "B", {}), 40, d).ok());
  CHECK(d.last_counter == 100);  // the top left: down to the highest index left
  CHECK(d.last_help == 101);
  CHECK(d.counter == v.counter);
  CHECK(d.help == v.help);
  CHECK(d.loaded.empty());
}
