// Making the hosts of a serve run: captures read and prepared once each (RecordingCache), a
// host's options from its fingerprint, profile and explicit quirks, fleet members, and the
// reloadable fault plan (README.md).
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "replayer/fleet_file.h"
#include "replayer/host.h"
#include "replayer/recording.h"

namespace perfsim::replayer {

// Captures by path, each opened once (lazily, recording.h) and then shared by every host naming
// it; their decoded samples share one SampleCache of `cache_bytes`. Owned by the caller (one per
// serve run), so nothing outlives it and tests start empty.
class RecordingCache {
 public:
  explicit RecordingCache(size_t cache_bytes = SampleCache::kDefaultBytes)
      : samples_(std::make_shared<SampleCache>(cache_bytes)) {}
  const std::shared_ptr<SampleCache>& samples() const { return samples_; }
  // The recording of the capture at `path`; the reader's warnings go to warnings() the first time.
  Status get(const std::string& path, std::shared_ptr<const Recording>& out);
  // A capture held in memory (a scenario's synthesized host, scenarios/plan.h), prepared now and
  // then found by get(key) as if `key` were its path. A key already present is InvalidArgument.
  Status add(const std::string& key, captures::Capture cap);
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::shared_ptr<SampleCache> samples_;
  std::map<std::string, std::shared_ptr<const Recording>> recordings_;
  std::vector<std::string> warnings_;  // "PATH: warning"
};

// Who a host of `cap` is (host.h), the one rule: its OS row from the capture's header; its quirk
// profile r.profile, else `default_profile`, else the fingerprint's; its base quirks the
// defaults, then the fingerprint's, then the profile's (pipe-not-available-first only when set
// explicitly). Fleet fields (name, clock, variation) are left as they are.
Status resolve_identity(const HostReplay& r, const std::string& default_profile, const captures::Capture& cap,
                        HostIdentity& out);

// Timeline pace, identity and quirks of a host of `cap` (its base quirks, then r.quirks).
Status host_options(const HostReplay& r, const std::string& default_profile, const captures::Capture& cap,
                    HostOptions& opt);

// Host `index` (0-based) of entry `r` over the capture at `path`. `opt` carries the timeline
// already parsed.
Status make_replayed_host(RecordingCache& cache, const std::string& path, const HostReplay& r, uint32_t index,
                          const std::string& default_profile, HostOptions opt, std::shared_ptr<SimulatedHost>& out);

// Loads a fault plan into hosts at start() and again on every SIGHUP until stop(); a plan that
// does not parse is reported through `report` and the previous one stays. SIGHUP must be blocked
// in every thread but the reloader's, or the kernel may hand it to one that dies of it: call
// block_sighup() before any other thread exists (recordings start prefetch threads when opened),
// start() once the hosts are made.
class FaultReloader {
 public:
  using Report = std::function<void(const std::string&)>;
  // Blocks SIGHUP in the calling thread and so in every thread it creates afterwards.
  static void block_sighup();
  ~FaultReloader() { stop(); }
  // `limits`: what each (re)loaded plan is checked against (the server's idle timeout); a reload
  // refused for a value out of range keeps the plan in force and reports why.
  Status start(const std::string& path, std::vector<std::shared_ptr<SimulatedHost>> hosts, Report report,
               const FaultLimits& limits = {});
  void stop();

 private:
  Status reload();
  std::string path_;
  FaultLimits limits_;
  std::vector<std::shared_ptr<SimulatedHost>> hosts_;
  Report report_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace perfsim::replayer
