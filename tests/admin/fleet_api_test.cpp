// The admin API of a large fleet without sockets: pages and filters on /api/hosts, the totals of
// /api/fleet, bounded /api/sessions, a 404 that does not list the fleet, and fleet-wide /metrics.
#include <catch2/catch.hpp>

#include <fmt/core.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/api.h"
#include "replayer/faults.h"
#include "tests/admin/rig.h"

namespace {

using nlohmann::json;
namespace admin = perfsim::admin;
namespace replayer = perfsim::replayer;

constexpr int kHosts = 1200;

using HostPtr = std::shared_ptr<replayer::SimulatedHost>;

// The bundled 2016 host, under `name` where one is given (health is keyed by the host's name).
HostPtr new_host(const std::string& name = "") {
  replayer::HostOptions o{replayer::TimelineMode::kStep, 0};
  o.identity.system_name = name;
  return perfsim::testing::bundled_host(o);
}

// kHosts entries over one simulated host (the API reads each through its SimulatedHost), except
// those `own` gives a host of their own (by number): ids WEB-0001.., addresses 127.1.x.y:4135,
// profiles 2016 and 2003 alternating; `sessions` newest last.
struct FleetApi {
  HostPtr host = new_host();
  std::map<int, HostPtr> own;
  admin::AdminApi api;
  explicit FleetApi(std::map<int, HostPtr> own_hosts = {}, std::function<json()> health = nullptr)
      : own(std::move(own_hosts)),
        api(hosts(), sources(std::move(health)), admin::WebFiles{PERFSIM_ADMIN_WEB_DIR}, {}, {"127.0.0.1", {}, ""}) {}
  std::vector<admin::AdminHost> hosts() const {
    std::vector<admin::AdminHost> v;
    for (int k = 1; k <= kHosts; ++k)
      v.push_back({fmt::format("WEB-{:04}", k),
                   own.count(k) ? own.at(k) : host,
                   {fmt::format("127.1.{}.{}:4135", k / 256, k % 256)},
                   k % 2 ? "2016" : "2003",
                   {}});
    return v;
  }
  static admin::AdminSources sources(std::function<json()> health) {
    admin::AdminSources s;
    s.health = std::move(health);
    s.sessions = [] {
      json all = json::array();
      for (int i = 0; i < 500; ++i) all.push_back({{"session", i}, {"host", i % 2 ? "WEB-0002" : "WEB-0001"}});
      return all;
    };
    return s;
  }
  admin::HttpResponse get(const std::string& target) {
    admin::HttpRequest r;
    r.method = "GET";
    r.target = target;
    r.host = "127.0.0.1:8135";
    return api.handle(r);
  }
  json get_json(const std::string& target) {
    const admin::HttpResponse r = get(target);
    INFO(target << " -> " << r.status << " " << r.body.substr(0, 300));
    REQUIRE(r.status == 200);
    return json::parse(r.body);
  }
};

void answer_calls(replayer::SimulatedHost& h, int n) {
  for (int i = 0; i < n; ++i) REQUIRE(h.query(replayer::PerfKey::kData, "Global", {true, 1u << 30}).status == 0);
}

}  // namespace

TEST_CASE("GET /api/hosts of a 1,200-host fleet: a bounded page, filters by text and profile, errors say the range") {
  FleetApi f;
  const json first = f.get_json("/api/hosts");
  REQUIRE(first.size() == 1000);  // the default page, not the fleet
  CHECK(first[0]["id"] == "WEB-0001");
  const json tail = f.get_json("/api/hosts?offset=1195&limit=10");
  REQUIRE(tail.size() == 5);
  CHECK(tail[4]["id"] == "WEB-1200");
  const json one = f.get_json("/api/hosts?q=web-0042");
  REQUIRE(one.size() == 1);
  CHECK(one[0]["id"] == "WEB-0042");
  CHECK(f.get_json("/api/hosts?q=127.1.4.").size() == 177);  // WEB-1024..WEB-1200 (127.1.4.0 .. 127.1.4.176)
  const json old = f.get_json("/api/hosts?profile=2003&limit=10000");
  CHECK(old.size() == 600);
  for (const json& h : old) CHECK(h["profile"] == "2003");
  CHECK(f.get_json("/api/hosts?state=paused").empty());
  for (const char* bad :
       {"/api/hosts?limit=0", "/api/hosts?limit=20000", "/api/hosts?offset=x", "/api/hosts?state=asleep"})
    CHECK(f.get(bad).status == 400);
  CHECK(f.get("/api/hosts?limit=0").body.find("limit must be 1 .. 10000, got 0") != std::string::npos);
}

