// The admin API through its HTTP server (admin/server.h) while a simulated host serves winreg
// clients in the same process: each change made over HTTP is checked by what a winreg client
// reads next, and each refused change by what it still reads.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include "admin/api.h"
#include "admin/server.h"
#include "core/subprocess.h"
#include "perfdata/names.h"
#include "recorder/client.h"
#include "tests/admin/http_client.h"
#include "tests/admin/rig.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/served_host.h"
#include "tests/interop/support.h"
#include "winreg/codec.h"

namespace {

using nlohmann::json;
using perfsim::testing::http_request;
using perfsim::testing::HttpReply;
namespace replayer = perfsim::replayer;
namespace admin = perfsim::admin;
namespace subprocess = perfsim::subprocess;

constexpr uint32_t kBusy = 170;  // ERROR_BUSY

// A host served over ncacn_ip_tcp and its admin API over HTTP, both on 127.0.0.1.
struct Rig {
  std::shared_ptr<replayer::SimulatedHost> host;
  perfsim::testing::ServedHost served;
  admin::AdminServer http;
  std::unique_ptr<perfsim::recorder::WinregClient> client;
  perfsim::winreg::PolicyHandle hkpd;

  explicit Rig(replayer::HostOptions opt, admin::AdminSources sources = {})
      : host(perfsim::testing::bundled_host(opt)),
        served(host),
        http(admin::AdminConfig{},
             std::make_shared<admin::AdminApi>(std::vector<admin::AdminHost>{{"", host, {"127.0.0.1:0"}, "", {}}},
                                               std::move(sources), admin::WebFiles{PERFSIM_ADMIN_WEB_DIR})) {
    REQUIRE(served.start().ok());
    REQUIRE(http.start().ok());
    REQUIRE(
        perfsim::recorder::WinregClient::connect("127.0.0.1", served.port(), std::chrono::seconds(10), client).ok());
    REQUIRE(client->open_hive(perfsim::winreg::kOpenHKPD, hkpd).ok());
  }
  HttpReply call(const std::string& method, const std::string& target, const std::string& body = "",
                 const std::string& type = "") {
    // A change carries the header the access rule asks for (access_test.cpp tests the rule).
    const bool change = method != "GET" && method != "HEAD";
    HttpReply r = http_request(http.port(), method, target, body, type, 0,
                               change ? std::vector<std::pair<std::string, std::string>>{{"X-Perfsim", "1"}}
                                      : std::vector<std::pair<std::string, std::string>>{});
    INFO(r.error);
    REQUIRE(r.status != 0);
    return r;
  }
  perfsim::recorder::ValueResult read(const std::string& value) {
    perfsim::recorder::ValueResult r;
    const perfsim::Status st = client->query_value_growing(hkpd, value, {}, r);
    INFO(st.ToString());
    REQUIRE(st.ok());
    return r;
  }
  json host_state() { return json::parse(call("GET", "/api/hosts/" + host->name()).body); }
};

std::string error_of(const HttpReply& r) { return json::parse(r.body).at("error").get<std::string>(); }

}  // namespace

TEST_CASE(
    "PUT restrict-remote-clients: TCP connections made after it fault unauthenticated calls, "
    "one bound before keeps its policy") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  const std::string url = "/api/hosts/" + rig.host->name() + "/quirks";
  const auto open_new = [&] {
    std::unique_ptr<perfsim::recorder::WinregClient> c;
    perfsim::Status st =
        perfsim::recorder::WinregClient::connect("127.0.0.1", rig.served.port(), std::chrono::seconds(10), c);
    perfsim::winreg::PolicyHandle h;
    if (st.ok()) st = c->open_hive(perfsim::winreg::kOpenHKPD, h);
    return st;
  };
  REQUIRE(open_new().ok());
  REQUIRE(rig.call("PUT", url, "restrict-remote-clients").status == 200);
  const perfsim::Status refused = open_new();
  INFO(refused.ToString());
  CHECK_FALSE(refused.ok());
  CHECK(refused.ToString().find("unauthenticated") != std::string::npos);
  CHECK(rig.read("Global").status == 0);  // bound before the change
  REQUIRE(rig.call("PUT", url, "").status == 200);
  CHECK(open_new().ok());
}

