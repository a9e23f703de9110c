// `perfsim serve`: maps the options onto a serve run (serve/run.h) and prints what it reports.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <arpa/inet.h>

#include <memory>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "journal/journal.h"
#include "replayer/fleet_file.h"
#include "serve/run.h"
#include "server/log.h"
#include "windows/os.h"

namespace perfsim::cli {
namespace {

struct ServeOptions {
  std::vector<std::string> listen;    // "ADDR:PORT" or "ADDR:PORT=SOURCE" (SOURCE: FILE.perfcap)
  std::string capture;                // default source for listeners without one
  std::string fleet;                  // TOML fleet file: [[host]] listen/capture/timeline
  std::string timeline = "realtime";  // realtime | step | frozen:K
  std::string profile;                // quirk bundle for hosts without their own (win2000, 2016, samba, ...)
  std::string faults;                 // TOML fault plan, reloaded on SIGHUP
  std::vector<std::string> quirks;    // NAME[=on|off][:PARAM=VALUE,...] for every host, over profile and fingerprint
  std::optional<double> speed;        // realtime pace of hosts whose fleet entry sets none
  std::string between;                // --between step|interpolate for hosts whose entry sets none
  std::string shard;                  // "K/N": serve every N-th host of the expanded fleet from the K-th
  bool list_hosts = false;            // print the hosts this run would serve, then exit
  std::string netns;                  // serve inside this network namespace (made, joined by a veth pair)
  std::string subnet;                 // --netns: the pair's and the hosts' addresses (A.B.C.D/P)
  std::string netns_bridge;           // --netns: enslave the outer veth end to this bridge
  unsigned threads = 0;
  size_t max_connections = 4096;
  double idle_timeout_s = 300;
  double auth_timeout_s = 10;
  size_t cache_mb = 64;           // decoded samples held for every host (replayer/sample_cache.h)
  size_t reply_budget_mib = 512;  // unread reply bytes of all connections (server/README.md); 0 = none
  bool allow_remote = false;
  bool json = false;                  // the start-up lines as JSON
  std::string log_level = "info";     // --log-level: the server log's lines on stderr at this level and above
  std::string log_format = "logfmt";  // --log-format logfmt|json
  std::string admin;                  // --admin ADDR:PORT: the admin HTTP API and dashboard (admin/README.md); "" = off
  std::vector<std::string> admin_hosts;  // --admin-host NAME: more Host names the admin API answers
  std::string admin_token_file;
  std::string metrics_per_host = "auto";  // --metrics-per-host auto|on|off
  // --smb[=PORT]: every host also as \\ADDR\PIPE\winreg through a private smbd ("" = off,
  // "default" = 445). Root only.
  std::string smb;
  std::vector<std::string> smb_users;  // NAME:PASSWORD (pdbedit; a unix account is made if missing)
  // --user NAME:PASSWORD: the same accounts as --smb-user (both lists are merged): SMB logons and
  // authenticated DCE/RPC binds over TCP and on the pipe (rpc/auth.h).
  std::vector<std::string> users;
  bool require_auth = false;           // unauthenticated TCP binds' calls fault with access denied
  std::vector<std::string> smb_allow;  // accounts allowed OpenHKPD on hosts without smb_allow (empty: all)
  bool smb_no_anonymous = false;
  bool smb_guest = false;
  bool smb_anonymous_winreg = false;
  bool smb_encrypt = false;  // require SMB3 encryption of every SMB session
  std::string smb_dir;       // smbd's private tree (default: $TMPDIR/perfsim-smb-PID)
  // --epm[=PORT]: an endpoint mapper on every host address ("" = off, "default" = 135, root only).
  std::string epm;
  size_t journal_size = 10000;             // winreg calls kept in memory (journal/README.md); 0 = no journal
  std::string journal;                     // also write every call to this JSON-lines file
  std::string journal_max_mb;              // --journal-max-mb N: MiB per file (empty: journal::FileLimits')
  std::string journal_files;               // --journal-files K: FILE, FILE.1 .. FILE.K-1 (empty: the default)
  std::string scenario;                    // --scenario NAME: the scenario's hosts and faults (scenarios/)
  std::vector<std::string> scenario_dirs;  // --scenario-dir: the user's scenario files
};

// The server's log on stderr; both words were checked by CLI11 (IsMember).
server::LogSink log_sink(const ServeOptions& o) {
  server::LogOptions lo;
  (void)server::parse_log_level(o.log_level, lo.level);
  (void)server::parse_log_format(o.log_format, lo.format);
  return server::stderr_log_sink(lo);
}

serve::Config serve_config(const ServeOptions& o) {
  serve::Config c;
  c.listen = o.listen;
  c.capture = o.capture;
  c.fleet = o.fleet;
  c.timeline = o.timeline;
  c.profile = o.profile;
  c.faults = o.faults;
  c.quirks = o.quirks;
  c.speed = o.speed;
  c.between = o.between;
  c.shard = o.shard;
  c.netns = o.netns;
  c.subnet = o.subnet;
  c.netns_bridge = o.netns_bridge;
  c.threads = o.threads;
  c.max_connections = o.max_connections;
  c.idle_timeout_s = o.idle_timeout_s;
  c.auth_timeout_s = o.auth_timeout_s;
  c.cache_mb = o.cache_mb;
  c.reply_budget_mib = o.reply_budget_mib;
  c.allow_remote = o.allow_remote;
  c.admin = o.admin;
  c.admin_hosts = o.admin_hosts;
  c.admin_token_file = o.admin_token_file;
  c.metrics_per_host = o.metrics_per_host;
  c.smb = o.smb;
  c.users = o.users;  // --user and --smb-user are one list
  c.users.insert(c.users.end(), o.smb_users.begin(), o.smb_users.end());
  c.require_auth = o.require_auth;
  c.smb_allow = o.smb_allow;
  c.smb_no_anonymous = o.smb_no_anonymous;
  c.smb_guest = o.smb_guest;
  c.smb_anonymous_winreg = o.smb_anonymous_winreg;
  c.smb_encrypt = o.smb_encrypt;
  c.smb_dir = o.smb_dir;
  c.epm = o.epm;
  c.journal_size = o.journal_size;
  c.journal = o.journal;
  c.journal_max_mb = o.journal_max_mb;
  c.journal_files = o.journal_files;
  c.scenario = o.scenario;
  c.scenario_dirs = o.scenario_dirs;
  c.plan_only = o.list_hosts;
  c.log = log_sink(o);
  return c;
}

// Above this many hosts the text output is one summary line, not a line per host (a 1,000-host
// fleet printed 1,000 lines); --json and --list-hosts still give every host.
constexpr size_t kListEachHostUpTo = 10;

// "127.1.0.1-127.1.3.232" when the IPv4 addresses are one run, else "N addresses from A to B".
template <class Host>
std::string address_span(const std::vector<Host>& hosts) {
  std::set<uint32_t> v4;
  for (const Host& h : hosts) {
    in_addr a{};
    if (::inet_pton(AF_INET, h.address.c_str(), &a) != 1) return fmt::format("{} addresses", hosts.size());
    v4.insert(ntohl(a.s_addr));
  }
  const auto text = [](uint32_t host_order) { return replayer::ipv4_text(host_order); };
  const uint32_t lo = *v4.begin(), hi = *v4.rbegin();
  if (v4.size() == 1) return text(lo);
  if (hi - lo + 1 == v4.size()) return text(lo) + "-" + text(hi);
  return fmt::format("{} addresses from {} to {}", v4.size(), text(lo), text(hi));
}

void print_listening_summary(const serve::ServeRun& run) {
  const std::vector<serve::BoundHost>& bound = run.bound();
  std::set<uint16_t> ports;
  for (const serve::BoundHost& b : bound) ports.insert(b.port);
  const std::string port_text = ports.size() == 1 ? fmt::format("port {}", *ports.begin())
                                                  : fmt::format("ports {}-{}", *ports.begin(), *ports.rbegin());
  fmt::print("perfsim serve: {} hosts listening on {}, {} (--list-hosts or --json lists each)\n", bound.size(),
             address_span(bound), port_text);
}

void print_listening(const ServeOptions& o, const serve::ServeRun& run) {
  if (!o.json && run.bound().size() > kListEachHostUpTo) return print_listening_summary(run);
  for (const serve::BoundHost& b : run.bound()) {
    if (o.json) {
      fmt::print("{}\n",
                 json_text(nlohmann::json({{"event", "listening"},
                                           {"address", b.address},
                                           {"port", b.port},
                                           {"endpoint", b.endpoint},
                                           {"host", b.host->name},
                                           {"capture", b.host->capture},
                                           {"timeline", b.host->timeline},
                                           {"between", replayer::between_name(b.host->host->options().between)}})));
    } else {
      fmt::print("perfsim serve: host {} listening on {} (ncacn_ip_tcp:{}[{}]) from {}\n", b.host->name, b.endpoint,
                 b.address, b.port, b.host->capture);
    }
  }
}

// --list-hosts: what this run (or shard) would serve, in the fleet's expanded order.
void print_hosts(const ServeOptions& o, const serve::ServeRun& run) {
  for (const serve::PlannedHost& h : run.hosts()) {
    if (o.json)
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "host"},
                                                   {"host", h.name},
                                                   {"listen", h.listen},
                                                   {"address", h.address},
                                                   {"capture", h.capture},
                                                   {"fleet_index", h.fleet_index}})));
    else
      fmt::print("{} {} {}\n", h.name, h.listen, h.capture);
  }
}

