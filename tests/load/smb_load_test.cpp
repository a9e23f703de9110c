// `perfsim load --smb` against a real `perfsim serve --fleet ... --smb` (its private smbd, as
// tests/smb start it): every host reached as \\ADDR\PIPE\winreg with a user's logon, its calls equal
// the server's own count in /metrics, no errors, each session kept the buffer it grew, and
// /metrics reads the real smbd's processes and memory. Needs root and samba
// (scripts/install-deps.sh), as tests/smb.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/common/host_tools.h"
#include "tests/common/perfsim_smb_serve.h"
#include "tests/load/checks.h"

using nlohmann::json;

namespace {

constexpr uint64_t kSmbHosts = 3;
constexpr uint64_t kSmbCollectors = 2;

// The admin port of `perfsim serve --admin 127.0.0.1:0`: its "admin" line in serve.out.
uint16_t smb_admin_port(const perfsim::testing::PerfsimSmbServe& s) {
  std::istringstream out(perfsim::testing::read_text(s.dir() + "/serve.out"));
  for (std::string line; std::getline(out, line);) {
    const json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == "admin") return j.at("port").get<uint16_t>();
  }
  return 0;
}

}  // namespace

TEST_CASE("perfsim load --smb: calls per host are the server's own count and every session keeps its buffer", "[smb]") {
  // Addresses of this process's own (load_tests' TCP fleets use 127.94.x), frozen at sample 0 as
  // they are: 238 fits an 8 KiB buffer, Global (153,048 bytes) does not.
  const std::string net = "127.95." + std::to_string(getpid() % 250);
  perfsim::testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + "/load-" + std::to_string(getpid());
  cfg.fleet = "[[host]]\naddresses = \"" + net + ".0/24\"\ncount = " + std::to_string(kSmbHosts) +
              "\nname = \"LD-{n}\"\ntimeline = \"frozen:0\"\n";
  cfg.smb_hosts = kSmbHosts;
  cfg.users = {{"loader", "Load-smb-pw1"}};
  cfg.extra_args = {"--admin", "127.0.0.1:0"};
  perfsim::testing::PerfsimSmbServe serve;
  const perfsim::Status st = serve.start(cfg);
  INFO(st.message());
  REQUIRE(st.ok());
  const uint16_t admin = smb_admin_port(serve);
  REQUIRE(admin != 0);

  const json r = perfsim::testing::load_json(cfg.dir + "/fleet.toml --smb=" + std::to_string(serve.port()) +
                                                 " --user loader --password Load-smb-pw1 --collectors " +
                                                 std::to_string(kSmbCollectors) +
                                                 " --duration 2 --query 238 --query Global --initial 8192",
                                             0);
  CHECK(r.at("hosts") == kSmbHosts);
  CHECK(r.at("sessions") == kSmbHosts * kSmbCollectors);
  CHECK(r.at("overall").at("errors").at("total") == 0);
  for (const json& h : r.at("per_host")) perfsim::testing::check_kept_buffer_host(h, kSmbCollectors);
  const std::map<std::string, uint64_t> want = perfsim::testing::calls_by_host(r);
  REQUIRE(want.size() == kSmbHosts);
  const std::map<std::string, uint64_t> counted = perfsim::testing::server_calls_when(admin, want);
  // One SMB session (pipe) a collector and host, as the server counts them.
  std::map<std::string, uint64_t> sessions;
  for (const auto& [host, calls] : want) sessions[host] = kSmbCollectors;
  const std::map<std::string, uint64_t> opened = perfsim::testing::per_host_counts(admin, "perfsim_sessions_total");
  INFO("calls: perfsim load " << perfsim::testing::counts_text(want) << ", server "
                              << perfsim::testing::counts_text(counted) << "; server's sessions "
                              << perfsim::testing::counts_text(opened));
  CHECK(counted == want);
  CHECK(opened == sessions);
  // smbd's own processes, read by /metrics from its session (smbd, its helpers, a child per client
  // connection still open): a real smbd's resident memory, not this test's.
  const auto metrics = perfsim::testing::http_request(admin, "GET", "/metrics");
  REQUIRE(metrics.status == 200);
  const auto gauge = [&](const std::string& name) {
    const size_t at = metrics.body.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(metrics.body.substr(at + name.size() + 2));
  };
  INFO(metrics.body.substr(0, 4000));
  CHECK(gauge("perfsim_smbd_processes") >= 1);
  CHECK(gauge("perfsim_smbd_resident_memory_bytes") > 1e6);  // smbd alone holds megabytes
  CHECK(serve.stop() == 0);
}
