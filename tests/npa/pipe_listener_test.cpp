// The named-pipe listener end to end without smbd: this test plays smbd on the unix socket (NPA
// request, reply, then u16-framed PDUs) against the real winreg stack, one host per address.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <mutex>

#include "npa_builder.h"
#include "rpc/pdu.h"
#include "server/pipe_listener.h"
#include "server/server.h"
#include "server/winreg_handler.h"
#include "tests/common/test_capture.h"
#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::server {
namespace {

namespace fs = std::filesystem;
using npa_test::RequestSpec;

struct Log {
  std::mutex mu;
  std::vector<std::string> lines;
  bool contains(const std::string& s) {
    std::lock_guard lk(mu);
    for (const auto& l : lines)
      if (l.find(s) != std::string::npos) return true;
    return false;
  }
};

// A fake smbd: blocking unix-socket client with a 5 s receive timeout on every read.
class FakeSmbd {
 public:
  explicit FakeSmbd(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~FakeSmbd() { ::close(fd_); }
  bool connected() const { return connected_; }
  void send(const Bytes& b) { (void)::send(fd_, b.data(), b.size(), MSG_NOSIGNAL); }
  // Reads exactly n bytes; fewer when the peer closes or 5 s pass.
  Bytes recv(size_t n) {
    Bytes b(n);
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::recv(fd_, b.data() + got, n - got, 0);
      if (r <= 0) break;
      got += size_t(r);
    }
    b.resize(got);
    return b;
  }
  void send_message(const Bytes& pdu) {
    Bytes m(2);
    store_le16(m.data(), uint16_t(pdu.size()));
    put_bytes(m, pdu);
    send(m);
  }
  Bytes recv_message() {
    const Bytes len = recv(2);
    if (len.size() < 2) return {};
    return recv(load_le16(len.data()));
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

Bytes bind_pdu() {
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 4280;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  return rpc::build_bind(rpc::PType::kBind, 1, b);
}

Bytes open_hkpd_pdu(uint32_t call_id) {
  rpc::Request r;
  r.opnum = winreg::kOpenHKPD;
  const Bytes stub = winreg::encode(winreg::OpenHiveRequest{std::nullopt, 0x02000000});
  r.stub = stub;
  r.alloc_hint = uint32_t(stub.size());
  return rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, call_id, r);
}

// OpenHKPD's WERROR as the client sees it, or -1 when no proper response came.
int64_t open_hkpd_result(FakeSmbd& c) {
  c.send_message(open_hkpd_pdu(2));
  const Bytes resp = c.recv_message();
  rpc::Header h;
  rpc::Response r;
  winreg::OpenHiveResponse o;
  if (!rpc::parse_header(resp, h).ok() || h.ptype != rpc::PType::kResponse || !rpc::parse_response(resp, h, r).ok() ||
      !winreg::decode(r.stub, o).ok())
    return -1;
  return o.result;
}

struct Fixture {
  Fixture() {
    dir = fs::temp_directory_path() / ("perfsim-npa-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    path = (dir / "winreg").string();
    REQUIRE(replayer::SimulatedHost::load(testing::test_capture(), {}, host).ok());
    rpc::AssociationConfig ac;
    ac.secondary_address = "\\PIPE\\winreg";
    allowed = std::make_shared<WinregHandlerFactory>(host, ac, winreg::Access::kPerfData);
    denied = std::make_shared<WinregHandlerFactory>(host, ac, winreg::Access::kRegistry);
  }
  ~Fixture() { fs::remove_all(dir); }

  std::unique_ptr<Server> start(int peer_uid) {
    PipeListenerConfig pc;
    pc.socket_path = path;
    pc.allowed_peer_uid = peer_uid;
    pc.handshake_timeout = std::chrono::milliseconds(2000);
    pc.router = [this](const npa::Request& r) {
      PipeRoute route;
      route.name = "host-" + r.local_server_addr;
      if (r.local_server_addr == "127.0.0.2") route.factory = r.account_name == "eve" ? denied : allowed;
      return route;
    };
    ServerConfig cfg;
    cfg.threads = 2;
    cfg.handle_signals = false;
    cfg.log = [this](std::string_view l) {
      std::lock_guard lk(log.mu);
      log.lines.emplace_back(l);
    };
    cfg.extra_listeners.push_back(std::make_shared<PipeListener>(pc));
    auto s = std::make_unique<Server>(cfg);
    const Status st = s->start();
    INFO(st.ToString());
    REQUIRE(st.ok());
    return s;
  }

  fs::path dir;
  std::string path;
  std::shared_ptr<replayer::SimulatedHost> host;
  std::shared_ptr<WinregHandlerFactory> allowed, denied;
  Log log;
};

TEST_CASE("a pipe opened through the NPA handshake serves winreg in message mode", "[npa][pipe]") {
  Fixture fx;
  auto srv = fx.start(int(::getuid()));
  for (uint32_t level : {5u, 7u, 8u}) {
    INFO("level " << level);
    FakeSmbd c(fx.path);
    REQUIRE(c.connected());
    RequestSpec spec;
    spec.level = level;
    c.send(npa_test::build_request(spec));
    const Bytes reply = c.recv(npa::kReplySize);
    REQUIRE(reply.size() == npa::kReplySize);
    CHECK(load_le32(&reply[8]) == level);
    CHECK(load_le32(&reply[32]) == 0);
    c.send_message(bind_pdu());
    const Bytes ack = c.recv_message();
    rpc::Header h;
    REQUIRE(rpc::parse_header(ack, h).ok());
    REQUIRE(h.ptype == rpc::PType::kBindAck);
    rpc::BindAck a;
    REQUIRE(rpc::parse_bind_ack(ack, h, a).ok());
    CHECK(a.secondary_address == "\\PIPE\\winreg");
    REQUIRE(a.results.size() == 1);
    CHECK(a.results[0].result == rpc::kResultAcceptance);
    CHECK(open_hkpd_result(c) == 0);
  }
  CHECK(fx.log.contains("event=pipe_open"));
  CHECK(fx.log.contains("account=alice"));
  CHECK(srv->active_connections() <= 3);
}

TEST_CASE("the router decides per account: OpenHKPD is refused with WERR_ACCESS_DENIED", "[npa][pipe]") {
  Fixture fx;
  auto srv = fx.start(int(::getuid()));
  FakeSmbd c(fx.path);
  RequestSpec spec;
  spec.account = "eve";
  c.send(npa_test::build_request(spec));
  REQUIRE(c.recv(npa::kReplySize).size() == npa::kReplySize);
  c.send_message(bind_pdu());
  REQUIRE(!c.recv_message().empty());
  CHECK(open_hkpd_result(c) == windows::kErrorAccessDenied);
}

TEST_CASE("an address no host owns gets the router's NTSTATUS and a closed socket", "[npa][pipe]") {
  Fixture fx;
  auto srv = fx.start(int(::getuid()));
  FakeSmbd c(fx.path);
  RequestSpec spec;
  spec.local_addr = "127.0.0.9";
  c.send(npa_test::build_request(spec));
  const Bytes reply = c.recv(npa::kReplySize);
  REQUIRE(reply.size() == npa::kReplySize);
  CHECK(load_le32(&reply[32]) == 0xC0000034);
  CHECK(c.recv(1).empty());  // closed
}

TEST_CASE("a peer that is not the allowed uid is closed before any reply", "[npa][pipe]") {
  Fixture fx;
  auto srv = fx.start(int(::getuid()) + 4242);
  FakeSmbd c(fx.path);
  REQUIRE(c.connected());
  c.send(npa_test::build_request(RequestSpec{}));
  CHECK(c.recv(npa::kReplySize).empty());
  srv->stop();
  CHECK(fx.log.contains("reason=peer_not_allowed"));
}

TEST_CASE("garbage, a truncated request and silence are refused, the listener goes on", "[npa][pipe]") {
  Fixture fx;
  auto srv = fx.start(int(::getuid()));
  {
    FakeSmbd c(fx.path);
    c.send(Bytes{0, 0, 0, 40, 'N', 'O', 'P', 'E'});
    CHECK(c.recv(1).empty());
  }
  {
    FakeSmbd c(fx.path);
    Bytes req = npa_test::build_request(RequestSpec{});
    store_le32(&req[8], 9);  // unknown level
    store_le32(&req[12], 9);
    c.send(req);
    CHECK(c.recv(1).empty());
  }
  {
    FakeSmbd c(fx.path);  // says nothing: the handshake timeout (2 s here) closes it
    CHECK(c.recv(1).empty());
  }
  FakeSmbd ok(fx.path);
  ok.send(npa_test::build_request(RequestSpec{}));
  CHECK(ok.recv(npa::kReplySize).size() == npa::kReplySize);
  srv->stop();
  CHECK(fx.log.contains("reason=npa_bad_magic"));
  CHECK(fx.log.contains("reason=npa_bad_request"));
  CHECK(fx.log.contains("reason=handshake_timeout"));
}

TEST_CASE("stopping the server closes pipes mid-handshake and removes the socket", "[npa][pipe]") {
  Fixture fx;
  auto srv = fx.start(int(::getuid()));
  REQUIRE(fs::exists(fx.path));
  FakeSmbd idle(fx.path);  // never sends: still in the handshake
  FakeSmbd open(fx.path);  // fully open pipe
  open.send(npa_test::build_request(RequestSpec{}));
  REQUIRE(open.recv(npa::kReplySize).size() == npa::kReplySize);
  srv->stop();
  CHECK(idle.recv(1).empty());
  CHECK(open.recv(1).empty());
  CHECK_FALSE(fs::exists(fx.path));
  CHECK(srv->active_connections() == 0);
}

TEST_CASE("a stale socket file from a killed run is replaced", "[npa][pipe]") {
  Fixture fx;
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", fx.path.c_str());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    ::close(fd);  // the file stays, nobody listens
  }
  auto srv = fx.start(int(::getuid()));
  FakeSmbd c(fx.path);
  c.send(npa_test::build_request(RequestSpec{}));
  CHECK(c.recv(npa::kReplySize).size() == npa::kReplySize);
}

}  // namespace
}  // namespace perfsim::server
