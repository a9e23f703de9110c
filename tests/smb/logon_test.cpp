// Each host's logon policy is its Windows version's default (windows/README.md, "Logon policy"):
// NTLMv1 accepted by every Windows row (nmap logs on with it by default), the Guest account
// disabled (an unknown account's logon fails) and null sessions kept off \PIPE\winreg; --smb-guest
// and --smb-anonymous-winreg loosen them. A host's profile decides its SMB dialects and policy
// (a 2016 capture served as 2003 is a 2003 host). And no child of perfsim (smbd, its helpers)
// holds one of perfsim's sockets: every descriptor perfsim opens is close-on-exec.
//
// Port 445: nmap's smb scripts fail on any other port (identity_test.cpp says why).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/subprocess.h"
#include "support.h"
#include "tests/common/perfsim_smb_serve.h"

using namespace perfsim;

namespace {

const char* const kLogonUser = "logan";  // an account of its own: rpc_auth_pipe_test has dave, at the same time
const char* const kLogonPassword = "D4ve-pw";
const std::string kP2016 = "127.0.0.161", kP2003 = "127.0.0.162", kAs2003 = "127.0.0.163";

using interop::contains;

// impacket: per "ADDR USER PASSWORD" argument, opens \PIPE\winreg and OpenHKPD; "ok" or the error.
const char* const kWinreg = R"(
import json, sys
from impacket.dcerpc.v5 import transport, rrp
port = int(sys.argv[1]); out = {}
for spec in sys.argv[2:]:
    address, user, password = (spec.split(" ") + ["", ""])[:3]
    try:
        t = transport.SMBTransport(address, port, r"\winreg", username=user, password=password)
        dce = t.get_dce_rpc(); dce.connect(); dce.bind(rrp.MSRPC_UUID_RRP)
        rrp.hOpenPerformanceData(dce)
        out[spec] = "ok"
        dce.disconnect()
    except Exception as e:
        out[spec] = str(e)
print(json.dumps(out))
)";

nlohmann::json winreg_opens(uint16_t port, const std::vector<std::string>& specs) {
  std::string args = std::to_string(port);
  for (const std::string& s : specs) args += " " + interop::shell_quote(s);
  const interop::CommandResult r = interop::run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -c " +
                                                        interop::shell_quote(kWinreg) + " " + args + " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_status == 0);
  return nlohmann::json::parse(r.output);
}

// smbclient's `ls` on the host's share as USER%PASSWORD, NTLMv1 when asked (`client ntlmv2 auth = no`).
interop::CommandResult smbclient_ls(const std::string& address, const std::string& user_pw, bool ntlmv1) {
  return interop::run_command(
      "timeout 60 smbclient //" + address + "/perfsim -p 445 -U " + interop::shell_quote(user_pw) +
      (ntlmv1 ? " --option='client ntlmv2 auth = no' --option='client min protocol = NT1'" : "") + " -c ls 2>&1");
}

// The loosened case has hosts of its own (127.0.0.164-166): ctest runs the two cases at once, and
// each smbd takes port 445 on its hosts' addresses.
const std::string kLoose2016 = "127.0.0.164";

testing::ServeSmbConfig policy_config(const std::string& suffix, bool windows_defaults) {
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + "-logon-" + suffix;  // a sibling: smb_test wipes SMB_WORK_DIR
  cfg.port = 445;
  const std::string captures = std::string(PERFSIM_SOURCE_DIR) + "/captures/";
  if (windows_defaults)
    cfg.hosts = {{kP2016, captures + "default-2016.perfcap", {}, "POLICY-2016"},
                 {kP2003, captures + "default-2003.perfcap", {}, "POLICY-2003"},
                 {kAs2003, captures + "default-2016.perfcap", {}, "AS-2003", {}, "2003"}};
  else
    cfg.hosts = {{kLoose2016, captures + "default-2016.perfcap", {}, "LOOSE-2016"}};
  // perfsim serve --smb adds its accounts as Unix users and removes them at exit: the two cases
  // run at once, so each has an account of its own.
  cfg.users = {{windows_defaults ? kLogonUser : "lena", kLogonPassword}};
  cfg.windows_logon_defaults = windows_defaults;
  return cfg;
}

