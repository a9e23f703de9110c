// Hosts also reachable as \\ADDR\PIPE\winreg (`perfsim serve --smb`): a private smbd (smbd.h)
// that hands each pipe to the named-pipe listener (pipe_listener.h) on the same Server as the TCP
// listeners, routing by the address the client reached.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "journal/recorder.h"
#include "replayer/host.h"
#include "rpc/auth.h"
#include "server/server.h"
#include "server/smbd.h"

namespace perfsim::server {

struct SmbHost {
  std::string address;  // the loopback address the host owns
  std::shared_ptr<replayer::SimulatedHost> host;
  std::vector<std::string> allow;  // accounts allowed OpenHKPD; empty = everyone
  std::string dialects;            // "MIN-MAX" (e.g. "NT1-NT1"); empty = from the OS profile
};

// What the serve command line says about SMB.
struct SmbServeOptions {
  std::string port;                // "" or "default": 445
  std::vector<std::string> users;  // NAME:PASSWORD
  std::vector<std::string> allow;  // accounts allowed OpenHKPD on hosts without their own list
  bool anonymous = true;           // false: no null or guest session at all (--smb-no-anonymous)
  // Loosen each host's Windows defaults (windows/os.h, logon policy): --smb-guest enables the Guest
  // account (an unknown account's logon becomes a guest session, which may read
  // HKEY_PERFORMANCE_DATA); --smb-anonymous-winreg lets null sessions open \PIPE\winreg and read it.
  bool guest = false;
  bool anonymous_winreg = false;
  bool require_encryption = false;
  // The networks smbd serves clients from when it listens on one wildcard socket (more than
  // kSmbSocketsPerAddressMax hosts); empty: any (perfsim serve --allow-remote).
  std::vector<std::string> clients = {"127.0.0.0/8"};
  std::string dir;                              // smbd's private tree (default: $TMPDIR/perfsim-smb-PID)
  std::shared_ptr<journal::Recorder> recorder;  // journal and metrics of every pipe open; null: none
  // Accounts for DCE/RPC authentication on top of the SMB session (rpc/auth.h); null: binds with
  // auth get bind_nak.
  std::shared_ptr<const rpc::AuthService> auth;
};

// Up to this many addresses smbd gets a socket per address (`interfaces`); beyond, one wildcard
// socket routed by the address reached (SmbdConfig::one_socket; server/README.md, SMB fleets).
inline constexpr size_t kSmbSocketsPerAddressMax = 64;

struct SmbSetup {
  std::unique_ptr<Smbd> smbd;
  uint16_t port = 0;
  std::vector<SmbHost> hosts;
};

// Checks the options, writes smbd's tree and users, and adds the pipe listener to `cfg`.
// Call smb.smbd->start() once the Server is started (the socket must exist first).
Status prepare_smb(const SmbServeOptions& o, std::vector<SmbHost> hosts, ServerConfig& cfg, SmbSetup& smb);

}  // namespace perfsim::server
