// A serve run: the hosts of a fleet, scenario or listener list (or hosts a caller made), their
// TCP listeners, the journal, epm, smbd and the admin API, started and stopped as one. `perfsim
// serve` fills a Config from its options; tests and benches fill one in code (README.md).
//
// Guarantees: prepare() makes nothing that outlives a failure but the netns it created (removed
// by the destructor); start() binds every listener or returns why; wait() returns when the
// server stops (SIGINT/SIGTERM with handle_signals, or stop()); the destructor stops and joins
// everything, smbd and the fault reloader included.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "journal/recorder.h"
#include "replayer/host.h"
#include "rpc/association.h"
#include "server/server.h"

namespace perfsim::serve {

// A host the caller made itself (a test's or bench's SimulatedHost), served on `listen` before the
// Config's own hosts.
struct GivenHost {
  std::string listen = "127.0.0.1:0";
  std::shared_ptr<replayer::SimulatedHost> host;
  std::string name;  // the listener's name in the server's log
};

// What a run serves and how. Field names follow `perfsim serve`'s options, and error messages
// name those options (the command is the run's main caller; cli/README.md).
struct Config {
  std::vector<GivenHost> given;       // hosts made by the caller; with any, no default host is added
  std::vector<std::string> listen;    // "ADDR:PORT" or "ADDR:PORT=CAPTURE"
  std::string capture;                // default capture of listeners without one (empty: the bundled host)
  std::string fleet;                  // TOML fleet file
  std::string timeline = "realtime";  // realtime | step | frozen:K
  std::string profile;                // quirk profile of hosts without their own
  std::string faults;                 // TOML fault plan, reloaded on SIGHUP
  std::vector<std::string> quirks;    // NAME[=on|off][:PARAM=VALUE,...] for every host
  std::optional<double> speed;        // realtime pace of hosts whose fleet entry sets none
  std::string between;                // --between step|interpolate for hosts whose entry sets none ("": default)
  std::string shard;                  // "K/N"
  std::string netns, subnet, netns_bridge;
  unsigned threads = 0;
  size_t max_connections = 4096;
  double idle_timeout_s = 300;
  // Set: the server's idle timeout exactly (a test's milliseconds), instead of idle_timeout_s.
  std::optional<std::chrono::milliseconds> idle_timeout;
  // Where authentication is required: how long a connection may stay unauthenticated (0: no limit).
  double auth_timeout_s = 10;
  size_t max_pdu_size = 65535;
  size_t cache_mb = 64;
  size_t reply_budget_mib = 512;
  bool allow_remote = false;
  std::string admin;  // ADDR:PORT of the admin API; "" = none
  // /metrics with a host label on every series: "on", "off" (fleet-wide sums), or "auto" (on up to
  // journal::kPerHostMetricsUpTo hosts).
  std::string metrics_per_host = "auto";
  std::vector<std::string> admin_hosts;
  // The admin API's token file (admin/token.h): read, or made when missing; "" = no token.
  std::string admin_token_file;
  std::string smb;                 // "" = no SMB, "default" = 445, else the port
  std::vector<std::string> users;  // NAME:PASSWORD (perfsim serve's --user and --smb-user together)
  bool require_auth = false;       // faults on unauthenticated TCP binds; needs users
  std::vector<std::string> smb_allow;
  bool smb_no_anonymous = false;
  bool smb_guest = false;             // --smb-guest (server/smb_serve.h)
  bool smb_anonymous_winreg = false;  // --smb-anonymous-winreg
  bool smb_encrypt = false;
  std::string smb_dir;
  std::string epm;  // "" = no endpoint mapper, "default" = 135, else the port
  // Set: the DCE/RPC association of every host instead of one made from users/require_auth
  // (a test's per-connection limits).
  std::optional<rpc::AssociationConfig> association;
  size_t journal_size = 10000;
  std::string journal;         // JSON-lines file of every call; "" = none
  std::string journal_max_mb;  // text, checked here: the default when empty
  std::string journal_files;   // text, checked here: the default when empty
  // Set: this recorder (null: none, no journal and no metrics) instead of one made from
  // journal_size and journal.
  std::optional<std::shared_ptr<journal::Recorder>> recorder;
  std::string scenario;
  std::vector<std::string> scenario_dirs;
  bool plan_only = false;      // make the hosts but open nothing (perfsim serve --list-hosts)
  bool handle_signals = true;  // SIGINT/SIGTERM end wait(); false for runs inside a test
  server::LogSink log;         // the server's log lines; empty: stderr
};

// A failed step: its message and whether the Config was at fault (exit 2 in the CLI) or the
// machine or a file (exit 1).
struct Failure {
  bool failed = false;
  bool usage = false;
  std::string message;  // as `perfsim serve: MESSAGE` prints it
  bool ok() const { return !failed; }
};

// What the run tells its caller while it starts; every callback may be empty.
struct Events {
  std::function<void(const std::string&)> notice;  // a line for the operator (warnings, SIGHUP reloads)
  std::function<void()> tcp_ready;                 // listeners bound, epm endpoints registered
  std::function<void()> admin_ready;               // the admin API is listening
  std::function<void()> smb_ready;                 // smbd is running
};

// One host of the run, in the fleet's expanded order (one per listener).
struct PlannedHost {
  std::string name;
  std::string listen;
  std::string address;  // the canonical address of `listen`
  std::string capture;  // empty for a given host
  std::string timeline;
  uint32_t fleet_index = 0;
  std::shared_ptr<replayer::SimulatedHost> host;
};

struct BoundHost {
  std::string address;
  uint16_t port = 0;
  std::string endpoint;  // ADDR:PORT, [ADDR]:PORT for IPv6
  const PlannedHost* host = nullptr;
};

struct SmbEndpoint {
  std::string address;
  std::shared_ptr<replayer::SimulatedHost> host;
};

class ServeRun {
 public:
  ServeRun();
  ~ServeRun();
  ServeRun(const ServeRun&) = delete;
  ServeRun& operator=(const ServeRun&) = delete;

  // Checks the config, makes the hosts (and the netns); opens nothing.
  Failure prepare(Config cfg, Events events = {});
  // prepare()d: epm, smbd, fault reloader, listeners, admin API; serving when Ok.
  Failure start();
  // Both, for callers without a plan-only step.
  Failure run(Config cfg, Events events = {});
  // Serves until SIGINT/SIGTERM (handle_signals) or stop().
  Status wait();
  void stop();

  const std::vector<PlannedHost>& hosts() const;
  std::vector<BoundHost> bound() const;  // after start()
  uint16_t port(size_t i = 0) const;     // of listener i, after start()
  server::Server& server();              // after start()
  const std::vector<std::string>& epm_addresses() const;
  uint16_t epm_port() const;
  std::string admin_address() const;
  uint16_t admin_port() const;
  std::string admin_url() const;
  bool admin_token_created() const;  // the token file was made by this run (after start())
  const std::vector<SmbEndpoint>& smb_hosts() const;
  uint16_t smb_port() const;
  int smbd_pid() const;

  struct State;  // defined in run.cpp only

 private:
  std::unique_ptr<State> s_;
};

// The capture a run serves when given none (core/data_dir.h: installed or in the source tree).
std::string bundled_default_capture();

}  // namespace perfsim::serve
