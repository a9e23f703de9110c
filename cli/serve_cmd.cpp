// `perfsim serve`: turns the options into host descriptions (replayer/fleet_file.h), makes the
// hosts (replayer/serve_hosts.h), and runs the server with its listeners (server/).
#include <fmt/core.h>

#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "admin/server.h"
#include "captures/fingerprint.h"
#include "core/config.h"
#include "core/data_dir.h"
#include "core/json.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "admin/journal_sources.h"
#include "journal/recorder.h"
#include "replayer/fleet_file.h"
#include "replayer/limits.h"
#include "replayer/quirks.h"
#include "replayer/serve_hosts.h"
#include "scenarios/catalog.h"
#include "scenarios/plan.h"
#include "server/epm_handler.h"
#include "server/netns.h"
#include "server/server.h"
#include "server/smb_serve.h"
#include "server/winreg_handler.h"

namespace perfsim::cli {
namespace {

// --idle-timeout: a week at most (std::chrono::milliseconds of it must not overflow).
constexpr config::Bounds kIdleTimeoutS{0, 7 * 86400};

// The scenario's hosts (--listen moves them, in order), the fleet file's, then --listen's (without
// a scenario), each count = N entry expanded. --quirk goes first in a fleet or --listen host's
// quirks, so a fleet host's own [host.quirks] win; it goes after a scenario host's own, so a user
// can tune a scenario (a shorter slow-global).
Status describe_hosts(const ServeOptions& o, const scenarios::ServePlan* plan,
                      std::vector<replayer::FleetHost>& hosts) {
  std::vector<replayer::QuirkSetting> cli_quirks;
  for (const std::string& text : o.quirks)
    if (Status s = replayer::parse_quirk_arg(text, cli_quirks.emplace_back()); !s.ok()) return s;
  if (plan) {
    hosts = plan->hosts;
    for (replayer::FleetHost& h : hosts)
      h.replay.quirks.insert(h.replay.quirks.end(), cli_quirks.begin(), cli_quirks.end());
  }
  const size_t scenario_hosts = hosts.size();
  if (!o.fleet.empty()) {
    std::vector<replayer::FleetHost> fleet;
    if (Status s = replayer::read_fleet(o.fleet, fleet); !s.ok()) return s;
    hosts.insert(hosts.end(), fleet.begin(), fleet.end());
  }
  for (const std::string& l : (plan ? std::vector<std::string>() : o.listen)) {
    const size_t eq = l.find('=');
    replayer::FleetHost& h = hosts.emplace_back();
    h.listen = l.substr(0, eq);
    if (eq != std::string::npos) h.capture = l.substr(eq + 1);
  }
  if (hosts.empty()) hosts.emplace_back().listen = "127.0.0.1:0";
  for (size_t i = scenario_hosts; i < hosts.size(); ++i)
    hosts[i].replay.quirks.insert(hosts[i].replay.quirks.begin(), cli_quirks.begin(), cli_quirks.end());
  for (replayer::FleetHost& h : hosts)
    if (!h.replay.speed && o.speed) h.replay.speed = o.speed;  // a fleet entry's own speed wins
  replayer::expand_fleet(hosts);
  if (!o.shard.empty()) {
    uint32_t k = 0, n = 1;
    if (Status s = replayer::parse_shard(o.shard, k, n); !s.ok()) return s;
    replayer::keep_shard(hosts, k, n);
    if (hosts.empty())
      return Status::InvalidArgument("--shard " + o.shard +
                                     ": this shard holds none of the fleet's hosts (fewer "
                                     "hosts than shards); use a smaller N");
  }
  return Status::Ok();
}

// --speed: the fleet file's `speed` for every host; --idle-timeout: how long a silent connection
// lives (and so how long a fault's latency may be). Refused before anything is made.
Status check_numbers(const ServeOptions& o) {
  if (o.speed)
    if (Status s = config::check_bounds(fmt::format("--speed {}", *o.speed), *o.speed, replayer::limits::kSpeed,
                                        replayer::limits::kSpeedUnit);
        !s.ok())
      return Status::InvalidArgument(s.message() + ", e.g. --speed 10 plays a 15 s sample interval every 1.5 s");
  if (Status s = config::check_bounds(fmt::format("--idle-timeout {}", o.idle_timeout_s), o.idle_timeout_s,
                                      kIdleTimeoutS, " (seconds; 0: never)");
      !s.ok())
    return Status::InvalidArgument(s.message() + ", e.g. --idle-timeout 300");
  return Status::Ok();
}

// One --journal-* number: a whole number within `b`, else a usage error saying what to write.
Status journal_number(const char* flag, const std::string& text, config::Bounds b, const char* unit, uint64_t& out) {
  if (text.empty()) return Status::Ok();  // the default stands
  uint64_t v = 0;
  if (!config::parse_uint(text, flag, v).ok() || !config::within(double(v), b))
    return Status::InvalidArgument(
        fmt::format("{} {}: must be a whole number between {} and {}{}; e.g. {} {} (the default)", flag, text, b.lo,
                    b.hi, unit, flag, out));
  out = v;
  return Status::Ok();
}

// --journal-max-mb and --journal-files: the journal file's size cap and rotation.
Status journal_limits(const ServeOptions& o, journal::FileLimits& out) {
  uint64_t mb = journal::FileLimits::kDefaultMaxMib, files = journal::FileLimits::kDefaultFiles;
  Status s = journal_number("--journal-max-mb", o.journal_max_mb, {1, 65536}, " (MiB per file)", mb);
  if (s.ok())
    s = journal_number("--journal-files", o.journal_files, {1, journal::FileLimits::kMaxFiles}, " (files kept)", files);
  out.max_bytes = mb << 20;
  out.files = uint32_t(files);
  return s;
}

// A fault's latency may not outlast the connection it holds (server/connection.h's idle timer).
replayer::FaultLimits fault_limits(const ServeOptions& o) {
  return replayer::FaultLimits::for_idle_timeout(o.idle_timeout_s);
}

server::ServerConfig server_config(const ServeOptions& o) {
  server::ServerConfig cfg;
  cfg.threads = o.threads;
  cfg.allow_non_loopback = o.allow_remote || !o.netns.empty();  // a namespace of its own is private
  cfg.max_connections = o.max_connections;
  cfg.idle_timeout = std::chrono::milliseconds(int64_t(o.idle_timeout_s * 1000));
  cfg.reply_budget = o.reply_budget_mib << 20;
  return cfg;
}

std::vector<std::string> all_users(const ServeOptions& o) {
  std::vector<std::string> u = o.users;
  u.insert(u.end(), o.smb_users.begin(), o.smb_users.end());
  return u;
}

server::SmbServeOptions smb_options(const ServeOptions& o, std::shared_ptr<journal::Recorder> recorder,
                                    std::shared_ptr<const rpc::AuthService> auth) {
  server::SmbServeOptions s;
  s.port = o.smb;
  s.users = all_users(o);
  s.allow = o.smb_allow;
  s.anonymous = !o.smb_no_anonymous;
  s.require_encryption = o.smb_encrypt;
  s.dir = o.smb_dir;
  s.recorder = std::move(recorder);
  s.auth = std::move(auth);
  // Loopback clients only, as the listeners, unless --allow-remote (a fleet for other machines);
  // in a namespace, the clients of its subnet.
  if (!o.netns.empty())
    s.clients = {o.subnet};
  else if (!o.allow_remote)
    s.clients = {"127.0.0.0/8"};
  else
    s.clients.clear();
  return s;
}

// The accounts authenticated DCE/RPC binds are checked against (none: such binds get bind_nak).
Status make_auth(const ServeOptions& o, std::shared_ptr<const rpc::AuthService>& out) {
  std::vector<rpc::Account> accounts;
  for (const std::string& u : all_users(o))
    if (Status s = rpc::parse_account(u, accounts.emplace_back()); !s.ok())
      return Status::InvalidArgument("--user: " + s.message());
  if (accounts.empty()) {
    if (o.require_auth) return Status::InvalidArgument("--require-auth needs at least one --user NAME:PASSWORD");
    return Status::Ok();
  }
  return rpc::AuthService::create(accounts, out);
}

struct Hosts {
  std::vector<std::shared_ptr<replayer::SimulatedHost>> all;
  std::vector<server::SmbHost> smb;
  std::vector<admin::AdminHost> admin;  // one per host in `all`, addresses filled once bound
};

// What PUT /api/hosts/NAME/quirks starts from: the host's quirks without explicit settings.
admin::AdminHost admin_host(const ServeOptions& o, const replayer::FleetHost& s,
                            const std::shared_ptr<replayer::SimulatedHost>& host) {
  admin::AdminHost a;
  a.host = host;
  a.profile = s.replay.profile.empty() ? o.profile : s.replay.profile;
  if (captures::Fingerprint fp; a.profile.empty() && captures::from_json(host->capture().fingerprint_json, fp).ok())
    a.profile = fp.profile.value_or("");  // the capture's own, when nothing overrides it
  replayer::HostReplay base = s.replay;
  base.quirks.clear();
  replayer::HostOptions opt;
  if (!replayer::host_options(base, o.profile, host->capture(), opt).ok()) opt.quirks = host->quirks();
  a.base_quirks = opt.quirks;
  return a;
}

// Hosts are made once per capture file, timeline and replay settings, and shared by the listeners
// naming them. Returns the exit code: usage errors are the options' fault.
int make_hosts(const ServeOptions& o, std::vector<replayer::FleetHost>& specs, server::ServerConfig& cfg,
               const std::shared_ptr<journal::Recorder>& recorder, const rpc::AssociationConfig& assoc,
               scenarios::ServePlan* plan, Hosts& out) {
  replayer::RecordingCache cache(o.cache_mb << 20);
  if (plan)
    for (auto& [key, cap] : plan->captures)
      if (Status st = cache.add(key, std::move(cap)); !st.ok()) return fail("serve", "--scenario: " + st.message());
  size_t warned = 0;  // the reader's warnings already printed
  std::map<std::string, std::shared_ptr<server::WinregHandlerFactory>> factories;
  for (replayer::FleetHost& s : specs) {
    std::string addr;
    uint16_t port = 0;
    if (Status st = server::parse_listen_address(s.listen, o.allow_remote || !o.netns.empty(), addr, port); !st.ok())
      return fail("serve", fmt::format("--listen {}: {}", s.listen, st.message()), kExitUsage);
    if (s.capture.empty()) s.capture = o.capture.empty() ? bundled_default_capture() : o.capture;
    if (s.timeline.empty()) s.timeline = o.timeline;
    replayer::HostOptions hopt;
    if (Status st = replayer::parse_timeline(s.timeline, hopt); !st.ok())
      return fail("serve", st.message(), kExitUsage);
    const std::string key = s.capture + "|" + s.timeline + "|" + s.replay.key() + "|" + std::to_string(s.fleet_index);
    if (!factories.count(key)) {
      std::shared_ptr<replayer::SimulatedHost> host;
      Status st = replayer::make_replayed_host(cache, s.capture, s.replay, s.fleet_index, o.profile, hopt, host);
      for (; warned < cache.warnings().size(); ++warned)
        fmt::print(stderr, "perfsim serve: {}\n", cache.warnings()[warned]);
      if (!st.ok()) return fail("serve", st.message());
      const rpc::AssociationConfig tcp = server::tcp_association(assoc, *host);
      if (tcp.require_auth && !assoc.require_auth)
        fmt::print(stderr,
                   "perfsim serve: {} refuses unauthenticated calls over TCP, as its Windows did by default "
                   "(restrict-remote-clients){}\n",
                   host->name(), assoc.auth ? "" : "; no --user is given, so no TCP client can call it");
      factories[key] = std::make_shared<server::WinregHandlerFactory>(host, assoc);
      factories[key]->serve_tcp();
      factories[key]->observe(recorder, journal::Transport::kTcp);
      out.all.push_back(host);
      out.admin.push_back(admin_host(o, s, host));
    }
    cfg.listeners.push_back({s.listen, std::string(), factories[key]});
    out.smb.push_back({addr, factories[key]->host(), s.smb_allow, s.smb_dialects});
  }
  return kExitOk;
}

void print_listening(const ServeOptions& o, const server::Server& srv, const server::ServerConfig& cfg,
                     const std::vector<replayer::FleetHost>& specs) {
  for (size_t i = 0; i < specs.size() && i < srv.bound().size(); ++i) {
    const server::BoundListener& b = srv.bound()[i];
    const auto& f = static_cast<server::WinregHandlerFactory&>(*cfg.listeners[i].factory);
    const std::string ep = b.address.find(':') != std::string::npos ? fmt::format("[{}]:{}", b.address, b.port)
                                                                    : fmt::format("{}:{}", b.address, b.port);
    if (o.json) {
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "listening"},
                                                   {"address", b.address},
                                                   {"port", b.port},
                                                   {"endpoint", ep},
                                                   {"host", f.host()->name()},
                                                   {"capture", specs[i].capture},
                                                   {"timeline", specs[i].timeline}})));
    } else {
      fmt::print("perfsim serve: host {} listening on {} (ncacn_ip_tcp:{}[{}]) from {}\n", f.host()->name(), ep,
                 b.address, b.port, specs[i].capture);
    }
  }
}

