// perfsim load: options and dispatch only; the run and its report are load/'s.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/target.h"
#include "core/config.h"
#include "core/json.h"
#include "load/run.h"

namespace perfsim::cli {
namespace {

struct LoadOptions {
  std::vector<std::string> targets;  // fleet files or address ranges
  uint32_t collectors = 1;
  double interval_s = 0;
  double duration_s = 10;
  std::vector<std::string> values;
  std::string smb;  // --smb[=PORT]: "" TCP, "default" 445
  bool reconnect = false;
  uint32_t threads = 0;
  double timeout_s = 10;
  GrowthOptions growth;
  SmbOptions credentials;
  bool json = false;
  size_t top = 20;
};

// Progress on stderr: redrawn each second on a terminal; otherwise a line every 10 s, and only
// for runs of 30 s and more (a short run's report follows at once).
std::function<void(const load::Tick&)> progress(const LoadOptions& o, std::shared_ptr<Progress> bar) {
  const bool tty = ::isatty(2) == 1;
  if (!tty && o.duration_s < 30) return {};
  return [tty, bar, next = 10.0, o_duration = o.duration_s](const load::Tick& t) mutable {
    const std::string line = fmt::format("{:.0f}/{:.0f} s, {} calls, {:.0f} calls/s, {} errors", t.elapsed_s,
                                         o_duration, t.calls, t.calls_per_s, t.errors);
    if (tty) return bar->text(line);
    if (t.elapsed_s < next) return;
    next += 10;
    fmt::print(stderr, "perfsim load: {}\n", line);
  };
}

int run_load_cmd(const LoadOptions& o) {
  const bool smb = !o.smb.empty();
  uint16_t smb_port = 445;
  if (smb && o.smb != "default" && (!config::parse_uint_as(o.smb, "--smb", smb_port).ok() || smb_port == 0))
    return fail("load", "--smb=PORT needs a port 1..65535 (or --smb alone for 445)", kExitUsage);
  load::LoadConfig c;
  for (const std::string& t : o.targets)
    if (Status s = load::hosts_from_target(t, !smb, c.hosts); !s.ok())
      return fail("load", s.message(), s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  if (smb)
    for (load::LoadHost& h : c.hosts) h.port = smb_port;
  c.collectors = o.collectors;
  c.interval_s = o.interval_s;
  c.duration_s = o.duration_s;
  c.values = o.values;
  c.reconnect = o.reconnect;
  c.threads = o.threads;
  c.timeout = std::chrono::milliseconds(int64_t(o.timeout_s * 1000));
  if (Status s = parse_growth(o.growth, c.growth); !s.ok()) return fail("load", s.message(), kExitUsage);
  if (Status s = load::check_config(c); !s.ok()) return fail("load", s.message(), kExitUsage);
  Connection conn;
  if (Status s = prepare_connection(smb, o.credentials, conn); !s.ok())
    return fail("load", s.message(), s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);

  const load::Connect connect = [&conn](const load::LoadHost& h, std::chrono::milliseconds timeout,
                                        std::unique_ptr<recorder::Channel>& out) {
    return connect_prepared(conn, h.address, h.port, timeout, out);
  };
  auto bar = std::make_shared<Progress>("perfsim load:", 0);
  load::LoadReport report;
  const Status st = load::run_load(c, connect, progress(o, bar), report);
  bar->finish();
  // A run refused before it starts (too few open files for it) is the command line's to change.
  if (!st.ok())
    return fail("load", st.message(), st.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  if (o.json)
    fmt::print("{}\n", json_text(load::report_json(c, report), 2));
  else
    fmt::print("{}", load::report_text(c, report, o.top));
  return report.overall.errors() == 0 && report.overall.calls > 0 ? kExitOk : kExitFailure;
}

}  // namespace

void add_load(CLI::App& app, int& rc) {
  auto o = std::make_shared<LoadOptions>();
  LoadOptions& load = *o;
  auto* c = app.add_subcommand(
      "load", "Poll a fleet as N collectors would and report calls/s, latency percentiles and errors per host");
  c->add_option("targets", load.targets,
                "A fleet file (the hosts perfsim serve --fleet F --list-hosts lists), or A.B.C.D-E.F.G.H:PORT, or "
                "ADDR:PORT (repeatable)")
      ->required();
  c->add_option("--collectors,-n", load.collectors, "Collectors, each with its own session to every host")
      ->capture_default_str();
  c->add_option("--interval", load.interval_s,
                "Time between a session's polls (0: back to back, to saturate; seconds, or 500ms, 15s)")
      ->transform(duration())
      ->capture_default_str();
  c->add_option("--duration", load.duration_s, "No poll starts after this (seconds, or 30s, 5m, 1h; at most 1d)")
      ->transform(duration())
      ->capture_default_str();
  c->add_option("--query,-q", load.values,
                "Value each poll reads, in order (repeatable): Global (default), Costly, 238, \"238 230\"");
  c->add_option("--smb", load.smb,
                "Poll \\\\ADDR\\PIPE\\winreg over SMB on PORT (445 without a value) instead of ncacn_ip_tcp; a fleet's "
                "TCP ports are not used")
      ->expected(0, 1)
      ->default_str("default");
  c->add_flag("--reconnect", load.reconnect,
              "Connect, bind and OpenHKPD for every poll and close after it (default: sessions kept)");
  c->add_option("--threads", load.threads,
                "Worker threads, so calls in flight at most (0: min(sessions, 4 x cores, 256))")
      ->capture_default_str();
  c->add_option("--timeout", load.timeout_s, "Each connect and call fails after this (seconds, or 500ms, 2m)")
      ->transform(duration())
      ->capture_default_str();
  add_growth_options(c, load.growth);
  add_smb_options(c, load.credentials);
  c->add_option("--top", load.top, "Hosts in the text report's table (errors first, then the slowest p99)")
      ->capture_default_str();
  c->add_flag("--json", load.json, "The report as one JSON document, every host");
  c->callback([o, &rc] { rc = run_load_cmd(*o); });
}

}  // namespace perfsim::cli
