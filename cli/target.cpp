#include "cli/target.h"

#include "core/config.h"
#include "recorder/tcp_channel.h"

namespace perfsim::cli {
namespace {

Status parse_port(const std::string& text, const std::string& whole, uint16_t& port) {
  if (config::parse_uint_as(text, "port", port).ok() && port > 0) return Status::Ok();
  return Status::InvalidArgument("port in '" + whole + "' must be 1..65535");
}

// Who logs on, from options, the authentication file and the environment (recorder/credentials.h).
Status resolve(const SmbOptions& o, recorder::Credentials& creds) {
  recorder::CredentialOptions co;
  co.user = o.user;
  co.domain = o.domain;
  co.password = o.password;
  co.auth_file = o.auth_file;
  co.anonymous = o.anonymous;
  if (o.kerberos) {
    recorder::Credentials::Kerberos k;
    if (Status s = recorder::parse_kerberos(*o.kerberos, k); !s.ok()) return s;
    co.kerberos = k;
  }
  return recorder::resolve_credentials(co, recorder::process_environment(), creds);
}

// The ncacn_ip_tcp side: with a user (from any source) the bind authenticates, at integrity
// unless --auth-level says otherwise (recorder/README.md says why); without one it does not.
Status tcp_auth(const SmbOptions& o, std::optional<recorder::TcpAuth>& out) {
  if (!o.protocols.empty() || o.sign || o.encrypt)
    return Status::InvalidArgument(
        "--smb-protocols, --sign and --encrypt apply to SMB targets (smb:HOST or \\\\HOST); over ncacn_ip_tcp "
        "use --auth-level sign or seal");
  recorder::Credentials creds;
  if (Status s = resolve(o, creds); !s.ok()) return s;
  if (creds.kerberos == recorder::Credentials::Kerberos::kRequired)
    return Status::InvalidArgument("--kerberos required: perfsim authenticates DCE/RPC over TCP with NTLM only");
  if (creds.anonymous) {
    if (o.auth_level || o.auth_type)
      return Status::InvalidArgument(
          "--auth-level / --auth-type need an account: give --user (or --auth-file, "
          "$PERFSIM_USER)");
    return Status::Ok();
  }
  recorder::TcpAuth a;
  a.who = {creds.domain, creds.user, creds.password};
  if (o.auth_level)
    if (Status s = recorder::parse_auth_level(*o.auth_level, a.auth_level); !s.ok()) return s;
  if (o.auth_type)
    if (Status s = recorder::parse_auth_type(*o.auth_type, a.auth_type); !s.ok()) return s;
  out = a;
  return Status::Ok();
}

// The SMB side of the options: target settings and who logs on.
Status smb_settings(const SmbOptions& o, recorder::SmbTarget& target, recorder::Credentials& creds) {
  if (o.auth_level || o.auth_type)
    return Status::InvalidArgument(
        "--auth-level and --auth-type apply to ncacn_ip_tcp targets; over SMB use --sign or --encrypt");
  target.require_signing = o.sign;
  target.require_encryption = o.encrypt;
  if (!o.protocols.empty()) {
    const size_t dash = o.protocols.find('-');
    if (dash == std::string::npos)
      return Status::InvalidArgument("--smb-protocols wants MIN-MAX, e.g. SMB2_02-SMB3_11");
    target.min_protocol = o.protocols.substr(0, dash);
    target.max_protocol = o.protocols.substr(dash + 1);
  }
  return resolve(o, creds);
}

}  // namespace

// ADDR:PORT and tcp:ADDR:PORT are ncacn_ip_tcp; smb:HOST[:PORT] and \\HOST are SMB named pipes.
Status parse_target(const std::string& t, Target& out) {
  std::string rest = t;
  if (rest.rfind("\\\\", 0) == 0) {
    out.smb = true;
    out.host = rest.substr(2);
    out.port = 445;
    return out.host.empty() ? Status::InvalidArgument("'\\\\' needs a host name, e.g. \\\\server01") : Status::Ok();
  }
  if (rest.rfind("smb:", 0) == 0) {
    out.smb = true;
    rest = rest.substr(4);
  } else if (rest.rfind("tcp:", 0) == 0)
    rest = rest.substr(4);
  const size_t colon = rest.rfind(':');
  const bool bracketed = !rest.empty() && rest.front() == '[';
  if (colon == std::string::npos || (bracketed && rest[colon - 1] != ']')) {
    if (!out.smb)
      return Status::InvalidArgument("target '" + t +
                                     "' needs a port for ncacn_ip_tcp (ADDR:PORT, e.g. 127.0.0.1:4135), "
                                     "or say smb:HOST for \\PIPE\\winreg over SMB");
    out.host = rest;
    out.port = 445;
  } else {
    out.host = rest.substr(0, colon);
    if (Status s = parse_port(rest.substr(colon + 1), t, out.port); !s.ok()) return s;
  }
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty()) return Status::InvalidArgument("target '" + t + "' names no host");
  return Status::Ok();
}

Status prepare_connection(bool smb, const SmbOptions& options, Connection& out) {
  out = Connection{};
  out.smb = smb;
  if (!smb) return tcp_auth(options, out.tcp_auth);
  if (Status s = smb_settings(options, out.smb_target, out.creds); !s.ok()) return s;
  if (!recorder::smb_supported())
    return Status::Unsupported(
        "this perfsim was built without Samba's client libraries (samba-dev): use ncacn_ip_tcp (ADDR:PORT)");
  return Status::Ok();
}

Status connect_prepared(const Connection& c, const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                        std::unique_ptr<recorder::Channel>& out) {
  if (!c.smb) return recorder::connect_tcp(host, port, timeout, out, c.tcp_auth);
  recorder::SmbTarget st = c.smb_target;
  st.host = host;
  st.port = port;
  return recorder::connect_smb(st, c.creds, timeout, out);
}

Status connect_target(const Target& t, const SmbOptions& smb, std::chrono::milliseconds timeout,
                      std::unique_ptr<recorder::Channel>& out) {
  Connection c;
  if (Status s = prepare_connection(t.smb, smb, c); !s.ok()) return s;
  return connect_prepared(c, t.host, t.port, timeout, out);
}

}  // namespace perfsim::cli
