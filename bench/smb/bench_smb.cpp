// bench_smb: perfsim behind smbd vs Samba's own rpcd_winreg behind smbd, in one run, over the same
// client (recorder::WinregClient on connect_smb, Samba's libdcerpc):
//   (a) QueryValue HKLM "SOFTWARE\Microsoft\Windows NT\CurrentVersion" \ "CurrentVersion" (key
//       opened once, then repeated QueryValue with a 512-byte buffer): calls/s, p50/p99 latency,
//       ratio perfsim / Samba;
//   (b) QueryValue HKPD "Global" with a ~300 KB answer on perfsim (a synth 2016 host) and the same
//       call on Samba, whose HKPD answers are all empty (0 bytes): calls/s, p50/p99, perfsim's MB/s.
// One smbd cannot give \PIPE\winreg to both rpcd_winreg and perfsim's external pipe, so there are
// two smbd instances with the same settings (dialect pinned by the client, default signing, the same
// user and password, the same guest mapping) on 127.0.0.91 (perfsim) and 127.0.0.92 (Samba). The
// servers alternate in rounds; figures are medians over rounds, ranges in brackets.
// Needs root and samba. Usage: bench_smb [--json] [--quick] [--rounds N] [--round-seconds S]
//                                        [--perfsim PATH] [--dir DIR]
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/stats.h"
#include "bench/common/synth_host.h"
#include "captures/writer.h"
#include "recorder/client.h"
#include "recorder/smb_channel.h"
#include "tests/common/perfsim_smb_serve.h"
#include "tests/common/samba_winreg.h"
#include "tests/interop/support.h"
#include "windows/constants.h"

using namespace perfsim;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using bench::median;
using bench::median_range;
using bench::percentile;

namespace {

const char* const kPerfsimAddress = "127.0.0.91";
const char* const kSambaAddress = "127.0.0.92";
const char* const kUser = "root";  // an existing unix account: Samba's helper needs one
const char* const kPassword = "Bench-smb-pw1";
const char* const kDialect = "SMB3_11";  // pinned on the client, so both sessions use it
const char* const kCurrentVersion = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";
constexpr auto kCallTimeout = 20s;  // every connect and call ends within this
// synth 2016 with this many processes (1-30 threads each) has a Global of ~300 KB.
constexpr uint32_t kProcesses = 150;

// Static, so std::exit (die) and a normal return both stop them: their destructors end the
// processes each started (and only those); then the work directory goes (declared first, so
// destroyed last).
struct WorkDir {
  std::string path;
  ~WorkDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
} g_work_dir;
std::unique_ptr<testing::PerfsimSmbServe> g_perfsim;
std::unique_ptr<testing::SambaWinregServer> g_samba;
volatile sig_atomic_t g_interrupted = 0;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_smb: %s\n", what.c_str());
  std::exit(1);  // static destructors stop both servers
}
// SIGINT/SIGTERM end the rounds at the next call (and so stop the servers). Installed again after
// connecting: Samba's client libraries leave SIGINT ignored (seen in /proc/PID/status).
void on_signals() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_interrupted = 1; };
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}
void check(const Status& s, const std::string& what) {
  if (!s.ok()) die(what + ": " + s.ToString());
}
std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// ---- fixtures -------------------------------------------------------------------------------

// A synth 2016 capture with one sample; returns the size of its Global.
size_t make_capture_file(const std::string& path) {
  captures::Capture cap;
  check(bench::synth_bench_host(kProcesses, cap), "synthesize");
  check(captures::write_capture(path, cap), "write " + path);
  for (const captures::QueryRecord& r : cap.records)
    if (r.tick == 0 && r.value_name == "Global") return r.payload.size();
  die("the synth capture has no Global at tick 0");
}

