// The winreg server under hostile traffic: several attackers (attacker.h) throw broken PDUs at a
// real server while a well-behaved collector keeps reading perf data through it. The collector
// must get every answer right throughout, the server must close what it cannot use within its
// idle timeout, and afterwards it must serve new connections with nothing left open.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "recorder/client.h"
#include "replayer/host.h"
#include "server/server.h"
#include "server/winreg_handler.h"
#include "synth/synth.h"
#include "tests/server_fuzz/attacker.h"
#include "tests/common/served_host.h"
#include "windows/constants.h"

using namespace perfsim;
using namespace std::chrono_literals;

namespace {

constexpr auto kIdleTimeout = 500ms;
constexpr size_t kMaxPdu = 16384;  // below 65535, so frag_length can exceed it
constexpr unsigned kAttackers = 4;
constexpr size_t kPdusPerAttacker = 1000;

// A small synthetic 2016 host: its Global needs several response fragments.
std::shared_ptr<replayer::SimulatedHost> make_host() {
  synth::Spec spec;
  spec.profile = "2016";
  spec.process_count = 12;
  spec.threads_max = 4;
  spec.duration_s = 30;
  spec.interval_ms = 15000;
  captures::Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 0}, host).ok());
  return host;
}

// Server log lines by event, so the test can say what the server did with the attacks.
struct LogCounts {
  std::mutex mu;
  std::map<std::string, size_t> by_reason;
  std::vector<std::string> lines;
  void add(std::string_view line) {
    {
      std::lock_guard lk(mu);
      if (lines.size() < 200000) lines.emplace_back(line);
    }
    if (line.find("event=conn_close") == std::string_view::npos) return;
    const size_t at = line.find("reason=");
    if (at == std::string_view::npos) return;
    std::string_view reason = line.substr(at + 7);
    reason = reason.substr(0, reason.find(' '));
    std::lock_guard lk(mu);
    ++by_reason[std::string(reason)];
  }
  // What the server logged about the connection from 127.0.0.1:<port>.
  std::string about_peer(const std::string& port) {
    std::lock_guard lk(mu);
    std::string out;
    for (const std::string& l : lines)
      if (l.find("peer=127.0.0.1:" + port + " ") != std::string::npos) out += "\n  server: " + l;
    return out.empty() ? "\n  server: nothing logged for this peer" : out;
  }
  size_t count(const std::string& reason) {
    std::lock_guard lk(mu);
    return by_reason.count(reason) ? by_reason[reason] : 0;
  }
};

// Fixed seeds by default; PERFSIM_FUZZ_SEED=<n> explores others (the seed is printed on failure).
uint64_t seed_base() {
  const char* env = std::getenv("PERFSIM_FUZZ_SEED");
  return env ? std::strtoull(env, nullptr, 0) : 0x5eed0000;
}

struct Expected {
  std::string name;
  Bytes data;
  uint32_t type = 0;
};

// The collector's loop: OpenHKPD, QueryValue Global / 238 / Counter 009, CloseKey. Returns the
// first failure (empty when every call of every round was right).
std::string collect_once(recorder::WinregClient& c, const std::vector<Expected>& expected) {
  winreg::PolicyHandle h;
  if (Status s = c.open_hive(winreg::kOpenHKPD, h); !s.ok()) return "OpenHKPD: " + s.message();
  for (const Expected& e : expected) {
    winreg::QueryValueResponse r;
    if (Status s = c.query_value(h, e.name, uint32_t(e.data.size()), r); !s.ok())
      return "QueryValue " + e.name + ": " + s.message();
    if (r.result != 0) return "QueryValue " + e.name + ": " + windows::werror_name(r.result);
    if (!r.data || *r.data != e.data) return "QueryValue " + e.name + ": wrong bytes";
    if (r.type.value_or(0) != e.type) return "QueryValue " + e.name + ": wrong type";
  }
  uint32_t werr = 1;
  if (Status s = c.close_key(h, werr); !s.ok() || werr != 0) return "CloseKey failed";
  return {};
}

}  // namespace