TEST_CASE(
    "PUT /api/faults: a busy fault on Global reaches the next call, a malformed plan is a 400 and changes nothing") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  CHECK(rig.read("Global").status == 0);

  HttpReply r = rig.call("PUT", "/api/faults", "[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n", "application/toml");
  REQUIRE(r.status == 200);
  CHECK(json::parse(r.body)["fault"][0]["kind"] == "busy");
  CHECK(rig.read("Global").status == kBusy);
  CHECK(rig.read("238").status == 0);  // only the value the plan names

  // Malformed TOML, an unknown kind and a wrongly typed key in JSON: each a 400 saying what was wrong.
  r = rig.call("PUT", "/api/faults", "[[fault]\nkind = ", "application/toml");
  CHECK(r.status == 400);
  CHECK(r.content_type == "application/json");
  CHECK(error_of(r).find("request body") != std::string::npos);
  r = rig.call("PUT", "/api/faults", "[[fault]]\nkind = \"explode\"\n");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("\"explode\" is not one of latency") != std::string::npos);
  r = rig.call("PUT", "/api/faults", R"({"fault": [{"kind": "busy", "every": "5"}]})", "application/json");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("fault[0].every: expected an integer") != std::string::npos);
  // The plan in force is the first one, still.
  CHECK(rig.read("Global").status == kBusy);
  CHECK(rig.read("238").status == 0);
  CHECK(json::parse(rig.call("GET", "/api/faults").body)["fault"].size() == 1);

  // A JSON plan replaces it; an empty one clears it.
  r = rig.call("PUT", "/api/faults", R"({"fault": [{"kind": "busy", "value": "238"}]})", "application/json");
  REQUIRE(r.status == 200);
  CHECK(rig.read("Global").status == 0);
  CHECK(rig.read("238").status == kBusy);
  REQUIRE(rig.call("PUT", "/api/faults", "").status == 200);
  CHECK(rig.read("238").status == 0);
}

TEST_CASE("PUT /api/faults: a number outside its range is a 400 naming the key and range, the plan in force stays") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  REQUIRE(rig.call("PUT", "/api/faults", "[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n").status == 200);
  // Once accepted: every later QueryValue then waited 1e15 ms.
  HttpReply r = rig.call("PUT", "/api/faults", "[[fault]]\nkind = \"latency\"\nms = 1e15\n", "application/toml");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("fault[0].ms: must be between 0 and 3600000, got 1000000000000000") != std::string::npos);
  r = rig.call("PUT", "/api/faults", R"({"fault": [{"kind": "busy", "every": 0}]})", "application/json");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("fault[0].every: must be between 1 and 4294967295, got 0") != std::string::npos);
  CHECK(rig.read("Global").status == kBusy);  // the first plan, still
  CHECK(rig.read("238").status == 0);
  // A pace of 5e-324 recorded seconds per second would freeze the host for good: refused, pace kept.
  Rig live(replayer::HostOptions{replayer::TimelineMode::kRealtime, 0});
  const std::string live_url = "/api/hosts/" + live.host->name() + "/timeline";
  for (const char* bad : {"speed=4.9e-324", "speed=0", "speed=1e5"}) {
    INFO(bad);
    r = live.call("POST", live_url, bad);
    CHECK(r.status == 400);
    CHECK(error_of(r).find("must be between 0.001 and 10000") != std::string::npos);
  }
  CHECK(live.host_state()["timeline"]["speed"] == 1.0);
  CHECK(live.host_state()["timeline"]["between"] == "interpolate");  // counters between samples
  replayer::HostOptions stepping{replayer::TimelineMode::kRealtime, 0};
  stepping.between = replayer::Between::kStep;
  Rig stepped(stepping);
  CHECK(stepped.host_state()["timeline"]["between"] == "step");
}

TEST_CASE("PUT /api/faults under a server's idle timeout: a latency longer than it is a 400 saying why") {
  auto host = perfsim::testing::bundled_host(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  admin::AdminApi api({{"", host, {}, "", {}}}, {}, admin::WebFiles{PERFSIM_ADMIN_WEB_DIR},
                      replayer::FaultLimits::for_idle_timeout(10));
  admin::HttpResponse r =
      api.handle({"PUT", "/api/faults", "application/toml", "[[fault]]\nkind = \"latency\"\nms = 10001\n", "localhost",
                  std::nullopt, "1", std::nullopt, std::nullopt});
  CHECK(r.status == 400);
  CHECK(r.body.find("must be between 0 and 10000, got 10001") != std::string::npos);
  CHECK(r.body.find("--idle-timeout of 10 s") != std::string::npos);
  CHECK(host->faults() == nullptr);
  r = api.handle({"PUT", "/api/faults", "application/toml", "[[fault]]\nkind = \"latency\"\nms = 10000\n", "localhost",
                  std::nullopt, "1", std::nullopt, std::nullopt});
  CHECK(r.status == 200);
  REQUIRE(host->faults() != nullptr);
  CHECK(host->faults()->rules.at(0).ms == 10000);
}

TEST_CASE(
    "PUT /api/hosts/NAME/quirks replaces the host's quirks, a bad or content quirk is a 400 and changes nothing") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  const std::string url = "/api/hosts/" + rig.host->name() + "/quirks";
  CHECK(rig.read("Global").status == 0);
  HttpReply r = rig.call("PUT", url, "busy:every=1\nslow-global:ms=1\n");
  REQUIRE(r.status == 200);
  const json q = json::parse(r.body)["quirks"];
  CHECK(std::find(q.begin(), q.end(), "busy:every=1") != q.end());
  CHECK(rig.read("Global").status == kBusy);
  CHECK(rig.read("Counter 009").status == kBusy);

  r = rig.call("PUT", url, "busy:every=x");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("every") != std::string::npos);
  r = rig.call("PUT", url, "perffreq:hz=1000");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("cannot change while it serves") != std::string::npos);
  CHECK(rig.read("Global").status == kBusy);  // unchanged

  REQUIRE(rig.call("PUT", url, "").status == 200);  // back to the host's base quirks
  CHECK(rig.read("Global").status == 0);
  r = rig.call("PUT", url, "access-denied");
  REQUIRE(r.status == 200);
  CHECK(rig.read("Global").status == 5);  // ERROR_ACCESS_DENIED
}

