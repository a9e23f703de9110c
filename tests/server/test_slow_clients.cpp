// Clients that read late or never, on 127.0.0.1 with real winreg answers (a Global of ~30
// fragments): a half-close still gets whole answers. Every wait and loop is bounded.
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
