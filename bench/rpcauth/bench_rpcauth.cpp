// bench_rpcauth: what DCE/RPC authentication costs a collector over ncacn_ip_tcp (issue 13).
// One perfsim server (in process, 127.0.0.1, accounts configured, unauthenticated binds allowed)
// serves the bench host; recorder::WinregClient connections, one per level (none, connect, sign,
// seal; NTLMSSP), run the same calls in alternating rounds, so every ratio compares figures of the
// same round: (a) QueryValue Global (~1 MB, buffer large enough: one call each), (b) small calls:
// QueryValue of Perflib's "Last Counter" (a REG_DWORD) under HKLM. Ratios are calls/s of a level
// over calls/s unauthenticated; medians of the per-round ratios, range in brackets.
// Usage: bench_rpcauth [rounds] (default 9; ~15 s on the 2-core dev VM).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/stats.h"
#include "bench/common/synth_host.h"
#include "recorder/client.h"
#include "recorder/tcp_channel.h"
#include "replayer/host.h"
#include "rpc/auth.h"
#include "server/server.h"
#include "serve/run.h"
#include "windows/constants.h"
#include "winreg/codec.h"

using namespace perfsim;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_rpcauth: %s\n", what.c_str());
  std::exit(1);
}
void check(const Status& s, const char* what) {
  if (!s.ok()) die(std::string(what) + ": " + s.message());
}

struct Level {
  const char* name;
  uint8_t level;  // 0: no authentication
};
const Level kLevels[] = {{"none", 0},
                         {"connect", rpc::kAuthLevelConnect},
                         {"sign", rpc::kAuthLevelIntegrity},
                         {"seal", rpc::kAuthLevelPrivacy}};

struct Session {
  std::unique_ptr<recorder::WinregClient> client;
  winreg::PolicyHandle hkpd, perflib;
};

Session open_session(uint16_t port, uint8_t level) {
  std::optional<recorder::TcpAuth> auth;
  if (level) auth = recorder::TcpAuth{{"", "bench", "Bench-1"}, rpc::kAuthTypeNtlmssp, level};
  std::unique_ptr<recorder::Channel> ch;
  check(recorder::connect_tcp("127.0.0.1", port, std::chrono::seconds(30), ch, auth), "connect");
  Session s;
  s.client = std::make_unique<recorder::WinregClient>(std::move(ch));
  check(s.client->open_hive(winreg::kOpenHKPD, s.hkpd), "OpenHKPD");
  winreg::PolicyHandle hklm;
  check(s.client->open_hive(winreg::kOpenHKLM, hklm), "OpenHKLM");
  uint32_t werr = 0;
  check(s.client->open_key(hklm, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", s.perflib, werr),
        "OpenKey Perflib");
  if (werr) die("OpenKey Perflib: WERR " + std::to_string(werr));
  return s;
}

// Calls per second of `calls` QueryValue(name) on `h` with a buffer of `buffer` bytes; each answer
// must be WERR_OK and `expect` bytes long.
double rate(Session& s, const winreg::PolicyHandle& h, const std::string& name, uint32_t buffer, size_t expect,
            int calls) {
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) {
    winreg::QueryValueResponse r;
    check(s.client->query_value(h, name, buffer, r), name.c_str());
    if (r.result != 0 || !r.data || r.data_length.value_or(0) != expect)
      die(name + ": unexpected answer (status or size)");
  }
  return calls / std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
  captures::Capture cap;
  check(bench::synth_bench_host(520, cap), "synthesize");
  std::shared_ptr<replayer::SimulatedHost> host;
  check(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 0}, host), "load host");
  const size_t global = host->content(replayer::PerfKey::kData, "Global", 0).data.size();

  rpc::AssociationConfig acfg;
  check(rpc::AuthService::create({{"bench", "Bench-1"}}, acfg.auth), "accounts");
  serve::Config cfg;
  cfg.given.push_back({"127.0.0.1:0", host, "bench"});
  cfg.association = acfg;
  cfg.recorder = nullptr;
  cfg.threads = 1;
  cfg.handle_signals = false;
  cfg.log = [](std::string_view) {};
  serve::ServeRun srv;
  if (serve::Failure f = srv.run(std::move(cfg)); !f.ok()) check(Status::IOError(f.message), "server start");
  const uint16_t port = srv.port(0);

  std::vector<Session> sessions;
  for (const Level& l : kLevels) sessions.push_back(open_session(port, l.level));

  constexpr int kGlobalCalls = 60, kSmallCalls = 3000;
  const size_t n = std::size(kLevels);
  std::vector<std::vector<double>> big(n), small(n), big_ratio(n), small_ratio(n);
  for (int round = 0; round < rounds; ++round) {
    std::vector<double> b(n), s(n);
    // Alternate the order each round so no level always runs right after another.
    for (size_t k = 0; k < n; ++k) {
      const size_t i = round % 2 ? n - 1 - k : k;
      b[i] = rate(sessions[i], sessions[i].hkpd, "Global", uint32_t(global + 4096), global, kGlobalCalls);
      s[i] = rate(sessions[i], sessions[i].perflib, "Last Counter", 64, 4, kSmallCalls);
    }
    for (size_t i = 0; i < n; ++i) {
      big[i].push_back(b[i]);
      small[i].push_back(s[i]);
      big_ratio[i].push_back(b[i] / b[0]);
      small_ratio[i].push_back(s[i] / s[0]);
    }
  }
  std::printf("Global (%zu bytes), %d calls per level per round; %d rounds, 1 server thread\n", global, kGlobalCalls,
              rounds);
  for (size_t i = 0; i < n; ++i)
    std::printf("  %-8s %s calls/s, ratio to none %s\n", kLevels[i].name, bench::median_range(big[i], "%.1f").c_str(),
                bench::median_range(big_ratio[i], "%.3f").c_str());
  std::printf("small calls (QueryValue Perflib \"Last Counter\", 4 bytes), %d calls per level per round\n",
              kSmallCalls);
  for (size_t i = 0; i < n; ++i)
    std::printf("  %-8s %s calls/s, ratio to none %s\n", kLevels[i].name, bench::median_range(small[i], "%.0f").c_str(),
                bench::median_range(small_ratio[i], "%.3f").c_str());
  std::printf(
      "{\"global_seal_ratio\":%.3f,\"global_sign_ratio\":%.3f,\"small_seal_ratio\":%.3f,"
      "\"small_sign_ratio\":%.3f}\n",
      bench::median(big_ratio[3]), bench::median(big_ratio[2]), bench::median(small_ratio[3]),
      bench::median(small_ratio[2]));
  srv.stop();
  return 0;
}