TEST_CASE("POST /api/hosts/NAME/timeline: pause keeps the sample, step and seek move it, resume and speed run it") {
  SECTION("a step timeline") {
    Rig rig(replayer::HostOptions{replayer::TimelineMode::kStep, 0});
    const std::string url = "/api/hosts/" + rig.host->name() + "/timeline";
    const auto a = rig.read("Global").data, b = rig.read("Global").data;
    CHECK(a != b);  // each data answer steps
    REQUIRE(rig.call("POST", url, "pause").status == 200);
    const uint32_t at = rig.host->now().tick;
    const auto c = rig.read("Global").data, d = rig.read("Global").data;
    CHECK(c == d);  // paused: the same sample twice
    CHECK(rig.host->now().tick == at);
    json s = json::parse(rig.call("POST", url, "step").body)["timeline"];
    CHECK(s["position"] == (at + 1) % rig.host->ticks());
    CHECK(s["paused"] == true);
    CHECK(rig.read("Global").data != d);
    s = json::parse(rig.call("POST", url + "?seek=3").body)["timeline"];  // the query form works too
    CHECK(s["position"] == 3);
    CHECK(rig.host->now().tick == 3);
    HttpReply r = rig.call("POST", url, "speed=2");
    CHECK(r.status == 400);
    CHECK(error_of(r).find("realtime") != std::string::npos);
    r = rig.call("POST", url, "seek=100000");
    CHECK(r.status == 400);
    CHECK(error_of(r).find("samples") != std::string::npos);
    REQUIRE(rig.call("POST", url, "resume").status == 200);
    const auto e = rig.read("Global").data;
    CHECK(rig.read("Global").data != e);
  }
  SECTION("a realtime timeline") {
    Rig rig(replayer::HostOptions{replayer::TimelineMode::kRealtime, 0});
    const std::string url = "/api/hosts/" + rig.host->name() + "/timeline";
    REQUIRE(rig.call("POST", url, "pause").status == 200);
    const auto a = rig.read("Global").data;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(rig.read("Global").data == a);  // clocks and sample stay while paused
    json s = json::parse(rig.call("POST", url, "seek=5").body)["timeline"];
    CHECK(s["position"] == 5);
    CHECK(s["paused"] == true);
    s = json::parse(rig.call("POST", url, "step").body)["timeline"];
    CHECK(s["position"] == 6);
    CHECK(rig.read("Global").data != a);
    // Resumed 10,000 times faster than recorded: within a bounded wait the position moves on.
    REQUIRE(rig.call("POST", url, "speed=10000").status == 200);
    REQUIRE(rig.call("POST", url, "resume").status == 200);
    CHECK(rig.host_state()["timeline"]["speed"] == 10000.0);
    bool moved = false;
    for (int i = 0; i < 100 && !moved; ++i) {  // bounded: 10 s
      moved = rig.host_state()["timeline"]["position"] != 6;
      if (!moved) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(moved);
    HttpReply r = rig.call("POST", url, "speed=-1");
    CHECK(r.status == 400);
    r = rig.call("POST", url, "rewind");
    CHECK(r.status == 400);
    CHECK(error_of(r).find("pause, resume, step, seek=K, speed=X") != std::string::npos);
  }
}

TEST_CASE(
    "admin errors: unknown paths 404, wrong methods 405 with Allow, journal endpoints 503 until wired, size limits") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  HttpReply r = rig.call("GET", "/api/nothing");
  CHECK(r.status == 404);
  CHECK(error_of(r).find("/api/nothing") != std::string::npos);
  r = rig.call("GET", "/api/hosts/NO-SUCH-HOST");
  CHECK(r.status == 404);
  CHECK(error_of(r).find("no host 'NO-SUCH-HOST'") != std::string::npos);
  CHECK(error_of(r).find("/api/hosts?q=") != std::string::npos);  // how to search; a fleet's names are not listed
  r = rig.call("DELETE", "/api/faults");
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, PUT");
  for (const char* path : {"/api/journal", "/api/sessions"}) {
    r = rig.call("GET", path);
    CHECK(r.status == 503);
    CHECK(error_of(r) == "journal not enabled");
  }
  CHECK(rig.call("DELETE", "/api/journal").status == 503);
  r = rig.call("GET", "/api/journal?limit=%zz");
  CHECK(r.status == 400);
  // A body over the 1 MiB limit is refused from its Content-Length, before it is read.
  r = http_request(rig.http.port(), "PUT", "/api/faults", "", "application/toml", size_t(2) << 20);
  CHECK(r.status == 413);
  CHECK(error_of(r).find("larger than") != std::string::npos);
}

