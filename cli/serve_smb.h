// `perfsim serve --smb`: the hosts of a serve run also reachable as \\ADDR\PIPE\winreg through a
// private smbd (server/smbd.h) that hands each pipe to the named-pipe listener
// (server/pipe_listener.h) on the same Server as the TCP listeners.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/status.h"
#include "replayer/host.h"
#include "server/server.h"
#include "server/smbd.h"

namespace perfsim::cli {

struct SmbHost {
  std::string address;                          // the loopback address the host owns
  std::shared_ptr<replayer::SimulatedHost> host;
  std::vector<std::string> allow;               // accounts allowed OpenHKPD; empty = everyone
  std::string dialects;                         // "MIN-MAX" (e.g. "NT1-NT1"); empty = from the OS profile
};

struct SmbSetup {
  std::unique_ptr<server::Smbd> smbd;
  uint16_t port = 0;
  std::vector<SmbHost> hosts;
};

// Checks the options, writes smbd's tree and users, and adds the pipe listener to `cfg`.
// Call smb.smbd->start() once the Server is started (the socket must exist first).
Status prepare_smb(const ServeOptions& o, std::vector<SmbHost> hosts, server::ServerConfig& cfg, SmbSetup& smb);

}  // namespace perfsim::cli
