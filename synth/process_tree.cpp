// The processes a host of each Windows version runs and who started each: System's PID, the
// session manager's tree, the service control manager's children, the shell. Sources:
//  - System's PID: 8 on Windows 2000 and 4 on XP/2003 as nmap's smb-enum-processes documentation
//    shows them (System(8), System 4); 2 on NT 4.0 and 4 from Vista on as issue 45 states them (no
//    primary source checked here for those two).
//  - The tree before Vista: smss starts csrss and winlogon and stays running; winlogon starts
//    services and lsass; services starts the service processes (svchost from 2000 on); explorer's
//    parent is userinit, which has exited (nmap's documented XP/2003 tree: smss(252) -> csrss,
//    winlogon(324) -> services(372), lsass; services -> spoolsv, msdtc, svchost, alg; explorer's
//    parent 1684 names no running process).
//  - From Vista: the master smss starts a session smss per session, which starts csrss and wininit
//    (session 0) or csrss and winlogon (session 1) and exits, so their parent PID names no running
//    process; wininit starts services and lsass: issue 45's description, not checked here against a
//    primary source; that a parent may have exited is Windows' own help text for Creating Process
//    ID ("may no longer identify a running process", a real block in netdata apps_os_windows.c).
//    dwm is winlogon's from 8/2012 on (perfsim's reading, not audited).
//  - Which processes exist per version: wininit, dwm, LogonUI from Vista, conhost from 7, taskhostw
//    and MsMpEng (Defender on servers) from Windows 10/2016, alg on XP/2003, regsvc and mstask on
//    2000 (nmap's smb-enum-processes names regsvc.exe on Windows 2000).
#include "synth/model_state.h"