TEST_CASE("admin sources: wired journal functions answer their endpoints, metrics are appended") {
  bool cleared = false;
  admin::AdminSources src;
  src.metrics_text = [] { return std::string("perfsim_journal_drops_total 0\n"); };
  src.journal = [](const std::string& host, const std::string& session, uint64_t since, uint64_t limit) {
    return json{{"host", host}, {"session", session}, {"since", since}, {"limit", limit}};
  };
  src.clear_journal = [&] { cleared = true; };
  src.sessions = [] { return json::array({json{{"session", "1"}}}); };
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0}, src);
  CHECK(rig.read("Global").status == 0);
  const json j = json::parse(rig.call("GET", "/api/journal?host=H%201&session=7&since=3&limit=9").body);
  CHECK(j == json{{"host", "H 1"}, {"session", "7"}, {"since", 3}, {"limit", 9}});
  CHECK(rig.call("DELETE", "/api/journal").status == 200);
  CHECK(cleared);
  CHECK(json::parse(rig.call("GET", "/api/sessions").body)[0]["session"] == "1");
  const HttpReply m = rig.call("GET", "/metrics");
  CHECK(m.content_type.find("text/plain; version=0.0.4") == 0);
  CHECK(m.body.find("perfsim_host_perf_queries_total{host=\"" + rig.host->name() + "\"} " +
                    std::to_string(rig.host->calls())) != std::string::npos);
  CHECK(m.body.find("perfsim_journal_drops_total 0\n") != std::string::npos);
}

// The value of an unlabelled series in a /metrics body (-1 when absent).
double metric_value(const std::string& body, const std::string& name) {
  const size_t at = body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + name.size() + 2));
}

TEST_CASE("/metrics has the process_* metrics Prometheus clients export and smbd's session's memory") {
  // A session of three processes stands in for smbd and its per-client children, started as
  // perfsim starts smbd (a session of its own). The test's own session cannot serve: in a
  // container whose session leader lives outside its PID namespace getsid(0) is 0.
  subprocess::Options o;
  o.new_session = true;
  subprocess::Child smbd;
  // sleep-ok: processes that only need to exist while /metrics counts them
  REQUIRE(subprocess::start({"sh", "-c", "sleep 60 & sleep 60 & wait"}, o, smbd).ok());
  admin::AdminSources src;
  const pid_t leader = smbd.pid;
  src.smbd_pid = [leader] { return int(leader); };
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0}, src);
  std::string before = rig.call("GET", "/metrics").body;
  for (int i = 0; i < 100 && metric_value(before, "perfsim_smbd_processes") < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the shell forks its sleeps
    before = rig.call("GET", "/metrics").body;
  }
  for (const char* name :
       {"process_cpu_seconds_total", "process_open_fds", "process_max_fds", "process_virtual_memory_bytes",
        "process_resident_memory_bytes", "process_start_time_seconds", "perfsim_smbd_processes",
        "perfsim_smbd_resident_memory_bytes", "perfsim_smbd_proportional_memory_bytes"}) {
    INFO(name);
    CHECK(before.find("# TYPE " + std::string(name) + " ") != std::string::npos);
  }
  CHECK(before.find("# TYPE process_cpu_seconds_total counter") != std::string::npos);
  CHECK(metric_value(before, "process_resident_memory_bytes") > 1e6);
  CHECK(metric_value(before, "process_cpu_seconds_total") >= 0);
  const double now = double(::time(nullptr));
  const double started = metric_value(before, "process_start_time_seconds");
  CHECK(started <= now + 1);
  CHECK(started > now - 600);  // this test process started moments ago (not the machine's boot)
  CHECK(metric_value(before, "perfsim_smbd_processes") == 3);  // the leader and both children
  CHECK(metric_value(before, "perfsim_smbd_resident_memory_bytes") > 0);
  // Issue 54: the RSS sum counts the pages the three shells share three times; PSS shares them out.
  CHECK(metric_value(before, "perfsim_smbd_proportional_memory_bytes") > 0);
  CHECK(metric_value(before, "perfsim_smbd_proportional_memory_bytes") <
        metric_value(before, "perfsim_smbd_resident_memory_bytes"));
  subprocess::stop(smbd, std::chrono::seconds(5), /*group=*/true);
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) fds.push_back(::dup(0));
  const std::string after = rig.call("GET", "/metrics").body;
  for (int fd : fds) ::close(fd);
  const double more = metric_value(after, "process_open_fds") - metric_value(before, "process_open_fds");
  CHECK(more >= 10);
  CHECK(more <= 12);  // the scrape's own connection may still be closing on the server's side
}

TEST_CASE("GET /api/hosts and the counter series: typeperf's formatted values over the capture's timeline") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kFrozen, 2});
  const json hosts = json::parse(rig.call("GET", "/api/hosts").body);
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0]["name"] == rig.host->name());
  CHECK(hosts[0]["timeline"]["mode"] == "frozen");
  CHECK(hosts[0]["timeline"]["position"] == 2);
  CHECK(hosts[0]["quirks"].size() >= 3);
  const json counters = json::parse(rig.call("GET", "/api/hosts/" + rig.host->name() + "/counters").body);
  bool processor = false;
  for (const json& o : counters["objects"])
    processor = processor || (o["object"] == "Processor" && std::find(o["instances"].begin(), o["instances"].end(),
                                                                      "_Total") != o["instances"].end());
  CHECK(processor);
  const HttpReply r = rig.call("GET", "/api/hosts/" + rig.host->name() +
                                          "/series?object=Processor&instance=_Total&counter=%25%20Processor%20Time");
  REQUIRE(r.status == 200);
  const json s = json::parse(r.body);
  CHECK(s["type"] == "PERF_100NSEC_TIMER_INV");
  REQUIRE(s["points"].size() == rig.host->ticks());
  CHECK(s["points"][0].contains("error"));  // the first sample has no previous one
  size_t values = 0;
  for (const json& p : s["points"])
    if (p.contains("value")) {
      ++values;
      CHECK(p["value"].get<double>() >= 0.0);
      CHECK(p["value"].get<double>() <= 100.0);
    }
  CHECK(values == rig.host->ticks() - 1);
  CHECK(rig.call("GET", "/api/hosts/" + rig.host->name() + "/series?object=Processor&instance=_Total&counter=Nope")
            .status == 404);
}

