// Fleet memory: 1,000 simulated hosts from one capture, each on its own loopback listener, each
// asked once for an index query (so every host has really served). Reports how much resident
// memory the fleet adds, against the baseline of what one copy of the capture's prepared
// Recording costs (measured in the same run): the fleet must cost far less than one more copy.
// Usage: bench_fleet [hosts=1000] [capture=captures/default-2016.perfcap]
//
// With --distinct N DIR [PROCESSES=10] [ROUNDS=1]: N hosts, each replaying its own 24 h capture of a
// different host (made by `perfsim synth`, seeds 1..N, kept in DIR for later runs), opened as
// perfsim serve opens them (lazily, one shared sample cache) and each asked once for Global.
// Reports the time to open them all, resident memory (anonymous vs file pages), threads, the
// sample cache's bytes and how much of the files the page cache holds. Each later round (16 s
// apart, so every realtime host is at a new sample) asks every host again and reports its time,
// major faults and bytes read from storage: whether the page cache or storage feeds the decoder.
#include <fcntl.h>
#include <fmt/core.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "captures/reader.h"
#include "core/subprocess.h"
#include "core/utf16.h"
#include "perfdata/view.h"
#include "recorder/client.h"
#include "replayer/fleet.h"
#include "replayer/sample_cache.h"
#include "server/server.h"
#include "serve/run.h"

using namespace perfsim;

namespace {

// Resident memory after handing freed heap pages back, so memory freed earlier (load-time
// scratch) cannot hide growth by being reused.
size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// A /proc/self/status field in bytes (kB fields) or as a count (Threads).
size_t status_field(const std::string& key) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key + ":", 0) == 0) {
      const size_t v = std::stoul(line.substr(key.size() + 1));
      return line.find("kB") != std::string::npos ? v * 1024 : v;
    }
  return 0;
}

size_t rss_bytes() {
  malloc_trim(0);
  return status_field("VmRSS");
}

[[noreturn]] void die(const std::string& what, const Status& s) {
  fmt::print(stderr, "bench_fleet: {}: {}\n", what, s.ToString());
  std::exit(1);
}

// The system name of the PERF_DATA_BLOCK in `b` (empty when the answer is not one).
std::string system_name(ByteView b) {
  perfdata::BlockView block;
  ByteView name;
  if (!perfdata::view_block(b, block) || !block.system_name(name) || name.size() < 2) return {};
  std::u16string s;
  for (size_t i = 0; i + 2 < name.size(); i += 2) s.push_back(char16_t(load_le16(&name[i])));
  return utf16_to_utf8(s);
}

// One QueryValue of `value` from HKPD on a new connection to 127.0.0.1:port (the bench stops on failure).
Bytes ask(uint16_t port, const std::string& value, uint32_t offer) {
  std::unique_ptr<recorder::WinregClient> c;
  if (Status s = recorder::WinregClient::connect("127.0.0.1", port, std::chrono::seconds(10), c); !s.ok())
    die("connect", s);
  winreg::PolicyHandle h;
  if (Status s = c->open_hive(winreg::kOpenHKPD, h); !s.ok()) die("OpenHKPD", s);
  winreg::QueryValueResponse r;
  if (Status s = c->query_value(h, value, offer, r); !s.ok() || r.result != 0 || !r.data) die("QueryValue " + value, s);
  return Bytes(r.data->begin(), r.data->end());
}

// Asks every listener's host for "238" once; returns the distinct system names seen.
std::set<std::string> ask_each(const server::Server& srv) {
  std::set<std::string> names;
  for (const server::BoundListener& b : srv.bound()) names.insert(system_name(ask(b.port, "238", 1u << 20)));
  return names;
}

// The hosts as one serve run (serve/run.h), each on its own port.
std::unique_ptr<serve::ServeRun> serve_hosts(const std::vector<std::shared_ptr<replayer::SimulatedHost>>& hosts) {
  serve::Config cfg;
  cfg.threads = 2;
  cfg.handle_signals = false;
  cfg.log = [](std::string_view) {};
  cfg.max_connections = 8;
  cfg.recorder = nullptr;  // the fleet's serving cost alone, as before
  for (const auto& h : hosts) cfg.given.push_back({"127.0.0.1:0", h, h->name()});
  auto srv = std::make_unique<serve::ServeRun>();
  if (serve::Failure f = srv->run(std::move(cfg)); !f.ok()) die("start", Status::IOError(f.message));
  return srv;
}

}  // namespace