TEST_CASE("the server keeps serving a collector correctly while attackers throw broken PDUs at it") {
  auto host = make_host();
  const uint32_t tick = host->current_tick();
  std::vector<Expected> expected;
  for (const char* name : {"Global", "238", "Counter 009"}) {
    replayer::ValueContent c = host->content(replayer::PerfKey::kData, name, tick);
    REQUIRE(c.status == 0);
    REQUIRE(!c.data.empty());
    expected.push_back({name, c.data.to_bytes(), c.type});
  }
  REQUIRE(expected[0].data.size() > 3 * 5840);  // several response fragments

  auto log = std::make_shared<LogCounts>();
  testing::ServeOptions opt;
  opt.association.max_request_stub = 16 * 1024;  // low enough that attackers reach it in a few fragments
  opt.threads = 2;
  opt.idle_timeout = kIdleTimeout;
  opt.max_pdu_size = kMaxPdu;
  opt.log = [log](std::string_view line) { log->add(line); };
  testing::ServedHost srv(host, opt);
  REQUIRE(srv.start().ok());
  const uint16_t port = srv.port();

  INFO("attacker seeds from " << seed_base());
  std::vector<std::future<fuzz::AttackReport>> attackers;
  for (unsigned i = 0; i < kAttackers; ++i) {
    fuzz::AttackConfig ac;
    ac.port = port;
    ac.seed = seed_base() + i;
    ac.pdu_budget = kPdusPerAttacker;
    ac.idle_timeout = kIdleTimeout;
    ac.server_max_pdu = kMaxPdu;
    attackers.push_back(std::async(std::launch::async, fuzz::run_attacker, ac));
  }

  // The collector runs until every attacker is done (and at least a few rounds), reconnecting
  // now and then so its connects compete with the attackers' too.
  size_t rounds = 0;
  std::string failure;
  std::unique_ptr<recorder::WinregClient> client;
  auto attackers_done = [&] {
    for (auto& a : attackers)
      if (a.wait_for(0s) != std::future_status::ready) return false;
    return true;
  };
  while (failure.empty() && (rounds < 5 || !attackers_done()) && rounds < 100000) {
    if (!client || rounds % 10 == 0) {
      client.reset();
      if (Status s = recorder::WinregClient::connect("127.0.0.1", port, 10s, client); !s.ok()) {
        failure = "connect: " + s.message();
        break;
      }
    }
    failure = collect_once(*client, expected);
    ++rounds;
  }
  client.reset();
  INFO("collector rounds: " << rounds);
  CHECK(failure.empty());
  INFO("first collector failure: " << failure);

  fuzz::AttackReport total;
  for (auto& a : attackers) {
    fuzz::AttackReport r = a.get();
    total.sessions += r.sessions;
    total.pdus_sent += r.pdus_sent;
    total.replies += r.replies;
    for (const auto& [type, n] : r.replies_by_type) total.replies_by_type[type] += n;
    total.closed_by_server += r.closed_by_server;
    total.stalls += r.stalls;
    total.idle_closes += r.idle_closes;
    total.slowest_stall_close = std::max(total.slowest_stall_close, r.slowest_stall_close);
    total.violations.insert(total.violations.end(), r.violations.begin(), r.violations.end());
  }
  for (const std::string& v : total.violations) {
    const std::string peer_port = v.substr(6, v.find(']') - 6);
    UNSCOPED_INFO("violation: " << v << log->about_peer(peer_port));
  }
  CHECK(total.violations.empty());
  CHECK(total.pdus_sent == kAttackers * kPdusPerAttacker);
  CHECK(total.replies_by_type["response"] > 0);  // requests got through to the service
  CHECK(total.replies_by_type["fault"] > 0);
  CHECK(total.replies_by_type["bind_nak"] > 0);
  CHECK(total.idle_closes > 0);  // the idle timeout was really exercised

  // Everything the attackers opened is closed by now or soon (EOF, reset or idle timeout).
  const auto deadline = std::chrono::steady_clock::now() + kIdleTimeout + 10s;
  while (srv.server().active_connections() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  CHECK(srv.server().active_connections() == 0);

  // And the server still serves a newcomer.
  std::unique_ptr<recorder::WinregClient> late;
  REQUIRE(recorder::WinregClient::connect("127.0.0.1", port, 10s, late).ok());
  CHECK(collect_once(*late, expected).empty());
  late.reset();

  CHECK(log->count("handler_exception") == 0);
  CHECK(log->count("idle_timeout") > 0);
  CHECK(log->count("handler_close") > 0);  // protocol errors closed connections
  CHECK(log->count("bad_version") + log->count("bad_frag_length") > 0);
  std::string reasons;
  for (const auto& [reason, n] : log->by_reason) reasons += " " + reason + "=" + std::to_string(n);
  WARN("attack sessions " << total.sessions << ", PDUs " << total.pdus_sent << ", replies " << total.replies << " ("
                          << total.replies_by_type["response"] << " responses, " << total.replies_by_type["fault"]
                          << " faults, " << total.replies_by_type["bind_nak"] << " bind_naks)"
                          << ", closed by server " << total.closed_by_server << ", stalls " << total.stalls << " ("
                          << total.idle_closes << " idle timeouts)"
                          << " (slowest close " << total.slowest_stall_close.count() << " ms), collector rounds "
                          << rounds << "; server closes:" << reasons);
}