void print_epm(const ServeOptions& o, const serve::ServeRun& run) {
  for (const std::string& a : run.epm_addresses()) {
    if (o.json)
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "epm"}, {"address", a}, {"port", run.epm_port()}})));
    else
      fmt::print("perfsim serve: endpoint mapper on {}:{} (ncacn_ip_tcp:{} finds winreg)\n", a, run.epm_port(), a);
  }
}

void print_admin(const ServeOptions& o, const serve::ServeRun& run) {
  // The token itself is never printed: output ends up in logs other users read.
  const std::string& file = o.admin_token_file;
  if (o.json) {
    nlohmann::json j = {
        {"event", "admin"}, {"address", run.admin_address()}, {"port", run.admin_port()}, {"url", run.admin_url()}};
    if (!file.empty()) j["token_file"] = file;
    fmt::print("{}\n", json_text(j));
  } else if (file.empty()) {
    fmt::print("perfsim serve: admin API and dashboard on {}\n", run.admin_url());
  } else {
    fmt::print(
        "perfsim serve: admin API and dashboard on {} (token {} {}; open {}?token=TOKEN once, or send "
        "'Authorization: Bearer TOKEN')\n",
        run.admin_url(), run.admin_token_created() ? "made in" : "from", file, run.admin_url());
  }
}

