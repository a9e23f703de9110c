// The client's DCE/RPC layer (recorder/rpc_channel.h) against a server made of bytes: answers that
// a hostile or broken server sends, each refused with a clear Status and within the bounds the
// channel promises (kMaxResponseStub, kMaxResponseFragments), never read without end.
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "recorder/rpc_channel.h"
#include "rpc/pdu.h"

using namespace perfsim;

namespace {

// A server of bytes: `script` first, then PDUs from `more` (nullopt: the server closes). Counts
// the PDUs `more` made, so a test sees how far the client read (shared: the channel owns and
// destroys the server before the test looks).
class ScriptedServer final : public recorder::ByteStream {
 public:
  Bytes script;
  std::function<std::optional<Bytes>()> more;
  std::shared_ptr<size_t> made = std::make_shared<size_t>(0);
  std::vector<Bytes> written;

  Status write(ByteView b) override {
    written.emplace_back(b.begin(), b.end());
    return Status::Ok();
  }
  Status read_exact(size_t n, Bytes& out) override {
    while (script.size() - pos_ < n) {
      std::optional<Bytes> next = more ? more() : std::nullopt;
      if (!next) return Status::IOError("receive: End of file");
      ++*made;
      script.erase(script.begin(), script.begin() + pos_);
      pos_ = 0;
      script.insert(script.end(), next->begin(), next->end());
    }
    out.assign(script.begin() + pos_, script.begin() + pos_ + n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  size_t pos_ = 0;
};

// The bind_ack a Windows host answers our bind with: winreg over NDR 2.0 accepted, 5840 bytes.
Bytes accepting_bind_ack() {
  rpc::BindAck a;
  a.max_xmit_frag = a.max_recv_frag = 5840;
  a.assoc_group_id = 0x1234;
  a.secondary_address = "49152";
  a.results.push_back({rpc::kResultAcceptance, 0, rpc::ndr20_syntax()});
  return rpc::build_bind_ack(rpc::PType::kBindAck, 1, a);
}

// One response fragment of call 2 (our first call after the bind) with `n` stub bytes.
Bytes fragment(size_t n, bool last) {
  const Bytes stub(n, 0x5a);
  return rpc::build_response(last ? rpc::kPfcLastFrag : 0, 2, {uint32_t(n), 0, 0, stub});
}

// Binds over `srv` (unauthenticated) and makes one call; the channel's Status.
Status one_call(std::unique_ptr<ScriptedServer> srv, Bytes& out) {
  std::unique_ptr<recorder::Channel> ch;
  if (Status s = recorder::bind_rpc_channel(std::move(srv), "hostile:4135", "test", std::nullopt, nullptr, ch); !s.ok())
    return s;
  return ch->call(17, Bytes(40, 0), out);
}

constexpr size_t kChunk = 65504;  // stub bytes of a 65,528-byte fragment, a multiple of 8

}  // namespace

TEST_CASE("rpc_channel: a response of 64 MiB and its framing is reassembled whole", "[recorder][client_bounds]") {
  auto srv = std::make_unique<ScriptedServer>();
  srv->script = accepting_bind_ack();
  size_t left = recorder::kMaxResponseStub;
  srv->more = [&left]() -> std::optional<Bytes> {
    if (!left) return std::nullopt;
    const size_t n = std::min(left, kChunk);
    left -= n;
    return fragment(n, left == 0);
  };
  Bytes out;
  const Status s = one_call(std::move(srv), out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(out.size() == recorder::kMaxResponseStub);
  CHECK(recorder::kMaxResponseStub >= 64u * 1024 * 1024);  // the largest value winreg carries fits
}

TEST_CASE("rpc_channel: a response growing past 64 MiB is refused at the fragment that crosses the bound",
          "[recorder][client_bounds]") {
  auto srv = std::make_unique<ScriptedServer>();
  const std::shared_ptr<size_t> made = srv->made;
  srv->script = accepting_bind_ack();
  // Full fragments without a last one, well past the bound (and then the server closes).
  constexpr size_t offered = recorder::kMaxResponseStub / kChunk + 64;
  srv->more = [made]() -> std::optional<Bytes> {
    if (*made >= offered) return std::nullopt;
    return fragment(kChunk, false);
  };
  Bytes out;
  const Status s = one_call(std::move(srv), out);
  INFO(s.ToString());
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("hostile:4135's response to call 2 is larger than") != std::string::npos);
  CHECK(s.message().find("64 MiB") != std::string::npos);
  CHECK(*made == recorder::kMaxResponseStub / kChunk + 1);  // stopped reading there
  CHECK(out.size() <= recorder::kMaxResponseStub);
}

TEST_CASE("rpc_channel: empty fragments without end are refused after kMaxResponseFragments",
          "[recorder][client_bounds]") {
  auto srv = std::make_unique<ScriptedServer>();
  const std::shared_ptr<size_t> made = srv->made;
  srv->script = accepting_bind_ack();
  constexpr size_t offered = recorder::kMaxResponseFragments * 2;
  srv->more = [made]() -> std::optional<Bytes> {
    if (*made >= offered) return std::nullopt;
    return fragment(0, false);
  };
  Bytes out;
  const Status s = one_call(std::move(srv), out);
  INFO(s.ToString());
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("more than 65536 fragments") != std::string::npos);
  CHECK(*made == recorder::kMaxResponseFragments);
}

TEST_CASE("rpc_channel: a response in exactly kMaxResponseFragments fragments is accepted",
          "[recorder][client_bounds]") {
  auto srv = std::make_unique<ScriptedServer>();
  const std::shared_ptr<size_t> made = srv->made;
  srv->script = accepting_bind_ack();
  srv->more = [made]() -> std::optional<Bytes> {
    if (*made >= recorder::kMaxResponseFragments) return std::nullopt;
    return fragment(8, *made + 1 == recorder::kMaxResponseFragments);
  };
  Bytes out;
  const Status s = one_call(std::move(srv), out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(out.size() == 8 * recorder::kMaxResponseFragments);
}
