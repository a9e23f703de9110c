// `perfsim check` (cli/check_cmd.cpp) with real collectors: the example collector
// (scripts/examples/perf_collector.py, impacket with its own buffer growth and back-off) handles
// every built-in TCP scenario; impacket's own hBaseRegQueryValue does not handle Windows 2000's
// MORE_DATA echo (it loops until the timeout kills it). Both verdicts asserted, the JUnit file read
// by Python's xml.etree, and `perfsim journal --scenario` giving the same per-session verdicts.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/run_command.h"
#include "scenarios/catalog.h"

namespace fs = std::filesystem;
using nlohmann::json;
using perfsim::testing::CommandResult;

namespace {

const std::string kSource = PERFSIM_SOURCE_DIR;
const std::string kGood = std::string(PERFSIM_PYTHON) + " -B " + kSource + "/scripts/examples/perf_collector.py";
const std::string kImpacket = std::string(PERFSIM_PYTHON) + " -B " + kSource + "/tests/check/impacket_hbase.py";

std::string work(const std::string& name) {
  fs::create_directories(CHECK_WORK_DIR);
  return std::string(CHECK_WORK_DIR) + "/" + name + "-" + std::to_string(getpid());
}

CommandResult perfsim_cmd(const std::string& args, int seconds = 120) {
  return perfsim::testing::run_command(PERFSIM_EXE, args, seconds);
}

// The JUnit file as Python's xml.etree reads it: "TESTS FAILURES CASES FAILED-CASES".
std::string junit_counts(const std::string& file) {
  const std::string py =
      "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); s = r.find('testsuite'); "
      "c = s.findall('testcase'); f = [x for x in c if x.find('failure') is not None]; "
      "print(s.get('tests'), s.get('failures'), len(c), len(f))";
  const CommandResult r = perfsim::testing::run_command(PERFSIM_PYTHON, "-c \"" + py + "\" " + file, 30);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST_CASE("check: the example collector handles every built-in TCP scenario, the JUnit file says so") {
  std::vector<perfsim::scenarios::Scenario> all;
  REQUIRE(perfsim::scenarios::load_all({}, all).ok());
  for (const perfsim::scenarios::Scenario& sc : all) {
    if (sc.smb) continue;  // needs root and smbd: scenarios_smb_tests
    DYNAMIC_SECTION(sc.name) {
      const std::string junit = work(sc.name) + ".xml";
      fs::remove(junit);
      const CommandResult r =
          perfsim_cmd("check --scenario " + sc.name + " --timeout 60 --json --junit " + junit + " -- " + kGood);
      INFO(r.out << r.err);
      CHECK(r.code == 0);
      const json j = json::parse(r.out);
      CHECK(j.at("passed") == true);
      CHECK(j.at("command_failure") == "");
      REQUIRE(j.at("sessions").size() == 1);  // the collector's one connection
      CHECK(j.at("sessions")[0].at("handled") == true);
      CHECK(j.at("sessions")[0].at("unmet").empty());
      CHECK(j.at("sessions")[0].at("calls") >= 3);
      // One testcase per session plus the command's, none failed.
      CHECK(junit_counts(junit) == "2 0 2 0");
    }
  }
}

TEST_CASE("check: impacket's hBaseRegQueryValue loops against Windows 2000, killed at the timeout, not handled") {
  const std::string junit = work("impacket") + ".xml";
  fs::remove(junit);
  const CommandResult r =
      perfsim_cmd("check --scenario win2000-more-data-loop --timeout 4 --json --junit " + junit + " -- " + kImpacket);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const json j = json::parse(r.out);
  CHECK(j.at("passed") == false);
  CHECK(j.at("command_failure").get<std::string>().find("did not finish within 4 s (killed)") != std::string::npos);
  REQUIRE(j.at("sessions").size() == 1);
  const json& s = j.at("sessions")[0];
  CHECK(s.at("handled") == false);
  CHECK(s.at("shows_diagnosis") == true);  // the bug's trace: a loop on Global, growth fixed
  const std::string unmet = s.at("unmet").dump();
  CHECK(unmet.find("no perf data") != std::string::npos);
  CHECK(unmet.find("a loop: offered") != std::string::npos);
  CHECK(unmet.find("for Global answered ERROR_MORE_DATA (expected the data within 10 tries)") != std::string::npos);
  CHECK(unmet.find("handles open") != std::string::npos);
  // The command's testcase and the session's both failed.
  CHECK(junit_counts(junit) == "2 2 2 2");

  // The text report: one verdict line and the summary. The loop bounded by its calls (30, three
  // times the 10 tries a correct collector is allowed), not by a timeout a slow machine may reach first.
  const CommandResult t =
      perfsim_cmd("check --scenario win2000-more-data-loop --timeout 60 -- " + kImpacket + " --max-calls 30");
  INFO(t.out << t.err);
  CHECK(t.code == 1);
  CHECK(t.out.find("NOT handled: no perf data") != std::string::npos);
  CHECK(t.out.find("FAIL: 0 of 1 sessions handled it") != std::string::npos);
}

TEST_CASE("check: two collectors in one run, judged apart, perfsim journal --scenario gives the same verdicts") {
  const std::string journal = work("two") + ".jsonl";
  fs::remove(journal);
  // The good collector, then impacket's giving up after 30 calls (so the command itself ends 0).
  const std::string both = "sh -c '" + kGood + "; " + kImpacket + " --max-calls 30; exit 0'";
  const CommandResult r =
      perfsim_cmd("check --scenario win2000-more-data-loop --timeout 60 --json --journal " + journal + " -- " + both);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const json j = json::parse(r.out);
  CHECK(j.at("command_failure") == "");
  REQUIRE(j.at("sessions").size() == 2);
  CHECK(j.at("sessions")[0].at("handled") == true);
  CHECK(j.at("sessions")[0].at("shows_diagnosis") == false);
  CHECK(j.at("sessions")[1].at("handled") == false);
  CHECK(j.at("sessions")[1].at("shows_diagnosis") == true);

  const CommandResult v = perfsim_cmd("journal " + journal + " --scenario win2000-more-data-loop");
  INFO(v.out << v.err);
  CHECK(v.code == 1);  // one session did not handle it
  CHECK(v.out.find("scenario win2000-more-data-loop: 1 of 2 sessions handled it") != std::string::npos);
  CHECK(v.out.find("): handled; does not show the bug's diagnosis") != std::string::npos);
  CHECK(v.out.find("NOT handled: no perf data") != std::string::npos);
  const CommandResult jv = perfsim_cmd("journal " + journal + " --json --scenario win2000-more-data-loop");
  CHECK(jv.code == 1);
  const json jj = json::parse(jv.out).at("scenario");
  CHECK(jj.at("handled") == false);
  CHECK(jj.at("verdicts").size() == 2);
  // The question asked before: does the bug show in some session? Yes.
  CHECK(perfsim_cmd("journal " + journal + " --shows-diagnosis --scenario win2000-more-data-loop").code == 0);
}

TEST_CASE("check: a collector that handled every call but exited 3 fails on its exit, the session still handled") {
  const CommandResult r =
      perfsim_cmd("check --scenario no-instances --timeout 60 --json -- sh -c '" + kGood + "; exit 3'");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  const json j = json::parse(r.out);
  CHECK(j.at("passed") == false);
  CHECK(j.at("command_failure") == "sh ended with exit 3");
  REQUIRE(j.at("sessions").size() == 1);  // the session itself was fine: only the exit fails it
  CHECK(j.at("sessions")[0].at("handled") == true);
}

TEST_CASE("check: the endpoint in the environment and the arguments, no session is a failure, usage is 2") {
  const std::string out = work("env") + ".txt";
  fs::remove(out);
  const CommandResult r = perfsim_cmd(
      "check --scenario no-instances --timeout 20 -- sh -c 'echo {addr} {port} "
      "$PERFSIM_ADDR $PERFSIM_PORT $PERFSIM_ENDPOINTS > " +
      out + "'");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("no collector session reached the host(s)") != std::string::npos);
  const CommandResult echoed = perfsim::testing::run_command("cat", out, 10);
  std::string addr, port, env_addr, env_port, endpoint;
  std::istringstream(echoed.out) >> addr >> port >> env_addr >> env_port >> endpoint;
  CHECK(addr == "127.0.0.1");
  CHECK(std::stoi(port) > 0);
  CHECK(env_addr == addr);
  CHECK(env_port == port);
  CHECK(endpoint == addr + ":" + port);

  CHECK(perfsim_cmd("check --scenario no-instances --timeout 20 -- false").code == 1);
  CHECK(perfsim_cmd("check -- true").code == 2);  // neither --scenario nor --capture
  CHECK(perfsim_cmd("check --scenario no-such-scenario -- true").code == 2);
  CHECK(perfsim_cmd("check --scenario no-instances").code == 2);  // no command
}

// --smb: the hosts are also served through a private smbd (root, as tests/smb) and the collector
// reads them over \PIPE\winreg. remote-registry-smb: host 1's first pipe open fails (the example
// collector opens it again), host 2 refuses anonymous HKEY_PERFORMANCE_DATA (it reports that
// once). A collector that asks again after Access is denied is judged not to handle it.
TEST_CASE(
    "check --smb: the example collector over SMB handles remote-registry-smb, one that retries a refusal does not",
    "[smb]") {
  REQUIRE(geteuid() == 0);  // smbd and loopback addresses
  // The collectors read anonymously, which each host's Windows defaults refuse on \PIPE\winreg
  // (windows/README.md, logon policy): --smb-anonymous-winreg loosens that, as on such a host.
  const std::string base = "check --scenario remote-registry-smb --smb --smb-anonymous-winreg --timeout 90 --json -- ";
  {
    const CommandResult r = perfsim_cmd(base + kGood, 180);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    CHECK(j.at("passed") == true);
    REQUIRE(j.at("sessions").size() == 2);  // one per host: host 1's failed open never reached winreg
    std::set<std::string> hosts;
    for (const json& s : j.at("sessions")) {
      CHECK(s.at("transport") == "smb");
      CHECK(s.at("handled") == true);
      hosts.insert(s.at("host").get<std::string>());
    }
    CHECK(hosts == std::set<std::string>{"RR-TRIGGER01", "RR-LOCKED02"});
    // The collector's own output (on perfsim's stderr with --json): its retry, and the refusal named.
    CHECK(r.err.find("pipe open 1 failed") != std::string::npos);
    CHECK(r.err.find("Access is denied to anonymous") != std::string::npos);
  }
  {
    // Asks host 2 for HKEY_PERFORMANCE_DATA three times on one connection despite Access is denied.
    const std::string script = work("retry-denied") + ".py";
    std::ofstream(script) << "import os\n"
                             "from samba import credentials, param\n"
                             "from samba.dcerpc import winreg, security\n"
                             "lp = param.LoadParm(); c = credentials.Credentials(); c.guess(lp); c.set_anonymous()\n"
                             "lp.set('smb ports', os.environ['PERFSIM_SMB_PORT'])\n"
                             "addr = os.environ['PERFSIM_ENDPOINTS'].split()[1].rsplit(':', 1)[0]\n"
                             "conn = winreg.winreg('ncacn_np:%s[\\\\pipe\\\\winreg]' % addr, lp, c)\n"
                             "for _ in range(3):\n"
                             "    try:\n"
                             "        conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)\n"
                             "    except Exception as e:\n"
                             "        print('refused', e.args[0])\n";
    const CommandResult r = perfsim_cmd(base + PERFSIM_PYTHON + " -B " + script, 180);
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    const json j = json::parse(r.out);
    CHECK(j.at("passed") == false);
    REQUIRE(j.at("sessions").size() == 1);
    CHECK(j.at("sessions")[0].at("host") == "RR-LOCKED02");
    CHECK(j.at("sessions")[0].at("handled") == false);
    CHECK(j.at("sessions")[0].at("calls") == 3);
  }
}
