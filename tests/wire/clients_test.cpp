// Real clients nobody here wrote, against `perfsim serve` over ncacn_ip_tcp: python3-samba's
// QueryMultipleValues(2) with "Last Counter" then "Last Help" (issue 30: the second name buffer
// must be 4-aligned), and smbtorture's rpc.winreg (samba-testsuite), whose subtests are listed
// with their outcome; impacket reading the keys system tools read (Environment, CurrentVersion,
// ProductOptions, ComputerName) and comparing them with the served perf data.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <cctype>
#include <fstream>
#include <sstream>

#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

using nlohmann::json;

namespace {

void serve(perfsim::testing::PerfsimServe& s) {
  const perfsim::Status st = s.start(PERFSIM_EXE, "--timeline frozen:0");
  INFO(st.message());
  REQUIRE(st.ok());
}

// "success: NAME" / "failure: NAME [...]" / "skip: NAME" lines of smbtorture's subunit output.
std::map<std::string, std::string> outcomes(const std::string& out) {
  std::map<std::string, std::string> r;
  static const std::regex line(R"(^(success|failure|error|skip|xfail): (\S+))");
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) r[m[2]] = m[1];
  }
  return r;
}

}  // namespace

TEST_CASE("python3-samba QueryMultipleValues(2) reads Last Counter and Last Help", "[clients]") {
  perfsim::testing::PerfsimServe s;
  serve(s);
  const auto r = perfsim::testing::run_command(
      PERFSIM_PYTHON, std::string(WIRE_SCRIPTS_DIR) + "/qmv_client.py --port " + std::to_string(s.port()), 60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  for (const char* call : {"qmv", "qmv2"}) {
    INFO(call);
    REQUIRE(j.contains(call));
    REQUIRE(j[call].size() == 2);
    CHECK(j[call][0]["name"] == "Last Counter");
    CHECK(j[call][1]["name"] == "Last Help");
    CHECK(j[call][0]["type"] == 4);  // REG_DWORD
    CHECK(j[call][1]["len"] == 4);
    // Help indices are the odd ones after their counter's: Last Help = Last Counter + 1.
    CHECK(j[call][1]["dword"].get<uint32_t>() == j[call][0]["dword"].get<uint32_t>() + 1);
  }
}

// smbtorture's rpc.winreg (source4/torture/rpc/winreg.c) has four subtests that run without
// "dangerous" tests enabled, one per hive. Each opens its hive and calls GetVersion; HKLM then
// reads CurrentVersion with QueryValue_full (a NULL name, missing pointers, a missing value, the
// default value) and QueryMultipleValues(2)_full; every hive then tries to create, flush and
// delete `winreg_torture_test` keys (writes, refused as to a read-only account), and HKU/HKCR/HKCU enumerate their keys with
// QueryInfoKey, NotifyChangeKeyValue, EnumKey and EnumValue. tests/wire/README.md lists where
// each subtest ends today and why; these checks pin the reads that must pass.
TEST_CASE("smbtorture rpc.winreg: the read-only parts pass against perfsim over TCP", "[clients]") {
  perfsim::testing::PerfsimServe s;
  serve(s);
  const auto r = perfsim::testing::run_command(
      "smbtorture", "-U% ncacn_ip_tcp:127.0.0.1[" + std::to_string(s.port()) + "] rpc.winreg", 120);
  const std::string all = r.out + r.err;  // results on stdout, test comments on stderr
  INFO(all);
  const auto results = outcomes(r.out);
  REQUIRE(results.size() == 6);
  CHECK(results.at("winreg.InitiateSystemShutdown") == "skip");  // dangerous: not run
  // Opened and versioned: every hive (OpenHKCR/HKCU/HKU faulted before issue 30).
  CHECK(all.find("failed to open") == std::string::npos);
  CHECK(all.find("GetVersion failed") == std::string::npos);
  // QueryValue_full on CurrentVersion: INVALID_PARAMETER for a NULL name and each missing
  // pointer, FILE_NOT_FOUND for a missing value, MORE_DATA then the data.
  CHECK(all.find("Testing QueryValue((null))") != std::string::npos);
  CHECK(all.find("QueryValue failed") == std::string::npos);
  CHECK(all.find("expected WERR_INVALID_PARAM") == std::string::npos);
  CHECK(all.find("expected WERR_BADFILE") == std::string::npos);
  // QueryMultipleValues(2)_full of CurrentVersion decode on both sides (issue 30's alignment).
  CHECK(all.find("Testing QueryMultipleValues2") != std::string::npos);
  CHECK(all.find("QueryMultipleValues2 failed") == std::string::npos);
  // HKU enumerates the profiles, HKCU is .DEFAULT.
  for (const char* key : {"EnumKey: 0: .DEFAULT", "EnumKey: 3: S-1-5-18", "EnumKey: 0: Control Panel"})
    CHECK(all.find(key) != std::string::npos);
  CHECK(all.find("EnumKey failed") == std::string::npos);
  CHECK(all.find("QueryInfoKey failed") == std::string::npos);
  CHECK(all.find("EnumValue failed") == std::string::npos);
  // Writes: what a read-only account gets from Windows, not a fault.
  CHECK(all.find("Testing CreateKey(winreg_torture_test)") != std::string::npos);
  CHECK(all.find("was WERR_ACCESS_DENIED, expected WERR_OK: CreateKey failed") != std::string::npos);
  CHECK(all.find("CreateKey_r(b, tctx, &r) was NT_STATUS_RPC_PROCNUM_OUT_OF_RANGE") == std::string::npos);
}

namespace {

// system_keys_client.py against `s`: the keys and the Processor object's instances.
json system_keys(const perfsim::testing::PerfsimServe& s) {
  const auto r = perfsim::testing::run_command(
      PERFSIM_PYTHON, std::string(WIRE_SCRIPTS_DIR) + "/system_keys_client.py --port " + std::to_string(s.port()), 60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

// What every Windows host's keys must agree with in its own data: NUMBER_OF_PROCESSORS is the
// Processor object's instances but _Total, ComputerName the host's name (the system name of its
// PERF_DATA_BLOCK and of the serve run's listening event), each value in the type Windows stores.
void check_consistent(const json& j, const std::string& host) {
  INFO(j.dump(1));
  REQUIRE(j["processor_instances"].is_array());
  size_t processors = 0;
  for (const auto& n : j["processor_instances"]) processors += n != "_Total";
  REQUIRE(processors > 0);
  CHECK(j["env"]["NUMBER_OF_PROCESSORS"]["value"] == std::to_string(processors));
  CHECK(j["env"]["NUMBER_OF_PROCESSORS"]["type"] == 1);  // REG_SZ
  CHECK(j["env"]["OS"]["value"] == "Windows_NT");
  CHECK(j["env"]["ComSpec"]["type"] == 2);  // REG_EXPAND_SZ: it names %SystemRoot%
  CHECK(j["env"]["windir"]["type"] == 2);
  CHECK(j["cv"]["InstallDate"]["type"] == 4);  // REG_DWORD
  CHECK(j["cn"]["ComputerName"]["value"] == j["system_name"]);
  std::string upper = host;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  CHECK(j["cn"]["ComputerName"]["value"] == upper);
}

}  // namespace

TEST_CASE("impacket reads the system keys of the default host, consistent with its perf data", "[clients]") {
  perfsim::testing::PerfsimServe s;
  serve(s);
  const json j = system_keys(s);
  check_consistent(j, s.host());
  INFO(j.dump(1));
  CHECK(j["env"]["PROCESSOR_ARCHITECTURE"]["value"] == "AMD64");
  CHECK(j["po"]["ProductType"]["value"] == "ServerNT");
  // A Windows 10-based server: CurrentBuild holds the build, as CurrentBuildNumber does.
  CHECK(j["cv"]["CurrentBuild"]["value"] == j["cv"]["CurrentBuildNumber"]["value"]);
  CHECK(j["cv"]["EditionID"]["type"] == 1);
}

TEST_CASE("impacket reads a synthetic win2000 host's system keys: x86, its processors, no EditionID", "[clients]") {
  perfsim::testing::TempDir dir;
  const std::string spec = (dir.path / "w2k.toml").string(), cap = (dir.path / "w2k.perfcap").string();
  std::ofstream(spec) << "[host]\nname = \"OLDBOX\"\nprofile = \"win2000\"\nprocessors = 3\nduration = \"1m\"\n";
  const auto made = perfsim::testing::run_command(PERFSIM_EXE, "synth '" + spec + "' --out '" + cap + "'", 120);
  INFO(made.out << made.err);
  REQUIRE(made.code == 0);
  perfsim::testing::PerfsimServe s;
  // -Q rrp-exact over the capture's own win2000 profile: its buffer quirk (ERROR_MORE_DATA with no
  // usable size) is not what this test reads, and impacket's hBaseRegQueryValue loops on it.
  const perfsim::Status st = s.start(PERFSIM_EXE, "--capture '" + cap + "' -Q rrp-exact --timeline frozen:0");
  INFO(st.message());
  REQUIRE(st.ok());
  const json j = system_keys(s);
  check_consistent(j, s.host());
  INFO(j.dump(1));
  CHECK(j["env"]["PROCESSOR_ARCHITECTURE"]["value"] == "x86");
  CHECK(j["cv"]["CurrentVersion"]["value"] == "5.0");
  CHECK(j["cv"]["CSDVersion"]["value"] == "Service Pack 4");
  CHECK(j["cv"]["EditionID"]["error"] == 2);  // ERROR_FILE_NOT_FOUND: Vista/2008 added it
  CHECK(j["po"]["ProductType"]["value"] == "ServerNT");
}
