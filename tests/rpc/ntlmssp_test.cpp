// NTLMSSP messages checked before gss-ntlmssp sees them (rpc/ntlmssp.h), built here by hand from
// MS-NLMP 2.2.1.3's layout, and the same checks on a real handshake through the association: the
// two AUTHENTICATE variants that crashed perfsim serve (issue 28) get a refusal naming the field.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "rpc/association.h"
#include "rpc/ntlmssp.h"

using namespace perfsim;
using namespace perfsim::rpc;

namespace {

// MS-NLMP 4.2.4's NTLMv2 example flags: KEY_EXCH, 56, 128, VERSION, TARGET_INFO, ESS,
// TARGET_TYPE_SERVER, ALWAYS_SIGN, NTLM, SEAL, SIGN, OEM, UNICODE.
constexpr uint32_t kChallengeFlags = 0xe28a8233;

Bytes utf16(const std::string& s) {
  Bytes b;
  for (char c : s) put_le16(b, uint16_t(uint8_t(c)));
  return b;
}

struct AuthMsg {
  Bytes lm = Bytes(24, 0);
  Bytes nt;
  Bytes domain = utf16("WORKGROUP");
  Bytes user = utf16("alice");
  Bytes workstation = utf16("COLLECTOR");
  Bytes key = Bytes(16, 0x5a);
  uint32_t flags = kChallengeFlags;
};

// 2.2.1.3: the fixed part, Version and MIC, then the payload fields in order.
Bytes build(const AuthMsg& a) {
  Bytes m = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 3, 0, 0, 0};
  m.resize(88, 0);
  store_le32(&m[60], a.flags);
  const Bytes* fields[] = {&a.lm, &a.nt, &a.domain, &a.user, &a.workstation, &a.key};
  for (size_t i = 0; i < 6; ++i) {
    store_le16(&m[12 + 8 * i], uint16_t(fields[i]->size()));
    store_le16(&m[14 + 8 * i], uint16_t(fields[i]->size()));
    store_le32(&m[16 + 8 * i], uint32_t(m.size()));
    put_bytes(m, *fields[i]);
  }
  return m;
}

// 2.2.2.8 / 2.2.2.7: NTProofStr, the client challenge, AV pairs, MsvAvEOL (when `eol`), Z(4).
Bytes ntlmv2(uint64_t timestamp, const std::vector<std::pair<uint16_t, Bytes>>& av, bool eol = true) {
  Bytes r(16, 0xab);
  r.insert(r.end(), {1, 1, 0, 0, 0, 0, 0, 0});
  put_le64(r, timestamp);
  r.insert(r.end(), 8, 0x11);
  r.insert(r.end(), 4, 0);
  for (const auto& [id, v] : av) {
    put_le16(r, id);
    put_le16(r, uint16_t(v.size()));
    put_bytes(r, v);
  }
  if (eol) r.insert(r.end(), 4, 0);
  r.insert(r.end(), 4, 0);
  return r;
}

const uint64_t kNow = ntlmssp::filetime_now();

AuthMsg v2() {
  AuthMsg a;
  a.nt = ntlmv2(kNow, {{1, utf16("HOST")}, {2, utf16("WORKGROUP")}, {7, Bytes(8, 1)}});
  return a;
}

std::string refusal(const AuthMsg& a, uint32_t challenge_flags = kChallengeFlags) {
  ntlmssp::Authenticate out;
  Status s = ntlmssp::check_authenticate(build(a), challenge_flags, kNow, out);
  return s.ok() ? std::string() : s.message();
}

}  // namespace

TEST_CASE("an NTLMv2 and an NTLMv1 AUTHENTICATE laid out as MS-NLMP 2.2.1.3 pass", "[ntlmssp]") {
  CHECK(refusal(v2()).empty());
  AuthMsg v1;
  v1.nt = Bytes(24, 0x33);
  CHECK(refusal(v1).empty());
}

TEST_CASE("KEY_EXCH with a missing or short EncryptedRandomSessionKey is refused naming it", "[ntlmssp]") {
  AuthMsg a = v2();
  a.key.clear();
  CHECK_THAT(refusal(a), Catch::Contains("EncryptedRandomSessionKey of 0 bytes"));
  a.key = Bytes(8, 1);
  CHECK_THAT(refusal(a), Catch::Contains("EncryptedRandomSessionKey of 8 bytes"));
  // Without KEY_EXCH agreed the field is not used.
  a.flags &= ~ntlmssp::kFlagKeyExch;
  CHECK(refusal(a, kChallengeFlags & ~ntlmssp::kFlagKeyExch).empty());
}

