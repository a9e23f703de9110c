// Faults (rules, triggers, schedule, parsing) and fleets (names, clocks, variation, sharing).
#include <catch2/catch.hpp>
#include <algorithm>
#include <set>

#include "core/bytes.h"
#include "perfdata/model.h"
#include "replayer/fleet.h"
#include "replayer/host.h"
#include "tests/common/small_synth.h"
#include "tests/common/test_capture.h"
#include "windows/constants.h"
#include "perfdata/view.h"

using namespace perfsim;
using namespace perfsim::replayer;
namespace pd = perfsim::perfdata;

namespace {

std::shared_ptr<SimulatedHost> host_with_plan(const std::string& plan_text) {
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(testing::test_capture(), HostOptions{TimelineMode::kFrozen, 1}, h).ok());
  std::shared_ptr<const FaultPlan> plan;
  const Status s = parse_fault_plan(plan_text, "test", plan);
  INFO(s.ToString());
  REQUIRE(s.ok());
  h->set_faults(plan);
  return h;
}

ValueAnswer ask(SimulatedHost& h, const std::string& name = "Global") {
  return h.query(PerfKey::kData, name, {true, 1u << 20});
}

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
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"busy\"\nvalue = \"Glo*\"")).status == windows::kErrorBusy);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"busy\"\nvalue = \"Costly\"")).status == windows::kErrorSuccess);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"busy\"\nhost = \"OTHER*\"")).status == windows::kErrorSuccess);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"access-denied\"")).status == windows::kErrorAccessDenied);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"rpc-fault\"\ncode = 1722")).rpc_fault == 1722);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"reset\"")).drop_connection);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"latency\"\nms = 250")).delay_ms == 250);
  CHECK(ask(*host_with_plan("[[fault]]\nkind = \"stall\"\nseconds = 3")).delay_ms == 3000);
  const ValueAnswer full = ask(*host_with_plan(""));
  const ValueAnswer cut = ask(*host_with_plan("[[fault]]\nkind = \"truncate\"\nbytes = 100"));
  CHECK(cut.status == windows::kErrorSuccess);
  CHECK(cut.data.size() == 100);
  CHECK(cut.size == full.size);  // the size still says the whole value: the payload is short
  const ValueAnswer slow = ask(*host_with_plan("[[fault]]\nkind = \"bandwidth\"\nbytes_per_s = 1000"));
  CHECK(slow.delay_ms == full.data.size());  // 1 ms per byte
}

TEST_CASE("latency shapes stay within their bounds, lognormal spreads around its median") {
  auto u = host_with_plan("[[fault]]\nkind = \"latency\"\nshape = \"uniform\"\nms = 100\nmax_ms = 200");
  auto l = host_with_plan("[[fault]]\nkind = \"latency\"\nshape = \"lognormal\"\nms = 100\nsigma = 0.5");
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
  CHECK(below > 60);  // about half below the median
  CHECK(below < 140);
}

TEST_CASE("every Nth, probability and the schedule window decide when a fault fires") {
  auto every3 = host_with_plan("[[fault]]\nkind = \"busy\"\nevery = 3");
  std::vector<uint32_t> st;
  for (int i = 0; i < 6; ++i) st.push_back(ask(*every3).status);
  CHECK(st == std::vector<uint32_t>{0, 0, windows::kErrorBusy, 0, 0, windows::kErrorBusy});
  auto never = host_with_plan("[[fault]]\nkind = \"busy\"\nprobability = 0.0");
  auto later = host_with_plan("[[fault]]\nkind = \"busy\"\nfrom_s = 3600");
  auto ended = host_with_plan("[[fault]]\nkind = \"busy\"\nuntil_s = 0.000000001");
  auto half = host_with_plan("[[fault]]\nkind = \"busy\"\nprobability = 0.5");
  size_t busy = 0;
  for (int i = 0; i < 400; ++i) {
    CHECK(ask(*never).status == windows::kErrorSuccess);
    CHECK(ask(*later).status == windows::kErrorSuccess);
    CHECK(ask(*ended).status == windows::kErrorSuccess);
    busy += ask(*half).status == windows::kErrorBusy;
  }
  CHECK(busy > 140);
  CHECK(busy < 260);
}