// --list-hosts: what this run (or shard) would serve, in the fleet's expanded order.
void print_hosts(const ServeOptions& o, const std::vector<replayer::FleetHost>& specs, const Hosts& hosts) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& name = hosts.smb[i].host->name();
    if (o.json)
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "host"},
                                                   {"host", name},
                                                   {"listen", specs[i].listen},
                                                   {"address", hosts.smb[i].address},
                                                   {"capture", specs[i].capture},
                                                   {"fleet_index", specs[i].fleet_index}})));
    else
      fmt::print("{} {} {}\n", name, specs[i].listen, specs[i].capture);
  }
}

void print_epm(const ServeOptions& o, const server::EpmSetup& epm) {
  for (const std::string& a : epm.addresses) {
    if (o.json)
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "epm"}, {"address", a}, {"port", epm.port}})));
    else
      fmt::print("perfsim serve: endpoint mapper on {}:{} (ncacn_ip_tcp:{} finds winreg)\n", a, epm.port, a);
  }
}

void print_smb(const ServeOptions& o, const server::SmbSetup& smb) {
  for (const server::SmbHost& h : smb.hosts) {
    if (o.json) {
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "smb"},
                                                   {"address", h.address},
                                                   {"port", smb.port},
                                                   {"pipe", fmt::format("\\\\{}\\PIPE\\winreg", h.address)},
                                                   {"host", h.host->name()}})));
    } else {
      fmt::print("perfsim serve: host {} on SMB {}:{} (ncacn_np:{}[\\pipe\\winreg]) through smbd pid {}\n",
                 h.host->name(), h.address, smb.port, h.address, smb.smbd->smbd_pid());
    }
  }
}

}  // namespace

