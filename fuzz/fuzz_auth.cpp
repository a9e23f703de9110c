// The server side of DCE/RPC authentication with a known account. Each input runs a real
// handshake (gss-ntlmssp's initiator logging on as alice) against an Association and says how to
// tamper with it, so mutations reach past the password check: the NTLMv2 proof stays valid
// unless an edit lands in it, and the fields around it (flags, key, names, lengths, trailers)
// are what the fuzzer changes. Input: [options][target][op pos pos val]*:
//   options bit 0: SPNEGO (9) instead of NTLMSSP (10); bits 1-2: level connect, pkt, integrity,
//   privacy; bit 3: NTLMSSP's last leg as alter_context instead of auth3.
//   target (mod 4): the first token, the last token (AUTHENTICATE), the last leg's PDU, the
//   request after it. Each edit overwrites, truncates, inserts, or sets a 16-bit length.
// Invariants: nothing crashes or leaks; an input without edits logs on and gets its call answered.
#include <sanitizer/lsan_interface.h>

#include <memory>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "rpc/association.h"
#include "rpc/auth.h"
#include "rpc/pdu.h"

using namespace perfsim;

namespace {

struct Edit {
  uint8_t op;
  uint16_t pos;
  uint8_t val;
};

void tamper(Bytes& b, const std::vector<Edit>& edits) {
  for (const Edit& e : edits) {
    const size_t at = b.empty() ? 0 : e.pos % (b.size() + 1);
    switch (e.op % 4) {
      case 0:
        if (at < b.size()) b[at] = e.val;
        break;
      case 1:
        b.resize(at);
        break;
      case 2:
        b.insert(b.begin() + std::ptrdiff_t(at), e.val);
        break;
      default:
        if (at + 2 <= b.size()) store_le16(&b[at], uint16_t(e.val * 7));
        break;
    }
  }
}

std::shared_ptr<const rpc::AuthService> g_service;

ByteView token_of(const Bytes& pdu) {
  rpc::Header h;
  rpc::SecTrailer t;
  if (!rpc::parse_header(pdu, h).ok() || h.auth_length == 0 || pdu.size() < size_t(h.auth_length) + 8 ||
      !rpc::parse_sec_trailer(ByteView(pdu).last(size_t(h.auth_length) + 8), t).ok())
    return {};
  return t.value;
}

// gss-ntlmssp's initiator leaks: an OpenSSL library context per password credential
// (tests/lsan-suppressions.txt), its NEGOTIATE when a handshake is abandoned. The client is the
// fuzzer's tool, not the code under test, so its library calls are not leak-checked.
template <class F>
Status untracked(F f) {
  __lsan::ScopedDisabler off;
  return f();
}

bool is(const Bytes& pdu, rpc::PType type) {
  rpc::Header h;
  return rpc::parse_header(pdu, h).ok() && h.ptype == type;
}

uint32_t answer(uint16_t, ByteView in, Bytes& out) {
  out.assign(in.begin(), in.end());
  return 0;
}

}  // namespace

// MIT krb5 and gss-ntlmssp keep some allocations for the life of the process (one acceptor
// principal, an OpenSSL library context: tests/lsan-suppressions.txt). They are made here, once,
// with leak detection off, so that every leak found while fuzzing is one input's.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  __lsan_disable();
  fuzz::require(rpc::AuthService::create({{"alice", "Secret1"}}, g_service).ok());
  std::unique_ptr<rpc::SecurityContext> client;
  fuzz::require(rpc::SecurityContext::client({"", "alice", "Secret1"}, rpc::kAuthTypeNtlmssp, client).ok());
  std::unique_ptr<rpc::SecurityContext> server = rpc::SecurityContext::server(g_service, rpc::kAuthTypeNtlmssp);
  Bytes c, s;
  fuzz::require(client->step({}, c).ok() && server->step(c, s).ok() && client->step(s, c).ok() &&
                server->step(c, s).ok() && server->established());
  __lsan_enable();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t options = in.u8();
  const uint8_t target = in.u8() % 4;
  std::vector<Edit> edits;
  while (!in.empty() && edits.size() < 16) edits.push_back({in.u8(), in.u16(), in.u8()});
  const uint8_t type = (options & 1) ? rpc::kAuthTypeSpnego : rpc::kAuthTypeNtlmssp;
  const uint8_t levels[] = {rpc::kAuthLevelConnect, rpc::kAuthLevelPkt, rpc::kAuthLevelIntegrity,
                            rpc::kAuthLevelPrivacy};
  const rpc::SecTrailer trailer{type, levels[(options >> 1) & 3], 0, 7, {}};
  const bool alter = type == rpc::kAuthTypeSpnego || (options & 8);

  rpc::AssociationConfig cfg;
  cfg.auth = g_service;
  rpc::Association assoc(cfg);
  std::unique_ptr<rpc::SecurityContext> client;
  fuzz::require(untracked([&] { return rpc::SecurityContext::client({"", "alice", "Secret1"}, type, client); }).ok());

  Bytes token;
  fuzz::require(untracked([&] { return client->step({}, token); }).ok());
  if (target == 0) tamper(token, edits);
  const rpc::Bind bind{5840, 5840, 0, {{0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}}}, {}};
  Bytes pdu = rpc::build_bind(rpc::PType::kBind, 1, bind);
  rpc::append_auth(pdu, trailer, token, 4);
  rpc::Step s = assoc.receive(pdu);
  if (s.close || s.replies.size() != 1 || !is(s.replies[0], rpc::PType::kBindAck)) return 0;
  if (!untracked([&] { return client->step(token_of(s.replies[0]), token); }).ok()) return 0;

  if (target == 1) tamper(token, edits);
  pdu = alter ? rpc::build_bind(rpc::PType::kAlterContext, 2, bind)
              : rpc::build_empty(rpc::PType::kAuth3, rpc::kPfcFirstFrag | rpc::kPfcLastFrag, 2);
  rpc::append_auth(pdu, trailer, token, 4);
  if (target == 2) tamper(pdu, edits);
  s = assoc.receive(pdu);
  if (s.close) return 0;
  if (alter && !client->established()) {
    if (s.replies.size() != 1 || !is(s.replies[0], rpc::PType::kAlterContextResp)) return 0;
    Bytes none;
    if (!untracked([&] { return client->step(token_of(s.replies[0]), none); }).ok()) return 0;
  }
  if (edits.empty()) fuzz::require(assoc.authenticated() && client->established());
  if (!client->established()) return 0;

  const Bytes stub = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<Bytes> frags;
  if (trailer.auth_level >= rpc::kAuthLevelPkt) {
    if (!rpc::build_signed_fragments(*client, trailer, 0, 3, 0, stub, 5840, frags).ok()) return 0;
  } else {
    rpc::build_request_fragments(3, 0, 0, stub, 5840, frags);
  }
  if (target == 3) tamper(frags[0], edits);
  s = assoc.process(frags[0], answer);
  if (edits.empty()) fuzz::require(s.replies.size() == 1 && is(s.replies[0], rpc::PType::kResponse));
  return 0;
}