TEST_CASE("a bad fault plan is refused with the place and the reason") {
  std::shared_ptr<const FaultPlan> p;
  CHECK(parse_fault_plan("[[fault]]\nkind = \"explode\"", "plan.toml", p).message().find("explode") !=
        std::string::npos);
  CHECK(parse_fault_plan("[[fault]]\nkind = \"busy\"\nevry = 2", "plan.toml", p).message().find("evry") !=
        std::string::npos);
  CHECK(parse_fault_plan("[[fault]]\nkind = \"bandwidth\"", "plan.toml", p).message().find("bytes_per_s") !=
        std::string::npos);
  CHECK(parse_fault_plan("[[fault]\n", "plan.toml", p).message().find("plan.toml") != std::string::npos);
}

TEST_CASE("a wrongly typed fault key is refused, not read as 0") {
  std::shared_ptr<const FaultPlan> p;
  CHECK(parse_fault_plan("[[fault]]\nkind = \"busy\"\nevery = \"5\"\n", "plan.toml", p).message() ==
        "plan.toml:3: fault[0].every: expected an integer, got string \"5\"");
  CHECK_THAT(
      parse_fault_plan("[[fault]]\nkind = \"busy\"\n[[fault]]\nkind = \"truncate\"\nbytes = -1\n", "plan.toml", p)
          .message(),
      Catch::StartsWith("plan.toml:5: fault[1].bytes: must be between 0 and 4294967295, got -1"));
  CHECK_THAT(parse_fault_plan("[[fault]]\nkind = \"latency\"\nms = \"20\"\n", "plan.toml", p).message(),
             Catch::StartsWith("plan.toml:3: fault[0].ms: expected a number"));
  CHECK_THAT(parse_fault_plan("[[fault]]\nevery = 2\n", "plan.toml", p).message(),
             Catch::Contains("fault[0].kind: missing"));
  CHECK_THAT(parse_fault_plan("[[faults]]\nkind = \"busy\"\n", "plan.toml", p).message(),
             Catch::StartsWith("plan.toml:1: faults: unknown key (allowed: fault)"));
}

TEST_CASE("fault plan numbers outside their range are refused naming the key and the range") {
  std::shared_ptr<const FaultPlan> p;
  const auto refusal = [&](const std::string& rule) {
    return parse_fault_plan("[[fault]]\nkind = \"busy\"\n[[fault]]\n" + rule + "\n", "plan.toml", p).message();
  };
  // Each of these once made every QueryValue wait an hour or more.
  CHECK(
      refusal("kind = \"latency\"\nms = 1e15") ==
      "plan.toml:5: fault[1].ms: must be between 0 and 3600000, got 1000000000000000 (milliseconds: at most an hour)");
  CHECK_THAT(refusal("kind = \"latency\"\nms = 9.2e18"), Catch::Contains("fault[1].ms: must be between 0 and 3600000"));
  CHECK_THAT(refusal("kind = \"latency\"\nms = 1.8e19"), Catch::Contains("fault[1].ms: must be between 0 and 3600000"));
  CHECK_THAT(refusal("kind = \"latency\"\nshape = \"uniform\"\nms = 10\nmax_ms = 3600001"),
             Catch::Contains("fault[1].max_ms: must be between 0 and 3600000, got 3600001"));
  CHECK_THAT(refusal("kind = \"latency\"\nshape = \"uniform\"\nms = 10\nmax_ms = 5"),
             Catch::Contains("fault[1].max_ms: must be at least ms (10), got 5"));
  CHECK_THAT(refusal("kind = \"latency\"\nms = -1"), Catch::Contains("fault[1].ms: must be between 0 and 3600000"));
  CHECK_THAT(refusal("kind = \"latency\"\nshape = \"lognormal\"\nms = 10\nsigma = 11"),
             Catch::Contains("fault[1].sigma: must be between 0 and 10, got 11"));
  CHECK_THAT(refusal("kind = \"stall\"\nseconds = 3601"),
             Catch::Contains("fault[1].seconds: must be between 0 and 3600, got 3601"));
  // every = 0 used to become "probability 0": a rule that never fires.
  CHECK_THAT(refusal("kind = \"busy\"\nevery = 0"),
             Catch::StartsWith("plan.toml:5: fault[1].every: must be between 1 and 4294967295, got 0"));
  CHECK_THAT(refusal("kind = \"busy\"\nprobability = 1.5"),
             Catch::Contains("fault[1].probability: must be between 0 and 1, got 1.5"));
  CHECK_THAT(refusal("kind = \"busy\"\nfrom_s = -5"), Catch::Contains("fault[1].from_s: must be between 0 and"));
  CHECK_THAT(refusal("kind = \"busy\"\nuntil_s = 1e300"), Catch::Contains("fault[1].until_s: must be between 0 and"));
  // The JSON form (PUT /api/faults) is checked the same way.
  CHECK_THAT(parse_fault_plan_json(R"({"fault": [{"kind": "latency", "ms": 1e15}]})", "body", p).message(),
             Catch::Contains("fault[0].ms: must be between 0 and 3600000"));
  // The edges are accepted.
  CHECK(parse_fault_plan("[[fault]]\nkind = \"latency\"\nms = 3600000\nevery = 1\nprobability = 1", "t", p).ok());
}

