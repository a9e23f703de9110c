// `perfsim serve --epm` as a child on 127.0.0.7 (port 135, so root): python3-samba binds
// `ncacn_ip_tcp:127.0.0.7` with no port and runs the collector sequence, impacket's hept_map and
// hept_lookup find winreg's endpoint, and tshark decodes every endpoint-mapper PDU cleanly.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/subprocess.h"
#include "support.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_smb_serve.h"

namespace perfsim::interop {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr uint32_t kTick = 3;
const std::string kAddress = "127.0.0.7";

void require_tools() {
  auto need = [](const std::string& what, const std::string& probe) {
    const CommandResult r = run_command(probe);
    INFO(what << " is missing (" << probe << ": " << r.output << "): run scripts/install-deps.sh");
    REQUIRE(r.exit_status == 0);
  };
  need("root (port 135)", "test \"$(id -u)\" = 0");
  need("python3-samba", std::string(PERFSIM_PYTHON) + " -c 'from samba.dcerpc import winreg'");
  need("python3-impacket", std::string(PERFSIM_PYTHON) + " -c 'from impacket.dcerpc.v5 import epm'");
  need("tshark", "command -v tshark");
  INFO("something already listens on " << kAddress << ":135");
  REQUIRE_FALSE(testing::tcp_accepts(kAddress, 135));
}

// perfsim serve with one 2016 host on kAddress and the mapper on 135; fills the host's TCP port.
struct Serve {
  subprocess::Child child;
  std::string dir = EPM_WORK_DIR;
  uint16_t port = 0;

  ~Serve() { subprocess::stop(child, 30s); }

  Status start() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string out = dir + "/serve.out";
    std::vector<std::string> args = {
        PERFSIM_EXE,  "serve",
        "--listen",   kAddress + ":0=" + PERFSIM_SOURCE_DIR + "/captures/default-2016.perfcap",
        "--timeline", "frozen:" + std::to_string(kTick),
        "--epm",      "--json",
        "--threads",  "2"};
    subprocess::Options o;
    o.out = o.err = subprocess::Stream::kFile;
    o.out_path = out;
    o.err_path = dir + "/serve.err";
    o.parent_death_signal = SIGTERM;
    if (Status st = subprocess::start(args, o, child); !st.ok()) return st;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
      std::istringstream lines(testing::read_text(out));
      bool epm = false;
      for (std::string line; std::getline(lines, line);) {
        const json j = json::parse(line, nullptr, false);
        if (j.is_discarded()) continue;
        if (j["event"] == "listening") port = j["port"];
        if (j["event"] == "epm") epm = j["address"] == kAddress && j["port"] == 135;
      }
      if (epm && port) return Status::Ok();
      if (subprocess::ExitStatus st; subprocess::poll(child, st))
        return Status::IOError("perfsim serve exited: " + testing::read_text(dir + "/serve.err"));
      std::this_thread::sleep_for(50ms);
    }
    return Status::IOError("perfsim serve did not report its mapper within 60 s");
  }
};

TEST_CASE("perfsim serve --epm: clients that bind without a port find winreg through port 135", "[epm]") {
  require_tools();
  Serve s;
  {
    const Status st = s.start();
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  const std::string pcap = s.dir + "/epm.pcapng";
  PacketRecorder rec;
  {
    const Status st = rec.start(uint16_t{135}, pcap);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }

  // python3-samba: ncacn_ip_tcp:127.0.0.7 asks the mapper, then runs the whole collector sequence.
  const std::string out = s.dir + "/samba";
  fs::create_directories(out);
  const CommandResult samba =
      run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " + INTEROP_SCRIPTS_DIR +
                  "/collector_samba.py --epm --port 0 --address " + kAddress + " --out " + shell_quote(out));
  // impacket: hept_map and hept_lookup.
  const CommandResult imp = run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " + EPM_SCRIPTS_DIR +
                                        "/epm_client.py --address " + kAddress);
  rec.stop();

  {
    INFO(samba.output);
    REQUIRE(samba.exit_status == 0);
    std::ifstream f(out + "/result.json");
    const json result = json::parse(f, nullptr, false);
    REQUIRE_FALSE(result.is_discarded());
    CHECK(result["failures"].empty());
    std::shared_ptr<replayer::SimulatedHost> host;
    REQUIRE(testing::load_frozen_host(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", kTick, host)
                .ok());
    bool global = false;
    for (const json& v : result["values"]) {
      if (v["key"] != "HKPD" || v["name"] != "Global") continue;
      const std::string got = testing::read_text(out + "/" + v["file"].get<std::string>());
      CHECK(Bytes(got.begin(), got.end()) == host->content(replayer::PerfKey::kData, "Global", kTick).data);
      global = true;
    }
    CHECK(global);
  }
  {
    INFO(imp.output);
    REQUIRE(imp.exit_status == 0);
    const json j = json::parse(imp.output, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["winreg"] == "ncacn_ip_tcp:" + kAddress + "[" + std::to_string(s.port) + "]");
    CHECK(j["srvsvc_error"] == 0x16c9a0d6);  // EPT_S_NOT_REGISTERED
    REQUIRE(j["lookup"].size() == 1);
    CHECK(j["lookup"][0]["interface"] == "338cd001-2244-31f1-aaaa-900038001003");
    CHECK(j["lookup"][0]["binding"] == "ncacn_ip_tcp:" + kAddress + "[" + std::to_string(s.port) + "]");
  }
  {
    const WireReport w = check_wire(pcap, 135, "epm.opnum");
    INFO(w.table);
    for (const std::string& p : w.problems) FAIL_CHECK(p);
    CHECK(w.opnums.count(3));  // ept_map
    CHECK(w.opnums.count(2));  // ept_lookup
  }
}

}  // namespace
}  // namespace perfsim::interop
