#include "tests/common/perfsim_smb_serve.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "captures/reader.h"
#include "tests/common/host_tools.h"

namespace perfsim::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string fleet_toml(const ServeSmbConfig& c) {
  std::string fleet;
  for (const ServedSmbHost& h : c.hosts) {
    fleet += "[[host]]\nlisten = \"" + h.address + ":0\"\ncapture = \"" + h.capture +
             "\"\ntimeline = \"frozen:" + std::to_string(c.frozen_tick) + "\"\n";
    if (!h.name.empty()) fleet += "name = \"" + h.name + "\"\n";
    if (!h.profile.empty()) fleet += "profile = \"" + h.profile + "\"\n";
    if (!h.allow.empty()) {
      fleet += "smb_allow = [";
      for (size_t i = 0; i < h.allow.size(); ++i) fleet += (i ? ", \"" : "\"") + h.allow[i] + "\"";
      fleet += "]\n";
    }
    if (!h.quirks.empty()) fleet += "[host.quirks]\n";
    for (const std::string& q : h.quirks) fleet += "\"" + q + "\" = true\n";
  }
  return fleet;
}

}  // namespace

Status PerfsimSmbServe::start(const ServeSmbConfig& cfg) {
  // The port is the harness's choice, not the product's: when another process took it between
  // free_port() and smbd's bind, perfsim says "is not available" and we pick another (bounded).
  Status st;
  for (int attempt = 0; attempt < (cfg.port ? 1 : 3); ++attempt) {
    st = start_once(cfg);
    if (st.ok() || st.message().find("is not available") == std::string::npos) break;
  }
  return st;
}

Status PerfsimSmbServe::start_once(const ServeSmbConfig& cfg) {
  stop();
  cfg_ = cfg;
  fs::remove_all(cfg_.dir);
  fs::create_directories(cfg_.dir);
  const std::string out = cfg_.dir + "/serve.out";
  port_ = cfg_.port ? cfg_.port : free_port();
  std::ofstream(cfg_.dir + "/fleet.toml") << (cfg_.fleet.empty() ? fleet_toml(cfg_) : cfg_.fleet);
  const size_t want = cfg_.fleet.empty() ? cfg_.hosts.size() : cfg_.smb_hosts;
  std::vector<std::string> args = {
      cfg_.perfsim, "serve",     "--fleet", cfg_.dir + "/fleet.toml", "--smb=" + std::to_string(port_), "--smb-dir",
      smb_dir(),    "--threads", "2"};
  if (cfg_.json) args.push_back("--json");
  for (const auto& [user, password] : cfg_.users) args.push_back("--smb-user=" + user + ":" + password);
  if (!cfg_.windows_logon_defaults) args.insert(args.end(), {"--smb-guest", "--smb-anonymous-winreg"});
  args.insert(args.end(), cfg_.extra_args.begin(), cfg_.extra_args.end());
  subprocess::Options o;
  o.out = o.err = subprocess::Stream::kFile;
  o.out_path = out;  // fresh: the directory was just emptied
  o.err_path = err_path();
  o.parent_death_signal = SIGTERM;  // a crashed test still stops perfsim (and so smbd)
  if (Status st = subprocess::start(args, o, child_); !st.ok()) return st;
  // Ready once every host has its "smb" line, or the text summary is out (bounded: 60 s, or perfsim exits).
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  const std::string per_host = cfg_.json ? "\"event\":\"smb\"" : " on SMB ";
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = read_text(out);
    size_t n = 0;
    for (size_t p = 0; (p = text.find(per_host, p)) != std::string::npos; ++p) ++n;
    if (n == want || (!cfg_.json && text.find(" hosts on SMB ") != std::string::npos)) return Status::Ok();
    if (subprocess::ExitStatus st; subprocess::poll(child_, st))
      return Status::IOError("perfsim serve exited (" + subprocess::describe(st) + "): " + read_text(err_path()));
    std::this_thread::sleep_for(50ms);
  }
  return Status::IOError("perfsim serve did not report its SMB hosts within 60 s: " + read_text(err_path()) +
                         stuck_state());
}

// Where a child that never got ready is: whether it reached exec (its command line), its state and
// the kernel function it waits in, and what it printed on stdout.
std::string PerfsimSmbServe::stuck_state() const {
  const std::string proc = "/proc/" + std::to_string(child_.pid);
  std::string cmdline = read_text(proc + "/cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  std::string state = read_text(proc + "/stat");
  if (const size_t paren = state.rfind(')'); paren != std::string::npos) state = state.substr(paren + 2, 1);
  return "\n[pid " + std::to_string(child_.pid) + ", cmdline: " + cmdline + ", state: " + state +
         ", wchan: " + read_text(proc + "/wchan") + "]\n[stdout: " + read_text(cfg_.dir + "/serve.out") + "]";
}

int PerfsimSmbServe::stop() { return subprocess::stop(child_, 30s).code; }

Status load_frozen_host(const std::string& capture, uint32_t tick, std::shared_ptr<replayer::SimulatedHost>& out) {
  captures::Capture cap;
  if (Status st = captures::read_capture(capture, cap); !st.ok())
    return Status::IOError(capture + ": " + st.ToString());
  return replayer::SimulatedHost::load(cap, replayer::HostOptions(replayer::TimelineMode::kFrozen, tick), out);
}

}  // namespace perfsim::testing
