// Acceptance of `perfsim serve --smb`: the perfsim executable serves five bundled hosts on five
// loopback addresses behind its own smbd; real clients (python3-samba over ncacn_np, impacket
// over SMB) run the collector sequence against each and must get that host's own values; SMB
// dialects follow each host's OS; OpenHKPD is refused to accounts a host does not allow; and
// stopping perfsim leaves no process, socket, directory, address or account behind.
#include <pwd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "captures/capture.h"
#include "replayer/host.h"
#include "support.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_smb_serve.h"

namespace perfsim::interop {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr uint32_t kTick = 3;  // every host is frozen at this sample
const char* const kUsers[][2] = {{"alice", "Al1ce-pw"}, {"bob", "B0b-pw"}};

struct HostDef {
  std::string address, capture;
  bool restricted = false;  // smb_allow = ["alice"]
};
// .3-.5 serve data to every client; .2 (NT1 only) is for dialects, .6 (NT1 only, alice only) for
// access. The data hosts are profiles whose default buffer policy every collector here copes with.
const HostDef kHosts[] = {{"127.0.0.2", "default-win2000.perfcap"},
                          {"127.0.0.3", "default-2016.perfcap"},
                          {"127.0.0.4", "default-2008r2.perfcap"},
                          {"127.0.0.5", "default-2022.perfcap"},
                          {"127.0.0.6", "default-2003.perfcap", true}};

// `perfsim serve` with every kHosts entry and both kUsers.
testing::ServeSmbConfig serve_config() {
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = SMB_WORK_DIR;
  cfg.frozen_tick = kTick;
  for (const HostDef& h : kHosts)
    cfg.hosts.push_back({h.address, std::string(PERFSIM_SOURCE_DIR) + "/captures/" + h.capture,
                         h.restricted ? std::vector<std::string>{"alice"} : std::vector<std::string>{}});
  for (const auto& u : kUsers) cfg.users.emplace_back(u[0], u[1]);
  return cfg;
}

struct ClientRun {
  CommandResult cmd;
  json result;
  std::string dir;
};

ClientRun run_collector(const testing::PerfsimSmbServe& s, const std::string& tag, const std::string& script,
                        const std::string& address, const std::string& extra) {
  ClientRun r;
  r.dir = s.dir() + "/" + tag;
  fs::remove_all(r.dir);
  fs::create_directories(r.dir);
  r.cmd =
      run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " +
                  shell_quote(std::string(INTEROP_SCRIPTS_DIR) + "/" + script) + " --smb --port " +
                  std::to_string(s.port()) + " --address " + address + " --out " + shell_quote(r.dir) + " " + extra);
  std::ifstream f(r.dir + "/result.json");
  if (f) r.result = json::parse(f, nullptr, false);
  return r;
}

std::shared_ptr<replayer::SimulatedHost> load_host(const HostDef& h) {
  std::shared_ptr<replayer::SimulatedHost> host;
  const Status st = testing::load_frozen_host(std::string(PERFSIM_SOURCE_DIR) + "/captures/" + h.capture, kTick, host);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return host;
}

// What the collector received is what this host holds at kTick, and Global is the capture's
// own recorded payload, byte for byte.
void check_values(const ClientRun& r, const replayer::SimulatedHost& host) {
  INFO("client output:\n" << r.cmd.output << "\nfiles in " << r.dir);
  REQUIRE(r.cmd.exit_status == 0);
  REQUIRE(!r.result.is_discarded());
  CHECK(r.result["failures"].empty());
  size_t perf_values = 0;
  for (const json& v : r.result["values"]) {
    if (v["key"] != "HKPD") continue;
    const std::string name = v["name"];
    INFO("HKPD value '" << name << "'");
    const replayer::ValueContent want = host.content(replayer::PerfKey::kData, name, kTick);
    REQUIRE(v["status"].get<uint32_t>() == want.status);
    const std::string got = testing::read_text(r.dir + "/" + v["file"].get<std::string>());
    CHECK(Bytes(got.begin(), got.end()) == want.data);
    if (name == "Global") {
      bool recorded = false;
      for (const captures::QueryRecord& q : host.capture().records)
        if (q.tick == kTick && q.value_name == "Global") recorded = Bytes(got.begin(), got.end()) == q.payload;
      CHECK(recorded);
    }
    ++perf_values;
  }
  CHECK(perf_values == 7);
}