TEST_CASE("under a server's idle timeout a latency may not outlast it while a stall may") {
  const FaultLimits lim = FaultLimits::for_idle_timeout(300);
  CHECK(lim.max_latency_ms == 300000);
  CHECK(FaultLimits::for_idle_timeout(0).max_latency_ms == 3600000);      // no idle timeout: an hour
  CHECK(FaultLimits::for_idle_timeout(86400).max_latency_ms == 3600000);  // the smaller of the two
  std::shared_ptr<const FaultPlan> p;
  const std::string m = parse_fault_plan("[[fault]]\nkind = \"latency\"\nms = 300001\n", "plan.toml", p, lim).message();
  CHECK_THAT(m, Catch::StartsWith("plan.toml:3: fault[0].ms: must be between 0 and 300000, got 300001"));
  CHECK_THAT(m, Catch::Contains("--idle-timeout of 300 s"));
  CHECK(parse_fault_plan("[[fault]]\nkind = \"latency\"\nms = 300000\n", "plan.toml", p, lim).ok());
  CHECK(parse_fault_plan("[[fault]]\nkind = \"stall\"\nseconds = 900\n", "plan.toml", p, lim).ok());
  // A lognormal draw never exceeds the bound the plan was checked against.
  REQUIRE(parse_fault_plan("[[fault]]\nkind = \"latency\"\nshape = \"lognormal\"\nms = 1000\nsigma = 10\n", "plan.toml",
                           p, FaultLimits::for_idle_timeout(2))
              .ok());
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(testing::test_capture(), HostOptions{TimelineMode::kFrozen, 1}, h).ok());
  h->set_faults(p);
  uint32_t longest = 0;
  for (int i = 0; i < 200; ++i) longest = std::max(longest, ask(*h).delay_ms);
  CHECK(longest == 2000);  // sigma 10: some draws are far beyond, and are cut there
}

