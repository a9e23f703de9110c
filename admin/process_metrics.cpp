#include "admin/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace perfsim::admin {
namespace {

// /proc/PID/stat's fields after the command name (which may hold spaces and parentheses), so
// field N of proc(5) is at index N - 3.
bool stat_fields(const std::string& pid, std::vector<std::string>& out) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(text.substr(close + 1));
  out.clear();
  for (std::string f; rest >> f;) out.push_back(f);
  return out.size() >= 22;  // up to rss (field 24)
}

uint64_t field(const std::vector<std::string>& f, size_t proc5_index) {
  return std::strtoull(f[proc5_index - 3].c_str(), nullptr, 10);
}

// The machine's boot time (seconds since 1970): /proc/stat's btime.
uint64_t boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      uint64_t t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

size_t open_fds() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return 0;
  size_t n = 0;
  while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n > 0 ? n - 1 : 0;  // less the directory's own fd
}

// /proc/PID/smaps_rollup's Pss (kB, as proc(5) gives it) in bytes: the process's share of each
// page it maps, so that summed over processes the shared pages count once. 0 when unreadable.
uint64_t pss_bytes(const char* pid) {
  std::ifstream in(std::string("/proc/") + pid + "/smaps_rollup");
  for (std::string key; in >> key;) {
    if (key == "Pss:") {
      uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

std::string gauge(const char* name, const char* help, const char* type, double value) {
  return fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, value);
}

}  // namespace

std::string process_metrics_text() {
  std::vector<std::string> f;
  if (!stat_fields("self", f)) return "";
  const double tick = double(::sysconf(_SC_CLK_TCK));
  const double page = double(::sysconf(_SC_PAGESIZE));
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  std::string out;
  out += gauge("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter",
               double(field(f, 14) + field(f, 15)) / tick);
  out += gauge("process_open_fds", "Number of open file descriptors.", "gauge", double(open_fds()));
  out += gauge("process_max_fds", "Maximum number of open file descriptors.", "gauge", double(lim.rlim_cur));
  out += gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", double(field(f, 23)));
  out += gauge("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", double(field(f, 24)) * page);
  out += gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge",
               double(boot_time()) + double(field(f, 22)) / tick);
  return out;
}

std::string smbd_metrics_text(pid_t smbd_pid) {
  if (smbd_pid <= 0) return "";
  DIR* d = ::opendir("/proc");
  if (!d) return "";
  const double page = double(::sysconf(_SC_PAGESIZE));
  uint64_t processes = 0, rss_pages = 0, pss = 0;
  std::vector<std::string> f;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (!stat_fields(e->d_name, f) || field(f, 6) != uint64_t(smbd_pid)) continue;  // field 6: session id
    ++processes;
    rss_pages += field(f, 24);
    pss += pss_bytes(e->d_name);
  }
  ::closedir(d);
  return gauge("perfsim_smbd_processes", "Processes of the SMB server: smbd and its child per client connection.",
               "gauge", double(processes)) +
         gauge("perfsim_smbd_resident_memory_bytes",
               "Resident memory of smbd and its children, summed per process, in bytes: pages they share count once "
               "per process, so this overstates what they hold together (see the proportional figure).",
               "gauge", double(rss_pages) * page) +
         gauge("perfsim_smbd_proportional_memory_bytes",
               "Proportional set size (PSS) of smbd and its children, summed, in bytes: each shared page divided "
               "among the processes that map it, so the sum is what they hold together.",
               "gauge", double(pss));
}

}  // namespace perfsim::admin
