// The server side of DCE/RPC authentication with a known account, structure-aware: each input
// describes a logon (NTLMv1 or v2, the NEGOTIATE's and AUTHENTICATE's flags, ESS, KEY_EXCH, a MIC,
// the LM response's and session key's sizes, the user, domain and workstation as any UTF-16 units
// of any length, extra AV pairs, raw NTLMSSP or SPNEGO, auth3 or alter_context, the level), and
// the AUTHENTICATE is computed for the CHALLENGE the server sent (MS-NLMP 3.3.1-3.3.2), so it
// passes the password check unless the input asks for a wrong password. Then edits (overwrite,
// truncate, insert, set a 16-bit length) may land anywhere in it. issue 44's crashes (A2: long
// non-ASCII domains; A1': LM_KEY with an LmChallengeResponse of 0 bytes) are points of this space.
// Input: [options u16][negotiate flags u32][auth flags xor u32][sizes u8 x4][names u8 x3][edits]*
// Invariants: nothing crashes or leaks; a logon the input keeps valid (correct password, no
// edits, flags within the CHALLENGE's) is accepted and its call answered.
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "rpc/association.h"
#include "rpc/auth.h"
#include "rpc/ntlm_crypto.h"
#include "rpc/ntlmssp.h"
#include "rpc/pdu.h"
#include "rpc/spnego.h"

using namespace perfsim;
using rpc::ntlm::Key16;

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
Key16 g_nt;

ByteView token_of(const Bytes& pdu) {
  rpc::Header h;
  rpc::SecTrailer t;
  if (!rpc::parse_header(pdu, h).ok() || h.auth_length == 0 || pdu.size() < size_t(h.auth_length) + 8 ||
      !rpc::parse_sec_trailer(ByteView(pdu).last(size_t(h.auth_length) + 8), t).ok())
    return {};
  return t.value;
}

bool is(const Bytes& pdu, rpc::PType type) {
  rpc::Header h;
  return rpc::parse_header(pdu, h).ok() && h.ptype == type;
}

uint32_t answer(uint16_t, ByteView in, Bytes& out) {
  out.assign(in.begin(), in.end());
  return 0;
}

// A name of `n` UTF-16 units drawn from a small alphabet that includes what broke gss-ntlmssp
// (U+FFFF, U+6F22: 3 UTF-8 bytes each), surrogates and ASCII.
std::u16string name(fuzz::Input& in, size_t n, const char16_t* base) {
  static const char16_t kUnits[] = {u'a', u'Z', u'\uffff', u'\u6f22', u'\u00e9', char16_t(0xd800), char16_t(0xdc00),
                                    u'1'};
  std::u16string s = base;
  for (size_t i = 0; i < n; ++i) s += kUnits[in.u8() % 8];
  return s;
}

Bytes le(std::u16string_view s) {
  Bytes b;
  for (char16_t c : s) put_le16(b, uint16_t(c));
  return b;
}

struct Plan {
  bool v1, wrong_password, mic, spnego, alter;
  uint8_t level;
  uint32_t ask, flags_xor;
  size_t lm_size, key_size, extra_av;
  std::u16string user, domain, workstation;
};

