// Clients that read late or never, on 127.0.0.1 with real winreg answers (a Global of ~30
// fragments): a half-close still gets whole answers; never-reading clients stay within the
// server's reply budget while a collector keeps being answered. Every wait and loop is bounded.
#include <catch2/catch.hpp>

#include "server/server.h"
#include "server/winreg_handler.h"
#include "test_support.h"
#include "winreg_client.h"

using namespace perfsim;
using namespace perfsim::server;
using namespace perfsim::server::test;

namespace {

struct WinregServer {
  explicit WinregServer(ServerConfig base = {}) : cfg(std::move(base)) {
    cfg.listeners.push_back({"127.0.0.1:0", "default", std::make_shared<WinregHandlerFactory>(synth_host())});
    if (cfg.threads == 0) cfg.threads = 2;
    cfg.handle_signals = false;
    cfg.log = log.sink();
  }
  uint16_t start() {
    server = std::make_unique<Server>(cfg);
    Status st = server->start();
    INFO(st.ToString());
    REQUIRE(st.ok());
    return server->bound()[0].port;
  }
  CapturedLog log;  // outlives the server
  ServerConfig cfg;
  std::unique_ptr<Server> server;
};

}  // namespace

// Before the fix, EOF on read closed the connection while the answer was being written: about
// half the runs got a truncated answer (16 of 31 fragments, no PFC_LAST_FRAG).
// The client's small receive buffer keeps the answers' write in flight when the server reads EOF.
TEST_CASE("a client that half-closes after its request reads the whole answer to EOF", "[server][net]") {
  WinregServer s;
  const uint16_t port = s.start();
  constexpr uint32_t kQueries = 2;
  for (int round = 0; round < 10; ++round) {
    INFO("round " << round);
    TestClient c(port, 16384);
    REQUIRE(c.connected());
    const winreg::PolicyHandle h = bind_and_open(c);
    for (uint32_t q = 0; q < kQueries; ++q) REQUIRE(c.send_all(query_global(h, 3 + q)));
    c.shutdown_write();
    Bytes stream;
    REQUIRE(c.recv_to_eof(stream));
    const FragmentCount n = count_fragments(stream);
    CHECK(n.whole);
    CHECK(n.fragments > 16 * kQueries);
    CHECK(n.last_frags == kQueries);  // every answer complete
  }
  CHECK(s.log.count("reason=peer_closed") == 10);
  CHECK_FALSE(s.log.contains("conn_error"));
}

namespace {

// Reads one whole answer: response PDUs until PFC_LAST_FRAG. False on a timeout or close.
bool recv_answer(TestClient& c, size_t& fragments) {
  fragments = 0;
  for (int i = 0; i < 10000; ++i) {
    Bytes pdu;
    if (!recv_pdu(c, pdu)) return false;
    if (pdu[2] != uint8_t(rpc::PType::kResponse)) return false;
    ++fragments;
    if (pdu[3] & rpc::kPfcLastFrag) return true;
  }
  return false;
}

}  // namespace

// Before the budget, each never-reading connection kept its queued answers (about one Global
// beyond write_queue_limit) for the idle timeout: 12 of them held ~14 MB, unbounded in the count.
TEST_CASE("never-reading clients stay within the reply budget while a collector keeps its answers", "[server][net]") {
  constexpr size_t kBudget = 4u << 20;
  constexpr size_t kSlack = 1u << 20;  // one handler batch (a Global, ~180 KB) per worker thread, and more
  ServerConfig cfg;
  cfg.reply_budget = kBudget;
  WinregServer s(cfg);
  const uint16_t port = s.start();

  std::vector<std::unique_ptr<TestClient>> hogs;
  for (int i = 0; i < 12; ++i) {
    hogs.push_back(std::make_unique<TestClient>(port, 4096));
    REQUIRE(hogs.back()->connected());
    const winreg::PolicyHandle h = bind_and_open(*hogs.back());
    // More answers than the kernel takes into its socket buffers (~4 MB on loopback): the rest is ours.
    for (uint32_t q = 0; q < 60; ++q) REQUIRE(hogs.back()->send_all(query_global(h, 3 + q)));
  }

  TestClient collector(port);
  REQUIRE(collector.connected());
  const winreg::PolicyHandle h = bind_and_open(collector);
  for (uint32_t q = 0; q < 30; ++q) {
    INFO("collector query " << q);
    REQUIRE(collector.send_all(query_global(h, 100 + q)));
    size_t fragments = 0;
    REQUIRE(recv_answer(collector, fragments));
    CHECK(fragments > 16);
    CHECK(s.server->reply_stats().queued <= kBudget + kSlack);
  }
  const Server::ReplyStats st = s.server->reply_stats();
  INFO("peak " << st.peak << " queued " << st.queued);
  CHECK(st.limit == kBudget);
  CHECK(st.peak > kBudget / 2);  // the hogs did press on the budget
  CHECK(st.peak <= kBudget + kSlack);
  CHECK(st.evictions > 0);
  CHECK(s.log.contains("reason=slow_reader"));
}