std::string smbstatus_sessions(const std::string& conf) {
  const std::string out = interop::run_command("timeout 30 smbstatus -b -s " + interop::shell_quote(conf)).output;
  std::string rows;
  size_t start = 0;
  for (size_t end; (end = out.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = out.substr(start, end - start);
    if (line.find("SMB") != std::string::npos) rows += "    " + line + "\n";
  }
  return rows.empty() ? "    (smbstatus listed no session)\n" : rows;
}

// ---- one server under test --------------------------------------------------------------------

struct Side {
  std::string name;
  std::unique_ptr<recorder::WinregClient> client;
  winreg::PolicyHandle current_version, hkpd;
};

void connect_side(Side& s, const std::string& address, uint16_t port) {
  recorder::SmbTarget t;
  t.host = address;
  t.port = port;
  t.min_protocol = t.max_protocol = kDialect;
  recorder::Credentials c;
  c.user = kUser;
  c.password = kPassword;
  c.kerberos = recorder::Credentials::Kerberos::kOff;
  std::unique_ptr<recorder::Channel> ch;
  check(recorder::connect_smb(t, c, kCallTimeout, ch), s.name + ": connect_smb " + address);
  s.client = std::make_unique<recorder::WinregClient>(std::move(ch));
  winreg::PolicyHandle hklm;
  check(s.client->open_hive(winreg::kOpenHKLM, hklm), s.name + ": OpenHKLM");
  uint32_t werr = 1;
  check(s.client->open_key(hklm, kCurrentVersion, s.current_version, werr), s.name + ": OpenKey");
  if (werr) die(s.name + ": OpenKey CurrentVersion: " + windows::werror_name(werr));
  check(s.client->open_hive(winreg::kOpenHKPD, s.hkpd), s.name + ": OpenHKPD");
}

// One QueryValue; checks the answer is WERR_OK with `want_bytes` of data (or any non-empty size
// when want_bytes is SIZE_MAX). Returns the data size.
size_t query(Side& s, const winreg::PolicyHandle& h, const char* value, uint32_t buffer, size_t want_bytes) {
  winreg::QueryValueResponse r;
  check(s.client->query_value(h, value, buffer, r), s.name + ": QueryValue " + value);
  const size_t got = r.data ? r.data->size() : 0;
  if (r.result != 0) die(s.name + ": QueryValue " + value + ": " + windows::werror_name(r.result));
  if (want_bytes == SIZE_MAX ? got == 0 : got != want_bytes)
    die(s.name + ": QueryValue " + value + " returned " + std::to_string(got) + " bytes");
  return got;
}

struct Call {
  const winreg::PolicyHandle Side::*key;
  const char* value;
  uint32_t buffer;
  size_t want_bytes;
};

// Per server and case: calls per round (from a warm-up), each round's calls/s, every latency.
struct Series {
  int calls_per_round = 0;
  size_t value_bytes = 0;
  std::vector<double> rate;        // calls/s, one per round
  std::vector<double> latency_us;  // all rounds
};

double run_calls(Side& s, const Call& c, int n, std::vector<double>* latency_us) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    if (g_interrupted) die("interrupted");
    const auto c0 = Clock::now();
    query(s, s.*c.key, c.value, c.buffer, c.want_bytes);
    if (latency_us) latency_us->push_back(std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
  }
  return n / std::chrono::duration<double>(Clock::now() - t0).count();
}

// Calls per round so that a round takes about `seconds`, from ~0.3 s of warm-up calls.
int calibrate(Side& s, const Call& c, double seconds) {
  int n = 0;
  const auto t0 = Clock::now();
  for (; Clock::now() - t0 < 300ms; ++n) run_calls(s, c, 1, nullptr);
  const double per_call = std::chrono::duration<double>(Clock::now() - t0).count() / n;
  return std::max(10, int(seconds / per_call));
}