TEST_CASE("perfsim serve --admin: the API lists the served host, a non-loopback address needs --allow-remote") {
  perfsim::testing::CommandResult r =
      perfsim::testing::run_command(PERFSIM_EXE, "serve --listen 127.0.0.1:0 --admin 192.0.2.1:8080");
  CHECK(r.code == 2);
  CHECK(r.err.find("--admin") != std::string::npos);
  CHECK(r.err.find("--allow-remote") != std::string::npos);
  r = perfsim::testing::run_command(PERFSIM_EXE, "serve --admin 127.0.0.1:http");
  CHECK(r.code == 2);

  perfsim::testing::PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.ready = [](const std::vector<std::string>& lines) {
    return !lines.empty() && json::parse(lines.back())["event"] == "admin";
  };
  // rrp-exact: the host says the size it needs, which perfsim query takes (growth "exact" below);
  // the bundled 2016 host's own row echoes the size offered (windows/README.md).
  const perfsim::Status st = serve.start(PERFSIM_EXE, "--timeline frozen:0 --quirk rrp-exact --admin 127.0.0.1:0", how);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const json listening = json::parse(serve.lines().front());
  const json admin_line = json::parse(serve.lines().back());
  REQUIRE(admin_line.is_object());
  CHECK(admin_line["url"].get<std::string>().rfind("http://127.0.0.1:", 0) == 0);
  const HttpReply h = http_request(admin_line["port"].get<uint16_t>(), "GET", "/api/hosts");
  REQUIRE(h.status == 200);
  const json hosts = json::parse(h.body);
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0]["name"] == listening["host"]);
  CHECK(hosts[0]["profile"] == "2016");  // the bundled capture's fingerprint
  CHECK(hosts[0]["addresses"][0] == "127.0.0.1:" + std::to_string(listening["port"].get<uint16_t>()));

  // The journal (on by default) behind /api/journal, /api/sessions and /metrics: a collector's
  // session shows up in each.
  const uint16_t port = admin_line["port"].get<uint16_t>();
  const perfsim::testing::CommandResult q = perfsim::testing::run_command(
      PERFSIM_EXE, "query 127.0.0.1:" + std::to_string(listening["port"].get<uint16_t>()) + " Global --initial 4096");
  INFO(q.out << q.err);
  REQUIRE(q.code == 0);
  const HttpReply j = http_request(port, "GET", "/api/journal?limit=100");
  REQUIRE(j.status == 200);
  const json entries = json::parse(j.body)["entries"];
  size_t global_calls = 0;
  for (const json& e : entries) global_calls += e["value"] == "Global" ? 1 : 0;
  CHECK(global_calls >= 2);  // 4 KB is too small for Global: ERROR_MORE_DATA, then the whole answer
  REQUIRE(entries.size() >= 2);
  const uint64_t second = entries[1]["seq"].get<uint64_t>();  // since= is the first seq wanted
  const json from = json::parse(http_request(port, "GET", "/api/journal?since=" + std::to_string(second)).body);
  REQUIRE(!from["entries"].empty());
  CHECK(from["entries"][0]["seq"].get<uint64_t>() == second);
  const HttpReply sessions = http_request(port, "GET", "/api/sessions");
  REQUIRE(sessions.status == 200);
  const json diag = json::parse(sessions.body);
  REQUIRE(diag.is_array());
  REQUIRE(diag.size() == 1);
  CHECK(diag[0]["growth"] == "exact");  // perfsim query takes the size the host returns
  CHECK(diag[0]["values"].dump().find("Global") != std::string::npos);
  const HttpReply metrics = http_request(port, "GET", "/metrics");
  REQUIRE(metrics.status == 200);
  CHECK(metrics.body.find("perfsim_winreg_calls_total{host=\"" + listening["host"].get<std::string>()) !=
        std::string::npos);
  CHECK(http_request(port, "GET", "/api/journal?session=abc").status == 400);
  REQUIRE(http_request(port, "DELETE", "/api/journal", "", "", 0, {{"X-Perfsim", "1"}}).status == 200);
  CHECK(json::parse(http_request(port, "GET", "/api/journal").body)["entries"].empty());
  CHECK(serve.stop() == 0);
}

