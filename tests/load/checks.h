// What the load tests (TCP and SMB) share: `perfsim load --json` run and its calls per host, and
// the server's own counts of a `perfsim serve --admin` they are checked against (per-host series of
// /metrics: fleets of at most 50 hosts get them by default). PERFSIM_EXE is the test's.
#pragma once
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/admin/http_client.h"
#include "tests/common/run_command.h"

namespace perfsim::testing {

// host -> sum of a counter's series over its other labels.
inline std::map<std::string, uint64_t> per_host_counts(uint16_t admin_port, const std::string& metric) {
  const auto r = http_request(admin_port, "GET", "/metrics");
  REQUIRE(r.status == 200);
  std::map<std::string, uint64_t> out;
  const std::regex line("^" + metric + R"re(\{host="([^"]+)"[^}]*\} (\d+))re");
  std::istringstream in(r.body);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) out[m[1]] += std::stoull(m[2]);
  }
  return out;
}

// The server counts a call as it answers it: waits (bounded, 5 s) until its calls per host reach
// `want`, and returns what it counted last.
inline std::map<std::string, uint64_t> server_calls_when(uint16_t admin_port,
                                                         const std::map<std::string, uint64_t>& want) {
  std::map<std::string, uint64_t> got;
  for (int i = 0; i < 50; ++i) {
    got = per_host_counts(admin_port, "perfsim_winreg_calls_total");
    if (got == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return got;
}

// "HOST=N HOST=N" for a failure's message (Catch2 prints a map of pairs as {?}).
inline std::string counts_text(const std::map<std::string, uint64_t>& counts) {
  std::string out;
  for (const auto& [host, n] : counts) out += (out.empty() ? "" : " ") + host + "=" + std::to_string(n);
  return out;
}

// `perfsim load --json ARGS`, bounded (120 s), required to exit with `want_code`.
inline nlohmann::json load_json(const std::string& args, int want_code) {
  const auto r = run_command(PERFSIM_EXE, "load --json " + args, 120);
  INFO("perfsim load --json " << args << "\n" << r.err);
  REQUIRE(r.code == want_code);
  return nlohmann::json::parse(r.out);
}

// host -> calls of a perfsim load report.
inline std::map<std::string, uint64_t> calls_by_host(const nlohmann::json& report) {
  std::map<std::string, uint64_t> out;
  for (const nlohmann::json& h : report.at("per_host")) out[h.at("host")] = h.at("calls").get<uint64_t>();
  return out;
}

// One host of a run of `collectors` kept sessions, each polling 238 (fits an 8 KiB first buffer)
// and Global (does not): every session grew Global's buffer once and kept the size that worked
// (frozen timeline), so calls = 2 a poll + collectors x (OpenHKPD + CloseKey + the MORE_DATA
// answers on the way), with no errors and one connect a session. kBundled2016Growth: the bundled
// 2016 host echoes the size offered (windows/README.md "A buffer too small"), so load doubles
// 8 KiB until Global (~153 KB) fits: 8, 16, 32, 64 and 128 KiB answered ERROR_MORE_DATA.
inline constexpr uint64_t kBundled2016Growth = 5;
inline void check_kept_buffer_host(const nlohmann::json& h, uint64_t collectors,
                                   uint64_t more_data = kBundled2016Growth) {
  INFO(h.dump());
  const uint64_t polls = h.at("polls");
  CHECK(polls > 0);
  CHECK(h.at("connects") == collectors);
  CHECK(h.at("errors").at("total") == 0);
  CHECK(h.at("calls") == 2 * polls + (2 + more_data) * collectors);
  const nlohmann::json& l = h.at("latency_ms");
  CHECK(l.at("p50") <= l.at("p90"));
  CHECK(l.at("p90") <= l.at("p99"));
  CHECK(l.at("p99") <= l.at("max"));
  CHECK(l.at("max") > 0);
}

}  // namespace perfsim::testing