// The AUTHENTICATE answering `challenge` (2.2.1.3 with Version and MIC), its responses correct for
// the plan's password.
Bytes authenticate(const Plan& p, ByteView negotiate, ByteView challenge) {
  uint32_t cflags = 0;
  ByteView server_chal;
  if (!rpc::ntlmssp::negotiate_flags(challenge, cflags) || !rpc::ntlmssp::server_challenge(challenge, server_chal))
    return {};
  const uint32_t flags = cflags ^ p.flags_xor;
  Key16 nt = g_nt;
  if (p.wrong_password) nt[0] ^= 1;
  Bytes lm(p.lm_size, 0xaa), ntresp;
  Key16 base{};
  if (p.v1) {
    uint8_t chal[8], r[24];
    std::copy(server_chal.begin(), server_chal.end(), chal);
    if ((flags & rpc::ntlmssp::kFlagEss) && lm.size() >= 8) {
      Key16 h;
      rpc::ntlm::md5(server_chal, ByteView(lm).first(8), h);
      std::copy(h.begin(), h.begin() + 8, chal);
    }
    rpc::ntlm::desl(nt, chal, r);
    ntresp.assign(r, r + 24);
    rpc::ntlm::md4(ByteView(nt.data(), 16), base);
  } else {
    std::u16string upper = p.user;
    for (char16_t& c : upper)
      if (c >= 'a' && c <= 'z') c = char16_t(c - 32);
    Bytes ud = le(upper);
    put_bytes(ud, le(p.domain));
    Key16 v2, proof;
    rpc::ntlm::ntowfv2(nt, ud, v2);
    Bytes temp = {1, 1, 0, 0, 0, 0, 0, 0};
    put_le64(temp, rpc::ntlmssp::filetime_now());
    temp.insert(temp.end(), 8, 0xcc);
    temp.insert(temp.end(), 4, 0);
    for (size_t i = 0; i < p.extra_av; ++i) put_bytes(temp, Bytes{9, 0, 2, 0, 'x', 0});  // MsvAvTargetName
    if (p.mic) put_bytes(temp, Bytes{6, 0, 4, 0, 2, 0, 0, 0});
    temp.insert(temp.end(), 8, 0);
    rpc::ntlm::hmac_md5(v2, server_chal, temp, {}, proof);
    rpc::ntlm::hmac_md5(v2, ByteView(proof.data(), 16), base);
    ntresp.assign(proof.begin(), proof.end());
    put_bytes(ntresp, temp);
  }
  const Bytes key(p.key_size, 0x55);
  const Bytes d = le(p.domain), u = le(p.user), w = le(p.workstation);
  Bytes m = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 3, 0, 0, 0};
  m.resize(88, 0);
  store_le32(&m[60], flags);
  const ByteView fields[] = {lm, ntresp, d, u, w, key};
  for (size_t i = 0; i < 6; ++i) {
    store_le16(&m[12 + 8 * i], uint16_t(fields[i].size()));
    store_le16(&m[14 + 8 * i], uint16_t(fields[i].size()));
    store_le32(&m[16 + 8 * i], uint32_t(m.size()));
    put_bytes(m, fields[i]);
  }
  if (p.mic) {  // ExportedSessionKey: the decrypted key under KEY_EXCH (3.2.5.1.2)
    Key16 exported = base;
    if ((flags & rpc::ntlmssp::kFlagKeyExch) && key.size() == 16) {
      rpc::ntlm::Rc4 rc4;
      std::copy(key.begin(), key.end(), exported.begin());
      rc4.init(ByteView(base.data(), 16));
      rc4.apply(exported.data(), 16);
    }
    Key16 mic;
    rpc::ntlm::hmac_md5(exported, negotiate, challenge, m, mic);
    std::copy(mic.begin(), mic.end(), m.begin() + 72);
  }
  return m;
}

