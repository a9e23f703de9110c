// Debian's prometheus server scrapes perfsim's /metrics on loopback while a python3-samba
// collector reads a served host; the call counter comes back through Prometheus' own HTTP query
// API equal to the host's count.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
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
  sp::Options o;
  o.out = sp::Stream::kFile;
  o.out_path = (dir.path / "prometheus.log").string();
  o.err = sp::Stream::kStdout;
  o.parent_death_signal = 9;
  sp::Child prom;
  REQUIRE(sp::start({PROMETHEUS_EXE, "--config.file=" + config, "--storage.tsdb.path=" + (dir.path / "data").string(),
                     "--web.listen-address=127.0.0.1:" + std::to_string(web)},
                    o, prom)
              .ok());

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