TEST_CASE("delays add up to an hour at most, however many rules and quirks add them") {
  std::string plan;
  for (int i = 0; i < 3; ++i) plan += "[[fault]]\nkind = \"latency\"\nms = 3600000\n";
  plan += "[[fault]]\nkind = \"stall\"\nseconds = 3600\n[[fault]]\nkind = \"bandwidth\"\nbytes_per_s = 1\n";
  CHECK(ask(*host_with_plan(plan)).delay_ms == 3600000);
  // A delay quirk (slow-global) and a rule: their sum, then the same hour for the two together.
  Quirks slow;
  slow.slow_global_ms = 1000000;
  const std::shared_ptr<SimulatedHost> h = host_with_plan("[[fault]]\nkind = \"latency\"\nms = 1000\n");
  REQUIRE(h->set_quirks(slow).ok());
  CHECK(ask(*h).delay_ms == 1001000);
  slow.slow_global_ms = 3000000;
  const std::shared_ptr<SimulatedHost> capped = host_with_plan("[[fault]]\nkind = \"latency\"\nms = 3000000\n");
  REQUIRE(capped->set_quirks(slow).ok());
  CHECK(ask(*capped).delay_ms == 3600000);
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
  CHECK(fleet_host_name("WEB-{n}", 7, 10) == "WEB-0007");
  CHECK(fleet_host_name("WEB", 7, 10) == "WEB-0007");
  CHECK(fleet_host_name("W2K3", 1, 1) == "W2K3");  // a fleet of one keeps its name
  CHECK(fleet_host_name("W2K3-{n}", 1, 1) == "W2K3-0001");
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

TEST_CASE("fleet variation scales each host's cumulative counters by its own factor within [1 - variation, 1]") {
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(testing::small_synth_capture(), rec).ok());  // real counter types
  FleetSpec spec;
  spec.count = 20;
  spec.variation = 0.2;
  spec.base = HostOptions{TimelineMode::kStep};
  std::vector<std::shared_ptr<SimulatedHost>> fleet, again, plain_fleet;
  REQUIRE(make_fleet(rec, spec, fleet).ok());
  REQUIRE(make_fleet(rec, spec, again).ok());
  spec.variation = 0;
  REQUIRE(make_fleet(rec, spec, plain_fleet).ok());

  // A live moment (variation applies to live answers; frozen ones are served as recorded).
  const Moment m{1, 0, 0, false};
  const SampleRef sample = rec->sample(1, Series::kGlobal, Patches::kAll);
  REQUIRE(sample);
  const Sample& v = *sample;
  REQUIRE(v.header_length > 0);
  // Each cumulative counter of the sample, as the host serves it at m; the system name may move the objects.
  const auto counters = [&](SimulatedHost& h) {
    const Bytes b = h.content(PerfKey::kData, "Global", m).data.to_bytes();
    const uint32_t header = perfdata::block_field32(b, winperf::data_block::kHeaderLength);
    std::vector<uint64_t> out;
    for (const ObjectSlice& s : v.objects)
      for (const CounterPatch& c : s.counters.list()) {
        const uint8_t* p = &b[s.offset - v.header_length + header + c.offset];
        out.push_back(perfdata::load_counter(p, c.size));
      }
    return out;
  };
  const std::vector<uint64_t> base = counters(*plain_fleet[0]);
  REQUIRE(base.size() > 10);
  std::set<int64_t> factors_ppm;
  for (size_t i = 0; i < fleet.size(); ++i) {
    CHECK(counters(*plain_fleet[i]) == base);  // variation 0: every host as recorded
    const std::vector<uint64_t> got = counters(*fleet[i]);
    CHECK(got == counters(*again[i]));  // deterministic
    // One factor per host: the largest counter gives it, every counter follows it.
    size_t big = 0;
    for (size_t k = 0; k < base.size(); ++k)
      if (base[k] > base[big]) big = k;
    REQUIRE(base[big] > 1000000);
    const double f = double(got[big]) / double(base[big]);
    CHECK(f >= 0.8 - 1e-6);
    CHECK(f <= 1.0);
    factors_ppm.insert(int64_t(f * 1e6));
    for (size_t k = 0; k < base.size(); ++k) {
      CAPTURE(i, k, base[k], got[k], f);
      CHECK(double(got[k]) <= double(base[k]) * f + 1.0 + double(base[k]) * 1e-6);
      CHECK(double(got[k]) >= double(base[k]) * f - 1.0 - double(base[k]) * 1e-6);
    }
  }
  CHECK(factors_ppm.size() > 10);  // hosts differ
}