// perfsim's children, grandchildren and so on (/proc/PID/task/*/children).
std::vector<int> descendants(int pid) {
  std::vector<int> out, todo = {pid};
  while (!todo.empty() && out.size() < 10000) {
    const int p = todo.back();
    todo.pop_back();
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(p) + "/task", ec)) {
      std::ifstream f(task.path() / "children");
      for (int c; f >> c;) {
        out.push_back(c);
        todo.push_back(c);
      }
    }
  }
  return out;
}

// The socket inodes a process holds ("socket:[N]" links under /proc/PID/fd), by fd.
std::map<int, std::string> sockets_of(int pid) {
  std::map<int, std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string link = std::filesystem::read_symlink(e.path(), ec).string();
    if (!ec && link.rfind("socket:[", 0) == 0) out[std::stoi(e.path().filename().string())] = link;
  }
  return out;
}

// The `flags:` of /proc/PID/fdinfo/FD (octal).
unsigned long fd_flags(int pid, int fd) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
  for (std::string key; f >> key;) {
    std::string value;
    f >> value;
    if (key == "flags:") return std::stoul(value, nullptr, 8);
  }
  return 0;
}

}  // namespace

TEST_CASE("perfsim serve --smb: each host logs on as its Windows did by default, and --profile decides", "[smb]") {
  testing::PerfsimSmbServe s;
  {
    const Status st = s.start(policy_config("defaults", true));
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  INFO("perfsim serve log: " << s.err_path());
  const std::string user_pw = std::string(kLogonUser) + "%" + kLogonPassword;

  SECTION("nmap logs on to the 2016 host with NTLMv1, its default") {
    const interop::CommandResult r =
        interop::run_command("timeout 120 nmap -d2 -Pn -n -sT -p 445 --script smb-enum-shares --script-args " +
                             interop::shell_quote(std::string("smbusername=") + kLogonUser +
                                                  ",smbpassword=" + kLogonPassword + ",smbtype=v1") +
                             " " + kP2016 + " 2>&1");
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    // smb.lua's debug line for the account's own logon (smbauth.lua: smbtype v1 sends the NTLMv1
    // response, its default); a refused one says "failed".
    CHECK(contains(r.output, std::string("\\") + kLogonUser + " succeeded"));
    CHECK_FALSE(contains(r.output, std::string("\\") + kLogonUser + " failed"));
  }

  SECTION("smbclient with NTLMv1 (client ntlmv2 auth = no) logs on to 2016, 2003 and a 2016 capture as 2003") {
    for (const std::string& a : {kP2016, kP2003, kAs2003}) {
      const interop::CommandResult r = smbclient_ls(a, user_pw, true);
      INFO(a << "\n" << r.output);
      CHECK(r.exit_status == 0);
    }
  }

  SECTION("no guest: an unknown account's logon fails; the account logs on") {
    for (const std::string& a : {kP2016, kP2003}) {
      const interop::CommandResult guest = smbclient_ls(a, "nosuchuser%whatever", false);
      INFO(a << "\n" << guest.output);
      CHECK(guest.exit_status != 0);
      CHECK(contains(guest.output, "NT_STATUS_LOGON_FAILURE"));
      CHECK(smbclient_ls(a, user_pw, false).exit_status == 0);
    }
  }

  SECTION("a null session does not get HKEY_PERFORMANCE_DATA; the account does; an unknown account cannot log on") {
    const nlohmann::json got = winreg_opens(
        445, {kP2016, kP2003, kP2016 + " " + kLogonUser + " " + kLogonPassword, kP2016 + " nosuchuser whatever"});
    INFO(got.dump());
    CHECK(contains(got.at(kP2016), "access_denied"));  // impacket: rpc_s_access_denied
    CHECK(contains(got.at(kP2003), "access_denied"));
    CHECK(got.at(kP2016 + " " + kLogonUser + " " + kLogonPassword) == "ok");
    CHECK(contains(got.at(kP2016 + " nosuchuser whatever"), "STATUS_LOGON_FAILURE"));
  }

  // Issue 54: HKEY_PERFORMANCE_TEXT and _NLSTEXT were open to a null session, and a value recorded
  // under another name than Global (here the index list "238 230") was a PERF_DATA_BLOCK under
  // them. A null session now opens no hive and no perf key; the account opens all of them.
  SECTION("a null session opens no hive and no perf key, so reads no value of any name; the account does") {
    const std::string opens = R"(
import json, sys
from impacket.dcerpc.v5 import transport, rrp
port, address, user, password = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
t = transport.SMBTransport(address, port, r"\winreg", username=user, password=password)
dce = t.get_dce_rpc(); dce.connect(); dce.bind(rrp.MSRPC_UUID_RRP)
out = {}
for name in ["hOpenPerformanceData", "hOpenPerformanceText", "hOpenPerformanceNlsText", "hOpenLocalMachine",
             "hOpenUsers", "hOpenClassesRoot", "hOpenCurrentUser"]:
    try:
        h = getattr(rrp, name)(dce)["phKey"]
        try:
            q = rrp.BaseRegQueryValue(); q["hKey"] = h; q["lpValueName"] = rrp.checkNullString("238 230")
            # one call, no retry loop; 512 bytes travel (impacket packs a large buffer byte by byte)
            q["lpData"] = b" " * 512; q["lpcbData"] = 1 << 20; q["lpcbLen"] = 0
            out[name] = "read %d bytes" % dce.request(q)["lpcbData"]
        except Exception as e:
            out[name] = "opened; " + str(e)
    except Exception as e:
        out[name] = str(e)
print(json.dumps(out))
)";
    auto run = [&](const std::string& user, const std::string& password) {
      const interop::CommandResult r = interop::run_command(
          "timeout 120 " + std::string(PERFSIM_PYTHON) + " -c " + interop::shell_quote(opens) + " 445 " + kP2016 + " " +
          interop::shell_quote(user) + " " + interop::shell_quote(password) + " 2>&1");
      INFO(r.output);
      REQUIRE(r.exit_status == 0);
      return nlohmann::json::parse(r.output);
    };
    const nlohmann::json null_session = run("", "");
    INFO(null_session.dump());
    for (const auto& [op, got] : null_session.items()) {
      INFO(op);
      CHECK(contains(got.get<std::string>(), "access_denied"));  // impacket names WERR 5 rpc_s_access_denied
    }
    const nlohmann::json account = run(kLogonUser, kLogonPassword);
    INFO(account.dump());
    CHECK(contains(account.at("hOpenPerformanceData").get<std::string>(), "read "));  // the index list's objects
    CHECK(contains(account.at("hOpenPerformanceText").get<std::string>(), "opened; "));
    CHECK(contains(account.at("hOpenPerformanceText").get<std::string>(), "ERROR_FILE_NOT_FOUND"));
    CHECK(contains(account.at("hOpenLocalMachine").get<std::string>(), "opened; "));
  }

  SECTION("a null session cannot list the share; the account can") {
    const interop::CommandResult null_ls = smbclient_ls(kP2016, "%", false);
    INFO(null_ls.output);
    CHECK(null_ls.exit_status != 0);
    CHECK(smbclient_ls(kP2016, user_pw, false).exit_status == 0);
  }

  SECTION("--profile 2003 on a 2016 capture: 2003's SMB1-only dialects and its srvsvc version") {
    const std::string smb1 = R"(
import sys
from impacket.smbconnection import SMBConnection
from impacket import smb
for a in sys.argv[2:]:
    c = SMBConnection(a, a, sess_port=int(sys.argv[1]), timeout=10); c.login("", "")
    print(a, "NT1" if c.getDialect() == smb.SMB_DIALECT else hex(c.getDialect()))
)";
    const interop::CommandResult r =
        interop::run_command("timeout 60 " + std::string(PERFSIM_PYTHON) + " -c " + interop::shell_quote(smb1) +
                             " 445 " + kAs2003 + " " + kP2016 + " " + kP2003 + " 2>&1");
    INFO(r.output);
    REQUIRE(r.exit_status == 0);
    CHECK(contains(r.output, kAs2003 + " NT1"));
    CHECK(contains(r.output, kP2003 + " NT1"));
    CHECK_FALSE(contains(r.output, kP2016 + " NT1"));
    const std::string include = s.smb_dir() + "/hosts/" + kAs2003 + ".conf";
    std::ifstream f(include);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    INFO(include << ":\n" << text);
    CHECK(contains(text, "server max protocol = NT1"));
    const interop::CommandResult srvinfo = interop::run_command("timeout 60 rpcclient " + kAs2003 + " -p 445 -U " +
                                                                interop::shell_quote(user_pw) + " -c srvinfo 2>&1");
    INFO(srvinfo.output);
    CHECK(contains(srvinfo.output, "5.2"));
  }

  SECTION("no child of perfsim holds one of its sockets; each of its descriptors is close-on-exec") {
    // A pipe open in flight, so perfsim holds accepted sockets too.
    const nlohmann::json got = winreg_opens(445, {kP2016 + " " + kLogonUser + " " + kLogonPassword});
    REQUIRE(got.begin().value() == "ok");
    const int pid = s.pid();
    const std::map<int, std::string> ours = sockets_of(pid);
    REQUIRE(ours.size() >= 3);  // the TCP listeners and the pipe listeners at least
    std::set<std::string> inodes;
    for (const auto& [fd, inode] : ours) inodes.insert(inode);
    const std::vector<int> children = descendants(pid);
    REQUIRE(children.size() >= 2);  // smbd and samba-dcerpcd
    for (int child : children) {
      for (const auto& [fd, inode] : sockets_of(child)) {
        INFO("child " << child << " fd " << fd << " " << inode);
        CHECK(inodes.count(inode) == 0);
      }
    }
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      const int fd = std::stoi(e.path().filename().string());
      if (fd <= 2) continue;  // stdio: the test's files, inherited on purpose
      INFO("perfsim fd " << fd << " " << std::filesystem::read_symlink(e.path(), ec).string());
      CHECK((fd_flags(pid, fd) & 02000000) != 0);
    }
  }
}

