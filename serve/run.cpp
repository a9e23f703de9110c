// The serve run: what `perfsim serve` did in cli/serve_cmd.cpp, step for step and in the same
// order (the command's output and exit codes depend on it), for every caller.
#include "serve/run.h"

#include <fmt/core.h>

#include <map>
#include <utility>

#include "admin/journal_sources.h"
#include "admin/server.h"
#include "admin/token.h"
#include "core/config.h"
#include "core/data_dir.h"
#include "replayer/fleet_file.h"
#include "replayer/limits.h"
#include "replayer/quirks.h"
#include "replayer/serve_hosts.h"
#include "scenarios/catalog.h"
#include "scenarios/plan.h"
#include "server/epm_handler.h"
#include "server/netns.h"
#include "server/smb_serve.h"
#include "server/winreg_handler.h"

namespace perfsim::serve {

struct ServeRun::State {
  Config cfg;
  Events events;
  std::vector<replayer::FleetHost> specs;  // the Config's own hosts, after the given ones
  std::unique_ptr<scenarios::ServePlan> plan;
  server::Netns netns;
  server::ServerConfig server_cfg;
  std::shared_ptr<journal::Recorder> recorder;
  std::shared_ptr<const rpc::AuthService> auth;
  std::vector<PlannedHost> planned;
  std::vector<std::shared_ptr<replayer::SimulatedHost>> all;  // each made host once
  std::vector<server::SmbHost> smb_hosts;                     // one per listener
  std::vector<admin::AdminHost> admin_hosts;                  // one per host in `all`
  server::EpmSetup epm;
  server::SmbSetup smb;
  std::vector<SmbEndpoint> smb_endpoints;
  replayer::FaultReloader faults;
  std::unique_ptr<server::Server> srv;
  std::unique_ptr<admin::AdminServer> admin;
  std::string admin_token;  // from Config::admin_token_file
  bool admin_token_created = false;