// Bytes of `path` the page cache holds now (mincore over a fresh mapping: touches nothing).
size_t page_cached(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const size_t size = size_t(std::filesystem::file_size(path));
  void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED) return 0;
  const size_t page = size_t(::sysconf(_SC_PAGESIZE)), pages = (size + page - 1) / page;
  std::vector<unsigned char> in(pages);
  size_t cached = 0;
  if (::mincore(map, size, in.data()) == 0)
    for (unsigned char c : in) cached += (c & 1) ? page : 0;
  ::munmap(map, size);
  return cached;
}

struct Round {
  double seconds = 0;
  long major_faults = 0;  // of this process while the round ran
  size_t read_bytes = 0;  // from storage (not the page cache), /proc/self/io
};

size_t io_read_bytes() {
  std::ifstream f("/proc/self/io");
  std::string key;
  size_t value = 0;
  while (f >> key >> value)
    if (key == "read_bytes:") return value;
  return 0;
}

// One Global from every listener's host, a connection each; the bytes and system names seen.
Round global_round(const server::Server& srv, size_t& bytes, std::set<std::string>& names) {
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  const size_t read_before = io_read_bytes();
  const auto t = std::chrono::steady_clock::now();
  for (const server::BoundListener& b : srv.bound()) {
    const Bytes data = ask(b.port, "Global", 16u << 20);
    bytes += data.size();
    names.insert(system_name(data));
  }
  Round out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  ::getrusage(RUSAGE_SELF, &after);
  out.major_faults = after.ru_majflt - before.ru_majflt;
  out.read_bytes = io_read_bytes() - read_before;
  return out;
}

// Makes the N captures `perfsim synth` writes for hosts 1..N (only those DIR lacks).
std::vector<std::string> make_distinct(uint32_t n, const std::string& dir, uint32_t processes) {
  std::filesystem::create_directories(dir);
  const std::string spec = dir + "/spec.toml";
  std::ofstream(spec) << "[host]\nprofile = \"2016\"\nduration = \"24h\"\ninterval = \"15s\"\n[processes]\ncount = "
                      << processes << "\n";
  std::vector<std::string> paths;
  for (uint32_t i = 1; i <= n; ++i) {
    const std::string path = fmt::format("{}/host-{:04}.perfcap", dir, i);
    paths.push_back(path);
    if (std::filesystem::exists(path)) continue;
    const std::string tmp = path + ".tmp";
    std::string output;
    subprocess::ExitStatus st;
    const Status s = subprocess::run({PERFSIM_EXE, "synth", spec, "--seed", std::to_string(i), "--host-name",
                                      fmt::format("DAY-{:04}", i), "-o", tmp},
                                     "", output, st);
    if (!s.ok() || st.code != 0) {
      fmt::print(stderr, "bench_fleet: perfsim synth for host {} failed: {}\n", i, output);
      std::exit(1);
    }
    std::filesystem::rename(tmp, path);
    if (i % 50 == 0) fmt::print(stderr, "made {} of {} captures\n", i, n);
  }
  return paths;
}

