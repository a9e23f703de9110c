// `perfsim serve --fleet ... --smb=PORT` as a child process, for tests that reach perfsim's hosts
// through a real smbd: one host per loopback address, each frozen at one sample, with SMB users.
//
// Guarantees: start() returns once every host has reported its SMB address (bounded: 60 s, or
// perfsim exiting, whose stderr is then in the error). stop() (also the destructor) sends SIGTERM
// and waits at most 30 s before SIGKILL; perfsim itself then removes its smbd, addresses and
// accounts. A crashed test still stops perfsim (PR_SET_PDEATHSIG).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/subprocess.h"
#include "replayer/host.h"

namespace perfsim::testing {

struct ServedSmbHost {
  std::string address;                   // 127.0.0.N
  std::string capture;                   // path of the .perfcap to serve
  std::vector<std::string> allow;        // smb_allow: accounts that may open HKPD (empty: all)
  std::string name = {};                 // the host's system name (fleet `name`); empty: the capture's
  std::vector<std::string> quirks = {};  // [host.quirks] switched on, e.g. "smb1-disabled"
  std::string profile = {};              // the host's `profile` (e.g. "2003"); empty: none
};

struct ServeSmbConfig {
  std::string perfsim;  // the perfsim executable
  std::string dir;      // work directory: emptied, holds fleet.toml, serve.out/err and smbd's tree
  std::vector<ServedSmbHost> hosts;
  std::vector<std::pair<std::string, std::string>> users;  // --smb-user NAME:PASSWORD
  uint32_t frozen_tick = 3;                                // every host serves this sample
  uint16_t port = 0;                    // the SMB port; 0: a free one (a client that only knows 445 needs 445)
  std::vector<std::string> extra_args;  // more `perfsim serve` arguments, e.g. {"--quirk", "pipe-not-available-first"}
  // false (most tests: collectors reading anonymously): --smb-guest --smb-anonymous-winreg, as
  // perfsim served every host before it followed each version's logon defaults; true: each host's
  // Windows defaults (windows/README.md), no null-session winreg, no guest.
  bool windows_logon_defaults = false;
  // A fleet file of the test's own (e.g. count/addresses ranges) instead of one [[host]] per
  // `hosts`; start() then waits for `smb_hosts` SMB lines.
  std::string fleet;
  size_t smb_hosts = 0;
  // true: `--json`, start() counts the "smb" events; false: the text a person reads, start() waits
  // for a line per SMB host or, above ten hosts, the one summary line.
  bool json = true;
};

class PerfsimSmbServe {
 public:
  PerfsimSmbServe() = default;
  ~PerfsimSmbServe() { stop(); }
  PerfsimSmbServe(const PerfsimSmbServe&) = delete;
  PerfsimSmbServe& operator=(const PerfsimSmbServe&) = delete;

  Status start(const ServeSmbConfig& cfg);
  // SIGTERM, then at most 30 s; perfsim's exit status (-1 when it had to be killed or never ran).
  int stop();

  uint16_t port() const { return port_; }
  int pid() const { return child_.pid; }  // perfsim's, for a test that kills it outright
  const std::string& dir() const { return cfg_.dir; }
  std::string smb_dir() const { return cfg_.dir + "/smb"; }
  std::string err_path() const { return cfg_.dir + "/serve.err"; }
  std::string stuck_state() const;

 private:
  Status start_once(const ServeSmbConfig& cfg);

  ServeSmbConfig cfg_;
  subprocess::Child child_;
  uint16_t port_ = 0;
};

// The host a test expects to reach: `capture` loaded as perfsim serve loads it, frozen at `tick`.
Status load_frozen_host(const std::string& capture, uint32_t tick, std::shared_ptr<replayer::SimulatedHost>& out);

}  // namespace perfsim::testing
