// DCE/RPC authentication on top of SMB: python3-samba binds \pipe\winreg with `[sign]` and
// `[seal]` (SPNEGO/NTLMSSP inside the pipe, on top of the SMB session's own logon) against
// `perfsim serve --smb --user`, reads Global and Counter 009, and must get the host's bytes; tshark
// shows the binds and requests carrying that auth level (so the pipe really ran the auth code).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "support.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_smb_serve.h"

using namespace perfsim;

namespace {

const char* const kRpcUser = "dave";
const char* const kHostileUser = "erin";  // the tampering test's own account
const char* const kRpcPassword = "D4ve-pw!";
const std::string kAddress = "127.0.0.123";
constexpr uint32_t kTick = 3;

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// python3-samba's winreg client over ncacn_np with RPC-level `level`; writes each value's bytes
// to DIR/<i>.bin.
interop::CommandResult read_values(uint16_t port, const std::string& level, const std::string& dir) {
  const std::string py =
      "import sys\n"
      "from samba import param, credentials\n"
      "from samba.dcerpc import winreg, security\n"
      "lp = param.LoadParm(); lp.set('smb ports', '" +
      std::to_string(port) +
      "')\n"
      "c = credentials.Credentials(); c.guess(lp); c.set_username('" +
      kRpcUser + "'); c.set_password('" + kRpcPassword +
      "')\n"
      "conn = winreg.winreg(r'ncacn_np:" +
      kAddress + "[\\pipe\\winreg," + level +
      "]', lp, c)\n"
      "h = conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)\n"
      "for i, name in enumerate(['Global', 'Counter 009']):\n"
      "    s = winreg.String(); s.name = name\n"
      "    t, data, size, length = conn.QueryValue(h, s, 0, [], 16 * 1024 * 1024, 0)\n"
      "    open('" +
      dir +
      "/%d.bin' % i, 'wb').write(bytes(data[:length]))\n"
      "    print(name, t, length)\n"
      "conn.CloseKey(h)\n";
  return interop::run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -c " + interop::shell_quote(py) +
                              " 2>&1");
}

// perfsim serve --smb of `capture` on `address`, frozen at kTick, with `user`'s account (kRpcPassword),
// working in a sibling of SMB_WORK_DIR named by `suffix`. Each test has its own user: perfsim makes
// the account and removes it at exit, so two tests running at once must not share one.
void start(testing::PerfsimSmbServe& s, const char* suffix, const std::string& address, const std::string& capture,
           const std::string& user) {
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + suffix;
  cfg.hosts = {{address, capture, {}}};
  cfg.users = {{user, kRpcPassword}};
  cfg.frozen_tick = kTick;
  const Status st = s.start(cfg);
  INFO(st.ToString());
  REQUIRE(st.ok());
}

}  // namespace

TEST_CASE("python3-samba with RPC-level sign and seal on the SMB pipe reads the host's Global and Counter 009",
          "[smb][rpcauth]") {
  const std::string capture = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  testing::PerfsimSmbServe s;
  start(s, "-rpcauth", kAddress, capture, kRpcUser);  // a sibling: smb_test wipes SMB_WORK_DIR when it starts
  INFO("perfsim serve log: " << s.err_path());
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(testing::load_frozen_host(capture, kTick, host).ok());
  const Bytes global = host->content(replayer::PerfKey::kData, "Global", kTick).data.to_bytes();
  const Bytes counter = host->content(replayer::PerfKey::kData, "Counter 009", kTick).data.to_bytes();
  REQUIRE(global.size() > 1000);
  REQUIRE(counter.size() > 1000);

  for (const auto& [level, want] : {std::pair<std::string, std::string>{"sign", "5"}, {"seal", "6"}}) {
    INFO(level);
    const std::string dir = s.dir() + "/" + level;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string pcap = dir + "/pipe.pcapng";
    interop::PacketRecorder wire;
    {
      const Status st = wire.start(s.port(), pcap);
      INFO(st.ToString());
      REQUIRE(st.ok());
    }
    const interop::CommandResult r = read_values(s.port(), level, dir);
    wire.stop();
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK(read_file(dir + "/0.bin") == global);
    CHECK(read_file(dir + "/1.bin") == counter);

    // Every DCE/RPC bind and request on the pipe names the level asked for.
    const interop::CommandResult t = interop::run_command(
        "timeout 120 tshark -2 -n -r " + interop::shell_quote(pcap) + " -d tcp.port==" + std::to_string(s.port()) +
        ",nbss -Y 'dcerpc.pkt_type == 0 || dcerpc.pkt_type == 11' -T fields -e dcerpc.pkt_type -e dcerpc.auth_level "
        "2>&1");
    INFO(t.output);
    REQUIRE(t.exit_status == 0);
    size_t binds = 0, requests = 0;
    std::istringstream lines(t.output);
    for (std::string line; std::getline(lines, line);) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::string type = line.substr(0, tab), auth = line.substr(tab + 1);
      INFO(line);
      CHECK(auth == want);
      (type == "11" ? binds : requests) += 1;
    }
    CHECK(binds == 1);
    CHECK(requests >= 4);  // OpenHKPD, two QueryValue, CloseKey
  }
}

