#include "cli/target.h"

#include "core/config.h"
#include "recorder/credentials.h"
#include "recorder/smb_channel.h"
#include "recorder/tcp_channel.h"

namespace perfsim::cli {
namespace {

Status parse_port(const std::string& text, const std::string& whole, uint16_t& port) {
  if (config::parse_uint_as(text, "port", port).ok() && port > 0) return Status::Ok();
  return Status::InvalidArgument("port in '" + whole + "' must be 1..65535");
}

// The SMB side of the options: target settings and who logs on.
Status smb_settings(const SmbOptions& o, const Target& t, recorder::SmbTarget& target, recorder::Credentials& creds) {
  target.host = t.host;
  target.port = t.port;
  target.require_signing = o.sign;
  target.require_encryption = o.encrypt;
  if (!o.protocols.empty()) {
    const size_t dash = o.protocols.find('-');
    if (dash == std::string::npos)
      return Status::InvalidArgument("--smb-protocols wants MIN-MAX, e.g. SMB2_02-SMB3_11");
    target.min_protocol = o.protocols.substr(0, dash);
    target.max_protocol = o.protocols.substr(dash + 1);
  }
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

Status connect_target(const Target& t, const SmbOptions& smb, std::chrono::milliseconds timeout,
                      std::unique_ptr<recorder::Channel>& out) {
  if (!t.smb) {
    if (smb.any())
      return Status::InvalidArgument(
          "credentials and --smb-protocols/--sign/--encrypt apply to SMB targets (smb:HOST or \\\\HOST); "
          "ncacn_ip_tcp here is unauthenticated");
    return recorder::connect_tcp(t.host, t.port, timeout, out);
  }
  recorder::SmbTarget st;
  recorder::Credentials creds;
  if (Status s = smb_settings(smb, t, st, creds); !s.ok()) return s;
  if (!recorder::smb_supported())
    return Status::Unsupported(
        "this perfsim was built without Samba's client libraries (samba-dev): use ncacn_ip_tcp (ADDR:PORT)");
  return recorder::connect_smb(st, creds, timeout, out);
}

}  // namespace perfsim::cli