TEST_CASE("perfsim serve --smb-guest --smb-anonymous-winreg: guests and null sessions read the 2016 host", "[smb]") {
  testing::PerfsimSmbServe s;
  {
    const Status st = s.start(policy_config("loosened", false));
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  INFO("perfsim serve log: " << s.err_path());
  const interop::CommandResult guest = smbclient_ls(kLoose2016, "nosuchuser%whatever", false);
  INFO(guest.output);
  CHECK(guest.exit_status == 0);
  const nlohmann::json got = winreg_opens(445, {kLoose2016, kLoose2016 + " nosuchuser whatever"});
  INFO(got.dump());
  CHECK(got.at(kLoose2016) == "ok");
  CHECK(got.at(kLoose2016 + " nosuchuser whatever") == "ok");
}

// Issue 54: each SMB connection, a NEGOTIATE alone, forked an smbd child that stayed: 300
// connections, 303 smbd processes, 180 MB PSS. smbd's own limits bound them now: `max smbd
// processes` from --max-connections, and `deadtime` for connections that open nothing.
TEST_CASE("SMB connections that only NEGOTIATE are bounded by smbd's process limit", "[smb]") {
  testing::PerfsimSmbServe s;
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + "-logon-limits";
  cfg.hosts = {{"127.0.0.167", std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", {}, "LIMITS-2016"}};
  cfg.users = {{"lima", kLogonPassword}};
  cfg.windows_logon_defaults = true;
  cfg.extra_args = {"--max-connections", "16"};
  {
    const Status st = s.start(cfg);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  std::ifstream conf(s.smb_dir() + "/smb.conf");
  const std::string text((std::istreambuf_iterator<char>(conf)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(contains(text, "max smbd processes = 24"));
  CHECK(contains(text, "deadtime = 1"));
  // 60 connections, each NEGOTIATE only (impacket connects and negotiates, and logs on to nothing),
  // held open while perfsim's descendants are counted.
  const std::string hold = R"(
import sys, time
from impacket.smbconnection import SMBConnection
held = []
for i in range(int(sys.argv[3])):
    try:
        held.append(SMBConnection(sys.argv[1], sys.argv[1], sess_port=int(sys.argv[2]), timeout=5))
    except Exception as e:
        pass
print(len(held), flush=True)
open(sys.argv[4], "w").close()
time.sleep(30)  # sleep-ok: holds the connections while the test counts smbd's children, then is stopped
)";
  const std::string ready = s.dir() + "/held";
  subprocess::Child holder;
  REQUIRE(
      subprocess::start({PERFSIM_PYTHON, "-c", hold, "127.0.0.167", std::to_string(s.port()), "60", ready}, {}, holder)
          .ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!std::filesystem::exists(ready) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool held = std::filesystem::exists(ready);
  size_t smbd = 0;
  for (int pid : descendants(s.pid())) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    comm >> name;
    smbd += name.rfind("smbd", 0) == 0;
  }
  subprocess::stop(holder, std::chrono::seconds(1));
  REQUIRE(held);
  INFO(smbd << " smbd processes");
  CHECK(smbd >= 16);      // the connections smbd took
  CHECK(smbd <= 24 + 4);  // its limit, with the parent and its helpers (notifyd, cleanupd)
}