TEST_CASE("flags that drop KEY_EXCH or are 0 or claim what the CHALLENGE did not agree to are refused", "[ntlmssp]") {
  AuthMsg a = v2();
  a.flags = kChallengeFlags & ~ntlmssp::kFlagKeyExch;
  CHECK_THAT(refusal(a), Catch::Contains("drop NTLMSSP_NEGOTIATE_KEY_EXCH"));
  a.flags = 0;
  CHECK_THAT(refusal(a), Catch::Contains("drop NTLMSSP_NEGOTIATE_KEY_EXCH"));
  a.flags = kChallengeFlags;
  const uint32_t no_seal = kChallengeFlags & ~ntlmssp::kFlagSeal;
  CHECK_THAT(refusal(a, no_seal), Catch::Contains("did not agree to"));
  a.flags = kChallengeFlags | ntlmssp::kFlagKeyExch;
  CHECK_THAT(refusal(a, kChallengeFlags & ~ntlmssp::kFlagKeyExch), Catch::Contains("add NTLMSSP_NEGOTIATE_KEY_EXCH"));
}

TEST_CASE("a payload field outside the message or inside its header is refused naming the field", "[ntlmssp]") {
  Bytes m = build(v2());
  store_le32(&m[40], uint32_t(m.size()) - 4);  // UserNameFields.BufferOffset: 10 bytes from 4 left
  ntlmssp::Authenticate out;
  Status s = ntlmssp::check_authenticate(m, kChallengeFlags, kNow, out);
  CHECK_THAT(s.message(), Catch::Contains("UserName (10 bytes at offset"));
  m = build(v2());
  store_le32(&m[32], 8);  // DomainNameFields pointing into the header
  CHECK_THAT(ntlmssp::check_authenticate(m, kChallengeFlags, kNow, out).message(), Catch::Contains("DomainName"));
  m.resize(63);
  CHECK_THAT(ntlmssp::check_authenticate(m, kChallengeFlags, kNow, out).message(), Catch::Contains("63 bytes"));
}

TEST_CASE("user and domain names with a NUL or odd UTF-16 or over the bound are refused", "[ntlmssp]") {
  AuthMsg a = v2();
  a.user = utf16("alice");
  a.user.insert(a.user.end(), {0, 0});
  CHECK_THAT(refusal(a), Catch::Contains("UserName contains a NUL"));
  a = v2();
  a.domain.push_back('X');
  CHECK_THAT(refusal(a), Catch::Contains("DomainName has an odd length"));
  a = v2();
  a.user = utf16(std::string(300, 'u'));
  CHECK_THAT(refusal(a), Catch::Contains("UserName of 600 bytes"));
}

TEST_CASE("the NTLMv2 client challenge is checked: type and timestamp and AV pairs", "[ntlmssp]") {
  AuthMsg a = v2();
  a.nt = ntlmv2(0, {});
  CHECK_THAT(refusal(a), Catch::Contains("TimeStamp 0"));
  a.nt = ntlmv2(kNow - 40ull * 3600 * 10'000'000, {});
  CHECK_THAT(refusal(a), Catch::Contains("MaxLifetime"));
  a.nt = ntlmv2(kNow, {{1, utf16("HOST")}}, false);
  a.nt.resize(a.nt.size() - 4);  // no MsvAvEOL and no trailing Z(4)
  CHECK_THAT(refusal(a), Catch::Contains("cut off"));
  std::vector<std::pair<uint16_t, Bytes>> many(5000, {9, Bytes()});
  a.nt = ntlmv2(kNow, many);
  CHECK_THAT(refusal(a), Catch::Contains("bytes, outside"));  // over kMaxMessage
  many.resize(40);
  a.nt = ntlmv2(kNow, many);
  CHECK_THAT(refusal(a), Catch::Contains("more than 32 AV pairs"));
  a.nt = ntlmv2(kNow, {{2, Bytes(5000, 'x')}});
  CHECK_THAT(refusal(a), Catch::Contains("NtChallengeResponse of"));
  a.nt = ntlmv2(kNow, {});
  a.nt[16] = 2;
  CHECK_THAT(refusal(a), Catch::Contains("RespType/HiRespType are 2/1"));
  a.nt.resize(30);
  CHECK_THAT(refusal(a), Catch::Contains("NtChallengeResponse of 30 bytes"));
  a = v2();
  a.lm = Bytes(12, 0);
  CHECK_THAT(refusal(a), Catch::Contains("LmChallengeResponse of 12 bytes"));
  a.nt.clear();  // an LM-only logon
  a.lm = Bytes(24, 0);
  CHECK_THAT(refusal(a), Catch::Contains("no NtChallengeResponse"));
}

