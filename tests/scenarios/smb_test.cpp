// remote-registry-smb through a real smbd (root, Samba installed: as tests/smb): `perfsim serve
// --scenario remote-registry-smb --smb` on 127.0.0.91 and .92; python3-samba's first open of host
// 1's \PIPE\winreg fails and the next works; on host 2 an anonymous OpenHKPD is refused with
// WERR_ACCESS_DENIED while perfadmin's works; the journal shows the refusal.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/common/perfsim_serve.h"
#include "tests/common/host_tools.h"
#include "tests/common/run_command.h"

namespace {

namespace fs = std::filesystem;
namespace sp = perfsim::subprocess;
using nlohmann::json;

// One python3-samba connect + OpenHKPD over SMB: "ok", or "error CODE".
std::string open_once(const std::string& address, uint16_t port, const std::string& user = "") {
  const std::string creds =
      user.empty() ? "c.set_anonymous()\n" : "c.set_username('" + user + "'); c.set_password('Perf4dmin!')\n";
  const std::string script =
      "from samba import credentials, param\n"
      "from samba.dcerpc import winreg, security\n"
      "lp = param.LoadParm(); c = credentials.Credentials(); c.guess(lp)\n" +
      creds + "lp.set('smb ports', '" + std::to_string(port) +
      "')\n"
      "try:\n"
      "    conn = winreg.winreg('ncacn_np:" +
      address +
      "[\\\\pipe\\\\winreg]', lp, c)\n"
      "    conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)\n"
      "    print('ok')\n"
      "except Exception as e:\n"
      "    print('error', e.args[0] if e.args else e)\n";
  fs::create_directories(SCENARIO_SMB_DIR);
  const std::string file = std::string(SCENARIO_SMB_DIR) + "/open_once.py";
  FILE* f = std::fopen(file.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(script.c_str(), f);
  std::fclose(f);
  const perfsim::testing::CommandResult r = perfsim::testing::run_command(PERFSIM_PYTHON, "-B " + file, 60);
  std::string out = r.out;  // samba may log lines of its own first: the last line is the script's
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
}

}  // namespace

TEST_CASE("remote-registry-smb: the first pipe open fails then works, a non-admin is refused HKPD", "[smb]") {
  REQUIRE(geteuid() == 0);  // perfsim serve --smb runs smbd and adds loopback addresses
  fs::remove_all(SCENARIO_SMB_DIR);
  fs::create_directories(SCENARIO_SMB_DIR);
  const std::string journal = std::string(SCENARIO_SMB_DIR) + "/journal.jsonl";
  const uint16_t port = perfsim::testing::free_port();
  // Two listening lines, then one smb line per host once smbd is up.
  perfsim::testing::PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.err_path = std::string(SCENARIO_SMB_DIR) + "/serve.err";
  how.parent_death_signal = SIGTERM;
  how.new_session = true;
  how.ready = [](const std::vector<std::string>& lines) {
    return std::count_if(lines.begin(), lines.end(),
                         [](const std::string& l) { return json::parse(l).at("event") == "smb"; }) == 2;
  };
  const perfsim::Status st = serve.start(
      PERFSIM_EXE,
      "--scenario remote-registry-smb --listen 127.0.0.91:0 --listen 127.0.0.92:0 --smb=" + std::to_string(port) +
          " --smb-user perfadmin:Perf4dmin! --smb-dir " + SCENARIO_SMB_DIR + "/smb --journal " + journal,
      how);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const std::string first = open_once("127.0.0.91", port);
  CHECK(first == "error " + std::to_string(0xC000020Cu));  // STATUS_CONNECTION_DISCONNECTED (server/README.md)
  // A null session never gets winreg's HKEY_PERFORMANCE_DATA (2016's defaults: windows/README.md).
  CHECK(open_once("127.0.0.91", port) == "error 5");
  CHECK(open_once("127.0.0.91", port, "perfadmin") == "ok");
  CHECK(open_once("127.0.0.92", port) == "error 5");  // WERR_ACCESS_DENIED for anonymous
  CHECK(open_once("127.0.0.92", port, "perfadmin") == "ok");
  CHECK(serve.stop(std::chrono::seconds(30), true) == 0);
  const perfsim::testing::CommandResult r = perfsim::testing::run_command(
      PERFSIM_EXE, "journal " + journal + " --shows-diagnosis --scenario remote-registry-smb", 60);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
}
