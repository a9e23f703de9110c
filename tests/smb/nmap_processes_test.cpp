// nmap's smb-enum-processes, a client nobody here wrote, against perfsim serve --smb hosts of four
// Windows versions, logged on with the user's own account: every PID, parent, priority, thread
// count and handle count it prints equals what the host serves for the same frozen sample.
// nselib msrpcperformance.lua reads a Process counter block field after field in definition order
// and never reads CounterOffset, so this holds only where the block is laid out as Windows lays it
// out (perfdata/layout.h; windows/README.md "Counter block layouts").
//
// nmap 7.93's own QueryValue request is malformed: nselib msrpctypes.lua's marshall_int8_array
// writes the conformant varying array's max count and offset but not its actual count, so
// perfsim faults it (rpc_fault 1783, RPC_X_BAD_STUB_DATA) as it must. The test runs nmap with
// --datadir on a copy of nmap's data directory in which only that line is changed to write the
// actual count as well; nothing else of nmap is changed.
//
// Port 445: nmap's smb scripts use no other (identity_test.cpp says why).
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "perfdata/model.h"
#include "support.h"
#include "tests/common/perfsim_smb_serve.h"

using namespace perfsim;
namespace fs = std::filesystem;

namespace {

const char* const kNmapUser = "h45layoutnmap";  // an account of its own: serve --smb adds it as a Unix user
const char* const kNmapPassword = "Nm4p-pw";
const char* const kNmapData = "/usr/share/nmap";
const char* const kBadLine = "local result = string.pack(\"<I4I4\", max_length, 0) .. data";
const char* const kFixedLine = "local result = string.pack(\"<I4I4I4\", max_length, 0, #data) .. data";

struct NmapHost {
  std::string address, capture;
};
const std::vector<NmapHost> kNmapHosts = {{"127.0.0.201", "default-2016.perfcap"},
                                          {"127.0.0.202", "default-2008r2.perfcap"},
                                          {"127.0.0.203", "default-2003.perfcap"},
                                          {"127.0.0.204", "default-win2000.perfcap"}};

// A copy of nmap's data directory with only marshall_int8_array's line fixed; "" and a message
// when the installed nmap does not have that line (another nmap version: the test says so).
std::string patched_datadir(const std::string& dir, std::string& why) {
  fs::remove_all(dir);
  fs::copy(kNmapData, dir, fs::copy_options::recursive);
  const std::string lua = dir + "/nselib/msrpctypes.lua";
  std::ifstream in(lua);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const size_t at = text.find(kBadLine);
  if (at == std::string::npos || text.find(kBadLine, at + 1) != std::string::npos) {
    why = lua + " has not exactly one line `" + kBadLine + "` (not nmap 7.93's nselib?)";
    return "";
  }
  text.replace(at, std::strlen(kBadLine), kFixedLine);
  fs::remove(lua);  // the copy keeps /usr/share's read-only mode
  std::ofstream(lua) << text;
  return dir;
}

struct ProcessRow {
  uint64_t pid = 0, ppid = 0, prio = 0, threads = 0, handles = 0;
  std::string name;
};

// The rows of nmap's table at script verbosity 2 (`-v`: nse_main.lua gives a script selected by name
// a verbosity boost; smb-enum-processes.nse psl_tree: "% 5d % 5d % 8d % 7d % 7d "
// then the tree's bars and connector, then the name), per "Nmap scan report for ADDR".
std::map<std::string, std::vector<ProcessRow>> nmap_rows(const std::string& output) {
  static const std::regex row(R"(^\|_?\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+) [ |]*(?:`\+-| `-| \+-|`-)(.+)$)");
  static const std::regex report(R"(^Nmap scan report for (\S+))");
  std::map<std::string, std::vector<ProcessRow>> out;
  std::istringstream lines(output);
  std::string address;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, report)) address = m[1];
    if (!std::regex_match(line, m, row)) continue;
    out[address].push_back(
        {std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4]), std::stoull(m[5]), m[6]});
  }
  return out;
}

std::string ascii_name(const std::u16string& s) {
  std::string out;
  for (char16_t c : s) out += c < 0x80 ? char(c) : '?';
  return out;
}

