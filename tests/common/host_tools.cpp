#include "tests/common/host_tools.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace perfsim::testing {
namespace {

namespace fs = std::filesystem;

// (pid, command line with NULs as blanks) of every other process mentioning `needle`.
std::vector<std::pair<pid_t, std::string>> scan(const std::string& needle) {
  std::vector<std::pair<pid_t, std::string>> out;
  std::error_code ec;
  // increment(ec), not range-for: a process vanishing mid-scan must not throw.
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = pid_t(std::stol(name));
    if (pid == ::getpid()) continue;
    std::string cmd = read_text(e.path().string() + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(needle) != std::string::npos) out.emplace_back(pid, cmd);
  }
  return out;
}

}  // namespace

// Outside the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default):
// a port taken from it can be handed to any client's connect() before the daemon we start binds it,
// and a wildcard bind (the SMB fleet's smbd) then fails with EADDRINUSE (seen in CI).
uint16_t free_port() {
  static std::atomic<uint32_t> calls{0};
  constexpr uint32_t kLow = 20000, kSpan = 12000;  // [20000, 32000)
  const uint32_t seed = uint32_t(::getpid()) * 2654435761u;
  for (uint32_t i = 0; i < kSpan; ++i) {
    const uint16_t port = uint16_t(kLow + (seed + 7919u * calls.fetch_add(1)) % kSpan);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);  // free on every address, not just 127.0.0.1
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (ok) return port;
  }
  return 0;
}

bool tcp_accepts(const std::string& address, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  const bool ok = ::inet_pton(AF_INET, address.c_str(), &a.sin_addr) == 1 &&
                  ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

bool lo_has(const std::string& address) {
  const std::string cmd = "ip -4 addr show dev lo 2>/dev/null | grep -q 'inet " + address + "/'";
  return std::system(cmd.c_str()) == 0;
}

std::vector<std::string> processes_mentioning(const std::string& needle, const std::string& ignore) {
  std::vector<std::string> out;
  for (const auto& [pid, cmd] : scan(needle))
    if (ignore.empty() || cmd.find(ignore) == std::string::npos) out.push_back(std::to_string(pid) + ": " + cmd);
  return out;
}

std::vector<pid_t> pids_mentioning(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& p : scan(needle)) out.push_back(p.first);
  return out;
}

// Plain read(2), not a stream: a /proc file of a process that exits between open and read fails
// with ESRCH, which libstdc++'s filebuf turns into an exception that escaped a destructor once.
std::string read_text(const std::string& path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, size_t(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // end of file, or an error: keep what was read
    }
  }
  ::close(fd);
  return out;
}

}  // namespace perfsim::testing
