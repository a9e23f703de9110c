// Small facts about this machine that tests running daemons on loopback need: a free TCP port,
// whether lo carries an address, which processes mention a path, a file's text. Nothing here
// waits.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perfsim::testing {

// A TCP port, outside the ephemeral range, that was free on every address a moment ago.
uint16_t free_port();
// True when a TCP connect to address:port succeeds (refused or unreachable ports fail at once on lo).
bool tcp_accepts(const std::string& address, uint16_t port);
// True when `ip -4 addr show dev lo` lists `address` (e.g. "127.0.0.7").
bool lo_has(const std::string& address);
// "PID: command line" of every process other than this one whose command line contains `needle`
// and not `ignore` (when given).
std::vector<std::string> processes_mentioning(const std::string& needle, const std::string& ignore = "");
// The pids of the same processes.
std::vector<pid_t> pids_mentioning(const std::string& needle);
// The whole file, or "" when it cannot be read.
std::string read_text(const std::string& path);

}  // namespace perfsim::testing
