// pipe-not-available-first through a real smbd: python3-samba's first open of \PIPE\winreg on a
// host fails (as close to Windows' STATUS_PIPE_NOT_AVAILABLE as smbd allows: its bind is cut off,
// server/README.md), the second works; without the quirk the first works.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "journal/event.h"
#include "support.h"
#include "tests/admin/http_client.h"
#include "tests/common/perfsim_smb_serve.h"

using namespace perfsim;

namespace {

// One python3-samba connect + OpenHKPD over SMB: "ok" or the error python saw.
std::string open_once(const std::string& address, uint16_t port) {
  const std::string script =
      "from samba import credentials, param\n"
      "from samba.dcerpc import winreg, security\n"
      "lp = param.LoadParm(); c = credentials.Credentials(); c.guess(lp); c.set_anonymous()\n"
      "lp.set('smb ports', '" +
      std::to_string(port) +
      "')\n"
      "try:\n"
      "    conn = winreg.winreg('ncacn_np:" +
      address +
      "[\\\\pipe\\\\winreg]', lp, c)\n"
      "    conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)\n"
      "    print('ok')\n"
      "except Exception as e:\n"
      "    print('error', e.args[0] if e.args else e)\n";
  const interop::CommandResult r =
      interop::run_command("timeout 60 " + std::string(PERFSIM_PYTHON) + " -c " + interop::shell_quote(script));
  // The last line is the script's; samba's library may log lines of its own before it.
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
}

std::string served(testing::PerfsimSmbServe& serve, const std::string& tag, std::vector<std::string> extra,
                   const std::string& address = "127.0.0.81") {
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  // A sibling of SMB_WORK_DIR, never inside it: smb_test wipes that directory when it starts, and
  // ctest may run it beside this test (it once deleted this smbd's np socket mid-test).
  cfg.dir = std::string(SMB_WORK_DIR) + "-" + tag;
  cfg.hosts = {{address, std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", {}}};
  cfg.extra_args = std::move(extra);
  const Status s = serve.start(cfg);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return address;
}

// `method target` (with `body`) to the admin API whose port perfsim printed (--json) in
// serve.out; the reply's body.
std::string admin_call(const testing::PerfsimSmbServe& serve, const std::string& method, const std::string& target,
                       const std::string& body = "") {
  std::ifstream out(serve.dir() + "/serve.out");
  uint16_t port = 0;
  for (std::string line; std::getline(out, line);)
    if (const auto j = nlohmann::json::parse(line, nullptr, false); j.is_object() && j.value("event", "") == "admin")
      port = j.at("port").get<uint16_t>();
  REQUIRE(port != 0);
  const testing::HttpReply r = testing::http_request(port, method, target, body, "", 0, {{"X-Perfsim", "1"}});
  INFO(r.error);
  REQUIRE(r.status == 200);
  return r.body;
}

}  // namespace

TEST_CASE(
    "pipe-not-available-first: the first SMB open of a host fails, the next works, also when the admin API "
    "turns it on",
    "[smb]") {
  {
    testing::PerfsimSmbServe serve;
    const std::string addr = served(serve, "pipe-quirk", {"--quirk", "pipe-not-available-first"});
    const std::string first = open_once(addr, serve.port());
    INFO(first);
    CHECK(first == "error " + std::to_string(0xC000020Cu));  // STATUS_CONNECTION_DISCONNECTED
    CHECK(open_once(addr, serve.port()) == "ok");
    CHECK(open_once(addr, serve.port()) == "ok");
    CHECK(serve.stop() == 0);
  }
  {
    testing::PerfsimSmbServe serve;  // the bundled 2016 host's profile alone does not turn it on
    const std::string addr = served(serve, "pipe-no-quirk", {"--admin", "127.0.0.1:0"});
    CHECK(open_once(addr, serve.port()) == "ok");
    // Put while serving, the quirk refuses the next open once, as at start.
    const nlohmann::json put =
        nlohmann::json::parse(admin_call(serve, "PUT", "/api/hosts/PERFSIM-2016/quirks", "pipe-not-available-first"));
    const auto quirks = put.at("quirks").get<std::vector<std::string>>();
    CHECK(std::count(quirks.begin(), quirks.end(), "pipe-not-available-first") == 1);
    CHECK(open_once(addr, serve.port()) == "error " + std::to_string(0xC000020Cu));
    CHECK(open_once(addr, serve.port()) == "ok");
    CHECK(serve.stop() == 0);
  }
}

// The journal over SMB: each pipe open is a session of its own, labelled smb.
TEST_CASE("perfsim serve --smb --journal: each pipe open is an smb session in the journal", "[smb][journal]") {
  const std::string file = std::string(SMB_WORK_DIR) + "-journal.jsonl";
  std::filesystem::remove(file);
  {
    testing::PerfsimSmbServe serve;
    const std::string addr = served(serve, "journal", {"--journal", file, "--admin", "127.0.0.1:0"}, "127.0.0.83");
    CHECK(open_once(addr, serve.port()) == "ok");
    CHECK(open_once(addr, serve.port()) == "ok");
    // The admin API lists the host's SMB endpoint beside its TCP one, as `perfsim query` takes it.
    const nlohmann::json hosts = nlohmann::json::parse(admin_call(serve, "GET", "/api/hosts"));
    REQUIRE(hosts.size() == 1);
    const auto addresses = hosts[0].at("addresses").get<std::vector<std::string>>();
    CHECK(std::count(addresses.begin(), addresses.end(), "smb:" + addr + ":" + std::to_string(serve.port())) == 1);
    CHECK(addresses.size() == 2);
    CHECK(serve.stop() == 0);  // SIGTERM: the file gets every call first
  }
  std::vector<journal::CallEvent> events;
  const Status s = journal::read_journal_file(file, events);
  INFO(s.ToString());
  REQUIRE(s.ok());
  std::set<uint64_t> sessions;
  size_t opens = 0;
  for (const journal::CallEvent& e : events) {
    CHECK(e.transport == journal::Transport::kSmb);
    CHECK(journal::text(e.host) == "PERFSIM-2016");
    sessions.insert(e.session);
    opens += e.opnum == 3 && e.status == 0;  // OpenHKPD, WERR_OK
  }
  CHECK(sessions.size() == 2);
  CHECK(opens == 2);
}