std::string bundled_default_capture() {
  return data_dir("captures", PERFSIM_BUNDLED_CAPTURES_DIR) + "/default-2016.perfcap";
}

// The admin server over the bound hosts; its address was checked before anything was made.
// A host's addresses are endpoints `perfsim query` takes: ADDR:PORT over TCP, smb:ADDR:PORT.
Status start_admin(const ServeOptions& o, const server::Server& srv, const server::ServerConfig& cfg, Hosts& hosts,
                   const server::SmbSetup& smb, std::shared_ptr<journal::Recorder> recorder,
                   std::unique_ptr<admin::AdminServer>& out) {
  auto add = [&](const std::shared_ptr<replayer::SimulatedHost>& host, const std::string& endpoint) {
    for (admin::AdminHost& a : hosts.admin)
      if (a.host == host) a.addresses.push_back(endpoint);
  };
  for (size_t i = 0; i < srv.bound().size(); ++i) {
    const auto& f = static_cast<server::WinregHandlerFactory&>(*cfg.listeners[i].factory);
    add(f.host(), fmt::format("{}:{}", srv.bound()[i].address, srv.bound()[i].port));
  }
  if (smb.smbd)
    for (const server::SmbHost& h : smb.hosts) add(h.host, fmt::format("smb:{}:{}", h.address, smb.port));
  auto api =
      std::make_shared<admin::AdminApi>(hosts.admin, admin::journal_sources(std::move(recorder)),
                                        admin::WebFiles{data_dir("web", PERFSIM_ADMIN_WEB_DIR)}, fault_limits(o));
  admin::AdminConfig admin_cfg;
  admin_cfg.listen = o.admin;
  admin_cfg.allow_remote = o.allow_remote;
  admin_cfg.hosts = o.admin_hosts;
  out = std::make_unique<admin::AdminServer>(std::move(admin_cfg), api);
  if (Status st = out->start(); !st.ok()) return st;
  const std::string url = out->address().find(':') != std::string::npos
                              ? fmt::format("http://[{}]:{}/", out->address(), out->port())
                              : fmt::format("http://{}:{}/", out->address(), out->port());
  if (o.json)
    fmt::print("{}\n", json_text(nlohmann::json(
                           {{"event", "admin"}, {"address", out->address()}, {"port", out->port()}, {"url", url}})));
  else
    fmt::print("perfsim serve: admin API and dashboard on {}\n", url);
  return Status::Ok();
}

