#include "cli/serve_replay.h"

#include <fmt/core.h>
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <map>

#include "captures/reader.h"
#include "core/utf16.h"
#include "replayer/fleet.h"

namespace perfsim::cli {

std::string HostReplay::key() const {
  std::string k = profile + "|" + std::to_string(speed.value_or(1)) + "|" + std::to_string(loop.value_or(true)) + "|" +
                  std::to_string(count) + "|" + name + "|" + std::to_string(clock_spread_s) + "|" +
                  std::to_string(variation) + "|" + std::to_string(seed);
  for (const auto& q : quirks) {
    k += "|" + q.name + (q.on ? "+" : "-");
    for (const auto& [p, v] : q.params) k += p + "=" + v + ",";
  }
  return k;
}

namespace {

// One [host.quirks] entry: name = true/false, or a table of parameters (numbers or strings) with
// an optional on = true/false.
Status read_quirk(const config::Reader& r, const config::Json& v, const std::string& path, replayer::QuirkSetting& q) {
  if (v.is_boolean()) {
    q.on = v.get<bool>();
    return Status::Ok();
  }
  if (!v.is_object()) return r.type_error(path, "true, false or a table of parameters", v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string pp = config::join(path, it.key());
    if (it.key() == "on" && it->is_boolean()) {
      q.on = it->get<bool>();  // the switch; on = "open" (access-denied) is a parameter
    } else if (it->is_string()) {
      q.params[it.key()] = it->get<std::string>();
    } else if (it->is_number()) {
      q.params[it.key()] = fmt::format("{}", it->get<double>());
    } else {
      return r.type_error(pp, "a number or a string", *it);
    }
  }
  return Status::Ok();
}

}  // namespace

Status read_host_replay(const config::Reader& r, const config::Json& h, const std::string& path, HostReplay& out) {
  Status s = r.string(h, path, "profile", out.profile);
  if (s.ok() && h.contains("speed")) s = r.number(h, path, "speed", out.speed.emplace());
  if (s.ok() && h.contains("loop")) s = r.boolean(h, path, "loop", out.loop.emplace());
  if (s.ok()) s = r.integer(h, path, "count", out.count, 1, UINT32_MAX);
  if (s.ok()) s = r.string(h, path, "name", out.name);
  if (s.ok()) s = r.number(h, path, "clock_spread_s", out.clock_spread_s);
  if (s.ok()) s = r.number(h, path, "variation", out.variation);
  if (s.ok()) s = r.integer(h, path, "seed", out.seed, 0, INT64_MAX);
  if (!s.ok()) return s;
  if (out.count > 1 && out.name.empty()) return r.fail(config::join(path, "count"), "count > 1 needs name = \"PATTERN-{n}\"");
  if (!h.contains("quirks")) return Status::Ok();
  const config::Json& q = h["quirks"];
  if (!q.is_object()) return r.type_error(config::join(path, "quirks"), "a table of quirks", q);
  for (auto it = q.begin(); it != q.end(); ++it) {
    replayer::QuirkSetting qs{it.key(), true, {}};
    if (Status st = read_quirk(r, *it, config::join(config::join(path, "quirks"), it.key()), qs); !st.ok()) return st;
    out.quirks.push_back(std::move(qs));
  }
  return Status::Ok();
}

Status parse_quirk_arg(const std::string& text, replayer::QuirkSetting& out) {
  out = replayer::QuirkSetting{};
  const size_t colon = text.find(':');
  std::string head = text.substr(0, colon);
  if (const size_t eq = head.find('='); eq != std::string::npos) {
    const std::string v = head.substr(eq + 1);
    if (v != "on" && v != "off") return Status::InvalidArgument("quirk '" + text + "': after '=' comes on or off");
    out.on = v == "on";
    head = head.substr(0, eq);
  }
  out.name = head;
  if (colon != std::string::npos) {
    for (const std::string& kv : split_nonempty(text.substr(colon + 1), ",")) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return Status::InvalidArgument("quirk '" + text + "': parameters are PARAM=VALUE, comma-separated");
      out.params[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  replayer::Quirks probe;  // checked now, so a typo is a usage error before anything listens
  return replayer::apply_setting(probe, out);
}

Status host_options(const HostReplay& r, const std::string& default_profile, const captures::Capture& cap,
                    replayer::HostOptions& opt) {
  if (r.speed) opt.speed = *r.speed;
  if (r.loop) opt.loop = *r.loop;
  if (!(opt.speed > 0)) return Status::InvalidArgument("speed must be > 0");
  replayer::Quirks q;
  if (Status s = replayer::fingerprint_quirks(cap.fingerprint_json, q); !s.ok()) return s;
  const std::string profile = r.profile.empty() ? default_profile : r.profile;
  if (!profile.empty()) {
    if (Status s = replayer::profile_quirks(profile, q); !s.ok()) return s;
  }
  // smbd can only approximate pipe-not-available-first (server/README.md, SMB), so profiles and
  // fingerprints do not imply it; an explicit setting (--quirk, [host.quirks]) does.
  q.pipe_not_available_first = false;
  for (const replayer::QuirkSetting& s : r.quirks)
    if (Status st = replayer::apply_setting(q, s); !st.ok()) return st;
  opt.quirks = q;
  return Status::Ok();
}

std::string fleet_listen(const std::string& listen, uint32_t index) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || index == 0) return listen;
  const unsigned long port = std::strtoul(listen.c_str() + colon + 1, nullptr, 10);
  return port == 0 ? listen : listen.substr(0, colon + 1) + std::to_string(port + index);
}

Status make_replayed_host(const std::string& path, const HostReplay& r, uint32_t index, const std::string& default_profile,
                          replayer::HostOptions opt, std::shared_ptr<replayer::SimulatedHost>& out) {
  static std::map<std::string, std::shared_ptr<const replayer::Recording>> recordings;  // serve runs once
  std::shared_ptr<const replayer::Recording>& rec = recordings[path];
  if (!rec) {
    captures::Capture cap;
    std::vector<std::string> warnings;
    if (Status st = captures::read_capture(path, cap, &warnings); !st.ok())
      return Status::InvalidArgument(fmt::format("{}: {} (make one with `perfsim synth`, or check the path)", path, st.ToString()));
    for (const auto& w : warnings) fmt::print(stderr, "perfsim serve: {}: {}\n", path, w);
    if (Status st = replayer::build_recording(std::move(cap), rec); !st.ok()) return Status::InvalidArgument(path + ": " + st.ToString());
  }
  if (Status st = host_options(r, default_profile, rec->cap, opt); !st.ok()) return Status::InvalidArgument(path + ": " + st.message());
  if (r.count <= 1 && r.name.empty()) return replayer::SimulatedHost::create(rec, opt, out);
  replayer::FleetSpec spec;
  spec.count = r.count;
  spec.name_pattern = r.name;
  spec.clock_spread_s = r.clock_spread_s;
  spec.variation = r.variation;
  spec.seed = r.seed;
  spec.base = opt;
  return replayer::make_fleet_member(rec, spec, index + 1, out);
}

Status FaultReloader::start(const std::string& path, std::vector<std::shared_ptr<replayer::SimulatedHost>> hosts) {
  path_ = path;
  hosts_ = std::move(hosts);
  if (Status s = reload(); !s.ok()) return s;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread made from now on
  thread_ = std::thread([this, set] {
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (stopping_) return;
      if (Status s = reload(); !s.ok()) fmt::print(stderr, "perfsim serve: SIGHUP: {} (previous faults kept)\n", s.message());
      else fmt::print(stderr, "perfsim serve: SIGHUP: faults reloaded from {}\n", path_);
    }
  });
  return Status::Ok();
}

void FaultReloader::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  pthread_kill(thread_.native_handle(), SIGHUP);
  thread_.join();
}

Status FaultReloader::reload() {
  std::shared_ptr<const replayer::FaultPlan> plan;
  if (Status s = replayer::load_fault_plan(path_, plan); !s.ok()) return s;
  for (const auto& h : hosts_) h->set_faults(plan);
  return Status::Ok();
}

}  // namespace perfsim::cli
