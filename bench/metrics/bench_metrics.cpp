// For fleets of 1,000 and 10,000 hosts, each having answered a collector's session (Global,
// Costly, an index list; one busy answer), the size and render time of:
//   /metrics   per-host series (--metrics-per-host on: what every fleet got before) vs fleet-wide
//   /api/hosts every host (limit=10000: the whole list, as before) vs the default page of
//              /api/fleet?limit=50 (what a fleet view asks for)
// Times are medians over ROUNDS (default 5) alternating the two, on the same objects.
//   bench_metrics [ROUNDS]
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "admin/api.h"
#include "admin/journal_sources.h"
#include "bench/common/stats.h"
#include "journal/recorder.h"
#include "replayer/recording.h"
#include "replayer/sample_cache.h"
#include "winreg/codec.h"

namespace {

using namespace perfsim;
using Clock = std::chrono::steady_clock;

std::shared_ptr<replayer::SimulatedHost> bundled_host() {
  std::shared_ptr<const replayer::Recording> rec;
  const std::string path = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  if (Status s = replayer::open_recording(path, std::make_shared<replayer::SampleCache>(), rec); !s.ok()) {
    fmt::print(stderr, "bench_metrics: {}\n", s.message());
    std::exit(1);
  }
  std::shared_ptr<replayer::SimulatedHost> host;
  if (Status s = replayer::SimulatedHost::create(rec, {replayer::TimelineMode::kFrozen, 0}, host); !s.ok())
    std::exit(1);
  return host;
}

journal::CallEvent call(uint32_t status, uint32_t bytes, int64_t latency_us) {
  journal::CallEvent e;
  e.opnum = winreg::kQueryValue;
  e.status = status;
  e.bytes = bytes;
  e.latency_us = latency_us;
  return e;
}

struct Fleet {
  std::shared_ptr<journal::Recorder> rec;
  std::unique_ptr<admin::AdminApi> api;
};

Fleet make_fleet(size_t n, const std::shared_ptr<replayer::SimulatedHost>& host) {
  Fleet f;
  journal::RecorderOptions o;
  o.applied_names = {"buffer-quirk", "busy"};
  if (!journal::Recorder::create(o, f.rec).ok()) std::exit(1);
  std::vector<admin::AdminHost> hosts;
  for (size_t k = 1; k <= n; ++k) {
    const std::string name = fmt::format("WEB-{:05}", k);
    hosts.push_back({name, host, {fmt::format("127.1.{}.{}:4135", k / 256, k % 256)}, "2016", {}});
    auto tap = f.rec->open_session(name, "127.0.0.1:1", journal::Transport::kTcp);
    tap->record(call(170, 0, 40), 2);       // busy
    tap->record(call(234, 0, 300), 0);      // MORE_DATA
    tap->record(call(0, 180000, 2500), 0);  // Global
    tap->record(call(0, 90000, 1500), 0);   // Costly
    tap->record(call(0, 20000, 700), 0);    // an index list
  }
  f.api = std::make_unique<admin::AdminApi>(std::move(hosts), admin::journal_sources(f.rec),
                                            admin::WebFiles{PERFSIM_SOURCE_DIR "/admin/web"}, replayer::FaultLimits{},
                                            admin::AdminAccess{"127.0.0.1", {}, ""});
  return f;
}

size_t get(admin::AdminApi& api, const std::string& target, double& ms) {
  admin::HttpRequest r;
  r.method = "GET";
  r.target = target;
  r.host = "127.0.0.1:8135";
  const auto t0 = Clock::now();
  const admin::HttpResponse a = api.handle(r);
  ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (a.status != 200) {
    fmt::print(stderr, "bench_metrics: {} -> {}\n", target, a.status);
    std::exit(1);
  }
  return a.body.size();
}

size_t lines_of(admin::AdminApi& api) {
  admin::HttpRequest r;
  r.method = "GET";
  r.target = "/metrics";
  r.host = "127.0.0.1:8135";
  const std::string body = api.handle(r).body;
  size_t n = 0;
  for (size_t at = 0; (at = body.find('\n', at)) != std::string::npos; ++at)
    n += at + 1 < body.size() && body[at + 1] != '#';
  return n + (!body.empty() && body[0] != '#');
}

void compare(Fleet& f, const char* what, const std::string& before_target, const std::string& after_target, int rounds,
             bool metrics) {
  std::vector<double> before_ms, after_ms;
  size_t before_bytes = 0, after_bytes = 0, before_lines = 0, after_lines = 0;
  for (int i = 0; i < rounds; ++i) {
    double ms = 0;
    if (metrics) f.api->set_metrics_per_host(true), f.rec->metrics()->set_per_host(true);
    before_bytes = get(*f.api, before_target, ms);
    before_ms.push_back(ms);
    if (metrics && i == 0) before_lines = lines_of(*f.api);
    if (metrics) f.api->set_metrics_per_host(false), f.rec->metrics()->set_per_host(false);
    after_bytes = get(*f.api, after_target, ms);
    after_ms.push_back(ms);
    if (metrics && i == 0) after_lines = lines_of(*f.api);
  }
  fmt::print("  {:<10} before {:>10} B {:>7} ms", what, before_bytes, bench::median_range(before_ms, "%.2f"));
  if (metrics) fmt::print(" {:>6} samples", before_lines);
  fmt::print("  | after {:>8} B {:>7} ms", after_bytes, bench::median_range(after_ms, "%.2f"));
  if (metrics) fmt::print(" {:>4} samples", after_lines);
  fmt::print("  | size ratio {:.4f}\n", double(after_bytes) / double(before_bytes));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const auto host = bundled_host();
  for (const size_t n : {size_t(1000), size_t(10000)}) {
    Fleet f = make_fleet(n, host);
    fmt::print("{} hosts ({} rounds; time: median (min-max))\n", n, rounds);
    compare(f, "/metrics", "/metrics", "/metrics", rounds, true);
    compare(f, "host list", "/api/hosts?limit=10000", "/api/fleet?limit=50", rounds, false);
  }
  return 0;
}
