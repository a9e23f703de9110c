// Our client's side of authentication against a hostile server (what fuzz_client found, each
// kept here): rpc/auth.h's client SecurityContext given tokens a server should not send, and
// recorder/rpc_channel.h bound through a real authenticated association whose answers a man in the
// middle rewrites. Every refusal must be a Status, never a crash in MIT's SPNEGO or gss-ntlmssp,
// and every PDU the client writes must be well formed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>

#include "recorder/rpc_channel.h"
#include "rpc/association.h"
#include "rpc/auth.h"
#include "rpc/ntlm_challenge.h"
#include "rpc/pdu.h"

using namespace perfsim;

namespace {

const rpc::ClientIdentity kAlice{"", "alice", "Secret-1"};

std::shared_ptr<const rpc::AuthService> service() {
  static const std::shared_ptr<const rpc::AuthService> s = [] {
    std::shared_ptr<const rpc::AuthService> out;
    REQUIRE(rpc::AuthService::create({{kAlice.user, kAlice.password}}, out).ok());
    return out;
  }();
  return s;
}

// A client context of `type` past its first leg, and the server's answer to it (the CHALLENGE,
// raw or in a NegTokenResp) from perfsim's own server context.
struct FirstLeg {
  explicit FirstLeg(uint8_t type) : server(rpc::SecurityContext::server(service(), type)) {
    REQUIRE(rpc::SecurityContext::client(kAlice, type, client).ok());
    Bytes first;
    REQUIRE(client->step({}, first).ok());
    REQUIRE(server->step(first, answer).ok());
  }
  std::unique_ptr<rpc::SecurityContext> client;
  std::unique_ptr<rpc::SecurityContext> server;
  Bytes answer;
};

// The NTLMSSP message inside a token: at the signature (a NegTokenResp carries it whole).
size_t ntlm_at(const Bytes& token) {
  static const uint8_t sig[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
  const auto it = std::search(token.begin(), token.end(), sig, sig + 8);
  REQUIRE(it != token.end());
  return size_t(it - token.begin());
}

// A DER TLV with a definite length.
Bytes der(uint8_t tag, const Bytes& content) {
  const size_t n = content.size();
  Bytes b;
  b.reserve(n + 4);
  b.push_back(tag);
  if (n >= 0x80) {
    b.push_back(0x82);
    b.push_back(uint8_t(n >> 8));
  }
  b.push_back(uint8_t(n));
  b.insert(b.end(), content.begin(), content.end());
  return b;
}

// A NegTokenResp (accept-incomplete, NTLMSSP) carrying `challenge`, as a Windows host sends it.
Bytes neg_token_resp(const Bytes& challenge) {
  const Bytes ntlm_oid = {0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
  Bytes seq = der(0xa0, {0x0a, 0x01, 0x01});
  const Bytes mech = der(0xa1, ntlm_oid), token = der(0xa2, der(0x04, challenge));
  seq.insert(seq.end(), mech.begin(), mech.end());
  seq.insert(seq.end(), token.begin(), token.end());
  return der(0xa1, der(0x30, seq));
}

// `challenge` with its TargetName emptied (length 0), flags untouched: the target type stays set.
Bytes without_target_name(Bytes challenge) {
  store_le16(&challenge[12], 0);
  store_le16(&challenge[14], 0);
  return challenge;
}

// `challenge` with an MsvAvDnsTreeName of `extra` bytes ("aaa..." in UTF-16, so rounded down to
// an even count) put before its MsvAvEOL.
Bytes with_larger_target_info(Bytes c, size_t extra) {
  const size_t len = load_le16(&c[40]), off = load_le32(&c[44]);
  REQUIRE(off + len == c.size());  // gss-ntlmssp puts the target info last
  Bytes pair = {5, 0};
  put_le16(pair, uint16_t(extra & ~size_t(1)));
  for (size_t i = 0; i < extra / 2; ++i) pair.insert(pair.end(), {'a', 0});
  c.insert(c.end() - 4, pair.begin(), pair.end());
  store_le16(&c[40], uint16_t(len + pair.size()));
  store_le16(&c[42], uint16_t(len + pair.size()));
  return c;
}

// perfsim's server in memory: a real rpc::Association with alice's account. The client's PDUs go
// to it, its replies come back through `edit`, and every PDU the client writes must parse.
class MitmServer final : public recorder::ByteStream {
 public:
  std::function<void(Bytes&)> edit = [](Bytes&) {};
  // Shared: the channel owns the server and destroys it when the bind fails, before the test looks.
  std::shared_ptr<bool> client_wrote_garbage = std::make_shared<bool>(false);

  MitmServer() : assoc_(config()) {}
  Status write(ByteView b) override {
    rpc::Header h;
    *client_wrote_garbage = *client_wrote_garbage || !rpc::parse_header(b, h).ok();
    const rpc::CallHandler answer = [](uint16_t, ByteView, Bytes& out) {
      out.assign(64, 0x5a);
      return 0u;
    };
    for (Bytes& r : assoc_.process(b, answer).replies) {
      edit(r);
      out_.insert(out_.end(), r.begin(), r.end());
    }
    return Status::Ok();
  }
  Status read_exact(size_t n, Bytes& out) override {
    if (n > out_.size() - pos_) return Status::IOError("receive: End of file");
    out.assign(out_.begin() + pos_, out_.begin() + pos_ + n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  static rpc::AssociationConfig config() {
    rpc::AssociationConfig cfg;
    cfg.auth = service();
    return cfg;
  }
  rpc::Association assoc_;
  Bytes out_;
  size_t pos_ = 0;
};

// The token of a bind_ack / alter_context_resp replaced by `token` (its sec_trailer kept).
void replace_token(Bytes& pdu, const Bytes& token) {
  const size_t auth_length = load_le16(&pdu[10]);
  REQUIRE(auth_length > 0);
  pdu.resize(pdu.size() - auth_length);
  pdu.insert(pdu.end(), token.begin(), token.end());
  REQUIRE(pdu.size() <= 0xffff);
  store_le16(&pdu[8], uint16_t(pdu.size()));
  store_le16(&pdu[10], uint16_t(token.size()));
}

// Binds as alice over `srv` at sign; the channel's Status.
Status bind_channel(std::unique_ptr<MitmServer> srv, uint8_t auth_type) {
  const recorder::TcpAuth auth{kAlice, auth_type, rpc::kAuthLevelIntegrity};
  std::unique_ptr<rpc::SecurityContext> sec;
  REQUIRE(rpc::SecurityContext::client(kAlice, auth_type, sec).ok());
  std::unique_ptr<recorder::Channel> ch;
  return recorder::bind_rpc_channel(std::move(srv), "mitm:4135", "test", auth, std::move(sec), ch);
}

}  // namespace

TEST_CASE("client SecurityContext: perfsim's own CHALLENGE passes the check before gss-ntlmssp", "[rpcauth][client]") {
  FirstLeg leg(rpc::kAuthTypeNtlmssp);
  const Status s = rpc::check_ntlm_challenge(leg.answer);
  INFO(s.ToString());
  CHECK(s.ok());
  Bytes authenticate;
  CHECK(leg.client->step(leg.answer, authenticate).ok());
  CHECK(leg.client->established());
}

TEST_CASE("client SecurityContext: a SPNEGO leg without a token is refused, not handed to MIT's SPNEGO",
          "[rpcauth][client]") {
  FirstLeg leg(rpc::kAuthTypeSpnego);
  Bytes out;
  REQUIRE(leg.client->step(leg.answer, out).ok());
  REQUIRE_FALSE(leg.client->established());
  const Status s = leg.client->step({}, out);  // MIT krb5 1.20 dereferenced NULL here
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("carries no authentication token") != std::string::npos);
}

TEST_CASE("client SecurityContext: an empty TargetName under a target type is refused before gss-ntlmssp",
          "[rpcauth][client]") {
  FirstLeg ntlm(rpc::kAuthTypeNtlmssp);
  Bytes out;
  Status s = ntlm.client->step(without_target_name(ntlm.answer), out);  // gss-ntlmssp 1.2 crashed on it
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("target type is set but TargetName is empty") != std::string::npos);

  FirstLeg spnego(rpc::kAuthTypeSpnego);
  const Bytes& resp = spnego.answer;
  const Bytes challenge(resp.begin() + ntlm_at(resp), resp.end());
  s = spnego.client->step(neg_token_resp(without_target_name(challenge)), out);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("target type is set but TargetName is empty") != std::string::npos);
}

TEST_CASE("client SecurityContext: a SPNEGO answer that is not a NegTokenResp is refused", "[rpcauth][client]") {
  FirstLeg leg(rpc::kAuthTypeSpnego);
  Bytes out;
  const Bytes challenge(leg.answer.begin() + ntlm_at(leg.answer), leg.answer.end());
  const Status s = leg.client->step(challenge, out);  // a bare CHALLENGE where SPNEGO is spoken
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("not a NegTokenResp") != std::string::npos);
}

