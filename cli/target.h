// Where `perfsim query` and `perfsim record` connect, and how: the target text
// (ADDR:PORT / tcp:ADDR:PORT for ncacn_ip_tcp, smb:HOST[:PORT] / \\HOST for \PIPE\winreg over SMB)
// and the credential / transport options, turned into a bound winreg Channel.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "recorder/channel.h"
#include "recorder/credentials.h"
#include "recorder/rpc_channel.h"
#include "recorder/smb_channel.h"

namespace perfsim::cli {

struct Target {
  bool smb = false;
  std::string host;
  uint16_t port = 0;
};

// Who logs on (SMB, and DCE/RPC over ncacn_ip_tcp) and the transport's options; unset credentials
// fall back to --auth-file, then PERFSIM_* variables.
struct SmbOptions {
  std::optional<std::string> user, domain, password, auth_file, kerberos;
  std::optional<std::string> auth_level, auth_type;  // ncacn_ip_tcp only: connect|sign|seal, ntlm|spnego
  bool anonymous = false;
  std::string protocols;  // "MIN-MAX" dialects, e.g. SMB2_02-SMB3_11
  bool sign = false, encrypt = false;
};

// InvalidArgument says what is wrong with the text and what is expected.
Status parse_target(const std::string& text, Target& out);

// The options checked against the transport and the credentials resolved, once: what connecting
// to any host of that transport needs (perfsim load connects to thousands with one).
struct Connection {
  bool smb = false;
  std::optional<recorder::TcpAuth> tcp_auth;  // unset: an unauthenticated bind
  recorder::SmbTarget smb_target;             // host and port set per connect
  recorder::Credentials creds;
};

// InvalidArgument: the options do not fit the transport (a usage error); Unsupported: no SMB here.
Status prepare_connection(bool smb, const SmbOptions& options, Connection& out);
// Connects to host:port and binds winreg; a failure says what to check.
Status connect_prepared(const Connection& c, const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                        std::unique_ptr<recorder::Channel>& out);

// Both. InvalidArgument: the options do not fit (a usage error); anything else: the host could not
// be reached or refused us, with what to check.
Status connect_target(const Target& t, const SmbOptions& smb, std::chrono::milliseconds timeout,
                      std::unique_ptr<recorder::Channel>& out);

}  // namespace perfsim::cli
