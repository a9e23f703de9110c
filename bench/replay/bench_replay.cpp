// bench_replay (issue 20): `perfsim serve` on long captures made by `perfsim synth` — time from
// start to listening, peak and steady resident memory, and the answer latency of a step timeline
// (a new tick, decoded on the way, every answer) against a frozen one (the same bytes every time).
// Runs the real executables; see bench/README.md. Usage:
//   bench_replay [--perfsim PATH] [--dir DIR] [--week] [--queries N] [--rounds R]
// The latency ratio is taken with both servers idle (their background passes done), in R rounds
// of N reads that alternate between them; the step server is also timed right after its start,
// while its pass runs.
// Captures are made once in DIR (default /tmp/perfsim-bench-replay) and kept for later runs.
#include <fmt/core.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/stats.h"
#include "core/subprocess.h"
#include "recorder/client.h"
#include "replayer/recording.h"
#include "winreg/codec.h"

using namespace perfsim;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string& what) {
  fmt::print(stderr, "bench_replay: {}\n", what);
  std::exit(1);
}

// VmHWM and VmRSS of `pid` in MB.
std::pair<double, double> memory_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  double hwm = 0, rss = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stod(line.substr(6)) / 1024;
  }
  return {hwm, rss};
}

// CPU seconds `pid` has used (user + system).
double cpu_s(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream f(s.substr(s.rfind(')') + 2));
  std::string field;
  unsigned long long ut = 0, st = 0;
  for (int i = 3; i <= 15 && f >> field; ++i) {
    if (i == 14) ut = std::stoull(field);
    if (i == 15) st = std::stoull(field);
  }
  return double(ut + st) / double(::sysconf(_SC_CLK_TCK));
}

std::string make_capture(const std::string& perfsim, const std::string& dir, const std::string& duration) {
  const std::string path = dir + "/replay-2016-" + duration + ".perfcap";
  if (std::filesystem::exists(path)) return path;
  const std::string spec = dir + "/replay-" + duration + ".toml";
  std::ofstream(spec) << "[host]\nprofile = \"2016\"\nduration = \"" << duration
                      << "\"\ninterval = \"15s\"\n[processes]\ncount = 200\n";
  fmt::print("making {} with perfsim synth...\n", path);
  std::fflush(stdout);
  std::string out;
  subprocess::ExitStatus es;
  const std::string tmp = path + ".tmp";
  if (Status s = subprocess::run({perfsim, "synth", spec, "-o", tmp}, "", out, es); !s.ok() || !es.exited_ok())
    die("perfsim synth " + spec + ": " + out);
  std::filesystem::rename(tmp, path);
  return path;
}

struct Served {
  subprocess::Child child;
  uint16_t port = 0;
  double ready_s = 0;
};

// Starts perfsim serve and waits for its JSON "listening" line.
Served serve(const std::string& perfsim, const std::string& capture, const std::string& timeline) {
  Served s;
  subprocess::Options o;
  o.out = subprocess::Stream::kPipe;
  o.err = subprocess::Stream::kNull;
  const auto t0 = Clock::now();
  if (Status st = subprocess::start({perfsim, "serve", "--json", "--capture", capture, "--timeline", timeline,
                                     "--listen", "127.0.0.1:0", "--threads", "2"},
                                    o, s.child);
      !st.ok())
    die("start serve: " + st.ToString());
  std::string buf;
  while (s.port == 0) {
    pollfd p{s.child.out_fd, POLLIN, 0};
    if (::poll(&p, 1, 600000) <= 0) die("serve did not print its listening line");
    char tmp[4096];
    const ssize_t n = ::read(s.child.out_fd, tmp, sizeof tmp);
    if (n <= 0) die("serve exited before listening");
    buf.append(tmp, size_t(n));
    for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1)) {
      auto j = nlohmann::json::parse(buf.substr(0, nl), nullptr, false);
      if (j.is_object() && j.value("event", "") == "listening") s.port = j["port"].get<uint16_t>();
    }
  }
  s.ready_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

