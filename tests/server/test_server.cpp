// The TCP transport end to end on 127.0.0.1 with ephemeral ports and an echo-like handler.
// Every wait is bounded; nothing asserts on timing.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <future>
#include <thread>

#include "server/server.h"
#include "test_support.h"

using namespace perfsim;
using namespace perfsim::server;
using namespace perfsim::server::test;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  explicit Fixture(size_t reply_size = 24) : factory(std::make_shared<EchoFactory>(reply_size)) {
    cfg.listeners.push_back({"127.0.0.1:0", "default", factory});
    cfg.threads = 2;
    cfg.handle_signals = false;
    cfg.log = log.sink();
  }
  uint16_t start() {
    server = std::make_unique<Server>(cfg);
    Status st = server->start();
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE(server->bound().size() == 1);
    REQUIRE(server->bound()[0].port != 0);
    return server->bound()[0].port;
  }

  CapturedLog log;  // declared first: outlives the server, which logs until it is destroyed
  std::shared_ptr<EchoFactory> factory;
  ServerConfig cfg;
  std::unique_ptr<Server> server;
};

// Polls `cond` every 10 ms for at most 5 s.
template <class Cond>
bool eventually(Cond cond) {
  for (int i = 0; i < 500; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

void require_echo(TestClient& c, uint32_t call_id) {
  REQUIRE(c.send_all(make_pdu(call_id)));
  Reply r;
  REQUIRE(c.recv_reply(r));
  REQUIRE(r.call_id == call_id);
}

bool can_bind(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa = loopback_v4(port);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("PDUs sent in many tiny writes are framed", "[server][net]") {
  Fixture f;
  TestClient c(f.start());
  REQUIRE(c.connected());
  Bytes le = make_pdu(11, 100, true), be = make_pdu(12, 40, false), small = make_pdu(13, 16);
  REQUIRE(c.send_bytewise(le));
  REQUIRE(c.send_bytewise(be));
  REQUIRE(c.send_bytewise(small));
  for (uint32_t id : {11u, 12u, 13u}) {
    Reply r;
    REQUIRE(c.recv_reply(r));
    REQUIRE(r.call_id == id);
  }
  REQUIRE(f.factory->stats.pdus == 3);
}

TEST_CASE("PDUs coalesced into one write are framed, large ones included", "[server][net]") {
  Fixture f;
  TestClient c(f.start());
  Bytes all;
  std::vector<size_t> sizes;
  for (uint32_t i = 0; i < 50; ++i) {
    size_t size = i == 25 ? 65535 : 16 + (i * 37) % 3000;  // one max-size PDU mid-stream
    sizes.push_back(size);
    Bytes p = make_pdu(i, size);
    all.insert(all.end(), p.begin(), p.end());
  }
  REQUIRE(c.send_all(all));
  for (uint32_t i = 0; i < 50; ++i) {
    Reply r;
    REQUIRE(c.recv_reply(r));
    REQUIRE(r.call_id == i);
    REQUIRE(r.seq == i);
    REQUIRE(r.request_size == sizes[i]);
  }
}

TEST_CASE("bad frag_length or version closes only that connection", "[server][net]") {
  Fixture f;
  f.cfg.max_pdu_size = 4096;
  uint16_t port = f.start();
  TestClient good(port);
  require_echo(good, 1);

  Bytes short_frag = make_pdu(2);
  store_le16(&short_frag[8], 8);
  Bytes bad_version = make_pdu(3);
  bad_version[0] = 4;
  Bytes bad_minor = make_pdu(4);
  bad_minor[1] = 1;
  Bytes too_big = make_pdu(5, 4097);
  int n = 0;
  for (const Bytes* bad : {&short_frag, &bad_version, &bad_minor, &too_big}) {
    TestClient victim(port);
    require_echo(victim, 100);  // served normally until the bad PDU
    REQUIRE(victim.send_all(*bad));
    REQUIRE(victim.wait_closed());
    require_echo(good, 10 + n++);
  }
  REQUIRE(f.log.count("reason=bad_frag_length") >= 2);
  REQUIRE(f.log.count("reason=bad_version") >= 2);
  REQUIRE(f.log.contains("event=conn_error"));
}

TEST_CASE("a connection without a complete PDU for the idle timeout is closed", "[server][net]") {
  Fixture f;
  f.cfg.idle_timeout = 200ms;
  uint16_t port = f.start();
  TestClient silent(port);
  TestClient partial(port);
  Bytes pdu = make_pdu(1, 64);
  REQUIRE(partial.send_all(ByteView(pdu).first(20)));  // a PDU that never completes
  REQUIRE(silent.wait_closed());
  REQUIRE(partial.wait_closed());
  REQUIRE(f.log.count("reason=idle_timeout") == 2);
}

TEST_CASE("connections beyond max_connections are closed at accept", "[server][net]") {
  Fixture f;
  f.cfg.max_connections = 2;
  uint16_t port = f.start();
  TestClient a(port), b(port);
  require_echo(a, 1);
  require_echo(b, 2);
  TestClient c(port);
  REQUIRE(c.wait_closed());
  REQUIRE(f.log.contains("event=conn_refused"));
  REQUIRE(f.factory->stats.handlers == 2);

  a.close();
  REQUIRE(eventually([&] { return f.server->active_connections() == 1; }));
  TestClient d(port);
  require_echo(d, 3);
  require_echo(b, 4);
}

TEST_CASE("non-loopback listeners are refused unless allowed", "[server][net]") {
  Fixture f;
  f.cfg.listeners.push_back({"0.0.0.0:0", "wide", f.factory});
  Server s(f.cfg);
  Status st = s.start();
  REQUIRE(!st.ok());
  REQUIRE(st.message().find("loopback") != std::string::npos);
  REQUIRE(s.bound().empty());  // all or nothing: the loopback listener was not left bound
}

TEST_CASE("listeners without a factory or on a taken port fail start()", "[server][net]") {
  Fixture f;
  uint16_t port = f.start();
  ServerConfig again = f.cfg;
  again.listeners = {{"127.0.0.1:" + std::to_string(port), "", f.factory}};
  Status st = Server(again).start();
  REQUIRE(!st.ok());
  REQUIRE(st.message().find(std::to_string(port)) != std::string::npos);
  again.listeners = {{"127.0.0.1:0", "", nullptr}};
  REQUIRE(!Server(again).start().ok());
}

TEST_CASE("stop() ends run(), closes connections and frees the port", "[server][net]") {
  Fixture f;
  f.server = std::make_unique<Server>(f.cfg);
  REQUIRE(f.server->start().ok());
  uint16_t port = f.server->bound()[0].port;
  auto ran = std::async(std::launch::async, [&] { return f.server->run(); });
  TestClient c(port);
  require_echo(c, 1);
  REQUIRE(!can_bind(port));
  f.server->stop();
  REQUIRE(ran.wait_for(5s) == std::future_status::ready);
  REQUIRE(ran.get().ok());
  REQUIRE(c.wait_closed());
  REQUIRE(f.log.contains("reason=shutdown"));
  REQUIRE(f.log.contains("event=server_stop"));
  REQUIRE(can_bind(port));
  f.server->stop();  // idempotent
}

TEST_CASE("SIGTERM makes run() return", "[server][net]") {
  Fixture f;
  f.cfg.handle_signals = true;
  f.server = std::make_unique<Server>(f.cfg);
  REQUIRE(f.server->start().ok());
  auto ran = std::async(std::launch::async, [&] { return f.server->run(); });
  std::raise(SIGTERM);
  bool stopped = ran.wait_for(5s) == std::future_status::ready;
  if (!stopped) f.server->stop();
  REQUIRE(stopped);
  REQUIRE(f.log.contains("event=signal signal=15"));
}

TEST_CASE("a kClose verdict flushes the reply, then closes", "[server][net]") {
  Fixture f;
  TestClient c(f.start());
  require_echo(c, 1);
  REQUIRE(c.send_all(make_pdu(2, 24, true, kPtypeCloseMe)));
  Reply r;
  REQUIRE(c.recv_reply(r));
  REQUIRE(r.call_id == 2);
  REQUIRE(c.wait_closed());
  REQUIRE(f.log.contains("reason=handler_close"));
}

TEST_CASE("a handler that throws closes only its connection", "[server][net]") {
  Fixture f;
  uint16_t port = f.start();
  TestClient good(port), bad(port);
  require_echo(good, 1);
  REQUIRE(bad.send_all(make_pdu(2, 24, true, kPtypeThrow)));
  REQUIRE(bad.wait_closed());
  REQUIRE(f.log.contains("reason=handler_exception detail=\"test handler failure\""));
  require_echo(good, 3);
}

TEST_CASE("64 concurrent connections each get their replies in order", "[server][net]") {
  Fixture f;
  uint16_t port = f.start();
  constexpr int kClients = 64, kPdus = 20;
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<TestClient>(port));
    REQUIRE(clients.back()->connected());
  }
  // Two bursts per client, interleaved across clients, so many connections are busy at once.
  for (int half = 0; half < 2; ++half) {
    for (int i = 0; i < kClients; ++i) {
      Bytes burst;
      for (int k = half * kPdus / 2; k < (half + 1) * kPdus / 2; ++k) {
        Bytes p = make_pdu(uint32_t(i * 1000 + k), 16 + size_t(k * 13));
        burst.insert(burst.end(), p.begin(), p.end());
      }
      REQUIRE(clients[size_t(i)]->send_all(burst));
    }
  }
  for (int i = 0; i < kClients; ++i) {
    for (int k = 0; k < kPdus; ++k) {
      Reply r;
      REQUIRE(clients[size_t(i)]->recv_reply(r));
      REQUIRE(r.call_id == uint32_t(i * 1000 + k));
      REQUIRE(r.seq == uint32_t(k));
    }
  }
  REQUIRE(f.log.count("event=conn_open") == kClients);
}

TEST_CASE("a client that never reads stops the server from reading its requests", "[server][net]") {
  Fixture f(65535);  // every reply is a max-size PDU
  f.cfg.write_queue_limit = 256 * 1024;
  uint16_t port = f.start();
  TestClient c(port, 4096);
  constexpr uint32_t kRequests = 400;  // ~26 MB of replies, far beyond socket buffers + queue
  Bytes all;
  for (uint32_t i = 0; i < kRequests; ++i) {
    Bytes p = make_pdu(i);
    all.insert(all.end(), p.begin(), p.end());
  }
  REQUIRE(c.send_all(all));
  // Wait until the server stops making progress (unchanged for 300 ms), at most 5 s.
  uint64_t last = ~0ull;
  int stable = 0;
  for (int i = 0; i < 100 && stable < 6; ++i) {
    uint64_t now = f.factory->stats.pdus;
    stable = now == last ? stable + 1 : 0;
    last = now;
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(f.factory->stats.pdus < kRequests);
  for (uint32_t i = 0; i < kRequests; ++i) {
    Reply r;
    REQUIRE(c.recv_reply(r));
    REQUIRE(r.call_id == i);
  }
  REQUIRE(f.factory->stats.pdus == kRequests);
}
