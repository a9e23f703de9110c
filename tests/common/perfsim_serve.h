// A background `perfsim serve --json ...` for tests that talk to it: started through /bin/sh (its
// arguments are one shell-quoted string, as tests write them), its stdout JSON lines read until
// the test's `ready` says enough (the first line by default: the first listener).
//
// Guarantees: start() returns only when ready, or with an error that includes what perfsim wrote
// on stderr (when it went to a file) if perfsim exits first or `timeout` passes; reading never
// blocks past `timeout`. The destructor stops perfsim (SIGTERM, then SIGKILL after the grace).
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/subprocess.h"

namespace perfsim::testing {

struct ServeStart {
  std::string err_path;  // stderr goes here (appended); empty: discarded
  int parent_death_signal = SIGKILL;
  bool new_session = false;  // own process group (stop(group) then reaches smbd too)
  std::chrono::seconds timeout{60};
  // Called with every line read so far; true: ready. Default: one line.
  std::function<bool(const std::vector<std::string>&)> ready;
};

class PerfsimServe {
 public:
  PerfsimServe() = default;
  PerfsimServe(const PerfsimServe&) = delete;
  PerfsimServe& operator=(const PerfsimServe&) = delete;
  ~PerfsimServe() { stop(); }

  // Runs `perfsim serve --json ARGS` (ARGS shell-quoted).
  Status start(const std::string& perfsim, const std::string& args, const ServeStart& how = {});
  // Exit code (or -1 killed by a signal), 0 when nothing runs.
  int stop(std::chrono::seconds grace = std::chrono::seconds(10), bool group = false);

  const std::vector<std::string>& lines() const { return lines_; }
  // Of the first line (a "listening" event): its port, address and host name.
  uint16_t port() const { return port_; }
  const std::string& address() const { return address_; }
  const std::string& host() const { return host_; }
  pid_t pid() const { return child_.pid; }
  std::string endpoint() const { return address_ + ":" + std::to_string(port_); }

 private:
  subprocess::Child child_;
  std::vector<std::string> lines_;
  uint16_t port_ = 0;
  std::string address_, host_;
};

}  // namespace perfsim::testing