namespace {

// Each request sent by tests/admin/admin_requests.py (python3's http.client), its answers.
std::vector<json> python_requests(uint16_t port, const json& requests) {
  const perfsim::testing::CommandResult r = perfsim::testing::run_command(
      PERFSIM_PYTHON, std::string("-B ") + ADMIN_SCRIPTS_DIR + "/admin_requests.py --port " + std::to_string(port) +
                          " " + perfsim::interop::shell_quote(requests.dump()));
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  std::vector<json> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) out.push_back(json::parse(line));
  REQUIRE(out.size() == requests.size());
  return out;
}

}  // namespace

TEST_CASE("perfsim serve --admin over the wire: cross-site and rebinding requests are refused, its own answered") {
  perfsim::testing::CommandResult bad = perfsim::testing::run_command(
      PERFSIM_EXE, "serve --listen 127.0.0.1:0 --admin 127.0.0.1:0 --admin-host perfsim.test:8135");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--admin-host 'perfsim.test:8135'") != std::string::npos);
  CHECK(bad.err.find("without a port") != std::string::npos);
  bad = perfsim::testing::run_command(PERFSIM_EXE, "serve --listen 127.0.0.1:0 --admin-host perfsim.test");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("give --admin") != std::string::npos);

  perfsim::testing::PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.ready = [](const std::vector<std::string>& lines) {
    return !lines.empty() && json::parse(lines.back())["event"] == "admin";
  };
  const perfsim::Status st =
      serve.start(PERFSIM_EXE, "--timeline step --admin 127.0.0.1:0 --admin-host perfsim.test", how);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const uint16_t port = json::parse(serve.lines().back())["port"].get<uint16_t>();
  const std::string own = "127.0.0.1:" + std::to_string(port);
  const std::string timeline = "/api/hosts/" + serve.host() + "/timeline";
  const std::string at = ":" + std::to_string(port);
  const auto req = [](const char* method, const std::string& target, json headers, const char* body = "") {
    return json{{"method", method}, {"target", target}, {"headers", std::move(headers)}, {"body", body}};
  };
  const json requests = json::array({
      // 0: a page on evil.example posting text/plain (a browser sends it without a preflight)
      req("POST", timeline, {{"Content-Type", "text/plain;charset=UTF-8"}, {"Origin", "http://evil.example"}}, "pause"),
      // 1: an HTML form's POST, without Origin (an old browser)
      req("POST", timeline, {{"Content-Type", "application/x-www-form-urlencoded"}}, "pause"),
      // 2, 3: a page whose DNS name was rebound to 127.0.0.1: GET and POST (same-origin to the browser)
      req("GET", "/api/hosts", {{"Host", "evil.example" + at}}),
      req("POST", timeline, {{"Host", "evil.example" + at}, {"Origin", "http://evil.example" + at}, {"X-Perfsim", "1"}},
          "pause"),
      // 4: no Host at all
      req("GET", "/api/hosts", {{"Host", nullptr}}),
      // 5: the host still runs
      req("GET", "/api/hosts/" + serve.host(), json::array()),
      // 6: the server's own page (Origin = its Host) with the header: paused
      req("POST", timeline, {{"Origin", "http://" + own}, {"X-Perfsim", "1"}, {"Content-Type", "text/plain"}}, "pause"),
      // 7: the dashboard by the name localhost; 8: by the --admin-host name
      req("GET", "/", {{"Host", "localhost" + at}}),
      req("GET", "/api/hosts", {{"Host", "perfsim.test" + at}}),
      // 9: a JSON fault plan without X-Perfsim (its Content-Type is not CORS-safelisted)
      req("PUT", "/api/faults", {{"Content-Type", "application/json"}},
          R"({"fault":[{"kind":"busy","value":"Global"}]})"),
  });
  std::vector<json> r = python_requests(port, requests);
  const auto error = [&](size_t i) { return json::parse(r[i]["body"].get<std::string>()).value("error", ""); };
  CHECK(r[0]["status"] == 403);
  CHECK(error(0).find("Origin 'http://evil.example'") != std::string::npos);
  CHECK(r[1]["status"] == 403);
  CHECK(error(1).find("X-Perfsim: 1") != std::string::npos);
  CHECK(r[2]["status"] == 403);
  CHECK(error(2).find("DNS rebinding") != std::string::npos);
  CHECK(r[3]["status"] == 403);
  CHECK(error(3).find("Host 'evil.example:") != std::string::npos);
  CHECK(r[4]["status"] == 403);
  CHECK(error(4).find("no Host header") != std::string::npos);
  REQUIRE(r[5]["status"] == 200);
  CHECK(json::parse(r[5]["body"].get<std::string>())["timeline"]["paused"] == false);
  REQUIRE(r[6]["status"] == 200);
  CHECK(json::parse(r[6]["body"].get<std::string>())["timeline"]["paused"] == true);
  CHECK(r[7]["status"] == 200);
  CHECK(r[7]["body"].get<std::string>().find("dashboard.js") != std::string::npos);
  CHECK(r[8]["status"] == 200);
  CHECK(r[9]["status"] == 200);
  CHECK(json::parse(r[9]["body"].get<std::string>())["fault"][0]["kind"] == "busy");

  // Two Host headers: which one counts is unclear, so neither does (RFC 9112 3.2: 400).
  r = python_requests(
      port, json::array({req("GET", "/api/hosts",
                             json::array({json::array({"Host", own}), json::array({"Host", "evil.example"})}))}));
  CHECK(r[0]["status"] == 400);
  CHECK(serve.stop() == 0);
}