TEST_CASE("NEGOTIATE fields are checked against the message", "[ntlmssp]") {
  Bytes n = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1, 0, 0, 0};
  n.resize(32, 0);
  store_le32(&n[12], 0xe2088297);
  CHECK(ntlmssp::check_negotiate(n).ok());
  store_le16(&n[16], 6);
  store_le32(&n[20], 40);  // a domain name past the end
  CHECK_THAT(ntlmssp::check_negotiate(n).message(), Catch::Contains("DomainName"));
  n[8] = 3;
  CHECK_THAT(ntlmssp::check_negotiate(n).message(), Catch::Contains("MessageType is 3"));
}

TEST_CASE("find_message takes raw NTLMSSP and SPNEGO from MIT's initiator and refuses garbage", "[ntlmssp]") {
  std::unique_ptr<SecurityContext> client;
  REQUIRE(SecurityContext::client({"", "alice", "Secret1"}, kAuthTypeSpnego, client).ok());
  Bytes init;
  REQUIRE(client->step({}, init).ok());
  ByteView m;
  REQUIRE(ntlmssp::find_message(init, m).ok());
  CHECK(ntlmssp::message_type(m) == ntlmssp::kNegotiate);
  CHECK(ntlmssp::check_negotiate(m).ok());
  Bytes cut(init.begin(), init.begin() + std::ptrdiff_t(init.size() / 2));
  CHECK_FALSE(ntlmssp::find_message(cut, m).ok());
  const Bytes junk = {0x30, 0x03, 0x01, 0x01, 0x00};
  CHECK_THAT(ntlmssp::find_message(junk, m).message(), Catch::Contains("neither an NTLMSSP message"));
}

// ---------------------------------------------------------------------------------------------
// The handshake of a real gss-ntlmssp client through an Association, with the AUTHENTICATE
// tampered the way the hostile-input campaign did.
namespace {

struct Handshake {
  std::shared_ptr<const AuthService> service;
  std::unique_ptr<Association> assoc;
  std::unique_ptr<SecurityContext> client;
  SecTrailer trailer{kAuthTypeNtlmssp, kAuthLevelConnect, 0, 0x51, {}};

  explicit Handshake(const std::string& password = "Secret1") {
    REQUIRE(AuthService::create({{"alice", "Secret1"}}, service).ok());
    AssociationConfig cfg;
    cfg.auth = service;
    assoc = std::make_unique<Association>(cfg);
    REQUIRE(SecurityContext::client({"", "alice", password}, kAuthTypeNtlmssp, client).ok());
  }
  // Bind with NEGOTIATE; the AUTHENTICATE the client makes from the CHALLENGE in the bind_ack.
  Bytes authenticate() {
    Bytes token;
    REQUIRE(client->step({}, token).ok());
    Bytes bind = build_bind(PType::kBind, 1, {5840, 5840, 0, {{0, winreg_syntax(), {ndr20_syntax()}}}, {}});
    REQUIRE(append_auth(bind, trailer, token, 4).ok());
    Step s = assoc->receive(bind);
    REQUIRE(s.replies.size() == 1);
    Header h;
    REQUIRE(parse_header(s.replies[0], h).ok());
    REQUIRE(h.ptype == PType::kBindAck);
    SecTrailer t;
    ByteView pdu = s.replies[0];
    REQUIRE(parse_sec_trailer(pdu.subspan(pdu.size() - h.auth_length - kSecTrailerSize), t).ok());
    REQUIRE(client->step(t.value, token).ok());
    return token;
  }
  Step auth3(ByteView token, SecTrailer t) {
    Bytes pdu = build_empty(PType::kAuth3, kPfcFirstFrag | kPfcLastFrag, 2);
    REQUIRE(append_auth(pdu, t, token, 4).ok());
    return assoc->receive(pdu);
  }
  // A call at level connect: answered when the handshake succeeded, else fault access_denied.
  uint32_t call_fault() {
    const Bytes stub(8, 0);
    Bytes req = build_request(kPfcFirstFrag | kPfcLastFrag, 3, {8, 0, 0, std::nullopt, stub});
    Step s = assoc->process(req, [](uint16_t, ByteView, Bytes& out) {
      out.assign(4, 0);
      return 0u;
    });
    REQUIRE(s.replies.size() == 1);
    Header h;
    REQUIRE(parse_header(s.replies[0], h).ok());
    if (h.ptype != PType::kFault) return 0;
    Fault f;
    REQUIRE(parse_fault(s.replies[0], h, f).ok());
    return f.status;
  }
};

}  // namespace