// Latencies (us) of `n` Global reads, after one to warm up.
std::vector<double> global_latencies(uint16_t port, int n, size_t& bytes) {
  std::unique_ptr<recorder::WinregClient> c;
  if (Status s = recorder::WinregClient::connect("127.0.0.1", port, std::chrono::seconds(60), c); !s.ok())
    die("connect: " + s.ToString());
  winreg::PolicyHandle h;
  if (Status s = c->open_hive(winreg::kOpenHKPD, h); !s.ok()) die("OpenHKPD: " + s.ToString());
  std::vector<double> us;
  for (int i = 0; i <= n; ++i) {
    winreg::QueryValueResponse r;
    const auto t0 = Clock::now();
    if (Status s = c->query_value(h, "Global", 64u << 20, r); !s.ok() || r.result != 0 || !r.data)
      die("QueryValue Global: " + s.ToString());
    if (i) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    bytes = r.data->size();
  }
  return us;
}

// Waits until `pid` stops using CPU (its background pass over the capture is done), at most
// `bound_s`; returns the seconds waited.
double wait_idle(pid_t pid, double bound_s) {
  const auto t0 = Clock::now();
  double last = cpu_s(pid);
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double now = cpu_s(pid), waited = std::chrono::duration<double>(Clock::now() - t0).count();
    // Idle: the pass runs at nice 10, so under load it may get only a few percent of a core.
    if (now - last < 0.005 || waited > bound_s) return waited;
    last = now;
  }
}

// Seconds from opening `capture` in this process until its counter-growth pass is done (what a
// serve run waits for before answers of a later loop can be patched).
double pass_seconds(const std::string& capture) {
  const auto t0 = Clock::now();
  std::shared_ptr<const replayer::Recording> rec;
  if (Status s = replayer::open_recording(capture, nullptr, rec); !s.ok()) die("open " + capture + ": " + s.ToString());
  while (!rec->counters_known()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string perfsim = PERFSIM_EXE, dir = "/tmp/perfsim-bench-replay";
  bool week = false;
  int queries = 40, rounds = 15;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--perfsim" && i + 1 < argc)
      perfsim = argv[++i];
    else if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else if (a == "--week")
      week = true;
    else if (a == "--queries" && i + 1 < argc)
      queries = std::stoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::stoi(argv[++i]);
    else
      die("usage: bench_replay [--perfsim PATH] [--dir DIR] [--week] [--queries N] [--rounds R]");
  }
  std::filesystem::create_directories(dir);
  std::vector<std::string> lengths = {"1h", "24h"};
  if (week) lengths.push_back("168h");
  fmt::print(
      "| capture | file MB | ready s | RSS at ready MB | step during pass: median us (p90) | pass s | peak MB | "
      "steady MB | step: median us (p90) | frozen: median us (p90) | frozen/step (rounds' range) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& len : lengths) {
    const std::string cap = make_capture(perfsim, dir, len);
    const double file_mb = double(std::filesystem::file_size(cap)) / 1e6;
    Served step = serve(perfsim, cap, "step");
    const double ready_mb = memory_mb(step.child.pid).second;
    size_t bytes = 0;
    // Right after start the background pass over the capture competes with the answers.
    const std::vector<double> cold = global_latencies(step.port, queries, bytes);
    wait_idle(step.child.pid, 1200);
    const auto [peak, steady] = memory_mb(step.child.pid);
    Served frozen = serve(perfsim, cap, "frozen:1");
    wait_idle(frozen.child.pid, 1200);
    // Both servers idle: rounds alternate so load from elsewhere falls on both alike.
    std::vector<double> st, fr, ratios;
    for (int r = 0; r < rounds; ++r) {
      const std::vector<double> a = global_latencies(step.port, queries, bytes);
      const std::vector<double> b = global_latencies(frozen.port, queries, bytes);
      st.insert(st.end(), a.begin(), a.end());
      fr.insert(fr.end(), b.begin(), b.end());
      ratios.push_back(bench::median(b) / bench::median(a));
    }
    subprocess::stop(frozen.child, std::chrono::seconds(5));
    subprocess::stop(step.child, std::chrono::seconds(5));
    const double pass_s = pass_seconds(cap);
    fmt::print(
        "| {} ({} KB Global) | {:.0f} | {:.2f} | {:.0f} | {:.0f} ({:.0f}) | {:.0f} | {:.0f} | {:.0f} | {:.0f} ({:.0f}) "
        "| "
        "{:.0f} ({:.0f}) | {} |\n",
        len, bytes / 1024, file_mb, step.ready_s, ready_mb, bench::median(cold), bench::percentile(cold, 0.9), pass_s,
        peak, steady, bench::median(st), bench::percentile(st, 0.9), bench::median(fr), bench::percentile(fr, 0.9),
        bench::median_range(ratios, "%.2f"));
    std::fflush(stdout);
  }
  return 0;
}