TEST_CASE("AdminServer gives the API the address it bound and the names of AdminConfig::hosts") {
  const auto host = perfsim::testing::bundled_host({replayer::TimelineMode::kFrozen, 0});
  const auto status = [&](const std::string& listen, std::vector<std::string> names, const std::string& host_header) {
    admin::AdminConfig cfg;
    cfg.listen = listen;
    cfg.allow_remote = true;
    cfg.hosts = std::move(names);
    admin::AdminServer srv(
        cfg, std::make_shared<admin::AdminApi>(std::vector<admin::AdminHost>{{"", host, {}, "", {}}},
                                               admin::AdminSources{}, admin::WebFiles{PERFSIM_ADMIN_WEB_DIR}));
    REQUIRE(srv.start().ok());
    const HttpReply r = http_request(srv.port(), "GET", "/api/hosts", "", "", 0, {{"Host", host_header}});
    INFO(r.error);
    return r.status;
  };
  CHECK(status("127.0.0.1:0", {}, "198.51.100.7") == 403);
  CHECK(status("0.0.0.0:0", {}, "198.51.100.7") == 200);  // bound to every address: any IP literal
  CHECK(status("0.0.0.0:0", {}, "perfsim.test") == 403);
  CHECK(status("127.0.0.1:0", {"perfsim.test"}, "perfsim.test:1") == 200);
  admin::AdminConfig bad;
  bad.hosts = {"perfsim.test:80"};
  admin::AdminServer srv(bad, std::make_shared<admin::AdminApi>(std::vector<admin::AdminHost>{}, admin::AdminSources{},
                                                                admin::WebFiles{PERFSIM_ADMIN_WEB_DIR}));
  const perfsim::Status st = srv.start();
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("--admin-host: 'perfsim.test:80'") != std::string::npos);
}

TEST_CASE("POST /api/hosts/NAME/events: a reboot now resets the open connection and a bad event is a 400") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kRealtime, 0});
  const std::string url = "/api/hosts/" + rig.host->name() + "/events";
  rig.read("Global");  // the connection works before
  HttpReply r = rig.call("POST", url, R"({"kind": "reboot", "down_s": 0.5})");
  INFO(r.body);
  REQUIRE(r.status == 200);
  json ev = json::parse(r.body);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0]["kind"] == "reboot");
  CHECK(ev[0]["happened"] == true);
  CHECK(rig.host_state()["events"].size() == 1);
  // The connection made before the reboot gets no answer (closed), whatever it asks.
  perfsim::recorder::ValueResult v;
  CHECK(!rig.client->query_value_growing(rig.hkpd, "Global", {}, v).ok());
  // A new one answers once the host is up again (bounded: 10 s).
  bool answered = false;
  for (int i = 0; i < 100 && !answered; ++i) {
    std::unique_ptr<perfsim::recorder::WinregClient> c;
    perfsim::winreg::PolicyHandle h;
    answered =
        perfsim::recorder::WinregClient::connect("127.0.0.1", rig.served.port(), std::chrono::seconds(10), c).ok() &&
        c->open_hive(perfsim::winreg::kOpenHKPD, h).ok() && c->query_value_growing(h, "Global", {}, v).ok();
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // paces retries, not a sync
  }
  CHECK(answered);
  for (const char* bad : {R"({"kind": "meltdown"})", R"({"kind": "reboot", "down_s": 7200})",
                          R"({"kind": "wrap", "sample": 100000})", R"({"kind": "wrap", "seconds": 3})"}) {
    INFO(bad);
    r = rig.call("POST", url, bad);
    CHECK(r.status == 400);
  }
  CHECK(error_of(rig.call("POST", url, R"({"kind": "meltdown"})")).find("reboot, wrap, clock-jump") !=
        std::string::npos);
  Rig frozen(replayer::HostOptions{replayer::TimelineMode::kFrozen, 0});
  r = frozen.call("POST", "/api/hosts/" + frozen.host->name() + "/events", R"({"kind": "wrap"})");
  CHECK(r.status == 400);
  CHECK(error_of(r).find("frozen") != std::string::npos);
}