TEST_CASE("rpc_channel: an alter_context_resp without a token fails the SPNEGO bind naming the host",
          "[rpcauth][client]") {
  auto srv = std::make_unique<MitmServer>();
  const std::shared_ptr<bool> wrote_garbage = srv->client_wrote_garbage;
  srv->edit = [](Bytes& pdu) {
    if (pdu[2] != uint8_t(rpc::PType::kAlterContextResp)) return;
    const size_t auth_length = load_le16(&pdu[10]);
    const size_t pad = pdu[pdu.size() - auth_length - rpc::kSecTrailerSize + 2];
    pdu.resize(pdu.size() - auth_length - rpc::kSecTrailerSize - pad);
    store_le16(&pdu[8], uint16_t(pdu.size()));
    store_le16(&pdu[10], 0);
  };
  const Status s = bind_channel(std::move(srv), rpc::kAuthTypeSpnego);
  INFO(s.ToString());
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("mitm:4135 answered the SPNEGO leg of alice's logon without a token") != std::string::npos);
  CHECK_FALSE(*wrote_garbage);
}

TEST_CASE("rpc_channel: a CHALLENGE too large for the answer to fit one PDU is refused, nothing malformed sent",
          "[rpcauth][client]") {
  auto srv = std::make_unique<MitmServer>();
  const std::shared_ptr<bool> wrote_garbage = srv->client_wrote_garbage;
  srv->edit = [](Bytes& pdu) {
    if (pdu[2] != uint8_t(rpc::PType::kBindAck)) return;
    const Bytes challenge(pdu.end() - load_le16(&pdu[10]), pdu.end());
    // As large as a bind_ack can carry: the AUTHENTICATE echoing it would pass 65,535 bytes.
    const size_t extra = 0xffff - pdu.size() - 4;
    replace_token(pdu, with_larger_target_info(challenge, extra));
  };
  const Status s = bind_channel(std::move(srv), rpc::kAuthTypeNtlmssp);
  INFO(s.ToString());
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("mitm:4135") != std::string::npos);
  CHECK(s.message().find("TargetInfo of") != std::string::npos);  // rpc/ntlm_challenge.h refuses it first
  CHECK_FALSE(*wrote_garbage);
}