// Issue 28 on the pipe: the AUTHENTICATE variants that crashed perfsim (and with it every host
// and smbd's pipes) get fault access_denied and a log line; the same perfsim then serves samba.
TEST_CASE("tampered AUTHENTICATE messages on the SMB pipe are refused and perfsim goes on", "[smb][rpcauth]") {
  const std::string capture = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  testing::PerfsimSmbServe s;
  start(s, "-hostile-auth", "127.0.0.124", capture, kHostileUser);
  INFO("perfsim serve log: " << s.err_path());
  for (const char* variant : {"empty-key", "drop-key-exch"}) {
    INFO(variant);
    const interop::CommandResult r = interop::run_command(
        "timeout 60 " + std::string(PERFSIM_PYTHON) + " -B " + interop::shell_quote(HOSTILE_AUTH_PY) +
        " --transport smb --address 127.0.0.124 --port " + std::to_string(s.port()) + " --user " + kHostileUser +
        " --password " + interop::shell_quote(kRpcPassword) + " --variant " + variant + " 2>&1");
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK(r.output.find("\"key_exch\": true") != std::string::npos);
    CHECK(r.output.find("\"fault\": 5}") != std::string::npos);
  }
  // Issue 44 on the pipe: A2 (a wrong password with a DomainName of 200 x U+FFFF) over auth3 and
  // SPNEGO, A1' (NTLMv1, LM_KEY asked, no LM response) with the right password.
  const std::string base = "timeout 60 " + std::string(PERFSIM_PYTHON) + " -B " +
                           interop::shell_quote(HOSTILE_AUTH_PY) + " --transport smb --address 127.0.0.124 --port " +
                           std::to_string(s.port()) + " --user " + kHostileUser + " ";
  for (const char* leg : {"--leg auth3", "--spnego"}) {
    INFO(leg);
    const interop::CommandResult a2 =
        interop::run_command(base + leg + " --smb-password " + interop::shell_quote(kRpcPassword) +
                             " --password Wrong --variant none --domain 200:ffff 2>&1");
    INFO(a2.output);
    CHECK(a2.output.find("\"fault\": 5") != std::string::npos);
    const interop::CommandResult a1 =
        interop::run_command(base + leg + " --password " + interop::shell_quote(kRpcPassword) +
                             " --ntlmv1 --lm-key --variant no-lm-response 2>&1");
    INFO(a1.output);
    CHECK(a1.output.find("\"lm_key\": false") != std::string::npos);
    CHECK(a1.output.find("\"ptype\": 2") != std::string::npos);
  }
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(testing::load_frozen_host(capture, kTick, host).ok());
  const std::string dir = s.dir() + "/after-hostile";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const interop::CommandResult r = interop::run_command(
      "timeout 120 " + std::string(PERFSIM_PYTHON) + " -c " +
      interop::shell_quote("from samba import param, credentials\nfrom samba.dcerpc import winreg, security\n"
                           "lp = param.LoadParm(); lp.set('smb ports', '" +
                           std::to_string(s.port()) +
                           "')\nc = credentials.Credentials(); c.guess(lp); c.set_username('" + kHostileUser +
                           "'); c.set_password('" + kRpcPassword +
                           "')\nconn = winreg.winreg(r'ncacn_np:127.0.0.124[\\pipe\\winreg,sign]', lp, c)\n"
                           "h = conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)\n"
                           "s = winreg.String(); s.name = 'Global'\n"
                           "t, data, size, length = conn.QueryValue(h, s, 0, [], 16 * 1024 * 1024, 0)\n"
                           "open('" +
                           dir + "/0.bin', 'wb').write(bytes(data[:length]))\n") +
      " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_status == 0);
  CHECK(read_file(dir + "/0.bin") == host->content(replayer::PerfKey::kData, "Global", kTick).data.to_bytes());

  // auth_refused is an info line, buffered for up to a second (server/log.h): read the log once
  // a clean stop has written all of it, not while perfsim still holds some.
  CHECK(s.stop() == 0);
  const std::string log = testing::read_text(s.err_path());
  CHECK(log.find("event=auth_refused") != std::string::npos);
  CHECK(log.find("wrong password") != std::string::npos);
  CHECK(log.find("EncryptedRandomSessionKey of 0 bytes") != std::string::npos);
  CHECK(log.find("drop NTLMSSP_NEGOTIATE_KEY_EXCH") != std::string::npos);
}
