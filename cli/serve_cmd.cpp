#include <fmt/core.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "captures/reader.h"
#include "core/config.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/serve_replay.h"
#include "cli/serve_smb.h"
#include "replayer/host.h"
#include "server/server.h"
#include "server/winreg_handler.h"

namespace perfsim::cli {
namespace {

struct HostSpec {
  std::string listen;
  std::string capture;
  std::string timeline;
  HostReplay replay;          // profile, quirks, pace, fleet (serve_replay.h)
  uint32_t fleet_index = 0;   // which member of a count = N entry
  std::vector<std::string> smb_allow;  // accounts allowed OpenHKPD over SMB (empty: all)
  std::string smb_dialects;            // "MIN-MAX"; empty: from the capture's OS profile
};

Status parse_timeline(const std::string& s, replayer::HostOptions& opt) {
  if (s == "realtime") { opt.mode = replayer::TimelineMode::kRealtime; return Status::Ok(); }
  if (s == "step") { opt.mode = replayer::TimelineMode::kStep; return Status::Ok(); }
  if (s.rfind("frozen:", 0) == 0 && config::parse_uint_as(std::string_view(s).substr(7), "frozen:K", opt.frozen_tick).ok()) {
    opt.mode = replayer::TimelineMode::kFrozen;
    return Status::Ok();
  }
  return Status::InvalidArgument("timeline '" + s + "' is not one of realtime, step, frozen:K (K a sample number)");
}

Status read_fleet_host(const config::Reader& r, const config::Json& h, const std::string& path, HostSpec& s) {
  Status st = r.keys(h, path, {"listen", "capture", "timeline", "profile", "speed", "loop", "count", "name",
                               "clock_spread_s", "variation", "seed", "quirks", "smb_allow", "smb_dialects"});
  if (st.ok()) st = r.require(h, path, "listen");
  if (st.ok()) st = r.string(h, path, "listen", s.listen);
  if (st.ok() && s.listen.empty()) st = r.fail(config::join(path, "listen"), "expected \"ADDR:PORT\"");
  if (st.ok()) st = r.string(h, path, "capture", s.capture);
  if (st.ok()) st = r.string(h, path, "timeline", s.timeline);
  if (st.ok()) st = read_host_replay(r, h, path, s.replay);
  if (st.ok()) st = r.string(h, path, "smb_dialects", s.smb_dialects);
  if (st.ok()) st = r.strings(h, path, "smb_allow", s.smb_allow);
  return st;
}

Status read_fleet(const std::string& path, std::vector<HostSpec>& out) {
  config::Doc doc;
  if (Status s = config::load_file(path, doc); !s.ok()) return s;
  const config::Reader r(doc);
  if (Status s = r.keys(doc.root, "", {"host"}); !s.ok()) return s;
  const config::Json& hosts = doc.root.contains("host") ? doc.root["host"] : config::Json::array();
  if (!hosts.is_array() || hosts.empty())
    return r.fail("host", "no [[host]] tables (each needs listen = \"ADDR:PORT\")");
  for (size_t i = 0; i < hosts.size(); ++i) {
    HostSpec s;
    if (Status st = read_fleet_host(r, hosts[i], config::index("host", i), s); !st.ok()) return st;
    if (!s.capture.empty() && std::filesystem::path(s.capture).is_relative())
      s.capture = (std::filesystem::path(path).parent_path() / s.capture).string();
    out.push_back(std::move(s));
  }
  return Status::Ok();
}

}  // namespace

std::string bundled_default_capture() {
  return std::string(PERFSIM_BUNDLED_CAPTURES_DIR) + "/default-2016.perfcap";
}

int run_serve(const ServeOptions& o) {
  std::vector<HostSpec> specs;
  if (!o.fleet.empty()) {
    if (Status s = read_fleet(o.fleet, specs); !s.ok()) return fail("serve", s.message(), kExitUsage);
  }
  for (const std::string& l : o.listen) {
    const size_t eq = l.find('=');
    HostSpec s;
    s.listen = l.substr(0, eq);
    if (eq != std::string::npos) s.capture = l.substr(eq + 1);
    specs.push_back(std::move(s));
  }
  if (specs.empty()) specs.emplace_back().listen = "127.0.0.1:0";
  // --quirk applies to every host; a fleet host's own [host.quirks] come after it and win.
  std::vector<replayer::QuirkSetting> cli_quirks;
  for (const std::string& text : o.quirks) {
    replayer::QuirkSetting q;
    if (Status s = parse_quirk_arg(text, q); !s.ok()) return fail("serve", s.message(), kExitUsage);
    cli_quirks.push_back(std::move(q));
  }
  for (HostSpec& s : specs) s.replay.quirks.insert(s.replay.quirks.begin(), cli_quirks.begin(), cli_quirks.end());

  // A [[host]] with count = N stands for N hosts on consecutive ports (port 0: any port each).
  for (size_t i = 0, n = specs.size(); i < n; ++i) {
    for (uint32_t k = 1; k < specs[i].replay.count; ++k) {
      HostSpec member = specs[i];
      member.fleet_index = k;
      member.listen = fleet_listen(specs[i].listen, k);
      specs.push_back(std::move(member));
    }
  }

  server::ServerConfig cfg;
  cfg.threads = o.threads;
  cfg.allow_non_loopback = o.allow_remote;
  cfg.max_connections = o.max_connections;
  cfg.idle_timeout = std::chrono::milliseconds(int64_t(o.idle_timeout_s * 1000));
  // Hosts are loaded once per capture file and timeline, and shared by the listeners naming them.
  std::map<std::string, std::shared_ptr<server::WinregHandlerFactory>> factories;
  std::vector<std::shared_ptr<replayer::SimulatedHost>> all_hosts;
  std::vector<SmbHost> smb_hosts;
  for (HostSpec& s : specs) {
    std::string addr;
    uint16_t port = 0;
    if (Status st = server::parse_listen_address(s.listen, o.allow_remote, addr, port); !st.ok())
      return fail("serve", fmt::format("--listen {}: {}", s.listen, st.message()), kExitUsage);
    if (s.capture.empty()) s.capture = o.capture.empty() ? bundled_default_capture() : o.capture;
    if (s.timeline.empty()) s.timeline = o.timeline;
    replayer::HostOptions hopt;
    if (Status st = parse_timeline(s.timeline, hopt); !st.ok()) return fail("serve", st.message(), kExitUsage);
    const std::string key = s.capture + "|" + s.timeline + "|" + s.replay.key() + "|" + std::to_string(s.fleet_index);
    if (!factories.count(key)) {
      std::shared_ptr<replayer::SimulatedHost> host;
      if (Status st = make_replayed_host(s.capture, s.replay, s.fleet_index, o.profile, hopt, host); !st.ok())
        return fail("serve", st.message());
      factories[key] = std::make_shared<server::WinregHandlerFactory>(host);
      all_hosts.push_back(host);
    }
    cfg.listeners.push_back({s.listen, std::string(), factories[key]});
    smb_hosts.push_back({addr, factories[key]->host(), s.smb_allow, s.smb_dialects});
  }
  SmbSetup smb;
  if (!o.smb.empty()) {
    if (Status st = prepare_smb(o, smb_hosts, cfg, smb); !st.ok()) return fail("serve", "--smb: " + st.message());
  }

  FaultReloader faults;  // before the server's threads exist: they must not take SIGHUP
  if (!o.faults.empty()) {
    if (Status st = faults.start(o.faults, all_hosts); !st.ok()) return fail("serve", "--faults: " + st.message(), kExitUsage);
  }
  server::Server srv(cfg);
  if (Status st = srv.start(); !st.ok()) return fail("serve", st.message() + " (is the port in use? try another --listen port)");
  for (size_t i = 0; i < srv.bound().size(); ++i) {
    const server::BoundListener& b = srv.bound()[i];
    const auto& f = static_cast<server::WinregHandlerFactory&>(*cfg.listeners[i].factory);
    const std::string ep = b.address.find(':') != std::string::npos ? fmt::format("[{}]:{}", b.address, b.port) : fmt::format("{}:{}", b.address, b.port);
    if (o.json) {
      fmt::print("{}\n", nlohmann::json({{"event", "listening"}, {"address", b.address}, {"port", b.port}, {"endpoint", ep},
                                         {"host", f.host()->name()}, {"capture", specs[i].capture}, {"timeline", specs[i].timeline}}).dump());
    } else {
      fmt::print("perfsim serve: host {} listening on {} (ncacn_ip_tcp:{}[{}]) from {}\n", f.host()->name(), ep, b.address, b.port, specs[i].capture);
    }
  }
  if (smb.smbd) {
    if (Status st = smb.smbd->start(); !st.ok()) return fail("serve", "--smb: " + st.message());
    for (const SmbHost& h : smb.hosts) {
      if (o.json) {
        fmt::print("{}\n", nlohmann::json({{"event", "smb"}, {"address", h.address}, {"port", smb.port},
                                           {"pipe", fmt::format("\\\\{}\\PIPE\\winreg", h.address)}, {"host", h.host->name()}}).dump());
      } else {
        fmt::print("perfsim serve: host {} on SMB {}:{} (ncacn_np:{}[\\pipe\\winreg]) through smbd pid {}\n", h.host->name(),
                   h.address, smb.port, h.address, smb.smbd->smbd_pid());
      }
    }
  }
  std::fflush(stdout);
  if (Status st = srv.run(); !st.ok()) return fail("serve", st.message());
  return kExitOk;
}

}  // namespace perfsim::cli
