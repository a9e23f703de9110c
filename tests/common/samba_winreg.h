// Samba's own smbd on one loopback address and port, serving \PIPE\winreg through Samba's
// rpcd_winreg, which samba-dcerpcd starts on demand (smbd's default `rpc start on demand helpers`):
// a winreg server nobody in this project wrote. Everything lives in a private directory (smb.conf,
// private, state, lock, cache, pid and ncalrpc dirs, passdb, logs); /etc/samba is not read.
//
// Guarantees: start() returns once smbd accepts on address:port (bounded by ready_timeout), or
// undoes what it did and says why. stop() (also the destructor) ends every process whose command
// line names this instance's smb.conf (smbd, samba-dcerpcd, rpcd_*: SIGTERM, SIGKILL after 10 s),
// removes the loopback address if start() added it, and the directory. A test that crashed leaves
// daemons behind; the next start() in the same directory ends them first. Needs root and samba.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace perfsim::testing {

struct SambaWinregConfig {
  std::string dir;                    // private tree: emptied at start, removed by stop()
  std::string address = "127.0.0.1";  // added to lo as /32 when lo lacks it
  uint16_t port = 0;                  // 0: a free port
  // Existing unix accounts (e.g. "root") and the SMB passwords pdbedit gives them in the private passdb.
  std::vector<std::pair<std::string, std::string>> users;
  bool winreg = true;        // false: no RPC helpers at all, so smbd has no \PIPE\winreg
  std::string extra_global;  // more [global] lines, e.g. "\tserver smb encrypt = required\n"
  std::chrono::milliseconds ready_timeout{20'000};
};

class SambaWinregServer {
 public:
  SambaWinregServer() = default;
  ~SambaWinregServer() { stop(); }
  SambaWinregServer(const SambaWinregServer&) = delete;
  SambaWinregServer& operator=(const SambaWinregServer&) = delete;

  Status start(const SambaWinregConfig& cfg);
  void stop();

  uint16_t port() const { return port_; }
  const std::string& address() const { return cfg_.address; }
  std::string conf() const { return cfg_.dir + "/smb.conf"; }
  // The last lines of smbd's and rpcd_winreg's logs, for failure messages.
  std::string log_tail() const;
  // `smbstatus -b` of this instance: sessions with their dialect, signing and encryption.
  std::string sessions() const;

 private:
  SambaWinregConfig cfg_;
  uint16_t port_ = 0;
  bool added_address_ = false;
  bool started_ = false;
};

// Ok, or what is missing to run Samba's own server here (root, smbd, samba-dcerpcd, rpcd_winreg, pdbedit).
Status samba_server_available();

}  // namespace perfsim::testing