namespace perfsim::synth {
namespace {

using namespace os_version;

// Where a process's parent is: another boot process (its position), System, or a process that has
// exited (its PID names no running process).
enum Parent : int { kSystemParent = -1, kExitedSession0 = -2, kExitedSession1 = -3, kExitedUserinit = -4 };

struct Boot {
  const char* name;
  int parent;  // a position in the list, or a Parent
  uint32_t prio;
};

std::vector<Boot> nt_boot(uint32_t v) {
  // smss 0, csrss 1, winlogon 2, services 3, lsass 4
  std::vector<Boot> b = {
      {"smss", kSystemParent, 11}, {"csrss", 0, 13}, {"winlogon", 0, 13}, {"services", 2, 9}, {"lsass", 2, 9}};
  if (v < k2000) {
    for (const char* s : {"spoolss", "RpcSs", "llssrv", "LOCATOR", "tapisrv"}) b.push_back({s, 3, 8});
  } else if (v == k2000) {
    for (const char* s : {"svchost", "spoolsv", "svchost", "regsvc", "mstask", "msdtc", "WinMgmt"})
      b.push_back({s, 3, 8});
  } else {
    for (const char* s : {"svchost", "svchost", "svchost", "spoolsv", "msdtc", "alg"}) b.push_back({s, 3, 8});
    b.push_back({"wmiprvse", 5, 8});  // DCOM launches it from the first svchost
  }
  b.push_back({"explorer", kExitedUserinit, 8});
  return b;
}

std::vector<Boot> vista_boot(uint32_t v) {
  // smss 0, csrss 1, wininit 2, csrss 3, winlogon 4, services 5, lsass 6, svchost 7
  std::vector<Boot> b = {{"smss", kSystemParent, 11},
                         {"csrss", kExitedSession0, 13},
                         {"wininit", kExitedSession0, 13},
                         {"csrss", kExitedSession1, 13},
                         {"winlogon", kExitedSession1, 13},
                         {"services", 2, 9},
                         {"lsass", 2, 9},
                         {"svchost", 5, 8},
                         {"svchost", 5, 8}};
  b.push_back({"dwm", v >= kWin8 ? 4 : 7, 13});
  b.push_back({"svchost", 5, 8});
  b.push_back({"explorer", kExitedUserinit, 8});
  b.push_back({"spoolsv", 5, 8});
  b.push_back({"svchost", 5, 8});
  if (v >= kWin10) b.push_back({"MsMpEng", 5, 8});
  if (v >= kWin10) b.push_back({"taskhostw", 7, 8});
  b.push_back({"WmiPrvSE", 7, 8});
  b.push_back({"msdtc", 5, 8});
  if (v >= kWin7) b.push_back({"conhost", 3, 8});
  return b;
}

}  // namespace

uint32_t system_pid(uint32_t version) {
  if (version < k2000) return 2;
  return version == k2000 ? 8 : 4;
}

// Processes beyond the boot tree (and churn's): services' and the console's of the version.
std::string Model::State::filler_name(uint64_t k) const {
  static const char* const kNt4[] = {"RpcSs", "inetinfo", "sqlservr", "java", "cmd"};
  static const char* const kNt5[] = {"svchost", "dllhost", "inetinfo", "sqlservr", "svchost", "java", "cmd"};
  static const char* const kNt6[] = {"svchost",          "dllhost",  "sqlservr", "w3wp", "vmtoolsd",
                                     "SearchIndexer",    "svchost",  "java",     "node", "cmd",
                                     "TrustedInstaller", "WmiPrvSE", "svchost"};
  if (version < k2000) return kNt4[k % std::size(kNt4)];
  if (version < kVista) return kNt5[k % std::size(kNt5)];
  return kNt6[k % std::size(kNt6)];
}

uint32_t Model::State::pid_of(std::string_view name) const {
  for (const Process& p : procs)
    if (p.name == name) return p.pid;
  return 0;
}

// Who starts a process outside the boot tree: the shell a console program, DCOM's svchost a WMI
// provider host, the service control manager the rest; System when none of them runs.
uint32_t Model::State::service_parent(std::string_view name) const {
  uint32_t pid = 0;
  if (name == "cmd" || name == "powershell" || name == "java" || name == "node") pid = pid_of("explorer");
  if (name == "WmiPrvSE" || name == "wmiprvse") pid = pid_of("svchost");
  if (pid == 0) pid = pid_of("services");
  return pid ? pid : procs[1].pid;
}

// The host's processes after Idle and System: the version's boot tree first (as many as
// process_count holds), then service and console processes of the version. A spec's own names
// replace the version's list (the spec says what runs), each under services, or System without one.
void Model::State::make_processes() {
  const uint32_t v = version;
  const std::vector<Boot> tree = v < kVista ? nt_boot(v) : vista_boot(v);
  const bool named = !spec.process_names.empty();
  const uint32_t exited[3] = {new_cid(), new_cid(), new_cid()};  // session smss x2, userinit
  std::vector<uint32_t> pids;
  for (uint32_t i = 0; i < spec.process_count; ++i) {
    const bool from_boot = !named && i < tree.size();
    const uint32_t n = spec.threads_min + uint32_t(rng.below(spec.threads_max - spec.threads_min + 1));
    const int64_t start = boot + int64_t(rng.below(uint64_t(spec.start_100ns - boot - 60 * k100ns) + 1));
    std::string name;
    uint32_t ppid = procs[1].pid;
    if (from_boot) {
      const Boot& b = tree[i];
      name = b.name;
      const int p = b.parent;
      ppid = p >= 0 ? pids[size_t(p)] : p == kSystemParent ? procs[1].pid : exited[-p - 2];
    } else {
      name = named ? spec.process_names[i % spec.process_names.size()] : filler_name(i);
      ppid = service_parent(name);
    }
    Process proc = make_process(name, from_boot ? boot + int64_t(i + 1) * 3 * k100ns : start, n, ppid);
    if (from_boot) proc.prio = tree[i].prio, proc.pinned = true;
    pids.push_back(proc.pid);
    procs.push_back(std::move(proc));
  }
}

}  // namespace perfsim::synth