void print_smb(const ServeOptions& o, const serve::ServeRun& run) {
  const auto& smb = run.smb_hosts();
  if (!o.json && smb.size() > kListEachHostUpTo) {
    fmt::print(
        "perfsim serve: {} hosts on SMB {}, port {} (ncacn_np:ADDR[\\pipe\\winreg]) through smbd pid {} "
        "(--json lists each)\n",
        smb.size(), address_span(smb), run.smb_port(), run.smbd_pid());
    return;
  }
  for (const serve::SmbEndpoint& h : run.smb_hosts()) {
    if (o.json) {
      fmt::print("{}\n", json_text(nlohmann::json({{"event", "smb"},
                                                   {"address", h.address},
                                                   {"port", run.smb_port()},
                                                   {"pipe", fmt::format("\\\\{}\\PIPE\\winreg", h.address)},
                                                   {"host", h.host->name()}})));
    } else {
      fmt::print("perfsim serve: host {} on SMB {}:{} (ncacn_np:{}[\\pipe\\winreg]) through smbd pid {}\n",
                 h.host->name(), h.address, run.smb_port(), h.address, run.smbd_pid());
    }
  }
}

int run_serve(const ServeOptions& o) {
  serve::ServeRun run;
  serve::Events ev;
  ev.notice = [](const std::string& m) { fmt::print(stderr, "perfsim serve: {}\n", m); };
  ev.tcp_ready = [&] {
    print_listening(o, run);
    print_epm(o, run);
  };
  ev.admin_ready = [&] { print_admin(o, run); };
  ev.smb_ready = [&] { print_smb(o, run); };
  const auto failed = [](const serve::Failure& f) {
    return fail("serve", f.message, f.usage ? kExitUsage : kExitFailure);
  };
  if (serve::Failure f = run.prepare(serve_config(o), ev); !f.ok()) return failed(f);
  if (o.list_hosts) {
    print_hosts(o, run);
    return kExitOk;
  }
  if (serve::Failure f = run.start(); !f.ok()) return failed(f);
  std::fflush(stdout);
  if (Status st = run.wait(); !st.ok()) return fail("serve", st.message());
  return kExitOk;
}

}  // namespace

