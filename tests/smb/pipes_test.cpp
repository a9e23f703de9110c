// The pipes a Windows host has besides winreg, through perfsim's smbd, with Samba's own tools:
// srvsvc reports each simulated host's Windows version (rpcclient srvinfo), lsarpc is Samba's
// rpcd_lsad (rpcclient lsaquery). Logons per version (NTLMv1, guest) are logon_test.cpp's.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "captures/reader.h"
#include "support.h"
#include "windows/constants.h"
#include "tests/common/perfsim_smb_serve.h"

using namespace perfsim;

namespace {

const char* const kUser = "carol";
const char* const kPassword = "C4rol-pw";
const std::string k2016 = "127.0.0.12", k2000 = "127.0.0.13", k2003 = "127.0.0.14";

std::string tool(const std::string& command) { return "timeout 60 " + command; }

interop::CommandResult rpcclient(const testing::PerfsimSmbServe& s, const std::string& address,
                                 const std::string& cmd) {
  return interop::run_command(tool("rpcclient " + address + " -p " + std::to_string(s.port()) + " -U " + kUser + "%" +
                                   kPassword + " -c " + interop::shell_quote(cmd) + " 2>&1"));
}

using interop::contains;

// The value after the first "label ... :" line of rpcclient's output, tabs and spaces trimmed.
std::string field(const std::string& text, const std::string& label) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find(label), colon = line.find(':');
    if (at == std::string::npos || colon == std::string::npos) continue;
    const size_t b = line.find_first_not_of(" \t", colon + 1), e = line.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : line.substr(b, e - b + 1);
  }
  return "(no " + label + " line)";
}

