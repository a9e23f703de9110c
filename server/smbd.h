// A private smbd in front of perfsim: writes its smb.conf and directory tree, adds loopback
// addresses and Samba users, starts smbd (its own session, so its exit kills only its own
// process group), restarts it when it dies, and undoes everything at stop().
//
// Guarantees: start() either leaves smbd accepting on every host address, and samba-dcerpcd
// listening on lsarpc where it serves it, within `ready_timeout`, or undoes what it did and says why (smbd missing, port taken, smbd exiting
// with its last log lines). stop() is idempotent: it kills smbd's process group (SIGTERM, then
// SIGKILL after 10 s), removes the addresses and unix accounts it added and the directory tree.
// A perfsim killed outright still takes smbd down (PR_SET_PDEATHSIG). Runs as root only (smbd
// does; pdbedit, ip and useradd need it).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/log.h"

namespace perfsim::server {

// SMB dialect range smbd offers on one address ("NT1", "SMB2_02", "SMB2_10", "SMB3_00",
// "SMB3_02", "SMB3_11").
struct SmbDialects {
  std::string min = "SMB2_02";
  std::string max = "SMB3_11";
};
// What the OS of a profile spoke (its windows/os.h row; any name or alias windows/README.md lists);
// the default range for a profile of no known OS (e.g. a capture the recorder could not name).
SmbDialects smb_dialects_for_profile(const std::string& profile);

struct SmbHostAddress {
  std::string address;  // IPv4 loopback, e.g. "127.0.0.2"
  SmbDialects dialects;
  // The host's NetBIOS name (SimulatedHost::netbios_name): `netbios name` in the address's include,
  // so smbd introduces itself by it (NTLMSSP CHALLENGE, SMB1 NEGOTIATE); empty: smbd's global one.
  std::string netbios_name;
  bool ntlmv1 = false;  // NTLMv1 logons accepted (`ntlm auth` in the address's include); else NTLMv2 only
  // The Guest account enabled: a logon as an unknown account becomes a guest session (`map to
  // guest = Bad User` in the address's include); else it fails (`Never`).
  bool guest = false;
};

struct SmbUser {
  std::string name;
  std::string password;
};

struct SmbdConfig {
  uint16_t port = 445;
  std::string dir;                    // private tree; created, removed by stop()
  std::vector<SmbHostAddress> hosts;  // one per address
  std::vector<SmbUser> users;
  // One wildcard socket (0.0.0.0:port, `hosts allow` limited to `clients`) for every address,
  // each connection routed by the address it reached (smbd's %i, NPA's local address), instead of
  // a socket per address (`interfaces` + `bind interfaces only`): what a fleet of thousands needs
  // (server/README.md, SMB fleets). Addresses the kernel already delivers locally (127.0.0.0/8 on
  // lo) are then not added.
  bool one_socket = false;
  std::vector<std::string> clients = {"127.0.0.0/8"};  // one_socket: networks served (empty: any)
  // false: no null or guest session at all (`restrict anonymous = 2`, `map to guest = Never` for
  // every address: perfsim serve --smb-no-anonymous); true: each address's `guest` decides.
  bool anonymous = true;
  bool require_encryption = false;  // SMB3 encryption required of every session (anonymous ones then fail)
  // smbd's `max smbd processes` (its child per client connection; beyond it new connections are
  // refused): serve sets it from --max-connections, since each pipe open is a perfsim connection
  // too. 0: no limit.
  size_t max_processes = 0;
  bool add_addresses = true;      // `ip addr add ADDR/32 dev lo` for addresses lo lacks
  bool create_unix_users = true;  // useradd --system for users without a unix account
  bool restart = true;            // restart smbd when it dies
  std::string smbd = "/usr/sbin/smbd";
  std::string dcerpcd = "/usr/libexec/samba/samba-dcerpcd";  // for smbd's other pipes (srvsvc...)
  std::chrono::milliseconds ready_timeout{15'000};
  LogSink log;
};

class Smbd {
 public:
  explicit Smbd(SmbdConfig cfg);
  ~Smbd();  // stop()
  Smbd(const Smbd&) = delete;
  Smbd& operator=(const Smbd&) = delete;

  // Where perfsim must listen for smbd's winreg opens: <external_rpc_pipe:socket_dir>/np/winreg. Valid from
  // construction; the directory exists after prepare().
  std::string winreg_socket() const;
  // Writes the tree, adds addresses and users. Call before binding the socket.
  Status prepare();
  // Starts smbd (and samba-dcerpcd for its other pipes) and waits until every address accepts and
  // samba-dcerpcd listens on lsarpc.
  Status start();
  void stop();
  int restarts() const;  // how often the supervisor restarted smbd
  int smbd_pid() const;  // 0 when not running

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfsim::server