  void notice(const std::string& m) const {
    if (events.notice) events.notice(m);
  }
};

namespace {

using State = ServeRun::State;

Failure usage(const std::string& m) { return {true, true, m}; }
Failure usage(const Status& s) { return usage(s.message()); }
Failure failure(const std::string& m) { return {true, false, m}; }
Failure failure(const Status& s) { return failure(s.message()); }
// The error's own kind decides: a bad value given is the config's fault, anything else the machine's.
Failure by_code(const std::string& m, const Status& s) { return {true, s.code() == Status::Code::kInvalidArgument, m}; }
std::string prefixed(const std::string& prefix, const Status& s) { return prefix + s.message(); }

// --idle-timeout: a week at most (std::chrono::milliseconds of it must not overflow).
constexpr config::Bounds kIdleTimeoutS{0, 7 * 86400};

// The scenario's hosts (--listen moves them, in order), the fleet file's, then --listen's (without
// a scenario), each count = N entry expanded. --quirk goes first in a fleet or --listen host's
// quirks, so a fleet host's own [host.quirks] win; it goes after a scenario host's own, so a user
// can tune a scenario (a shorter slow-global).
Status describe_hosts(const Config& o, const scenarios::ServePlan* plan, std::vector<replayer::FleetHost>& hosts) {
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
  if (hosts.empty() && o.given.empty()) hosts.emplace_back().listen = "127.0.0.1:0";
  for (size_t i = scenario_hosts; i < hosts.size(); ++i)
    hosts[i].replay.quirks.insert(hosts[i].replay.quirks.begin(), cli_quirks.begin(), cli_quirks.end());
  replayer::Between between = replayer::Between::kInterpolate;
  if (!o.between.empty())
    if (Status s = replayer::parse_between(o.between, between); !s.ok())
      return Status::InvalidArgument("--between " + o.between + ": " + s.message());
  for (replayer::FleetHost& h : hosts) {
    if (!h.replay.speed && o.speed) h.replay.speed = o.speed;                 // a fleet entry's own speed wins
    if (!h.replay.between && !o.between.empty()) h.replay.between = between;  // and its own between
  }
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
Status check_numbers(const Config& o) {
  if (o.speed)
    if (Status s = config::check_bounds(fmt::format("--speed {}", *o.speed), *o.speed, replayer::limits::kSpeed,
                                        replayer::limits::kSpeedUnit);
        !s.ok())
      return Status::InvalidArgument(s.message() + ", e.g. --speed 10 plays a 15 s sample interval every 1.5 s");
  if (Status s = config::check_bounds(fmt::format("--idle-timeout {}", o.idle_timeout_s), o.idle_timeout_s,
                                      kIdleTimeoutS, " (seconds; 0: never)");
      !s.ok())
    return Status::InvalidArgument(s.message() + ", e.g. --idle-timeout 300");
  if (Status s = config::check_bounds(fmt::format("--auth-timeout {}", o.auth_timeout_s), o.auth_timeout_s,
                                      kIdleTimeoutS, " (seconds; 0: never)");
      !s.ok())
    return Status::InvalidArgument(s.message() + ", e.g. --auth-timeout 10");
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
Status journal_limits(const Config& o, journal::FileLimits& out) {
  uint64_t mb = journal::FileLimits::kDefaultMaxMib, files = journal::FileLimits::kDefaultFiles;
  Status s = journal_number("--journal-max-mb", o.journal_max_mb, {1, 65536}, " (MiB per file)", mb);
  if (s.ok())
    s = journal_number("--journal-files", o.journal_files, {1, journal::FileLimits::kMaxFiles}, " (files kept)", files);
  out.max_bytes = mb << 20;
  out.files = uint32_t(files);
  return s;
}

// A fault's latency may not outlast the connection it holds (server/connection.h's idle timer).
replayer::FaultLimits fault_limits(const Config& o) {
  return replayer::FaultLimits::for_idle_timeout(o.idle_timeout ? double(o.idle_timeout->count()) / 1000
                                                                : o.idle_timeout_s);
}

server::ServerConfig server_config(const Config& o) {
  server::ServerConfig cfg;
  cfg.threads = o.threads;
  cfg.allow_non_loopback = o.allow_remote || !o.netns.empty();  // a namespace of its own is private
  cfg.max_connections = o.max_connections;
  cfg.idle_timeout = o.idle_timeout ? *o.idle_timeout : std::chrono::milliseconds(int64_t(o.idle_timeout_s * 1000));
  cfg.auth_timeout = std::chrono::milliseconds(int64_t(o.auth_timeout_s * 1000));
  cfg.max_pdu_size = o.max_pdu_size;
  cfg.reply_budget = o.reply_budget_mib << 20;
  cfg.handle_signals = o.handle_signals;
  cfg.log = o.log;
  return cfg;
}

server::SmbServeOptions smb_options(const Config& o, std::shared_ptr<journal::Recorder> recorder,
                                    std::shared_ptr<const rpc::AuthService> auth) {
  server::SmbServeOptions s;
  s.port = o.smb;
  s.users = o.users;
  s.allow = o.smb_allow;
  s.anonymous = !o.smb_no_anonymous;
  s.guest = o.smb_guest;
  s.anonymous_winreg = o.smb_anonymous_winreg;
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
Status make_auth(const Config& o, std::shared_ptr<const rpc::AuthService>& out) {
  std::vector<rpc::Account> accounts;
  for (const std::string& u : o.users)
    if (Status s = rpc::parse_account(u, accounts.emplace_back()); !s.ok())
      return Status::InvalidArgument("--user: " + s.message());
  if (accounts.empty()) {
    if (o.require_auth) return Status::InvalidArgument("--require-auth needs at least one --user NAME:PASSWORD");
    return Status::Ok();
  }
  return rpc::AuthService::create(accounts, out);
}

// The admin API's view of a host: its identity as resolved when it was made (PUT
// /api/hosts/NAME/quirks starts from its base quirks).
admin::AdminHost admin_host(const std::shared_ptr<replayer::SimulatedHost>& host) {
  const replayer::HostIdentity& id = host->options().identity;
  return {std::string(), host, {}, id.quirk_profile, id.base_quirks};
}

// --admin-host: each a name or address without a port, and only beside --admin.
Status check_admin_hosts(const Config& o) {
  if (!o.admin_hosts.empty() && o.admin.empty())
    return Status::InvalidArgument("--admin-host names a host of the admin API: give --admin ADDR:PORT too");
  if (!o.admin_token_file.empty() && o.admin.empty())
    return Status::InvalidArgument("--admin-token-file guards the admin API: give --admin ADDR:PORT too");
  for (const std::string& h : o.admin_hosts) {
    std::string unused;
    if (Status s = admin::parse_admin_host(h, unused); !s.ok())
      return Status::InvalidArgument("--admin-host " + s.message());
  }
  return Status::Ok();
}

// Everything refused before anything is made.
Failure check_config(const Config& o) {
  if (!o.admin.empty()) {
    std::string addr;
    uint16_t port = 0;
    if (Status s = server::parse_listen_address(o.admin, o.allow_remote, addr, port); !s.ok())
      return usage(prefixed("--admin: ", s));
  }
  if (Status s = check_admin_hosts(o); !s.ok()) return usage(s);
  if (o.metrics_per_host != "auto" && o.metrics_per_host != "on" && o.metrics_per_host != "off")
    return usage("--metrics-per-host " + o.metrics_per_host + ": write auto, on or off");
  if (replayer::Quirks unused; !o.profile.empty()) {
    if (Status s = replayer::profile_quirks(o.profile, unused); !s.ok())
      return usage(prefixed("--profile " + o.profile + ": ", s));
  }
  if (Status s = check_numbers(o); !s.ok()) return usage(s);
  return {};
}

// The given hosts first: served as made, on their own listeners.
Failure add_given(State& st, const rpc::AssociationConfig& assoc) {
  for (const GivenHost& g : st.cfg.given) {
    std::string addr;
    uint16_t port = 0;
    if (Status s = server::parse_listen_address(g.listen, st.cfg.allow_remote || !st.cfg.netns.empty(), addr, port);
        !s.ok())
      return usage(prefixed(fmt::format("--listen {}: ", g.listen), s));
    auto factory = std::make_shared<server::WinregHandlerFactory>(g.host, assoc);
    factory->serve_tcp();
    if (st.recorder) factory->observe(st.recorder, journal::Transport::kTcp);
    st.all.push_back(g.host);
    st.admin_hosts.push_back(admin_host(g.host));
    st.server_cfg.listeners.push_back({g.listen, g.name, factory});
    st.smb_hosts.push_back({addr, g.host, {}, {}});
    st.planned.push_back({g.host->name(), g.listen, addr, std::string(), std::string(), 0, g.host});
  }
  return {};
}

// Hosts are made once per capture file, timeline and replay settings, and shared by the listeners
// naming them.
Failure make_hosts(State& st, const rpc::AssociationConfig& assoc) {
  const Config& o = st.cfg;
  replayer::RecordingCache cache(o.cache_mb << 20);
  if (st.plan)
    for (auto& [key, cap] : st.plan->captures)
      if (Status s = cache.add(key, std::move(cap)); !s.ok()) return failure(prefixed("--scenario: ", s));
  size_t warned = 0;  // the reader's warnings already reported
  std::map<std::string, std::shared_ptr<server::WinregHandlerFactory>> factories;
  for (replayer::FleetHost& s : st.specs) {
    std::string addr;
    uint16_t port = 0;
    if (Status e = server::parse_listen_address(s.listen, o.allow_remote || !o.netns.empty(), addr, port); !e.ok())
      return usage(prefixed(fmt::format("--listen {}: ", s.listen), e));
    if (s.capture.empty()) s.capture = o.capture.empty() ? bundled_default_capture() : o.capture;
    if (s.timeline.empty()) s.timeline = o.timeline;
    replayer::HostOptions hopt;
    if (Status e = replayer::parse_timeline(s.timeline, hopt); !e.ok()) return usage(e);
    const std::string key = s.capture + "|" + s.timeline + "|" + s.replay.key() + "|" + std::to_string(s.fleet_index);
    if (!factories.count(key)) {
      std::shared_ptr<replayer::SimulatedHost> host;
      Status e = replayer::make_replayed_host(cache, s.capture, s.replay, s.fleet_index, o.profile, hopt, host);
      for (; warned < cache.warnings().size(); ++warned) st.notice(cache.warnings()[warned]);
      if (!e.ok()) return failure(e);
      const rpc::AssociationConfig tcp = server::tcp_association(assoc, *host);
      if (tcp.require_auth && !assoc.require_auth)
        st.notice(
            fmt::format("{} refuses unauthenticated calls over TCP, as its Windows did by default "
                        "(restrict-remote-clients){}",
                        host->name(), assoc.auth ? "" : "; no --user is given, so no TCP client can call it"));
      factories[key] = std::make_shared<server::WinregHandlerFactory>(host, assoc);
      factories[key]->serve_tcp();
      if (st.recorder) factories[key]->observe(st.recorder, journal::Transport::kTcp);
      st.all.push_back(host);
      st.admin_hosts.push_back(admin_host(host));
    }
    const auto& host = factories[key]->host();
    st.server_cfg.listeners.push_back({s.listen, std::string(), factories[key]});
    st.smb_hosts.push_back({addr, host, s.smb_allow, s.smb_dialects});
    st.planned.push_back({host->name(), s.listen, addr, s.capture, s.timeline, s.fleet_index, host});
  }
  return {};
}

bool metrics_per_host(const std::string& mode, size_t hosts) {
  return mode == "on" || (mode == "auto" && hosts <= journal::kPerHostMetricsUpTo);
}

// What the server itself counts, for /metrics: connections open now, refused at
// --max-connections, and closed to make room because they had not authenticated (issue 54; a
// refusal was visible in the log only).
std::string server_metrics(const server::Server& srv) {
  const server::Server::AdmissionStats a = srv.admission_stats();
  return fmt::format(
      "# HELP perfsim_connections_open Connections open now (TCP and SMB pipes), of --max-connections.\n"
      "# TYPE perfsim_connections_open gauge\nperfsim_connections_open {}\n"
      "# HELP perfsim_connections_refused_total Connections closed at accept because every slot was held (by "
      "authenticated connections, where authentication is required).\n"
      "# TYPE perfsim_connections_refused_total counter\nperfsim_connections_refused_total {}\n"
      "# HELP perfsim_connections_evicted_total Connections closed to make room for a new one because they had not "
      "authenticated where authentication is required.\n"
      "# TYPE perfsim_connections_evicted_total counter\nperfsim_connections_evicted_total {}\n",
      srv.active_connections(), a.refused, a.evicted);
}

// The admin server over the bound hosts; its address was checked before anything was made.
// A host's addresses are endpoints `perfsim query` takes: ADDR:PORT over TCP, smb:ADDR:PORT.
Status start_admin(State& st) {
  auto add = [&](const std::shared_ptr<replayer::SimulatedHost>& host, const std::string& endpoint) {
    for (admin::AdminHost& a : st.admin_hosts)
      if (a.host == host) a.addresses.push_back(endpoint);
  };
  for (size_t i = 0; i < st.srv->bound().size(); ++i)
    add(st.planned[i].host, fmt::format("{}:{}", st.srv->bound()[i].address, st.srv->bound()[i].port));
  if (st.smb.smbd)
    for (const server::SmbHost& h : st.smb.hosts) add(h.host, fmt::format("smb:{}:{}", h.address, st.smb.port));
  admin::AdminSources sources = admin::journal_sources(st.recorder);
  if (server::Smbd* smbd = st.smb.smbd.get())
    sources.smbd_pid = [smbd] { return smbd->smbd_pid(); };                             // admin stops first
  sources.server_metrics_text = [srv = st.srv.get()] { return server_metrics(*srv); };  // admin stops first
  auto api =
      std::make_shared<admin::AdminApi>(st.admin_hosts, std::move(sources),
                                        admin::WebFiles{data_dir("web", PERFSIM_ADMIN_WEB_DIR)}, fault_limits(st.cfg));
  api->set_metrics_per_host(metrics_per_host(st.cfg.metrics_per_host, st.admin_hosts.size()));
  admin::AdminConfig admin_cfg;
  admin_cfg.listen = st.cfg.admin;
  admin_cfg.allow_remote = st.cfg.allow_remote;
  admin_cfg.hosts = st.cfg.admin_hosts;
  admin_cfg.token = st.admin_token;
  st.admin = std::make_unique<admin::AdminServer>(std::move(admin_cfg), api);
  return st.admin->start();
}

}  // namespace

ServeRun::ServeRun() : s_(std::make_unique<State>()) {}
ServeRun::~ServeRun() { stop(); }

Failure ServeRun::prepare(Config cfg, Events events) {
  State& st = *s_;
  st.cfg = std::move(cfg);
  st.events = std::move(events);
  const Config& o = st.cfg;
  if (Failure f = check_config(o); !f.ok()) return f;
  journal::FileLimits journal_files;
  if (Status s = journal_limits(o, journal_files); !s.ok()) return usage(s);
  if (!o.scenario.empty()) {
    scenarios::Scenario sc;
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok()) return usage(prefixed("--scenario: ", s));
    st.plan = std::make_unique<scenarios::ServePlan>();
    if (Status s = scenarios::plan_serve(sc, o.listen, *st.plan, fault_limits(o)); !s.ok())
      return usage(prefixed("--scenario: ", s));
    if (sc.smb && o.smb.empty())
      st.notice(fmt::format("scenario {} shows its symptom over SMB: add --smb (as root)", sc.name));
  }
  if (o.netns.empty() != o.subnet.empty())
    return usage("--netns NAME and --subnet A.B.C.D/P go together (the namespace's addresses)");
  if (Status s = describe_hosts(o, st.plan.get(), st.specs); !s.ok()) return usage(s);
  // Before the hosts: opening a recording starts its prefetch threads, which must not take SIGHUP.
  if (!o.faults.empty()) replayer::FaultReloader::block_sighup();
  // Before any thread or child: they inherit the namespace the main thread is in.
  if (!o.netns.empty() && !o.plan_only) {
    server::NetnsConfig nc{o.netns, o.subnet, o.netns_bridge, {}};
    for (const GivenHost& g : o.given) nc.addresses.push_back(g.listen.substr(0, g.listen.rfind(':')));
    for (const replayer::FleetHost& h : st.specs) nc.addresses.push_back(h.listen.substr(0, h.listen.rfind(':')));
    if (Status s = st.netns.create(nc); !s.ok()) return by_code(prefixed("--netns: ", s), s);
  }
  st.server_cfg = server_config(o);
  // One journal and one set of metrics for the run, fed by every host's handlers (TCP and SMB).
  if (o.recorder) {
    st.recorder = *o.recorder;
  } else if (Status s = server::make_recorder(o.journal_size, o.journal, st.recorder, journal_files); !s.ok()) {
    return by_code(prefixed("--journal: ", s), s);
  }
  if (Status s = make_auth(o, st.auth); !s.ok()) return by_code(s.message(), s);
  rpc::AssociationConfig assoc;
  if (o.association) {
    assoc = *o.association;
  } else {
    assoc.auth = st.auth;
    assoc.require_auth = o.require_auth;
  }
  if (Failure f = add_given(st, assoc); !f.ok()) return f;
  if (Failure f = make_hosts(st, assoc); !f.ok()) return f;
  if (st.recorder && st.recorder->metrics())
    st.recorder->metrics()->set_per_host(metrics_per_host(o.metrics_per_host, st.all.size()));
  // The scenario's fault plan, unless --faults gives one (which SIGHUP then reloads).
  if (st.plan && st.plan->faults && o.faults.empty())
    for (const auto& h : st.all) h->set_faults(st.plan->faults);
  return {};
}

Failure ServeRun::start() {
  State& st = *s_;
  const Config& o = st.cfg;
  if (!o.admin_token_file.empty()) {  // first: a file that must be fixed is the operator's to fix
    if (Status s = admin::load_or_create_token(o.admin_token_file, st.admin_token, st.admin_token_created); !s.ok())
      return usage(s);
  }
  if (!o.epm.empty()) {
    uint16_t port = 0;
    if (Status s = server::parse_epm_port(o.epm, port); !s.ok()) return usage(s);
    if (Status s = server::prepare_epm(port, st.server_cfg, st.epm); !s.ok()) return failure(prefixed("--epm: ", s));
  }
  if (!o.smb.empty()) {
    if (Status s = server::prepare_smb(smb_options(o, st.recorder, st.auth), st.smb_hosts, st.server_cfg, st.smb);
        !s.ok())
      return failure(prefixed("--smb: ", s));
    for (const server::SmbHost& h : st.smb.hosts) st.smb_endpoints.push_back({h.address, h.host});
  }
  if (!o.faults.empty()) {
    const Events& ev = st.events;
    auto report = [&ev](const std::string& m) {
      if (ev.notice) ev.notice(m);
    };
    if (Status s = st.faults.start(o.faults, st.all, report, fault_limits(o)); !s.ok())
      return usage(prefixed("--faults: ", s));
  }
  st.srv = std::make_unique<server::Server>(st.server_cfg);
  if (Status s = st.srv->start(); !s.ok())
    return failure(s.message() + " (is the port in use? try another --listen port)");
  if (st.epm.registry) server::register_endpoints(st.srv->bound(), st.epm);
  if (st.events.tcp_ready) st.events.tcp_ready();
  if (!o.admin.empty()) {
    if (Status s = start_admin(st); !s.ok()) return failure(s);
    if (st.events.admin_ready) st.events.admin_ready();
  }
  if (st.smb.smbd) {
    if (Status s = st.smb.smbd->start(); !s.ok()) return failure(prefixed("--smb: ", s));
    if (st.events.smb_ready) st.events.smb_ready();
  }
  return {};
}

Failure ServeRun::run(Config cfg, Events events) {
  if (Failure f = prepare(std::move(cfg), std::move(events)); !f.ok()) return f;
  return start();
}

Status ServeRun::wait() { return s_->srv ? s_->srv->run() : Status::Ok(); }

void ServeRun::stop() {
  if (s_->admin) s_->admin->stop();
  if (s_->srv) s_->srv->stop();
}

const std::vector<PlannedHost>& ServeRun::hosts() const { return s_->planned; }

std::vector<BoundHost> ServeRun::bound() const {
  std::vector<BoundHost> out;
  if (!s_->srv) return out;
  for (size_t i = 0; i < s_->planned.size() && i < s_->srv->bound().size(); ++i) {
    const server::BoundListener& b = s_->srv->bound()[i];
    const std::string ep = b.address.find(':') != std::string::npos ? fmt::format("[{}]:{}", b.address, b.port)
                                                                    : fmt::format("{}:{}", b.address, b.port);
    out.push_back({b.address, b.port, ep, &s_->planned[i]});
  }
  return out;
}

uint16_t ServeRun::port(size_t i) const { return s_->srv->bound().at(i).port; }
server::Server& ServeRun::server() { return *s_->srv; }
const std::vector<std::string>& ServeRun::epm_addresses() const { return s_->epm.addresses; }
uint16_t ServeRun::epm_port() const { return s_->epm.port; }
std::string ServeRun::admin_address() const { return s_->admin ? s_->admin->address() : std::string(); }
uint16_t ServeRun::admin_port() const { return s_->admin ? s_->admin->port() : 0; }

bool ServeRun::admin_token_created() const { return s_->admin_token_created; }

std::string ServeRun::admin_url() const {
  const std::string a = admin_address();
  return a.find(':') != std::string::npos ? fmt::format("http://[{}]:{}/", a, admin_port())
                                          : fmt::format("http://{}:{}/", a, admin_port());
}

const std::vector<SmbEndpoint>& ServeRun::smb_hosts() const { return s_->smb_endpoints; }
uint16_t ServeRun::smb_port() const { return s_->smb.port; }
int ServeRun::smbd_pid() const { return s_->smb.smbd ? s_->smb.smbd->smbd_pid() : 0; }

std::string bundled_default_capture() {
  return data_dir("captures", PERFSIM_BUNDLED_CAPTURES_DIR) + "/default-2016.perfcap";
}

}  // namespace perfsim::serve
