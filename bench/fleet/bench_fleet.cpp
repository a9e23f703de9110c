// Fleet memory: 1,000 simulated hosts from one capture, each on its own loopback listener, each
// asked once for an index query (so every host has really served). Reports how much resident
// memory the fleet adds, against the baseline of what one copy of the capture's prepared
// Recording costs (measured in the same run): the fleet must cost far less than one more copy.
// Usage: bench_fleet [hosts=1000] [capture=captures/default-2016.perfcap]
#include <fmt/core.h>
#include <malloc.h>
#include <sys/resource.h>

#include <fstream>
#include <set>
#include <string>

#include "captures/reader.h"
#include "core/utf16.h"
#include "recorder/client.h"
#include "replayer/fleet.h"
#include "server/server.h"
#include "server/winreg_handler.h"

using namespace perfsim;

namespace {

// Resident memory after handing freed heap pages back, so memory freed earlier (load-time
// scratch) cannot hide growth by being reused.
size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

size_t rss_bytes() {
  malloc_trim(0);
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  return 0;
}

[[noreturn]] void die(const std::string& what, const Status& s) {
  fmt::print(stderr, "bench_fleet: {}: {}\n", what, s.ToString());
  std::exit(1);
}

// The system name of the PERF_DATA_BLOCK in `b` (empty when the answer is not one).
std::string system_name(ByteView b) {
  if (b.size() < 88) return {};
  const uint32_t len = load_le32(&b[80]), off = load_le32(&b[84]);
  if (off + len > b.size() || len < 2) return {};
  std::u16string s;
  for (uint32_t i = 0; i + 2 < len; i += 2) s.push_back(char16_t(load_le16(&b[off + i])));
  return utf16_to_utf8(s);
}

// Asks every listener's host for "238" once; returns the distinct system names seen.
std::set<std::string> ask_each(const server::Server& srv) {
  std::set<std::string> names;
  for (const server::BoundListener& b : srv.bound()) {
    std::unique_ptr<recorder::WinregClient> c;
    if (Status s = recorder::WinregClient::connect("127.0.0.1", b.port, std::chrono::seconds(10), c); !s.ok())
      die("connect", s);
    winreg::PolicyHandle h;
    if (Status s = c->open_hive(winreg::kOpenHKPD, h); !s.ok()) die("OpenHKPD", s);
    winreg::QueryValueResponse r;
    if (Status s = c->query_value(h, "238", 1u << 20, r); !s.ok() || r.result != 0 || !r.data) die("QueryValue 238", s);
    names.insert(system_name(*r.data));
  }
  return names;
}

std::unique_ptr<server::Server> serve(const std::vector<std::shared_ptr<replayer::SimulatedHost>>& hosts) {
  server::ServerConfig cfg;
  cfg.threads = 2;
  cfg.handle_signals = false;
  cfg.log = [](std::string_view) {};
  cfg.max_connections = 8;
  for (const auto& h : hosts)
    cfg.listeners.push_back({"127.0.0.1:0", h->name(), std::make_shared<server::WinregHandlerFactory>(h)});
  auto srv = std::make_unique<server::Server>(cfg);
  if (Status s = srv->start(); !s.ok()) die("start", s);
  return srv;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? uint32_t(std::stoul(argv[1])) : 1000;
  const std::string path = argc > 2 ? argv[2] : std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  rlimit lim{};  // one listening socket per host
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  const size_t before_recording = rss_bytes();
  std::shared_ptr<const replayer::Recording> rec;  // opened as perfsim serve does: lazily
  if (Status s = replayer::open_recording(path, nullptr, rec); !s.ok()) die(path, s);
  const size_t recording_bytes = rss_bytes() - before_recording;

  replayer::FleetSpec one;
  one.name_pattern = "BASE-{n}";
  one.base = replayer::HostOptions{replayer::TimelineMode::kRealtime};
  std::vector<std::shared_ptr<replayer::SimulatedHost>> base_hosts;
  if (Status s = make_fleet(rec, one, base_hosts); !s.ok()) die("fleet of 1", s);
  auto base_srv = serve(base_hosts);
  ask_each(*base_srv);  // warm the allocator and the serving path
  const size_t baseline = rss_bytes(), heap_baseline = heap_in_use();

  replayer::FleetSpec spec = one;
  spec.count = n;
  spec.name_pattern = "FLEET-{n}";
  spec.clock_spread_s = 3600;
  spec.variation = 0.1;
  std::vector<std::shared_ptr<replayer::SimulatedHost>> fleet;
  if (Status s = make_fleet(rec, spec, fleet); !s.ok()) die("fleet", s);
  auto srv = serve(fleet);
  const std::set<std::string> names = ask_each(*srv);
  const size_t after = rss_bytes(), heap_after = heap_in_use();

  const double growth_mb = double(after - baseline) / 1e6;
  fmt::print("capture {}: {} ticks, opened Recording costs {:.1f} MB resident (baseline)\n", path, rec->tick_count(),
             double(recording_bytes) / 1e6);
  fmt::print("fleet of {} hosts (own listener each, each queried once): {} distinct system names\n", n, names.size());
  fmt::print("resident memory growth for the fleet: {:.2f} MB ({:.0f} bytes per host)\n", growth_mb,
             double(after - baseline) / n);
  fmt::print("heap in use grew by {:.2f} MB ({:.0f} bytes per host: host, factory, listener)\n",
             double(heap_after - heap_baseline) / 1e6, double(heap_after - heap_baseline) / n);
  fmt::print("ratio fleet growth / one capture copy: {:.3f}  (would be ~{} without sharing)\n",
             double(after - baseline) / double(std::max<size_t>(recording_bytes, 1)), n);
  const bool ok = names.size() == n && growth_mb < 10.0;
  fmt::print("{}: {} distinct names, growth {:.2f} MB < 10 MB\n", ok ? "PASS" : "FAIL", names.size(), growth_mb);
  return ok ? 0 : 1;
}