TEST_CASE("GET /api/fleet: totals beside the page, and an unknown host is a short 404 that lists no names") {
  FleetApi f;
  const json j = f.get_json("/api/fleet?q=WEB-00&limit=5");
  CHECK(j["hosts"] == kHosts);
  CHECK(j["matched"] == 99);  // WEB-0001 .. WEB-0099
  CHECK(j["paused"] == 0);
  REQUIRE(j["page"].size() == 5);
  CHECK(j["page"][4]["id"] == "WEB-0005");
  const admin::HttpResponse missing = f.get("/api/hosts/NOPE");
  CHECK(missing.status == 404);
  CHECK(missing.body.size() < 200);
  CHECK(missing.body.find("WEB-0001") == std::string::npos);
  CHECK(missing.body.find("no host 'NOPE'") != std::string::npos);
}

TEST_CASE(
    "GET /api/fleet and /metrics: calls are every winreg call (the journal's), perf-data queries apart, each summed") {
  // 1,197 entries share a host that answered 5 perf-data queries; WEB-0007, WEB-0600 and WEB-1200
  // answered 1, 7 and 3 of their own: no one host's count (nor the first's or last's) is the sum.
  // Their winreg calls (the journal's health, by name) are other numbers: 2, 9 and 4.
  const std::map<int, HostPtr> own{{7, new_host("H-7")}, {600, new_host("H-600")}, {1200, new_host("H-1200")}};
  FleetApi f(own, [] { return json{{"H-7", {{"calls", 2}}}, {"H-600", {{"calls", 9}}}, {"H-1200", {{"calls", 4}}}}; });
  answer_calls(*f.host, 5);
  answer_calls(*own.at(7), 1);
  answer_calls(*own.at(600), 7);
  answer_calls(*own.at(1200), 3);
  constexpr uint64_t kSum = uint64_t(kHosts - 3) * 5 + 1 + 7 + 3;  // 5,996
  const json j = f.get_json("/api/fleet?limit=2&order=busy");
  CHECK(j["perf_queries"] == kSum);
  CHECK(j["calls"] == 2 + 9 + 4);
  REQUIRE(j["page"].size() == 2);
  CHECK(j["page"][0]["id"] == "WEB-0600");  // the busiest by calls
  CHECK(j["page"][0]["calls"] == 9);
  CHECK(j["page"][0]["perf_queries"] == 7);
  CHECK(j["page"][1]["id"] == "WEB-1200");
  CHECK(j["page"][1]["calls"] == 4);
  CHECK(f.get_json("/api/fleet?q=WEB-0007")["page"][0]["calls"] == 2);
  CHECK(f.get_json("/api/hosts/WEB-0600")["calls"] == 9);
  CHECK(f.get_json("/api/hosts/WEB-0600")["perf_queries"] == 7);
  f.api.set_metrics_per_host(false);
  const std::string m = f.get("/metrics").body;
  INFO(m.substr(0, 600));
  CHECK(m.find("perfsim_host_perf_queries_total " + std::to_string(kSum) + "\n") != std::string::npos);
}

TEST_CASE("GET /api/sessions: the newest 200 by default, oldest first, filtered by host") {
  FleetApi f;
  const json s = f.get_json("/api/sessions");
  REQUIRE(s.size() == 200);
  CHECK(s.front()["session"] == 300);
  CHECK(s.back()["session"] == 499);
  const json b = f.get_json("/api/sessions?host=web-0002&limit=3");
  REQUIRE(b.size() == 3);
  CHECK(b[0]["session"] == 495);
  CHECK(b[2]["session"] == 499);
  const json older = f.get_json("/api/sessions?host=WEB-0001&offset=2&limit=2");
  REQUIRE(older.size() == 2);
  CHECK(older[1]["session"] == 494);  // skips 498 and 496
}

TEST_CASE("GET /metrics of a fleet without per-host series: the host count and summed calls, no host label") {
  FleetApi f;
  f.api.set_metrics_per_host(false);
  const admin::HttpResponse m = f.get("/metrics");
  REQUIRE(m.status == 200);
  CHECK(m.body.find("perfsim_hosts 1200\n") != std::string::npos);
  CHECK(m.body.find("perfsim_host_perf_queries_total " + std::to_string(uint64_t(kHosts) * f.host->calls()) + "\n") !=
        std::string::npos);
  CHECK(m.body.find("host=") == std::string::npos);
  f.api.set_metrics_per_host(true);
  CHECK(f.get("/metrics").body.find("perfsim_host_perf_queries_total{host=\"WEB-1200\"}") != std::string::npos);
}