TEST_CASE("POST /api/hosts/NAME/events: lodctr and unlodctr change Counter 009 now and bad ones are 400s") {
  Rig rig(replayer::HostOptions{replayer::TimelineMode::kRealtime, 0});
  const std::string url = "/api/hosts/" + rig.host->name() + "/events";
  auto names = [&] {
    perfsim::perfdata::NameTable t;
    REQUIRE(perfsim::perfdata::parse_names(rig.read("Counter 009").data, t).ok());
    return t.to_map();
  };
  auto find = [](const std::map<uint32_t, std::string>& m, const std::string& text) {
    for (const auto& [index, name] : m)
      if (name == text) return index;
    return 0u;
  };
  CHECK(find(names(), "MyApp") == 0);
  HttpReply r = rig.call("POST", url, R"({"kind": "lodctr", "object": "MyApp", "counters": ["Requests/sec"]})");
  INFO(r.body);
  REQUIRE(r.status == 200);
  const uint32_t object = find(names(), "MyApp");
  CHECK(object > 0);
  CHECK(names().at(object + 2) == "Requests/sec");
  // An index list naming it answers the object alone (PERF_DATA_BLOCK: NumObjectTypes at 28,
  // HeaderLength at 24; PERF_OBJECT_TYPE: ObjectNameTitleIndex at 12).
  const perfsim::Bytes listed = rig.read(std::to_string(object)).data;
  REQUIRE(listed.size() > 88);
  CHECK(perfsim::load_le32(listed.data() + 28) == 1);
  CHECK(perfsim::load_le32(listed.data() + perfsim::load_le32(listed.data() + 24) + 12) == object);
  // The same object again, one not loaded, too many counters, a counter list for unlodctr, a
  // name with a NUL: refused, each saying why.
  std::string many = R"({"kind": "lodctr", "object": "Big", "counters": [)";
  for (int i = 0; i < 65; ++i) many += (i ? ",\"c" : "\"c") + std::to_string(i) + "\"";
  many += "]}";
  const std::pair<std::string, std::string> bad[] = {
      {R"({"kind": "lodctr", "object": "myapp", "counters": ["X"]})", "loaded already"},
      {R"({"kind": "unlodctr", "object": "Nope"})", "no object 'Nope'"},
      {many, "1 .. 64 counter names"},
      {R"({"kind": "lodctr", "object": "Empty", "counters": []})", "1 .. 64 counter names"},
      {R"({"kind": "lodctr", "object": "NoCounters"})", "counters"},
      {R"({"kind": "unlodctr", "object": "MyApp", "counters": ["X"]})", "object only"},
      {R"({"kind": "lodctr", "object": "A\u0000B", "counters": ["X"]})", "control characters"},
      {R"({"kind": "reboot", "object": "MyApp"})", "belong to lodctr"},
  };
  for (const auto& [body, why] : bad) {
    INFO(body);
    r = rig.call("POST", url, body);
    CHECK(r.status == 400);
    CHECK(error_of(r).find(why) != std::string::npos);
  }
  CHECK(rig.host_state()["events"].size() == 1);  // none of them was kept
  r = rig.call("POST", url, R"({"kind": "unlodctr", "object": "MyApp"})");
  REQUIRE(r.status == 200);
  CHECK(find(names(), "MyApp") == 0);
  CHECK(names().count(object + 2) == 0);
}

// --admin-token-file end to end: serve makes the file, says where without printing the token, and
// answers only requests that carry it; a file other users may read is a usage error (exit 2).
TEST_CASE("perfsim serve --admin-token-file: the file is made 0600, requests without the token are 401s") {
  perfsim::testing::ScratchDir dir;
  const std::string file = (dir.path / "admin.token").string();
  perfsim::testing::PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.ready = [](const std::vector<std::string>& lines) {
    return !lines.empty() && json::parse(lines.back())["event"] == "admin";
  };
  {
    const perfsim::Status st = serve.start(
        PERFSIM_EXE,
        "--timeline frozen:0 --admin 127.0.0.1:0 --admin-token-file " + perfsim::interop::shell_quote(file), how);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  const std::string token = perfsim::testing::read_text(file);
  REQUIRE(token.size() == 65);  // 64 hex digits and the line's end
  struct stat made {};
  REQUIRE(::stat(file.c_str(), &made) == 0);
  CHECK((made.st_mode & 0777) == 0600);
  const std::string bearer = "Bearer " + token.substr(0, 64);
  const json admin_line = json::parse(serve.lines().back());
  CHECK(admin_line["token_file"] == file);
  for (const std::string& line : serve.lines()) CHECK(line.find(token.substr(0, 64)) == std::string::npos);
  const uint16_t port = admin_line["port"].get<uint16_t>();
  for (const char* path : {"/api/hosts", "/metrics", "/", "/api/sessions"}) {
    INFO(path);
    CHECK(http_request(port, "GET", path).status == 401);
    CHECK(http_request(port, "GET", path, "", "", 0, {{"Authorization", bearer}}).status == 200);
  }
  CHECK(http_request(port, "GET", "/api/hosts", "", "", 0, {{"Cookie", "perfsim_admin_token=" + token.substr(0, 64)}})
            .status == 200);
  const HttpReply redirect = http_request(port, "GET", "/?token=" + token.substr(0, 64));
  CHECK(redirect.status == 303);
  serve.stop();

  // Made group-readable by someone: refused before anything is served, saying how to fix it.
  ::chmod(file.c_str(), 0640);
  const perfsim::testing::CommandResult r = perfsim::testing::run_command(
      PERFSIM_EXE, "serve --listen 127.0.0.1:0 --admin 127.0.0.1:0 --admin-token-file " + file);
  CHECK(r.code == 2);
  CHECK(r.err.find("chmod 600 " + file) != std::string::npos);
  const perfsim::testing::CommandResult lone =
      perfsim::testing::run_command(PERFSIM_EXE, "serve --listen 127.0.0.1:0 --admin-token-file " + file);
  CHECK(lone.code == 2);
  CHECK(lone.err.find("give --admin") != std::string::npos);
}