TEST_CASE("perfsim serve --smb: srvsvc and wkssvc and lsarpc answer as the simulated host", "[smb]") {
  testing::PerfsimSmbServe s;
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + "-pipes";  // a sibling: smb_test wipes SMB_WORK_DIR when it starts
  const std::string captures = std::string(PERFSIM_SOURCE_DIR) + "/captures/";
  cfg.hosts = {{k2016, captures + "default-2016.perfcap", {}},
               {k2000, captures + "default-win2000.perfcap", {}},
               {k2003, captures + "default-2003.perfcap", {}}};
  cfg.users = {{kUser, kPassword}};
  {
    const Status st = s.start(cfg);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  INFO("perfsim serve log: " << s.err_path());

  SECTION("rpcclient srvinfo: each host's own Windows version and platform") {
    const interop::CommandResult r2016 = rpcclient(s, k2016, "srvinfo");
    const interop::CommandResult r2000 = rpcclient(s, k2000, "srvinfo");
    INFO(r2016.output << "\n" << r2000.output);
    CHECK(r2016.exit_status == 0);
    CHECK(field(r2016.output, "os version") == "10.0");
    CHECK(field(r2016.output, "platform_id") == "500");
    CHECK(r2000.exit_status == 0);
    CHECK(field(r2000.output, "os version") == "5.0");
  }

  SECTION("python3-samba's wkssvc client reads each host's version; tshark decodes every srvsvc and wkssvc PDU") {
    // rpcclient's wkssvc_wkstagetinfo prints nothing at level 100, so Samba's Python binding reads it.
    const std::string pcap = s.dir() + "/netapi.pcapng";
    interop::PacketRecorder wire;
    {
      const Status st = wire.start(s.port(), pcap);
      INFO(st.ToString());
      REQUIRE(st.ok());
    }
    auto wksta = [&](const std::string& address) {
      const std::string py =
          "from samba import param, credentials\n"
          "from samba.dcerpc import wkssvc\n"
          "lp = param.LoadParm(); lp.set('smb ports', '" +
          std::to_string(s.port()) +
          "')\n"
          "c = credentials.Credentials(); c.guess(lp); c.set_username('" +
          kUser + "'); c.set_password('" + kPassword +
          "')\n"
          "w = wkssvc.wkssvc(r'ncacn_np:" +
          address +
          "[\\pipe\\wkssvc]', lp, c)\n"
          "i = w.NetWkstaGetInfo(None, 100)\n"
          "print(i.platform_id, i.server_name, i.version_major, i.version_minor)\n";
      return interop::run_command(tool(std::string(PERFSIM_PYTHON) + " -c " + interop::shell_quote(py) + " 2>&1"));
    };
    const interop::CommandResult w2003 = wksta(k2003), w2016 = wksta(k2016);
    const interop::CommandResult srv = rpcclient(s, k2003, "srvinfo");
    wire.stop();
    INFO(w2003.output << "\n" << w2016.output << "\n" << srv.output);
    CHECK(w2003.exit_status == 0);
    CHECK(w2003.output == "500 PERFSIM-2003 5 2\n");
    CHECK(w2016.output == "500 PERFSIM-2016 10 0\n");
    CHECK(field(srv.output, "os version") == "5.2");

    // smbd's own SMB2 negotiate responses carry expert notes of tshark 3.6's; only perfsim's
    // DCE/RPC PDUs are judged here.
    const interop::CommandResult t = interop::run_command(
        "timeout 120 tshark -2 -n -r " + interop::shell_quote(pcap) + " -d tcp.port==" + std::to_string(s.port()) +
        ",nbss -Y dcerpc -T fields -E separator=/t -e frame.number -e dcerpc.pkt_type -e srvsvc.opnum -e "
        "wkssvc.opnum -e _ws.malformed 2>&1");
    INFO(t.output);
    REQUIRE(t.exit_status == 0);
    size_t srvsvc_responses = 0, wkssvc_responses = 0;
    std::istringstream lines(t.output);
    for (std::string line; std::getline(lines, line);) {
      std::vector<std::string> f;
      std::istringstream cells(line);
      for (std::string cell; std::getline(cells, cell, '\t');) f.push_back(cell);
      f.resize(5);
      INFO(line);
      CHECK(f[4].empty());  // not malformed
      if (f[1] == "2" && !f[2].empty()) ++srvsvc_responses;
      if (f[1] == "2" && !f[3].empty()) ++wkssvc_responses;
    }
    CHECK(srvsvc_responses >= 1);
    CHECK(wkssvc_responses == 2);
  }

  SECTION("net rpc registry enumerate lists Perflib's subkey and values from the capture") {
    std::unique_ptr<captures::Reader> reader;
    REQUIRE(captures::Reader::open(captures + "default-2016.perfcap", reader).ok());
    const captures::Capture& meta = reader->metadata();
    const interop::CommandResult r = interop::run_command(
        tool("net rpc registry enumerate " +
             interop::shell_quote("HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib") + " -S " + k2016 +
             " -p " + std::to_string(s.port()) + " -U " + kUser + "%" + kPassword + " 2>&1"));
    INFO(r.output);
    CHECK(r.exit_status == 0);
    CHECK(contains(r.output, "Keyname   = 009"));
    size_t values = 0;
    for (const captures::RegistryValue& v : meta.registry) {
      if (v.key != "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib") continue;
      ++values;
      REQUIRE(v.type == windows::kRegDword);
      uint32_t n = 0;
      std::memcpy(&n, v.data.data(), 4);
      CHECK(
          contains(r.output, "Valuename  = " + v.name + "\nType       = REG_DWORD\nValue      = " + std::to_string(n)));
    }
    CHECK(values >= 4);  // Last Counter, Last Help, Version, Base Index
  }

  SECTION("rpcclient lsaquery: lsarpc is Samba's rpcd_lsad behind smbd") {
    const interop::CommandResult lsa = rpcclient(s, k2016, "lsaquery");
    INFO(lsa.output);
    CHECK(lsa.exit_status == 0);
    CHECK(contains(lsa.output, "Domain Name:"));
  }
}

}  // namespace