uint64_t process_counter(const perfdata::Object& o, const perfdata::Instance& in, uint32_t index) {
  for (const perfdata::CounterDef& d : o.counters)
    if (d.name_index == index) return perfdata::read_counter(in.counter_block, d);
  FAIL("Process counter " << index << " missing");
  return 0;
}

// What the host serves for "230" at the frozen tick, read by CounterOffset: per instance name the
// last instance of that name (nmap's table is keyed by name, so a later instance replaces an
// earlier one), _Total left out as nmap leaves it out.
std::map<std::string, ProcessRow> served_processes(const NmapHost& h, uint32_t tick) {
  std::shared_ptr<replayer::SimulatedHost> host;
  const Status st = testing::load_frozen_host(std::string(PERFSIM_SOURCE_DIR) + "/captures/" + h.capture, tick, host);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const replayer::ValueContent v = host->content(replayer::PerfKey::kData, "230", tick);
  perfdata::DataBlock b;
  REQUIRE(perfdata::parse(v.data, b).ok());
  const perfdata::Object* p = b.find(230);
  REQUIRE(p != nullptr);
  std::map<std::string, ProcessRow> out;
  for (const perfdata::Instance& in : p->instances) {
    const std::string name = ascii_name(in.name());
    if (name == "_Total") continue;
    // ID Process, Creating Process ID, Priority Base, Thread Count, Handle Count.
    out[name] = {process_counter(*p, in, 784), process_counter(*p, in, 1410), process_counter(*p, in, 682),
                 process_counter(*p, in, 680), process_counter(*p, in, 952),  name};
  }
  return out;
}

}  // namespace

TEST_CASE("nmap smb-enum-processes prints the PIDs, parents, priorities, threads and handles each host serves",
          "[smb]") {
  const std::string work = std::string(SMB_WORK_DIR) + "-nmap-processes";  // a sibling: smb_test wipes SMB_WORK_DIR
  std::string why;
  const std::string datadir = patched_datadir(work + "-nmapdata", why);
  INFO(why);
  REQUIRE(!datadir.empty());

  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = work;
  cfg.port = 445;
  for (const NmapHost& h : kNmapHosts)
    cfg.hosts.push_back({h.address, std::string(PERFSIM_SOURCE_DIR) + "/captures/" + h.capture, {}});
  cfg.users = {{kNmapUser, kNmapPassword}};
  cfg.windows_logon_defaults = true;  // the account's own logon, NTLMv1 (nmap's default) as each version accepts it
  testing::PerfsimSmbServe s;
  {
    const Status st = s.start(cfg);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  INFO("perfsim serve log: " << s.err_path());

  std::string targets;
  for (const NmapHost& h : kNmapHosts) targets += " " + h.address;
  const interop::CommandResult r = interop::run_command(
      "timeout 180 nmap --datadir " + interop::shell_quote(datadir) +
      " -v -Pn -n -sT -p 445 --script smb-enum-processes" + " --script-args " +
      interop::shell_quote(std::string("smbusername=") + kNmapUser + ",smbpassword=" + kNmapPassword) + targets +
      " 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_status == 0);
  const std::map<std::string, std::vector<ProcessRow>> printed = nmap_rows(r.output);

  for (const NmapHost& h : kNmapHosts) {
    INFO(h.address << " " << h.capture);
    const std::map<std::string, ProcessRow> served = served_processes(h, cfg.frozen_tick);
    REQUIRE(printed.count(h.address) == 1);
    const std::vector<ProcessRow>& rows = printed.at(h.address);
    CHECK(rows.size() == served.size());  // one row per process name, none lost, none invented
    for (const ProcessRow& got : rows) {
      INFO(got.name);
      REQUIRE(served.count(got.name) == 1);
      const ProcessRow& want = served.at(got.name);
      CHECK(got.pid == want.pid);
      CHECK(got.ppid == want.ppid);
      CHECK(got.prio == want.prio);
      CHECK(got.threads == want.threads);
      CHECK(got.handles == want.handles);
    }
  }
}