TEST_CASE("GET /api/fleet: errors and sessions from the journal's health, faults in force by window, ?order checked") {
  // The journal's health (journal::Metrics::health_json, by host name): WEB-0300 and WEB-0900
  // have errors, the shared host sessions only, and a name the fleet does not have adds sessions.
  const std::map<int, HostPtr> own{{300, new_host("SICK-A")}, {900, new_host("SICK-B")}};
  REQUIRE(own.at(300)->name() == "SICK-A");
  const std::string shared = new_host()->name();  // the recorded name, as FleetApi's shared host has
  FleetApi f(own, [shared] {
    return json{{"SICK-A", {{"errors", 4}, {"sessions_opened", 2}, {"sessions_open", 1}}},
                {"SICK-B", {{"errors", 1}, {"sessions_opened", 3}, {"sessions_open", 0}}},
                {shared, {{"errors", 0}, {"sessions_opened", 10}, {"sessions_open", 2}}},
                {"GONE-HOST", {{"errors", 0}, {"sessions_opened", 1}, {"sessions_open", 1}}}};
  });
  const json before = f.get_json("/api/fleet?limit=2&order=failing");
  CHECK(before["errors"] == 5);
  CHECK(before["sessions_opened"] == 16);
  CHECK(before["sessions_open"] == 4);
  CHECK(before["page"][0]["sessions_opened"] == 2);
  CHECK(before["page"][0]["sessions_open"] == 1);
  CHECK(before["faults"] == 0);
  CHECK(before["failing"] == 2);
  CHECK(before["profiles"] == json{{"2003", kHosts / 2}, {"2016", kHosts / 2}});
  REQUIRE(before["page"].size() == 2);
  CHECK(before["page"][0]["id"] == "WEB-0300");
  CHECK(before["page"][0]["errors"] == 4);
  CHECK(before["page"][1]["id"] == "WEB-0900");
  CHECK(before["page"][1]["errors"] == 1);
  CHECK(f.get_json("/api/fleet?q=WEB-0001")["page"][0]["errors"] == 0);
  std::shared_ptr<const replayer::FaultPlan> plan;
  // Two rules for every host: one in force now, one from an hour on.
  REQUIRE(replayer::parse_fault_plan("[[fault]]\nkind = \"busy\"\n[[fault]]\nkind = \"busy\"\nfrom_s = 3600\n", "plan",
                                     plan)
              .ok());
  f.host->set_faults(plan);
  const json now = f.get_json("/api/fleet?limit=2&order=failing");
  CHECK(now["faults"] == 1);
  CHECK(now["failing"] == kHosts);            // the shared host's 1,198 by their fault, the two by their errors
  CHECK(now["page"][0]["id"] == "WEB-0300");  // errors first, then faults
  CHECK(now["page"][1]["id"] == "WEB-0900");
  const json faulty = f.get_json("/api/fleet?q=WEB-0001");
  CHECK(faulty["page"][0]["faults"] == 1);
  CHECK(faulty["page"][0]["errors"] == 0);
  const admin::HttpResponse bad = f.get("/api/fleet?order=worst");
  CHECK(bad.status == 400);
  CHECK(bad.body.find("order must be fleet, failing or busy, got 'worst'") != std::string::npos);
}

TEST_CASE("GET /api/fleet without a health source: no errors, no sessions") {
  FleetApi f;
  const json j = f.get_json("/api/fleet?limit=1");
  CHECK(j["errors"] == 0);
  CHECK(j["calls"] == 0);
  CHECK(j["sessions_open"] == 0);
  CHECK(j["sessions_opened"] == 0);
  CHECK(j["failing"] == 0);
}

TEST_CASE("call rates: over the run since its start while shorter than 60 s, then over 60 to 65 s, in bounded memory") {
  using admin::CallRates;
  const CallRates::Clock::time_point t0{};
  const auto at = [&](int s) { return t0 + std::chrono::seconds(s); };
  CallRates r(1, t0);
  CallRates::Window w = r.update({30}, at(10));  // a host called every 5-15 s: 30 calls in 10 s
  CHECK(w.since_start);
  CHECK(w.seconds == 10);
  CHECK(CallRates::rate(30, (*w.base)[0], w.seconds) == 3.0);  // not 0 for want of a change in the last second
  uint64_t calls = 30;
  for (int s = 11; s <= 600; ++s) w = r.update({calls += 2}, at(s));  // 2 calls a second from then on
  CHECK_FALSE(w.since_start);
  CHECK(w.seconds >= 60);
  CHECK(w.seconds < 65);
  CHECK(CallRates::rate(calls, (*w.base)[0], w.seconds) == Approx(2.0));
  w = r.update({calls}, at(6000));  // nobody asked for an hour and a half: the window says how long it is
  CHECK(w.seconds == 5400);         // from the last snapshot taken, at 600 s
  CHECK_FALSE(w.since_start);
}