Bytes wrap_init(const Bytes& negotiate) {
  Bytes oid, mechs, list, token, seq, init, app;
  rpc::spnego::der_put(oid, 0x06, rpc::spnego::kNtlmsspOid);
  rpc::spnego::der_put(list, 0x30, oid);
  rpc::spnego::der_put(seq, 0xa0, list);
  rpc::spnego::der_put(token, 0x04, negotiate);
  rpc::spnego::der_put(seq, 0xa2, token);
  rpc::spnego::der_put(init, 0x30, seq);
  Bytes body = {0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
  rpc::spnego::der_put(body, 0xa0, init);
  rpc::spnego::der_put(app, 0x60, body);
  return app;
}

Plan plan(fuzz::Input& in) {
  Plan p;
  const uint16_t o = in.u16();
  p.v1 = o & 1;
  p.wrong_password = (o & 0x6) == 0x6;  // one input in four
  p.mic = o & 8;
  p.spnego = o & 16;
  p.alter = p.spnego || (o & 32);
  const uint8_t levels[] = {rpc::kAuthLevelConnect, rpc::kAuthLevelPkt, rpc::kAuthLevelIntegrity,
                            rpc::kAuthLevelPrivacy};
  p.level = levels[(o >> 6) & 3];
  p.ask = in.u32();
  p.flags_xor = (o & 0x100) ? in.u32() : (in.u32(), 0u);
  const uint8_t lm = in.u8();
  p.lm_size = lm < 128 ? 24 : lm < 192 ? lm % 3 == 0 ? 0 : lm % 3 == 1 ? 1 : 8 : lm;
  const uint8_t key = in.u8();
  p.key_size = key < 200 ? 16 : key % 32;
  p.extra_av = in.u8() % 40;
  p.user = name(in, in.u8() % 4, u"alice");
  p.domain = name(in, size_t(in.u8()) * 2, u"");
  p.workstation = name(in, in.u8(), u"");
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::require(rpc::AuthService::create({{"alice", "Secret1"}}, g_service).ok());
  fuzz::require(rpc::ntlm::nt_hash("Secret1", g_nt).ok());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const Plan p = plan(in);
  const uint8_t target = in.u8() % 4;
  std::vector<Edit> edits;
  while (!in.empty() && edits.size() < 16) edits.push_back({in.u8(), in.u16(), in.u8()});
  const uint8_t type = p.spnego ? rpc::kAuthTypeSpnego : rpc::kAuthTypeNtlmssp;
  const rpc::SecTrailer trailer{type, p.level, 0, 7, {}};

  rpc::AssociationConfig cfg;
  cfg.auth = g_service;
  rpc::Association assoc(cfg);
  Bytes negotiate = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1, 0, 0, 0};
  put_le32(negotiate, p.ask);
  negotiate.resize(32, 0);
  Bytes token = p.spnego ? wrap_init(negotiate) : negotiate;
  if (target == 0) tamper(token, edits);
  const rpc::Bind bind{5840, 5840, 0, {{0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}}}, {}};
  Bytes pdu = rpc::build_bind(rpc::PType::kBind, 1, bind);
  if (!rpc::append_auth(pdu, trailer, token, 4).ok()) return 0;
  rpc::Step s = assoc.receive(pdu);
  if (s.close || s.replies.size() != 1 || !is(s.replies[0], rpc::PType::kBindAck)) return 0;
  ByteView sent = token_of(s.replies[0]);
  rpc::spnego::NegTokenResp resp;
  if (p.spnego) {
    if (!rpc::spnego::parse_resp(sent, resp).ok() || !resp.response_token) return 0;
    sent = *resp.response_token;
  }
  const Bytes challenge(sent.begin(), sent.end());  // the bind_ack holding it goes with `s`
  token = authenticate(p, negotiate, challenge);
  if (token.empty()) return 0;
  if (p.spnego) {
    Bytes t, seq, body, out;
    rpc::spnego::der_put(t, 0x04, token);
    rpc::spnego::der_put(seq, 0xa2, t);
    rpc::spnego::der_put(body, 0x30, seq);
    rpc::spnego::der_put(out, 0xa1, body);
    token = out;
  }
  if (target == 1) tamper(token, edits);
  pdu = p.alter ? rpc::build_bind(rpc::PType::kAlterContext, 2, bind)
                : rpc::build_empty(rpc::PType::kAuth3, rpc::kPfcFirstFrag | rpc::kPfcLastFrag, 2);
  if (!rpc::append_auth(pdu, trailer, token, 4).ok()) return 0;
  if (target == 2) tamper(pdu, edits);
  s = assoc.receive(pdu);
  // A logon kept valid must be accepted: the right password, nothing edited, flags the CHALLENGE
  // agreed to, the sizes MS-NLMP asks for, the account's name in UTF-16, names within the bounds
  // (ntlmssp.h), no MIC under SPNEGO
  // (its mechListMIC is not built here).
  uint32_t cflags = 0;
  rpc::ntlmssp::negotiate_flags(challenge, cflags);
  const bool ess = cflags & rpc::ntlmssp::kFlagEss;
  const bool valid = edits.empty() && !p.wrong_password && p.flags_xor == 0 && p.key_size == 16 && p.user == u"alice" &&
                     (cflags & rpc::ntlmssp::kFlagUnicode) &&
                     (p.lm_size == 24 || (!p.v1 && p.lm_size <= 1) || (p.v1 && !ess && p.lm_size <= 1)) &&
                     p.domain.size() * 2 <= rpc::ntlmssp::kMaxNameBytes &&
                     p.workstation.size() * 2 <= rpc::ntlmssp::kMaxNameBytes && !(p.mic && p.spnego) &&
                     p.extra_av < rpc::ntlmssp::kMaxAvPairs - 1;
  if (valid) fuzz::require(!s.close && assoc.authenticated());
  if (!assoc.authenticated() || p.level >= rpc::kAuthLevelPkt) return 0;

  const Bytes stub = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<Bytes> frags;
  rpc::build_request_fragments(3, 0, 0, stub, 5840, frags);
  if (target == 3) tamper(frags[0], edits);
  s = assoc.process(frags[0], answer);
  if (edits.empty()) fuzz::require(s.replies.size() == 1 && is(s.replies[0], rpc::PType::kResponse));
  return 0;
}
