// Debian's prometheus server scrapes perfsim's /metrics on loopback while a python3-samba
// collector reads a served host; the call counter comes back through Prometheus' own HTTP query
// API equal to the host's count.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/subprocess.h"
#include "tests/admin/http_client.h"
#include "tests/admin/rig.h"
#include "tests/common/host_tools.h"
#include "tests/interop/support.h"

namespace {
using nlohmann::json;
namespace sp = perfsim::subprocess;

// Debian's prometheus on `config`, its web API on 127.0.0.1:web, its log and data under `dir`.
perfsim::Status start_prometheus(const std::filesystem::path& dir, const std::string& config, uint16_t web,
                                 sp::Child& prom) {
  sp::Options o;
  o.out = sp::Stream::kFile;
  o.out_path = (dir / "prometheus.log").string();
  o.err = sp::Stream::kStdout;
  o.parent_death_signal = 9;
  return sp::start({PROMETHEUS_EXE, "--config.file=" + config, "--storage.tsdb.path=" + (dir / "data").string(),
                    "--web.listen-address=127.0.0.1:" + std::to_string(web)},
                   o, prom);
}
}  // namespace

TEST_CASE("prometheus scrapes /metrics and reads back the calls of a collector session") {
  perfsim::testing::ScratchDir dir;
  perfsim::testing::AdminRig rig(perfsim::replayer::HostOptions{perfsim::replayer::TimelineMode::kStep, 0});

  // A real collector session first: python3-samba's growing-buffer reads of Global, Costly and names.
  const auto client = perfsim::interop::run_command(
      "timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " + INTEROP_SCRIPTS_DIR + "/collector_samba.py --port " +
      std::to_string(rig.served.port()) + " --out " + perfsim::interop::shell_quote(dir.path.string()));
  INFO(client.output);
  REQUIRE(client.exit_status == 0);
  const uint64_t calls = rig.host->calls();
  REQUIRE(calls > 0);

  const uint16_t web = perfsim::testing::free_port();
  const std::string config = (dir.path / "prometheus.yml").string();
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        << "scrape_configs:\n  - job_name: perfsim\n    static_configs:\n"
                        << "      - targets: ['127.0.0.1:" << rig.http.port() << "']\n";
  sp::Child prom;
  REQUIRE(start_prometheus(dir.path, config, web, prom).ok());

  // Bounded: 90 s for prometheus to start, scrape and answer (it scrapes every second).
  json result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto r = perfsim::testing::http_request(web, "GET", "/api/v1/query?query=perfsim_host_perf_queries_total");
    if (r.status == 200) {
      const json j = json::parse(r.body, nullptr, false);
      if (j.is_object() && j["status"] == "success" && !j["data"]["result"].empty()) {
        result = j["data"]["result"];
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the poll of a deadline loop
  }
  INFO(perfsim::testing::read_text((dir.path / "prometheus.log").string()));
  REQUIRE(result.is_array());
  REQUIRE(result.size() == 1);
  CHECK(result[0]["metric"]["host"] == rig.host->name());
  CHECK(result[0]["metric"]["job"] == "perfsim");
  CHECK(result[0]["value"][1] == std::to_string(calls));  // [time, "value"]
  // The scrape itself was healthy: Prometheus' `up` for the target is 1.
  const auto up = perfsim::testing::http_request(web, "GET", "/api/v1/query?query=up");
  CHECK(json::parse(up.body)["data"]["result"][0]["value"][1] == "1");
  sp::stop(prom, std::chrono::seconds(10));
}

// The admin token (admin/token.h) as Prometheus sends it: `authorization: credentials_file:` makes
// it send `Authorization: Bearer TOKEN` (prometheus.io, scrape_config). A job with the file scrapes
// (up 1), one without it is refused (up 0).
TEST_CASE("prometheus scrapes /metrics of a token-guarded admin API with credentials_file, and not without") {
  perfsim::testing::ScratchDir dir;
  const std::string token = "0123456789abcdef0123456789abcdef";
  const std::string token_file = (dir.path / "admin.token").string();
  std::ofstream(token_file) << token << "\n";
  perfsim::testing::AdminRig rig(perfsim::replayer::HostOptions{perfsim::replayer::TimelineMode::kStep, 0},
                                 perfsim::admin::WebFiles{PERFSIM_ADMIN_WEB_DIR}, nullptr, token);
  const uint16_t web = perfsim::testing::free_port();
  const std::string config = (dir.path / "prometheus.yml").string();
  const std::string target = "      - targets: ['127.0.0.1:" + std::to_string(rig.http.port()) + "']\n";
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        << "scrape_configs:\n"
                        << "  - job_name: with_token\n    authorization:\n      credentials_file: " << token_file
                        << "\n    static_configs:\n"
                        << target << "  - job_name: without\n    static_configs:\n"
                        << target;
  sp::Child prom;
  REQUIRE(start_prometheus(dir.path, config, web, prom).ok());
  // Bounded: 90 s for prometheus to start and scrape both jobs once (it scrapes every second).
  std::map<std::string, std::string> up;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline && up.size() < 2) {
    const auto r = perfsim::testing::http_request(web, "GET", "/api/v1/query?query=up");
    if (r.status == 200) {
      const json j = json::parse(r.body, nullptr, false);
      if (j.is_object() && j["status"] == "success")
        for (const json& s : j["data"]["result"]) up[s["metric"]["job"]] = s["value"][1];
    }
    if (up.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the poll of a deadline loop
  }
  INFO(perfsim::testing::read_text((dir.path / "prometheus.log").string()));
  CHECK(up["with_token"] == "1");
  CHECK(up["without"] == "0");
  sp::stop(prom, std::chrono::seconds(10));
}
