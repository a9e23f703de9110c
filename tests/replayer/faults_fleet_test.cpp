// Faults (rules, triggers, schedule, parsing) and fleets (names, clocks, variation, sharing).
#include <catch2/catch.hpp>
#include <set>

#include "perfdata/model.h"
#include "replayer/fleet.h"
#include "replayer/host.h"
#include "tests/common/test_capture.h"

using namespace perfsim;
using namespace perfsim::replayer;
namespace pd = perfsim::perfdata;

namespace {

std::shared_ptr<SimulatedHost> host_with(const std::string& plan_text) {
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(testing::test_capture(), HostOptions{TimelineMode::kFrozen, 1}, h).ok());
  std::shared_ptr<const FaultPlan> plan;
  const Status s = parse_fault_plan(plan_text, "test", plan);
  INFO(s.ToString());
  REQUIRE(s.ok());
  h->set_faults(plan);
  return h;
}

ValueAnswer ask(SimulatedHost& h, const std::string& name = "Global") { return h.query(PerfKey::kData, name, {true, 1u << 20}); }

}  // namespace

TEST_CASE("glob patterns match case-insensitively with * and ?") {
  CHECK(glob_match("*", "Global"));
  CHECK(glob_match("glob*", "Global"));
  CHECK(glob_match("2?8", "238"));
  CHECK(glob_match("Counter *", "counter 009"));
  CHECK_FALSE(glob_match("2?8", "2380"));
  CHECK_FALSE(glob_match("Costly", "Global"));
}

TEST_CASE("each fault kind changes the answer as it says, only for matching values") {
  CHECK(ask(*host_with("[[fault]]\nkind = \"busy\"\nvalue = \"Glo*\"")).status == werr::kBusy);
  CHECK(ask(*host_with("[[fault]]\nkind = \"busy\"\nvalue = \"Costly\"")).status == werr::kOk);
  CHECK(ask(*host_with("[[fault]]\nkind = \"busy\"\nhost = \"OTHER*\"")).status == werr::kOk);
  CHECK(ask(*host_with("[[fault]]\nkind = \"access-denied\"")).status == werr::kAccessDenied);
  CHECK(ask(*host_with("[[fault]]\nkind = \"rpc-fault\"\ncode = 1722")).rpc_fault == 1722);
  CHECK(ask(*host_with("[[fault]]\nkind = \"reset\"")).drop_connection);
  CHECK(ask(*host_with("[[fault]]\nkind = \"latency\"\nms = 250")).delay_ms == 250);
  CHECK(ask(*host_with("[[fault]]\nkind = \"stall\"\nseconds = 3")).delay_ms == 3000);
  const ValueAnswer full = ask(*host_with(""));
  const ValueAnswer cut = ask(*host_with("[[fault]]\nkind = \"truncate\"\nbytes = 100"));
  CHECK(cut.status == werr::kOk);
  CHECK(cut.data.size() == 100);
  CHECK(cut.size == full.size);  // the size still says the whole value: the payload is short
  const ValueAnswer slow = ask(*host_with("[[fault]]\nkind = \"bandwidth\"\nbytes_per_s = 1000"));
  CHECK(slow.delay_ms == full.data.size());  // 1 ms per byte
}

TEST_CASE("latency shapes stay within their bounds; lognormal spreads around its median") {
  auto u = host_with("[[fault]]\nkind = \"latency\"\nshape = \"uniform\"\nms = 100\nmax_ms = 200");
  auto l = host_with("[[fault]]\nkind = \"latency\"\nshape = \"lognormal\"\nms = 100\nsigma = 0.5");
  std::set<uint32_t> seen;
  size_t below = 0;
  for (int i = 0; i < 200; ++i) {
    const uint32_t d = ask(*u).delay_ms;
    CHECK(d >= 100);
    CHECK(d <= 200);
    seen.insert(d);
    below += ask(*l).delay_ms < 100;
  }
  CHECK(seen.size() > 20);
  CHECK(below > 60);   // about half below the median
  CHECK(below < 140);
}

