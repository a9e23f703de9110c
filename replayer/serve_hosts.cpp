// Hosts of a serve run from captures on disk, and the SIGHUP fault reloader.
#include "replayer/serve_hosts.h"

#include <pthread.h>
#include <signal.h>

#include "captures/fingerprint.h"
#include "captures/reader.h"
#include "replayer/faults.h"
#include "replayer/fleet.h"
#include "replayer/limits.h"
#include "replayer/quirks.h"

namespace perfsim::replayer {

Status RecordingCache::get(const std::string& path, std::shared_ptr<const Recording>& out) {
  std::shared_ptr<const Recording>& rec = recordings_[path];
  if (!rec) {
    std::vector<std::string> warnings;
    Status st = open_recording(path, samples_, rec, &warnings);
    for (const auto& w : warnings) warnings_.push_back(path + ": " + w);
    if (!st.ok()) {
      recordings_.erase(path);
      // A capture without samples is the caller's mistake; one missing or unreadable is a failed
      // input (exit 1 in cli/), as for every command.
      if (st.code() == Status::Code::kInvalidArgument) return Status::InvalidArgument(path + ": " + st.ToString());
      return Status::IOError(path + ": " + st.ToString() + " (make one with `perfsim synth`, or check the path)");
    }
  }
  out = rec;
  return Status::Ok();
}

Status RecordingCache::add(const std::string& key, captures::Capture cap) {
  if (recordings_.count(key)) return Status::InvalidArgument(key + ": already in the recording cache");
  std::shared_ptr<const Recording> rec;
  if (Status st = build_recording(std::move(cap), rec); !st.ok())
    return Status::InvalidArgument(key + ": " + st.message());
  recordings_[key] = std::move(rec);
  return Status::Ok();
}

Status host_options(const HostReplay& r, const std::string& default_profile, const captures::Capture& cap,
                    HostOptions& opt) {
  if (r.speed) opt.speed = *r.speed;
  if (r.loop) opt.loop = *r.loop;
  if (r.between) opt.between = *r.between;
  opt.events = r.events;
  if (Status s = config::check_bounds("speed", opt.speed, limits::kSpeed, limits::kSpeedUnit); !s.ok()) return s;
  if (Status s = resolve_identity(r, default_profile, cap, opt.identity); !s.ok()) return s;
  Quirks q = opt.identity.base_quirks;
  for (const QuirkSetting& s : r.quirks)
    if (Status st = apply_setting(q, s); !st.ok()) return st;
  opt.quirks = q;
  return Status::Ok();
}

Status resolve_identity(const HostReplay& r, const std::string& default_profile, const captures::Capture& cap,
                        HostIdentity& out) {
  captures::Fingerprint fp;
  if (Status s = captures::from_json(cap.fingerprint_json, fp); !s.ok()) return s;
  Quirks q;
  if (Status s = fingerprint_quirks(fp, q); !s.ok()) return s;
  const std::string profile = r.profile.empty() ? default_profile : r.profile;
  if (!profile.empty()) {
    if (Status s = profile_quirks(profile, q); !s.ok()) return s;
  }
  // smbd can only approximate pipe-not-available-first (server/README.md, SMB), so profiles and
  // fingerprints do not imply it; an explicit setting (--quirk, [host.quirks]) does.
  q.pipe_not_available_first = false;
  // One profile, one host: a profile naming an OS row (not rrp-exact) decides the OS its SMB
  // dialects, logon policy, srvsvc/wkssvc and NTLM CHALLENGE follow, as it decides its quirks.
  const windows::OsProfile* named = profile.empty() ? nullptr : windows::find_os(profile);
  out.os = named ? named : windows::find_os(cap.host.profile);
  out.quirk_profile = profile.empty() ? fp.profile.value_or("") : profile;
  out.base_quirks = q;
  return Status::Ok();
}

Status make_replayed_host(RecordingCache& cache, const std::string& path, const HostReplay& r, uint32_t index,
                          const std::string& default_profile, HostOptions opt, std::shared_ptr<SimulatedHost>& out) {
  std::shared_ptr<const Recording> rec;
  if (Status st = cache.get(path, rec); !st.ok()) return st;
  if (Status st = host_options(r, default_profile, rec->cap, opt); !st.ok())
    return Status::InvalidArgument(path + ": " + st.message());
  if (r.count <= 1 && r.name.empty()) return SimulatedHost::create(rec, opt, out);
  FleetSpec spec;
  spec.count = r.count;
  spec.name_pattern = r.name;
  spec.clock_spread_s = r.clock_spread_s;
  spec.variation = r.variation;
  spec.seed = r.seed;
  spec.base = opt;
  return make_fleet_member(rec, spec, index + 1, out);
}

Status FaultReloader::start(const std::string& path, std::vector<std::shared_ptr<SimulatedHost>> hosts, Report report,
                            const FaultLimits& limits) {
  path_ = path;
  limits_ = limits;
  hosts_ = std::move(hosts);
  report_ = std::move(report);
  if (Status s = reload(); !s.ok()) return s;
  block_sighup();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  thread_ = std::thread([this, set] {
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (stopping_) return;
      if (Status s = reload(); !s.ok())
        report_("SIGHUP: " + s.message() + " (previous faults kept)");
      else
        report_("SIGHUP: faults reloaded from " + path_);
    }
  });
  return Status::Ok();
}

void FaultReloader::block_sighup() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void FaultReloader::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  pthread_kill(thread_.native_handle(), SIGHUP);
  thread_.join();
}

Status FaultReloader::reload() {
  std::shared_ptr<const FaultPlan> plan;
  if (Status s = load_fault_plan(path_, plan, limits_); !s.ok()) return s;
  for (const auto& h : hosts_) h->set_faults(plan);
  return Status::Ok();
}

}  // namespace perfsim::replayer