std::vector<double> ratios(const Series& a, const Series& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.rate.size() && i < b.rate.size(); ++i) r.push_back(a.rate[i] / b.rate[i]);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, quick = false;
  int rounds = 5;
  double round_seconds = 1.5;
  std::string perfsim = PERFSIM_EXE, dir = "/tmp/perfsim-bench-smb";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json")
      json = true;
    else if (a == "--quick")
      quick = true;
    else if (a == "--rounds")
      rounds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--round-seconds")
      round_seconds = std::max(0.05, std::atof(next().c_str()));
    else if (a == "--perfsim")
      perfsim = next();
    else if (a == "--dir")
      dir = next();
    else
      die("unknown argument " + a + " (--json --quick --rounds N --round-seconds S --perfsim PATH --dir DIR)");
  }
  if (quick) rounds = 2, round_seconds = 0.3;
  check(testing::samba_server_available(), "Samba's server");
  if (!recorder::smb_supported()) die("this build has no SMB transport (samba-dev missing at configure time)");
  on_signals();
  const auto t_start = Clock::now();
  const std::string load_start = load_average();

  std::filesystem::create_directories(dir);
  g_work_dir.path = dir;
  const std::string capture = dir + "/synth-2016-" + std::to_string(kProcesses) + ".perfcap";
  const size_t global_bytes = make_capture_file(capture);
  std::fprintf(stderr, "bench_smb: synth 2016, %u processes: Global %zu bytes; starting the servers\n", kProcesses,
               global_bytes);

  testing::ServeSmbConfig pc;
  pc.perfsim = perfsim;
  pc.dir = dir + "/perfsim";
  pc.hosts = {{kPerfsimAddress, capture, {}}};
  pc.users = {{kUser, kPassword}};
  pc.frozen_tick = 0;
  g_perfsim = std::make_unique<testing::PerfsimSmbServe>();
  check(g_perfsim->start(pc), "perfsim serve --smb");

  testing::SambaWinregConfig sc;
  sc.dir = dir + "/samba";
  sc.address = kSambaAddress;
  sc.users = {{kUser, kPassword}};
  // The one [global] line perfsim's smb.conf (server/smbd.cpp) has that the helper's lacks, apart
  // from the pipe's backend and perfsim's per-address dialect include (the client pins the dialect).
  sc.extra_global = "\tmax log size = 1000\n";
  g_samba = std::make_unique<testing::SambaWinregServer>();
  check(g_samba->start(sc), "Samba's smbd");

  Side sides[2];
  sides[0].name = "perfsim";
  sides[1].name = "samba";
  connect_side(sides[0], kPerfsimAddress, g_perfsim->port());
  connect_side(sides[1], kSambaAddress, g_samba->port());
  on_signals();
  const std::string sessions_perfsim = smbstatus_sessions(g_perfsim->smb_dir() + "/smb.conf");
  const std::string sessions_samba = smbstatus_sessions(g_samba->conf());

  // The cases; the first answer of each is checked (size, and WERR_OK).
  const uint32_t global_buffer = uint32_t(global_bytes) + 4096;
  const Call hklm{&Side::current_version, "CurrentVersion", 512, SIZE_MAX};
  const Call global_perfsim{&Side::hkpd, "Global", global_buffer, global_bytes};
  const Call global_samba{&Side::hkpd, "Global", global_buffer, 0};
  struct Case {
    const char* title;
    Call call[2];
    Series series[2];
  } cases[2] = {{"(a) QueryValue HKLM CurrentVersion\\CurrentVersion", {hklm, hklm}, {}},
                {"(b) QueryValue HKPD Global", {global_perfsim, global_samba}, {}}};
  for (Case& c : cases)
    for (int s = 0; s < 2; ++s) {
      c.series[s].value_bytes =
          query(sides[s], sides[s].*c.call[s].key, c.call[s].value, c.call[s].buffer, c.call[s].want_bytes);
      c.series[s].calls_per_round = calibrate(sides[s], c.call[s], round_seconds);
    }

  // Rounds: each case on both servers, the first server alternating per round.
  for (int r = 0; r < rounds; ++r) {
    std::fprintf(stderr, "bench_smb: round %d/%d (load %s)\n", r + 1, rounds, load_average().c_str());
    for (Case& c : cases)
      for (int k = 0; k < 2; ++k) {
        const int s = (r + k) % 2;
        Series& se = c.series[s];
        se.rate.push_back(run_calls(sides[s], c.call[s], se.calls_per_round, &se.latency_us));
      }
  }

  const Series& hp = cases[0].series[0];
  const Series& hs = cases[0].series[1];
  const Series& gp = cases[1].series[0];
  const Series& gs = cases[1].series[1];
  const std::vector<double> hklm_ratio = ratios(hp, hs), global_ratio = ratios(gp, gs);
  std::vector<double> mbps;
  for (double x : gp.rate) mbps.push_back(x * double(global_bytes) / 1e6);
  const double secs = std::chrono::duration<double>(Clock::now() - t_start).count();
  const std::string load_end = load_average();

  if (json) {
    std::printf(
        "{\"dialect\":\"%s\",\"rounds\":%d,\"global_bytes\":%zu,"
        "\"hklm_bytes\":%zu,\"hklm_calls_per_s_perfsim\":%.0f,\"hklm_calls_per_s_samba\":%.0f,"
        "\"hklm_p50_us_perfsim\":%.0f,\"hklm_p99_us_perfsim\":%.0f,\"hklm_p50_us_samba\":%.0f,\"hklm_p99_us_samba\":%."
        "0f,"
        "\"hklm_ratio\":%.3f,\"hklm_ratio_min\":%.3f,\"hklm_ratio_max\":%.3f,"
        "\"global_calls_per_s_perfsim\":%.1f,\"global_mb_per_s_perfsim\":%.1f,\"global_p50_us_perfsim\":%.0f,"
        "\"global_p99_us_perfsim\":%.0f,\"global_bytes_samba\":%zu,\"global_calls_per_s_samba\":%.0f,"
        "\"global_p50_us_samba\":%.0f,\"global_p99_us_samba\":%.0f,\"global_ratio\":%.3f,"
        "\"load_start\":\"%s\",\"load_end\":\"%s\",\"runtime_s\":%.1f}\n",
        kDialect, rounds, global_bytes, hp.value_bytes, median(hp.rate), median(hs.rate),
        percentile(hp.latency_us, 0.5), percentile(hp.latency_us, 0.99), percentile(hs.latency_us, 0.5),
        percentile(hs.latency_us, 0.99), median(hklm_ratio), *std::min_element(hklm_ratio.begin(), hklm_ratio.end()),
        *std::max_element(hklm_ratio.begin(), hklm_ratio.end()), median(gp.rate), median(mbps),
        percentile(gp.latency_us, 0.5), percentile(gp.latency_us, 0.99), gs.value_bytes, median(gs.rate),
        percentile(gs.latency_us, 0.5), percentile(gs.latency_us, 0.99), median(global_ratio), load_start.c_str(),
        load_end.c_str(), secs);
  } else {
    std::printf("perfsim behind smbd on %s, Samba's rpcd_winreg behind smbd on %s; client channels:\n  %s\n  %s\n",
                kPerfsimAddress, kSambaAddress, sides[0].client->channel().describe().c_str(),
                sides[1].client->channel().describe().c_str());
    std::printf("sessions (smbstatus -b: pid, user, group, machine, dialect, encryption, signing):\n%s%s",
                sessions_perfsim.c_str(), sessions_samba.c_str());
    std::printf("%d rounds, servers alternating; calls/s: median of rounds (min-max); latencies over all rounds\n\n",
                rounds);
    std::printf("%-52s %-8s %7s %7s %22s %8s %8s %20s\n", "case", "server", "bytes", "calls", "calls/s", "p50 us",
                "p99 us", "ratio perfsim/samba");
    for (const Case& c : cases)
      for (int s = 0; s < 2; ++s) {
        const Series& se = c.series[s];
        std::printf("%-52s %-8s %7zu %7d %22s %8.0f %8.0f %20s\n", s ? "" : c.title, sides[s].name.c_str(),
                    se.value_bytes, se.calls_per_round, median_range(se.rate, "%.0f").c_str(),
                    percentile(se.latency_us, 0.5), percentile(se.latency_us, 0.99),
                    s ? median_range(ratios(c.series[0], c.series[1]), "%.2f").c_str() : "");
      }
    std::printf(
        "\n(b) perfsim moves Global (%zu bytes) at %s MB/s; Samba's Global is %zu bytes, so (b)'s ratio compares\n"
        "    a %zu-byte answer with an empty one.\n",
        global_bytes, median_range(mbps, "%.1f").c_str(), gs.value_bytes, global_bytes);
    std::printf("load average: %s at start, %s at end; %.0f s\n", load_start.c_str(), load_end.c_str(), secs);
  }

  sides[0].client.reset();
  sides[1].client.reset();
  g_samba.reset();
  const int exit_status = g_perfsim->stop();
  g_perfsim.reset();
  if (exit_status != 0) die("perfsim serve exited with " + std::to_string(exit_status));
  return 0;
}