namespace {

// --admin-host: each a name or address without a port, and only beside --admin.
Status check_admin_hosts(const ServeOptions& o) {
  if (!o.admin_hosts.empty() && o.admin.empty())
    return Status::InvalidArgument("--admin-host names a host of the admin API: give --admin ADDR:PORT too");
  for (const std::string& h : o.admin_hosts) {
    std::string unused;
    if (Status s = admin::parse_admin_host(h, unused); !s.ok())
      return Status::InvalidArgument("--admin-host " + s.message());
  }
  return Status::Ok();
}

}  // namespace

int run_serve(const ServeOptions& o) {
  std::vector<replayer::FleetHost> specs;
  if (!o.admin.empty()) {
    std::string addr;
    uint16_t port = 0;
    if (Status s = server::parse_listen_address(o.admin, o.allow_remote, addr, port); !s.ok())
      return fail("serve", "--admin: " + s.message(), kExitUsage);
  }
  if (Status s = check_admin_hosts(o); !s.ok()) return fail("serve", s.message(), kExitUsage);
  if (replayer::Quirks unused; !o.profile.empty()) {
    if (Status s = replayer::profile_quirks(o.profile, unused); !s.ok())
      return fail("serve", "--profile " + o.profile + ": " + s.message(), kExitUsage);
  }
  if (Status s = check_numbers(o); !s.ok()) return fail("serve", s.message(), kExitUsage);
  journal::FileLimits journal_files;
  if (Status s = journal_limits(o, journal_files); !s.ok()) return fail("serve", s.message(), kExitUsage);
  std::unique_ptr<scenarios::ServePlan> plan;
  if (!o.scenario.empty()) {
    scenarios::Scenario sc;
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok())
      return fail("serve", "--scenario: " + s.message(), kExitUsage);
    plan = std::make_unique<scenarios::ServePlan>();
    if (Status s = scenarios::plan_serve(sc, o.listen, *plan, fault_limits(o)); !s.ok())
      return fail("serve", "--scenario: " + s.message(), kExitUsage);
    if (sc.smb && o.smb.empty())
      fmt::print(stderr, "perfsim serve: scenario {} shows its symptom over SMB: add --smb (as root)\n", sc.name);
  }
  if (o.netns.empty() != o.subnet.empty())
    return fail("serve", "--netns NAME and --subnet A.B.C.D/P go together (the namespace's addresses)", kExitUsage);
  if (Status s = describe_hosts(o, plan.get(), specs); !s.ok()) return fail("serve", s.message(), kExitUsage);
  // Before the hosts: opening a recording starts its prefetch threads, which must not take SIGHUP.
  if (!o.faults.empty()) replayer::FaultReloader::block_sighup();
  // Before any thread or child: they inherit the namespace the main thread is in.
  server::Netns netns;
  if (!o.netns.empty() && !o.list_hosts) {
    server::NetnsConfig nc{o.netns, o.subnet, o.netns_bridge, {}};
    for (const replayer::FleetHost& h : specs) nc.addresses.push_back(h.listen.substr(0, h.listen.rfind(':')));
    if (Status st = netns.create(nc); !st.ok())
      return fail("serve", "--netns: " + st.message(),
                  st.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  }
  server::ServerConfig cfg = server_config(o);
  // One journal and one set of metrics for the run, fed by every host's handlers (TCP and SMB).
  std::shared_ptr<journal::Recorder> recorder;
  if (Status st = server::make_recorder(o.journal_size, o.journal, recorder, journal_files); !st.ok())
    return fail("serve", "--journal: " + st.message(),
                st.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  std::shared_ptr<const rpc::AuthService> auth;
  if (Status st = make_auth(o, auth); !st.ok())
    return fail("serve", st.message(), st.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  rpc::AssociationConfig assoc;
  assoc.auth = auth;
  assoc.require_auth = o.require_auth;
  Hosts hosts;
  if (int rc = make_hosts(o, specs, cfg, recorder, assoc, plan.get(), hosts); rc != kExitOk) return rc;
  // The scenario's fault plan, unless --faults gives one (which SIGHUP then reloads).
  if (plan && plan->faults && o.faults.empty())
    for (const auto& h : hosts.all) h->set_faults(plan->faults);
  if (o.list_hosts) {
    print_hosts(o, specs, hosts);
    return kExitOk;
  }
  server::EpmSetup epm;
  if (!o.epm.empty()) {
    uint16_t port = 0;
    if (Status st = server::parse_epm_port(o.epm, port); !st.ok()) return fail("serve", st.message(), kExitUsage);
    if (Status st = server::prepare_epm(port, cfg, epm); !st.ok()) return fail("serve", "--epm: " + st.message());
  }
  server::SmbSetup smb;
  if (!o.smb.empty()) {
    if (Status st = server::prepare_smb(smb_options(o, recorder, auth), hosts.smb, cfg, smb); !st.ok())
      return fail("serve", "--smb: " + st.message());
  }
  replayer::FaultReloader faults;
  if (!o.faults.empty()) {
    auto report = [](const std::string& m) { fmt::print(stderr, "perfsim serve: {}\n", m); };
    if (Status st = faults.start(o.faults, hosts.all, report, fault_limits(o)); !st.ok())
      return fail("serve", "--faults: " + st.message(), kExitUsage);
  }
  server::Server srv(cfg);
  if (Status st = srv.start(); !st.ok())
    return fail("serve", st.message() + " (is the port in use? try another --listen port)");
  if (epm.registry) server::register_endpoints(srv.bound(), epm);
  print_listening(o, srv, cfg, specs);
  print_epm(o, epm);
  std::unique_ptr<admin::AdminServer> admin;
  if (!o.admin.empty()) {
    if (Status st = start_admin(o, srv, cfg, hosts, smb, recorder, admin); !st.ok()) return fail("serve", st.message());
  }
  if (smb.smbd) {
    if (Status st = smb.smbd->start(); !st.ok()) return fail("serve", "--smb: " + st.message());
    print_smb(o, smb);
  }
  std::fflush(stdout);
  if (Status st = srv.run(); !st.ok()) return fail("serve", st.message());
  return kExitOk;
}

}  // namespace perfsim::cli