TEST_CASE("a real handshake completes and the crashing AUTHENTICATE variants get access denied", "[ntlmssp]") {
  SECTION("untouched: the call is answered") {
    Handshake x;
    Bytes a = x.authenticate();
    uint32_t flags = 0;
    REQUIRE(ntlmssp::negotiate_flags(a, flags));
    REQUIRE((flags & ntlmssp::kFlagKeyExch) != 0);  // what makes the variants below reach the crash site
    Step s = x.auth3(a, x.trailer);
    CHECK(s.replies.empty());
    CHECK(x.assoc->authenticated());
    CHECK(x.call_fault() == 0);
  }
  SECTION("KEY_EXCH with an EncryptedRandomSessionKey of 0 bytes") {
    Handshake x;
    Bytes a = x.authenticate();
    store_le16(&a[52], 0);
    store_le16(&a[54], 0);
    CHECK(x.auth3(a, x.trailer).replies.empty());
    CHECK_THAT(x.assoc->take_auth_error(), Catch::Contains("EncryptedRandomSessionKey of 0 bytes"));
    CHECK(x.call_fault() == kFaultAccessDenied);
  }
  SECTION("flags that drop KEY_EXCH, and flags 0") {
    for (uint32_t mask : {~ntlmssp::kFlagKeyExch, 0u}) {
      Handshake x;
      Bytes a = x.authenticate();
      store_le32(&a[60], load_le32(&a[60]) & mask);
      x.auth3(a, x.trailer);
      CHECK_THAT(x.assoc->take_auth_error(), Catch::Contains("drop NTLMSSP_NEGOTIATE_KEY_EXCH"));
      CHECK(x.call_fault() == kFaultAccessDenied);
    }
  }
}

TEST_CASE("auth3 with another context id or auth type or level than the bind is refused", "[ntlmssp]") {
  for (int which = 0; which < 3; ++which) {
    Handshake x;
    Bytes a = x.authenticate();
    SecTrailer t = x.trailer;
    if (which == 0) t.context_id += 1;
    if (which == 1) t.auth_type = kAuthTypeSpnego;
    if (which == 2) t.auth_level = kAuthLevelIntegrity;
    x.auth3(a, t);
    CHECK_FALSE(x.assoc->authenticated());
    CHECK_THAT(x.assoc->take_auth_error(), Catch::Contains("the bind had 10, 2, 81"));
    CHECK(x.call_fault() == kFaultAccessDenied);
  }
}

// fuzz/regressions/auth/empty-negotiate-unauthenticated-bind: a bind_ack without a CHALLENGE
// handed to the initiator made gss-ntlmssp dereference NULL.
TEST_CASE("the initiator refuses a second leg without a token instead of calling gss-ntlmssp", "[ntlmssp]") {
  std::unique_ptr<SecurityContext> client;
  REQUIRE(SecurityContext::client({"", "alice", "Secret1"}, kAuthTypeNtlmssp, client).ok());
  Bytes token;
  REQUIRE(client->step({}, token).ok());
  CHECK_THAT(client->step({}, token).message(), Catch::Contains("carries no authentication token"));
}

// gss-ntlmssp as a "domain server" falls back to the LM response when an NTLMv1 NT response does
// not verify, and under NTLM2 session security that response is the client challenge and zeros:
// before perfsim checked NTLMv1 itself, any password logged on. gss-ntlmssp's initiator sends
// NTLMv1 at LM_COMPAT_LEVEL 2 (its environment; the acceptor's role does not read it).
TEST_CASE("an NTLMv1 logon with a wrong password is refused and with the right one accepted", "[ntlmssp]") {
  setenv("LM_COMPAT_LEVEL", "2", 1);
  for (const char* password : {"Wrong", "Secret1"}) {
    INFO(password);
    Handshake x(password);
    Bytes a = x.authenticate();
    ntlmssp::Authenticate fields;
    REQUIRE(ntlmssp::check_authenticate(a, load_le32(&a[60]), ntlmssp::filetime_now(), fields).ok());
    REQUIRE(fields.nt.size() == 24);  // NTLMv1 really went out
    x.auth3(a, x.trailer);
    const std::string why = x.assoc->take_auth_error();
    if (std::string(password) == "Wrong") {
      CHECK_THAT(why, Catch::Contains("the NT response does not verify"));
      CHECK(x.call_fault() == kFaultAccessDenied);
    } else {
      CHECK(why.empty());
      CHECK(x.call_fault() == 0);
    }
  }
  unsetenv("LM_COMPAT_LEVEL");
}
