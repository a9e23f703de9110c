// prepare_smb: smbd's configuration from the serve options, and the pipe router by address.
#include "server/smb_serve.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>

#include "core/config.h"
#include "core/utf16.h"
#include "server/netapi_handler.h"
#include "server/pipe_listener.h"
#include "windows/os.h"
#include "server/winreg_handler.h"

namespace perfsim::server {
namespace {

Status parse_port(const std::string& text, uint16_t& port) {
  if (text.empty() || text == "default") {
    port = 445;
    return Status::Ok();
  }
  if (config::parse_uint_as(text, "--smb", port).ok() && port != 0) return Status::Ok();
  return Status::InvalidArgument("--smb=" + text + ": the port must be a number from 1 to 65535");
}

// smb1-disabled (replayer/quirk_table.cpp): the host's range without NT1; a host that speaks
// nothing else cannot lose it.
Status without_smb1(const SmbHost& h, SmbDialects& d) {
  if (!h.host->quirks().smb1_disabled || d.min != "NT1") return Status::Ok();
  if (d.max == "NT1")
    return Status::InvalidArgument("host " + h.address + ": quirk smb1-disabled leaves no dialect (its range is NT1 " +
                                   "only, as Windows 2000/XP/2003 spoke); drop the quirk for this host");
  d.min = "SMB2_02";
  return Status::Ok();
}

Status parse_dialects(const SmbHost& h, SmbDialects& out) {
  if (h.dialects.empty()) {
    const windows::OsProfile* os = h.host->options().identity.os;  // resolved once (replayer/host.h)
    out = smb_dialects_for_profile(os ? std::string(os->name) : std::string());
    return without_smb1(h, out);
  }
  static const std::vector<std::string> known = {"NT1", "SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02", "SMB3_11"};
  const size_t dash = h.dialects.find('-');
  out.min = h.dialects.substr(0, dash);
  out.max = dash == std::string::npos ? out.min : h.dialects.substr(dash + 1);
  auto rank = [&](const std::string& d) { return std::find(known.begin(), known.end(), d) - known.begin(); };
  if (rank(out.min) == ptrdiff_t(known.size()) || rank(out.max) == ptrdiff_t(known.size()) ||
      rank(out.min) > rank(out.max))
    return Status::InvalidArgument("host " + h.address + ": smb_dialects '" + h.dialects +
                                   "' is not MIN-MAX of NT1, SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11");
  return without_smb1(h, out);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// Who may log on to a host and open its winreg: its OS row's defaults (windows/os.h; a capture of
// no known OS gets a current Windows' defaults), loosened by the serve options.
struct LogonPolicy {
  bool ntlmv1 = true;
  bool guest = false;
  bool anonymous_winreg = false;
};

LogonPolicy logon_policy(const SmbHost& h, const SmbServeOptions& o) {
  const windows::OsProfile* os = h.host->options().identity.os;  // resolved once (replayer/host.h)
  LogonPolicy p;
  if (os) p = {os->accepts_ntlmv1, os->guest_enabled, os->anonymous_winreg};
  p.guest = o.anonymous && (p.guest || o.guest);
  p.anonymous_winreg = o.anonymous && (p.anonymous_winreg || o.anonymous_winreg);
  return p;
}

// A null session (no account) as opposed to a guest one: Samba names it ANONYMOUS LOGON.
bool null_session(const npa::Request& req) {
  return !req.authenticated && (req.account_name.empty() || lower(req.account_name) == "anonymous logon");
}

// Per address: a factory for each winreg::Access an account may get.
struct Route {
  std::string name;
  std::shared_ptr<HandlerFactory> allowed, registry_only, refused;
  std::vector<std::string> allow;  // lower case
  LogonPolicy logon;
  std::shared_ptr<replayer::SimulatedHost> host;
  // pipe-not-available-first: the quirks version whose first open was refused. Each version that
  // has the quirk (the host's first, or one the admin API puts) refuses one open; versions live
  // as long as the host, so their addresses are never reused.
  std::shared_ptr<std::atomic<const replayer::Quirks*>> refused_for;
};

PipeRouter make_router(const std::vector<SmbHost>& hosts, const SmbServeOptions& o) {
  const std::shared_ptr<journal::Recorder>& recorder = o.recorder;
  rpc::AssociationConfig ac;
  ac.auth = o.auth;
  ac.secondary_address = "\\PIPE\\winreg";
  auto routes = std::make_shared<std::map<std::string, Route>>();
  for (const SmbHost& h : hosts) {
    Route r{h.host->name(),
            std::make_shared<WinregHandlerFactory>(h.host, ac, winreg::Access::kPerfData),
            std::make_shared<WinregHandlerFactory>(h.host, ac, winreg::Access::kRegistry),
            std::make_shared<WinregHandlerFactory>(h.host, ac, winreg::Access::kNone),
            {},
            logon_policy(h, o),
            h.host,
            std::make_shared<std::atomic<const replayer::Quirks*>>(nullptr)};
    if (recorder) {
      for (auto* f : {&r.allowed, &r.registry_only, &r.refused})
        static_cast<WinregHandlerFactory&>(**f).observe(recorder, journal::Transport::kSmb);
    }
    for (const std::string& a : h.allow) r.allow.push_back(lower(a));
    routes->emplace(h.address, std::move(r));
  }
  const std::string first = hosts.front().address;
  return [routes, first](const npa::Request& req) {
    PipeRoute out;
    // Samba's own services open winreg over ncalrpc with no client address: the first host.
    auto it = routes->find(req.transport == npa::kTransportNcalrpc ? first : req.local_server_addr);
    if (it == routes->end()) return out;  // refused: STATUS_OBJECT_NAME_NOT_FOUND
    const Route& r = it->second;
    out.name = r.name;
    // pipe-not-available-first: Windows fails the first open with STATUS_PIPE_NOT_AVAILABLE.
    // smbd does not pass an NPA refusal on: the client's open succeeds and its bind then fails
    // with STATUS_CONNECTION_DISCONNECTED, the closest smbd allows (server/README.md).
    const replayer::Quirks& q = r.host->quirks();
    if (req.transport != npa::kTransportNcalrpc && q.pipe_not_available_first && r.refused_for->exchange(&q) != &q) {
      out.status = 0xC00000AC;
      return out;
    }
    // Windows refuses a null session's open of \PIPE\winreg (STATUS_ACCESS_DENIED) and a guest's
    // logon; smbd cannot fail the open with a status (above), so the pipe refuses every open of a
    // hive or perf key (WERR_ACCESS_DENIED). An account outside the allow list is no Performance
    // Monitor User: its perf keys are refused, its hives served (server/README.md).
    const bool unauthenticated_ok = null_session(req) ? r.logon.anonymous_winreg : r.logon.guest;
    if (!req.authenticated && !unauthenticated_ok) {
      out.factory = r.refused;
      return out;
    }
    const bool allowed =
        r.allow.empty() || std::find(r.allow.begin(), r.allow.end(), lower(req.account_name)) != r.allow.end();
    out.factory = allowed ? r.allowed : r.registry_only;
    return out;
  };
}

// The host as srvsvc/wkssvc report it: its name and its Windows (windows/os.h; a capture of no
// known OS reports 10.0, like the SMB dialects' default).
netapi::HostIdentity identity_of(const replayer::SimulatedHost& host) {
  netapi::HostIdentity id;
  id.name = utf8_to_utf16(host.netbios_name());
  if (const windows::OsProfile* os = host.options().identity.os) {
    id.major = os->major;
    id.minor = os->minor;
    id.server = os->name != "xp";  // every other row is a server edition (or NT 4.0 Server)
  }
  return id;
}

// \PIPE\srvsvc and \PIPE\wkssvc: one factory per address; Samba's own ncalrpc opens (none
// expected) go to the first host.
PipeRouter make_netapi_router(const std::vector<SmbHost>& hosts, netapi::Pipe pipe) {
  auto routes = std::make_shared<std::map<std::string, PipeRoute>>();
  for (const SmbHost& h : hosts)
    routes->emplace(h.address,
                    PipeRoute{std::make_shared<NetapiHandlerFactory>(pipe, identity_of(*h.host)), 0, h.host->name()});
  const std::string first = hosts.front().address;
  return [routes, first](const npa::Request& req) {
    auto it = routes->find(req.transport == npa::kTransportNcalrpc ? first : req.local_server_addr);
    return it == routes->end() ? PipeRoute{} : it->second;
  };
}

}  // namespace

Status prepare_smb(const SmbServeOptions& o, std::vector<SmbHost> hosts, ServerConfig& cfg, SmbSetup& smb) {
  SmbdConfig sc;
  if (Status st = parse_port(o.port, sc.port); !st.ok()) return st;
  // One host per address over SMB: smbd tells which address a client reached, not which port.
  std::vector<SmbHost> unique;
  for (SmbHost& h : hosts) {
    if (std::any_of(unique.begin(), unique.end(), [&](const SmbHost& u) { return u.address == h.address; })) continue;
    if (!o.allow.empty() && h.allow.empty()) h.allow = o.allow;
    unique.push_back(std::move(h));
  }
  for (const SmbHost& h : unique) {
    SmbHostAddress a{h.address, {}, h.host->netbios_name(), false};
    if (Status st = parse_dialects(h, a.dialects); !st.ok()) return st;
    const LogonPolicy p = logon_policy(h, o);
    a.ntlmv1 = p.ntlmv1;
    a.guest = p.guest;
    sc.hosts.push_back(a);
  }
  for (const std::string& u : o.users) {
    const size_t colon = u.find(':');
    if (colon == std::string::npos || colon == 0)
      return Status::InvalidArgument("--smb-user '" + u + "': expected NAME:PASSWORD");
    sc.users.push_back({u.substr(0, colon), u.substr(colon + 1)});
  }
  sc.one_socket = sc.hosts.size() > kSmbSocketsPerAddressMax;
  sc.clients = o.clients;
  sc.anonymous = o.anonymous;
  sc.require_encryption = o.require_encryption;
  // A child per SMB connection, each pipe open a perfsim connection: more children than perfsim
  // serves connections would only hold memory (a few more for smbd's own helpers).
  sc.max_processes = cfg.max_connections + 8;
  sc.dir = o.dir.empty()
               ? (std::filesystem::temp_directory_path() / ("perfsim-smb-" + std::to_string(::getpid()))).string()
               : o.dir;
  sc.log = cfg.log ? cfg.log : stderr_log_sink();
  smb.smbd = std::make_unique<Smbd>(sc);
  if (Status st = smb.smbd->prepare(); !st.ok()) {
    smb.smbd.reset();
    return st;
  }
  PipeListenerConfig pc;
  pc.socket_path = smb.smbd->winreg_socket();
  pc.router = make_router(unique, o);
  cfg.extra_listeners.push_back(std::make_shared<PipeListener>(pc));
  for (auto [name, pipe] : {std::pair{"srvsvc", netapi::Pipe::kSrvsvc}, std::pair{"wkssvc", netapi::Pipe::kWkssvc}}) {
    PipeListenerConfig np;
    np.socket_path = (std::filesystem::path(pc.socket_path).parent_path() / name).string();
    np.router = make_netapi_router(unique, pipe);
    cfg.extra_listeners.push_back(std::make_shared<PipeListener>(np));
  }
  smb.port = sc.port;
  smb.hosts = std::move(unique);
  return Status::Ok();
}

}  // namespace perfsim::server
