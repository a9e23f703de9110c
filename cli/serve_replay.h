// What `perfsim serve` knows about replaying each host beyond its capture: OS profile, explicit
// quirks, timeline pace, fleet expansion, and the reloadable fault plan (replayer/README.md).
// Quirk order: defaults, then the capture's fingerprint, then the named profile (--profile or the
// host's `profile`), then the host's [host.quirks] table: later wins, quirk by quirk.
#pragma once
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "captures/capture.h"
#include "core/config.h"
#include "core/status.h"
#include "replayer/host.h"

namespace perfsim::cli {

struct HostReplay {
  std::string profile;                         // empty: the command line's --profile, if any
  std::vector<replayer::QuirkSetting> quirks;  // [host.quirks]: name = true/false or { param = value }
  std::optional<double> speed;                 // realtime pace
  std::optional<bool> loop;                    // realtime: loop (default) or stop at the end
  uint32_t count = 1;                          // fleet: hosts made from this entry
  std::string name;                            // fleet: name pattern ("WEB-{n}"); empty: capture's name
  double clock_spread_s = 0;
  double variation = 0;
  uint64_t seed = 1;
  std::string key() const;                     // equal keys share hosts
};

// Reads the replay keys of the [[host]] table at `path` ("host[0]"); the caller checks its keys.
Status read_host_replay(const config::Reader& r, const config::Json& host, const std::string& path, HostReplay& out);
// A quirk given on the command line: NAME[=on|off][:PARAM=VALUE,...]. InvalidArgument says what
// is wrong (unknown quirk or parameter, bad value) in the terms of replayer/README.md.
Status parse_quirk_arg(const std::string& text, replayer::QuirkSetting& out);
// Timeline, pace and quirks of a host of `cap`.
Status host_options(const HostReplay& r, const std::string& default_profile, const captures::Capture& cap,
                    replayer::HostOptions& opt);

// Host `index` (0-based) of entry `r` over the capture at `path` (each file is read and prepared
// once, then shared by every host naming it). `opt` carries the timeline already parsed.
Status make_replayed_host(const std::string& path, const HostReplay& r, uint32_t index, const std::string& default_profile,
                          replayer::HostOptions opt, std::shared_ptr<replayer::SimulatedHost>& out);
// The listen address of fleet member `index`: the port plus index (port 0 stays 0).
std::string fleet_listen(const std::string& listen, uint32_t index);

// Loads a fault plan into hosts at start() and again on every SIGHUP until stop(); a plan that
// does not parse is reported on stderr and the previous one stays. Call start() before any other
// thread is created (it blocks SIGHUP for the threads created after it).
class FaultReloader {
 public:
  ~FaultReloader() { stop(); }
  Status start(const std::string& path, std::vector<std::shared_ptr<replayer::SimulatedHost>> hosts);
  void stop();

 private:
  Status reload();
  std::string path_;
  std::vector<std::shared_ptr<replayer::SimulatedHost>> hosts_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

}  // namespace perfsim::cli