void require_tools() {
  auto need = [](const std::string& what, const std::string& probe) {
    const CommandResult r = run_command(probe);
    INFO(what << " is missing (" << probe << ": " << r.output << "): run scripts/install-deps.sh");
    REQUIRE(r.exit_status == 0);
  };
  need("root (smbd, pdbedit and ip need it)", "test \"$(id -u)\" = 0");
  need("samba (smbd)", "test -x /usr/sbin/smbd");
  need("python3-samba", std::string(PERFSIM_PYTHON) + " -c 'from samba.dcerpc import winreg'");
  need("python3-impacket", std::string(PERFSIM_PYTHON) + " -c 'from impacket.dcerpc.v5 import rrp'");
}

TEST_CASE("perfsim serve --smb: collectors over SMB, dialects, access, clean stop", "[smb]") {
  require_tools();
  std::vector<bool> had_address, had_user;
  for (const HostDef& h : kHosts) had_address.push_back(testing::lo_has(h.address));
  for (const auto& u : kUsers) had_user.push_back(::getpwnam(u[0]) != nullptr);

  testing::PerfsimSmbServe s;
  {
    const Status st = s.start(serve_config());
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  INFO("perfsim serve log: " << s.err_path());

  SECTION("each client, user and anonymous, reads each host's own data") {
    for (size_t i = 1; i <= 3; ++i) {  // .3, .4, .5
      const HostDef& h = kHosts[i];
      const auto host = load_host(h);
      for (const char* script : {"collector_samba.py", "collector_impacket.py"}) {
        for (bool user : {false, true}) {
          const std::string tag = fs::path(script).stem().string() + "-" + h.address + (user ? "-alice" : "-anonymous");
          INFO(tag);
          check_values(run_collector(s, tag, script, h.address,
                                     user ? std::string("--user alice --password ") + kUsers[0][1] : ""),
                       *host);
        }
      }
    }
  }

  SECTION("dialects: Windows 2000 speaks NT1 only, 2016 NT1 too, 2022 refuses SMB1") {
    const ClientRun smb1_2000 =
        run_collector(s, "smb1-2000", "collector_impacket.py", "127.0.0.2", "--smb1 --open-only");
    INFO(smb1_2000.cmd.output);
    CHECK(smb1_2000.cmd.exit_status == 0);
    CHECK(smb1_2000.result["dialect"] == "NT1");
    CHECK(smb1_2000.result["open_hkpd"] == 0);
    const ClientRun any_2000 = run_collector(s, "any-2000", "collector_impacket.py", "127.0.0.2", "--open-only");
    INFO(any_2000.cmd.output);
    CHECK(any_2000.result["dialect"] == "NT1");
    // SMB1 was on by default up to Server 2016 and is not installed from 2019 on (windows/os.cpp).
    const ClientRun smb1_2016 =
        run_collector(s, "smb1-2016", "collector_impacket.py", "127.0.0.3", "--smb1 --open-only");
    INFO(smb1_2016.cmd.output);
    CHECK(smb1_2016.cmd.exit_status == 0);
    CHECK(smb1_2016.result["dialect"] == "NT1");
    CHECK(smb1_2016.result["open_hkpd"] == 0);
    const ClientRun smb1_2022 =
        run_collector(s, "smb1-2022", "collector_impacket.py", "127.0.0.5", "--smb1 --open-only");
    INFO(smb1_2022.cmd.output);
    CHECK(smb1_2022.cmd.exit_status != 0);
    CHECK_FALSE(smb1_2022.result.contains("open_hkpd"));
    const ClientRun any_2016 = run_collector(s, "any-2016", "collector_impacket.py", "127.0.0.3", "--open-only");
    INFO(any_2016.cmd.output);
    CHECK(any_2016.result["open_hkpd"] == 0);
    CHECK(any_2016.result["dialect"] != "NT1");
  }

  SECTION("a host that allows only alice refuses OpenHKPD to bob and anonymous") {  // over SMB1 here
    const std::string alice = std::string("--open-only --user alice --password ") + kUsers[0][1];
    const std::string bob = std::string("--open-only --user bob --password ") + kUsers[1][1];
    for (const char* script : {"collector_samba.py", "collector_impacket.py"}) {
      INFO(script);
      CHECK(run_collector(s, "alice", script, "127.0.0.6", alice).result["open_hkpd"] == 0);
      CHECK(run_collector(s, "bob", script, "127.0.0.6", bob).result["open_hkpd"] == 5);
      CHECK(run_collector(s, "anonymous", script, "127.0.0.6", "--open-only").result["open_hkpd"] == 5);
      CHECK(run_collector(s, "bob-elsewhere", script, "127.0.0.3", bob).result["open_hkpd"] == 0);
    }
  }

  SECTION("smbd's own services work beside ours: smbclient -L lists the share") {
    const CommandResult r = run_command("timeout 60 smbclient -L //127.0.0.3 -p " + std::to_string(s.port()) + " -N");
    INFO(r.output);
    CHECK(r.exit_status == 0);  // a failed srvsvc bind exits 1
    CHECK(r.output.find("Sharename") != std::string::npos);
  }

  SECTION("a second serve on the same SMB port fails with a clear error") {
    const CommandResult r = run_command("timeout 60 " + std::string(PERFSIM_EXE) +
                                        " serve --listen 127.0.0.3:0 --smb=" + std::to_string(s.port()) +
                                        " --smb-dir " + shell_quote(s.dir() + "/second"));
    INFO(r.output);
    CHECK(r.exit_status == 1);
    CHECK(r.output.find("is not available") != std::string::npos);
    CHECK_FALSE(fs::exists(s.dir() + "/second/smb.conf"));
  }

  // Every section ends here: stopping perfsim undoes everything.
  CHECK(s.stop() == 0);
  CHECK(testing::processes_mentioning(s.smb_dir(), "smb_tests").empty());
  CHECK_FALSE(fs::exists(s.smb_dir()));
  for (size_t i = 0; i < std::size(kHosts); ++i) {
    INFO(kHosts[i].address);
    CHECK(testing::lo_has(kHosts[i].address) == had_address[i]);
  }
  for (size_t i = 0; i < std::size(kUsers); ++i) CHECK((::getpwnam(kUsers[i][0]) != nullptr) == had_user[i]);
}

TEST_CASE("perfsim serve --smb-encrypt: impacket reads a host over an SMB3-encrypted session", "[smb]") {
  require_tools();
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + "-encrypted";
  cfg.frozen_tick = kTick;
  const HostDef h{"127.0.0.82", "default-2016.perfcap"};
  cfg.hosts.push_back({h.address, std::string(PERFSIM_SOURCE_DIR) + "/captures/" + h.capture, {}});
  cfg.users = {{"smbcrypt", "Crypt-pw1"}};  // an account no concurrently running test adds or removes
  cfg.extra_args = {"--smb-encrypt"};
  testing::PerfsimSmbServe s;
  {
    const Status st = s.start(cfg);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  const std::string pcap = s.dir() + "/encrypted.pcapng";
  PacketRecorder wire;
  {
    const Status st = wire.start(s.port(), pcap);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  const ClientRun user = run_collector(s, "impacket-encrypted", "collector_impacket.py", h.address,
                                       "--user smbcrypt --password Crypt-pw1");
  const ClientRun anonymous =
      run_collector(s, "impacket-encrypted-anonymous", "collector_impacket.py", h.address, "--open-only");
  wire.stop();
  check_values(user, *load_host(h));
  CHECK(anonymous.cmd.exit_status != 0);  // no session key, nothing to encrypt with: refused

  // On the wire: SMB3 transform headers (0xFD 'SMB'), and none of the winreg data in clear.
  const std::string bytes = testing::read_text(pcap);
  size_t transforms = 0;
  for (size_t at = bytes.find("\xfdSMB"); at != std::string::npos; at = bytes.find("\xfdSMB", at + 4)) ++transforms;
  CHECK(transforms > 10);
  // The start of every HKPD answer: the PERF_DATA_BLOCK signature and LittleEndian = 1. Not the
  // host's name: that is in the NTLMSSP CHALLENGE, in clear before the session is encrypted, as a
  // Windows host's is.
  const std::string perf("P\0E\0R\0F\0\x01\0\0\0", 12);
  CHECK(bytes.find(perf) == std::string::npos);
  CHECK(s.stop() == 0);
}

}  // namespace
}  // namespace perfsim::interop