void add_serve(CLI::App& app, int& rc) {
  auto o = std::make_shared<ServeOptions>();
  ServeOptions& serve = *o;
  auto* c_serve = app.add_subcommand("serve",
                                     "Serve simulated hosts over winreg/DCE-RPC (ncacn_ip_tcp); with no arguments the "
                                     "bundled default host on 127.0.0.1");
  c_serve->add_option("--listen,-l", serve.listen,
                      "ADDR:PORT or ADDR:PORT=CAPTURE (repeatable; port 0 picks a free port)");
  c_serve
      ->add_option("--capture,-c", serve.capture,
                   "Capture served by listeners that name none (default: the bundled default host)")
      ->check(input_file());
  c_serve->add_option("--fleet", serve.fleet, "TOML fleet file: [[host]] tables with listen, capture, timeline")
      ->check(input_file());
  c_serve
      ->add_option("--timeline", serve.timeline,
                   "realtime (loop the capture at its own pace), step (one sample per answer) or frozen:K")
      ->capture_default_str();
  c_serve->add_option("--profile", serve.profile,
                      "OS quirk profile for hosts without their own: " + perfsim::windows::os_name_list() +
                          ", or rrp-exact (default: the capture's fingerprint)");
  c_serve->add_option("--quirk,-Q", serve.quirks,
                      "Quirk for every host, over profile and fingerprint (repeatable): "
                      "NAME[=on|off][:PARAM=VALUE,...], e.g. perffreq:hz=3579545, extra-objects=off");
  c_serve->add_option(
      "--speed", serve.speed,
      "Realtime pace, recorded seconds per real second (0.001 to 10000), for every host whose fleet entry sets "
      "no speed; e.g. 10 plays a 15 s interval every 1.5 s");
  c_serve
      ->add_option("--between", serve.between,
                   "Counters between two recorded samples on a realtime timeline, for every host whose fleet entry "
                   "sets none: interpolate (default: they advance toward the next sample with time, so a collector "
                   "polling faster than the capture sees its rates) or step (they hold until the next sample)")
      ->check(CLI::IsMember({"step", "interpolate"}));
  c_serve->add_option("--shard", serve.shard,
                      "K/N: serve only shard K (0..N-1) of the fleet, the K-th of N contiguous blocks of its hosts, "
                      "with the names, addresses and data they have in the whole fleet");
  c_serve->add_flag("--list-hosts", serve.list_hosts,
                    "Print the hosts this run would serve (name, address, capture; JSON lines with --json) and exit");
  c_serve->add_option("--netns", serve.netns,
                      "Serve inside network namespace NAME, made now (leftovers of a killed run removed) and removed "
                      "at exit, joined to this one by a veth pair ps-NAME/pi-NAME (root only; needs --subnet)");
  c_serve->add_option("--subnet", serve.subnet,
                      "With --netns: A.B.C.D/P holding the veth pair (its first two addresses) and every host address");
  c_serve->add_option("--netns-bridge", serve.netns_bridge,
                      "With --netns: put the outer veth end on this existing bridge instead of giving it an address");
  c_serve
      ->add_option("--faults", serve.faults,
                   "TOML fault plan ([[fault]] tables, replayer/README.md), reloaded on SIGHUP")
      ->check(input_file());
  c_serve->add_option("--threads", serve.threads, "Worker threads (0: one per core)")->capture_default_str();
  c_serve
      ->add_option("--max-connections", serve.max_connections,
                   "Connections open at once, over TCP and SMB together; at the limit a new connection closes the "
                   "oldest one not yet authenticated under --require-auth, else it is refused (counted in /metrics)")
      ->capture_default_str();
  c_serve
      ->add_option("--auth-timeout", serve.auth_timeout_s,
                   "Under --require-auth: a connection not authenticated this long after it opened is closed, "
                   "whatever it sent (seconds, or 30s; 0: never)")
      ->transform(duration())
      ->capture_default_str();
  c_serve
      ->add_option("--idle-timeout", serve.idle_timeout_s,
                   "Time without a complete PDU before a connection is closed (seconds, or 30s, 5m; 0: never; at "
                   "most 7d); a fault plan's latency may not exceed it")
      ->transform(duration())
      ->capture_default_str();
  c_serve
      ->add_option("--cache-mb", serve.cache_mb,
                   "Megabytes of decoded samples kept for all hosts (captures are read as the timelines reach them)")
      ->check(CLI::Range(size_t(1), size_t(1) << 20))
      ->capture_default_str();
  c_serve
      ->add_option("--reply-budget", serve.reply_budget_mib,
                   "MiB of replies all clients together may leave unread; beyond it the slowest readers are "
                   "closed (0: no budget)")
      ->check(CLI::Range(size_t(0), size_t(1) << 20))
      ->capture_default_str();
  c_serve->add_flag("--allow-remote", serve.allow_remote, "Allow listening on non-loopback addresses");
  c_serve->add_option("--admin", serve.admin,
                      "Serve the admin HTTP API and web dashboard on ADDR:PORT (loopback unless --allow-remote; "
                      "admin/README.md)");
  c_serve->add_option("--admin-host", serve.admin_hosts,
                      "A host name or address the admin API also answers to in the Host header, beyond loopback "
                      "and the --admin address (repeatable; admin/README.md, \"Who may call it\")");
  c_serve->add_option("--admin-token-file", serve.admin_token_file,
                      "A file holding the admin API's token (made, mode 0600, when missing): every request must then "
                      "send 'Authorization: Bearer TOKEN' or open /?token=TOKEN once in a browser (admin/README.md)");
  c_serve
      ->add_option("--metrics-per-host", serve.metrics_per_host,
                   "/metrics series per host (on), fleet-wide sums only (off), or per host up to 50 hosts (auto)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  c_serve->add_flag("--json", serve.json, "Print the listening endpoints as JSON lines");
  c_serve
      ->add_option("--log-level", serve.log_level,
                   "Server log lines on stderr at this level and above: error, warn, info (start, stop, refusals) "
                   "or debug (also each listener and connection)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}))
      ->capture_default_str();
  c_serve
      ->add_option("--log-format", serve.log_format,
                   "Server log lines as logfmt (key=value) or json (one object a line)")
      ->check(CLI::IsMember({"logfmt", "json"}))
      ->capture_default_str();
  c_serve
      ->add_option("--smb", serve.smb,
                   "Also serve every host as \\\\ADDR\\PIPE\\winreg through a private smbd on PORT (445 without a "
                   "value; root only)")
      ->expected(0, 1)
      ->default_str("default");
  c_serve->add_option("--user", serve.users,
                      "NAME:PASSWORD of an account for authenticated DCE/RPC (NTLMSSP, SPNEGO) and SMB logons "
                      "(repeatable)");
  c_serve->add_option("--smb-user", serve.smb_users, "The same as --user (repeatable)");
  c_serve->add_flag("--require-auth", serve.require_auth,
                    "Refuse calls on unauthenticated ncacn_ip_tcp binds (fault access denied), as a Windows host "
                    "restricting remote clients does; needs --user");
  c_serve->add_option("--smb-allow", serve.smb_allow,
                      "Accounts allowed to open HKEY_PERFORMANCE_DATA over SMB (repeatable; default: all); others get "
                      "WERR_ACCESS_DENIED");
  c_serve->add_flag("--smb-no-anonymous", serve.smb_no_anonymous, "Refuse anonymous and guest SMB sessions");
  // Each host follows its Windows version's defaults (windows/README.md, logon policy); these
  // loosen them for every host.
  auto* guest = c_serve->add_flag("--smb-guest", serve.smb_guest,
                                  "Enable the Guest account on every SMB host (disabled by default since Windows "
                                  "2000): a logon as an unknown account becomes a guest session that may read "
                                  "HKEY_PERFORMANCE_DATA");
  auto* anon = c_serve->add_flag("--smb-anonymous-winreg", serve.smb_anonymous_winreg,
                                 "Let null (anonymous) SMB sessions open \\PIPE\\winreg and read "
                                 "HKEY_PERFORMANCE_DATA (Windows restricts null sessions to NullSessionPipes, "
                                 "which never list winreg by default)");
  guest->excludes("--smb-no-anonymous");
  anon->excludes("--smb-no-anonymous");
  c_serve->add_flag("--smb-encrypt", serve.smb_encrypt,
                    "Require SMB3 encryption of every SMB session (anonymous sessions then fail: they have no key)");
  c_serve->add_option("--smb-dir", serve.smb_dir,
                      "Directory for smbd's private config and state (must not exist or be empty)");
  c_serve
      ->add_option("--epm", serve.epm,
                   "Also answer the endpoint mapper (ept_map/ept_lookup) on PORT of every host address, so "
                   "clients binding ncacn_ip_tcp:ADDR without a port find winreg (135 without a value; root only)")
      ->expected(0, 1)
      ->default_str("default");
  c_serve
      ->add_option("--journal-size", serve.journal_size,
                   "winreg calls kept in memory for the journal and the collector diagnosis (0: no journal)")
      ->capture_default_str();
  c_serve->add_option("--journal", serve.journal,
                      "Also write every winreg call to this JSON-lines file (read it with perfsim journal FILE)");
  c_serve->add_option("--journal-max-mb", serve.journal_max_mb,
                      "MiB a --journal file may reach before it is rotated (1 to 65536; default " +
                          std::to_string(perfsim::journal::FileLimits::kDefaultMaxMib) + ")");
  c_serve->add_option("--journal-files", serve.journal_files,
                      "Journal files kept: FILE, FILE.1 .. FILE.K-1, the oldest removed at rotation (1 to 1000; "
                      "default " +
                          std::to_string(perfsim::journal::FileLimits::kDefaultFiles) + ")");
  c_serve->add_option("--scenario", serve.scenario,
                      "Serve a field-bug scenario's hosts and faults (perfsim scenarios lists them; --listen, in "
                      "order, moves its hosts)");
  c_serve->add_option("--scenario-dir", serve.scenario_dirs, "A directory of your own scenario files (repeatable)")
      ->check(input_dir());
  c_serve->callback([o, &rc] { rc = run_serve(*o); });
}

}  // namespace perfsim::cli