TEST_CASE("every Nth, probability and the schedule window decide when a fault fires") {
  auto every3 = host_with("[[fault]]\nkind = \"busy\"\nevery = 3");
  std::vector<uint32_t> st;
  for (int i = 0; i < 6; ++i) st.push_back(ask(*every3).status);
  CHECK(st == std::vector<uint32_t>{0, 0, werr::kBusy, 0, 0, werr::kBusy});
  auto never = host_with("[[fault]]\nkind = \"busy\"\nprobability = 0.0");
  auto later = host_with("[[fault]]\nkind = \"busy\"\nfrom_s = 3600");
  auto ended = host_with("[[fault]]\nkind = \"busy\"\nuntil_s = 0.000000001");
  auto half = host_with("[[fault]]\nkind = \"busy\"\nprobability = 0.5");
  size_t busy = 0;
  for (int i = 0; i < 400; ++i) {
    CHECK(ask(*never).status == werr::kOk);
    CHECK(ask(*later).status == werr::kOk);
    CHECK(ask(*ended).status == werr::kOk);
    busy += ask(*half).status == werr::kBusy;
  }
  CHECK(busy > 140);
  CHECK(busy < 260);
}

TEST_CASE("a bad fault plan is refused with the place and the reason") {
  std::shared_ptr<const FaultPlan> p;
  CHECK(parse_fault_plan("[[fault]]\nkind = \"explode\"", "plan.toml", p).message().find("explode") != std::string::npos);
  CHECK(parse_fault_plan("[[fault]]\nkind = \"busy\"\nevry = 2", "plan.toml", p).message().find("evry") != std::string::npos);
  CHECK(parse_fault_plan("[[fault]]\nkind = \"bandwidth\"", "plan.toml", p).message().find("bytes_per_s") != std::string::npos);
  CHECK(parse_fault_plan("[[fault]\n", "plan.toml", p).message().find("plan.toml") != std::string::npos);
}

TEST_CASE("a wrongly typed fault key is refused, not read as 0") {
  std::shared_ptr<const FaultPlan> p;
  CHECK(parse_fault_plan("[[fault]]\nkind = \"busy\"\nevery = \"5\"\n", "plan.toml", p).message() ==
        "plan.toml:3: fault[0].every: expected an integer, got string \"5\"");
  CHECK_THAT(parse_fault_plan("[[fault]]\nkind = \"busy\"\n[[fault]]\nkind = \"truncate\"\nbytes = -1\n", "plan.toml", p).message(),
             Catch::StartsWith("plan.toml:5: fault[1].bytes: must be between 0 and 4294967295, got -1"));
  CHECK_THAT(parse_fault_plan("[[fault]]\nkind = \"latency\"\nms = \"20\"\n", "plan.toml", p).message(),
             Catch::StartsWith("plan.toml:3: fault[0].ms: expected a number"));
  CHECK_THAT(parse_fault_plan("[[fault]]\nevery = 2\n", "plan.toml", p).message(), Catch::Contains("fault[0].kind: missing"));
  CHECK_THAT(parse_fault_plan("[[faults]]\nkind = \"busy\"\n", "plan.toml", p).message(),
             Catch::StartsWith("plan.toml:1: faults: unknown key (allowed: fault)"));
}

TEST_CASE("a fleet: distinct names and clocks, shared payloads, deterministic variation") {
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(testing::test_capture(), rec).ok());
  FleetSpec spec;
  spec.count = 50;
  spec.name_pattern = "WEB-{n}";
  spec.clock_spread_s = 600;
  spec.variation = 0.2;
  spec.base = HostOptions{TimelineMode::kStep};
  std::vector<std::shared_ptr<SimulatedHost>> fleet, again;
  REQUIRE(make_fleet(rec, spec, fleet).ok());
  REQUIRE(make_fleet(rec, spec, again).ok());
  REQUIRE(fleet.size() == 50);
  CHECK(fleet_host_name("WEB-{n}", 7) == "WEB-0007");
  std::set<std::u16string> names;
  std::set<int64_t> clocks;
  for (size_t i = 0; i < fleet.size(); ++i) {
    CHECK(&fleet[i]->recording() == rec.get());  // one copy of the capture
    pd::DataBlock d, e;
    REQUIRE(pd::parse(fleet[i]->query(PerfKey::kData, "Global", {true, 1u << 20}).data, d).ok());
    REQUIRE(pd::parse(again[i]->query(PerfKey::kData, "Global", {true, 1u << 20}).data, e).ok());
    names.insert(d.system_name());
    clocks.insert(d.perf_time_100ns / 10000000);
    CHECK(d.system_name() == e.system_name());
    CHECK(std::llabs(d.perf_time_100ns - e.perf_time_100ns) < 10 * 10000000ll);  // same offset (built moments apart)
  }
  CHECK(names.size() == 50);
  CHECK(clocks.size() > 10);
  CHECK(names.count(u"WEB-0001"));
}