int distinct(uint32_t n, const std::string& dir, uint32_t processes, int rounds) {
  const std::vector<std::string> paths = make_distinct(n, dir, processes);
  size_t file_bytes = 0;
  for (const std::string& p : paths) file_bytes += size_t(std::filesystem::file_size(p));
  const size_t before = rss_bytes(), threads_before = status_field("Threads");
  auto cache = replayer::SampleCache::shared_default();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<replayer::SimulatedHost>> hosts;
  for (const std::string& p : paths) {
    std::shared_ptr<const replayer::Recording> rec;
    if (Status s = replayer::open_recording(p, cache, rec); !s.ok()) die(p, s);
    replayer::FleetSpec one;
    one.name_pattern = rec->cap.host.name;
    one.base = replayer::HostOptions{replayer::TimelineMode::kRealtime};
    std::vector<std::shared_ptr<replayer::SimulatedHost>> h;
    if (Status s = make_fleet(rec, one, h); !s.ok()) die(p, s);
    hosts.push_back(h.front());
  }
  const double open_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t opened = rss_bytes(), threads_opened = status_field("Threads");
  auto srv = serve_hosts(hosts);
  size_t global_bytes = 0;
  std::set<std::string> names;
  const auto t1 = std::chrono::steady_clock::now();
  const Round first = global_round(srv->server(), global_bytes, names);
  const double ask_s = first.seconds;
  const size_t served = rss_bytes(), anon = status_field("RssAnon"), file = status_field("RssFile");
  size_t cached = 0;
  for (const std::string& p : paths) cached += page_cached(p);
  fmt::print("{} hosts, each on its own 24 h capture ({} processes, 15 s): {:.1f} GB of captures on disk\n", n,
             processes, double(file_bytes) / 1e9);
  fmt::print(
      "open all (lazy, as perfsim serve): {:.2f} s, {:.0f} ms per capture; resident +{:.1f} MB ({:.0f} KB per host)\n",
      open_s, 1e3 * open_s / n, double(opened - before) / 1e6, double(opened - before) / 1e3 / n);
  fmt::print("threads: {} before, {} after open (the counter passes queue on shared workers)\n", threads_before,
             threads_opened);
  fmt::print("one Global from each host: {:.2f} s ({:.1f} ms each, {:.0f} KB average), {} distinct system names\n",
             ask_s, 1e3 * ask_s / n, double(global_bytes) / 1e3 / n, names.size());
  fmt::print(
      "resident after serving: {:.1f} MB above start ({:.0f} KB per host): anonymous {:.1f} MB, file pages {:.1f} MB\n",
      double(served - before) / 1e6, double(served - before) / 1e3 / n, double(anon) / 1e6, double(file) / 1e6);
  fmt::print("sample cache: {:.1f} MB of {:.0f} MB; page cache holds {:.1f} MB of the captures ({:.1f}%)\n",
             double(cache->bytes()) / 1e6, double(cache->max_bytes()) / 1e6, double(cached) / 1e6,
             100.0 * double(cached) / double(std::max<size_t>(file_bytes, 1)));
  // Later rounds: a realtime host moves to its next sample every 15 s, so each round 16 s after
  // the last needs every host's new sample, which the 64 MB cache cannot hold for all of them:
  // decoded from the file, from the page cache or from disk (major faults say which).
  for (int round = 2; round <= rounds; ++round) {
    std::this_thread::sleep_until(t1 + std::chrono::seconds(16 * (round - 1)));
    size_t bytes = 0;
    std::set<std::string> again;
    const Round r = global_round(srv->server(), bytes, again);
    size_t in_cache = 0;
    for (const std::string& p : paths) in_cache += page_cached(p);
    fmt::print(
        "round {} (a new sample on every host): {:.2f} s ({:.1f} ms each), {} major faults ({:.0f} MB read), "
        "page cache {:.1f}% of the captures, resident {:.1f} MB above start\n",
        round, r.seconds, 1e3 * r.seconds / n, r.major_faults, double(r.read_bytes) / 1e6,
        100.0 * double(in_cache) / double(std::max<size_t>(file_bytes, 1)), double(rss_bytes() - before) / 1e6);
    if (again.size() != n) return 1;
  }
  return names.size() == n ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 3 && std::string(argv[1]) == "--distinct")
    return distinct(uint32_t(std::stoul(argv[2])), argv[3], argc > 4 ? uint32_t(std::stoul(argv[4])) : 10,
                    argc > 5 ? std::stoi(argv[5]) : 1);
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
  auto base_srv = serve_hosts(base_hosts);
  ask_each(base_srv->server());  // warm the allocator and the serving path
  const size_t baseline = rss_bytes(), heap_baseline = heap_in_use();

  replayer::FleetSpec spec = one;
  spec.count = n;
  spec.name_pattern = "FLEET-{n}";
  spec.clock_spread_s = 3600;
  spec.variation = 0.1;
  std::vector<std::shared_ptr<replayer::SimulatedHost>> fleet;
  if (Status s = make_fleet(rec, spec, fleet); !s.ok()) die("fleet", s);
  auto srv = serve_hosts(fleet);
  const std::set<std::string> names = ask_each(srv->server());
  const size_t after = rss_bytes(), heap_after = heap_in_use();

  // Signed: with few hosts the resident size can end below the baseline (pages given back).
  const double growth_mb = (double(after) - double(baseline)) / 1e6;
  fmt::print("capture {}: {} ticks, opened Recording costs {:.1f} MB resident (baseline)\n", path, rec->tick_count(),
             double(recording_bytes) / 1e6);
  fmt::print("fleet of {} hosts (own listener each, each queried once): {} distinct system names\n", n, names.size());
  fmt::print("resident memory growth for the fleet: {:.2f} MB ({:.0f} bytes per host)\n", growth_mb,
             1e6 * growth_mb / n);
  fmt::print("heap in use grew by {:.2f} MB ({:.0f} bytes per host: host, factory, listener)\n",
             (double(heap_after) - double(heap_baseline)) / 1e6, (double(heap_after) - double(heap_baseline)) / n);
  fmt::print("ratio fleet growth / one capture copy: {:.3f}  (would be ~{} without sharing)\n",
             1e6 * growth_mb / double(std::max<size_t>(recording_bytes, 1)), n);
  const bool ok = names.size() == n && growth_mb < 10.0;
  fmt::print("{}: {} distinct names, growth {:.2f} MB < 10 MB\n", ok ? "PASS" : "FAIL", names.size(), growth_mb);
  return ok ? 0 : 1;
}
