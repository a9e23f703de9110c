#include "rpc/ntlmssp.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "rpc/spnego.h"

namespace perfsim::rpc::ntlmssp {
namespace {

using spnego::der_item;
using spnego::der_unwrap;

constexpr uint8_t kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
constexpr size_t kNegotiateFixed = 32;     // MS-NLMP 2.2.1.1, without the optional Version
constexpr size_t kAuthenticateFixed = 64;  // MS-NLMP 2.2.1.3, up to NegotiateFlags
constexpr size_t kNtlmV1Response = 24;
constexpr size_t kNtProofStr = 16;   // NTLMv2_RESPONSE.Response (2.2.2.8)
constexpr size_t kClientFixed = 28;  // NTLMv2_CLIENT_CHALLENGE up to AvPairs (2.2.2.7)
// SPNEGO's OID 1.3.6.1.5.5.2 (RFC 4178 4.1), DER-encoded with its tag and length.
constexpr uint8_t kSpnegoOid[] = {0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};

std::string hex32(uint32_t v) {
  char b[11];
  snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// NegTokenInit / NegTokenResp SEQUENCE: the OCTET STRING of element [2] (mechToken or
// responseToken), empty when absent.
bool token_in_sequence(ByteView seq, ByteView& message) {
  ByteView body;
  if (!der_unwrap(seq, 0x30, body)) return false;
  const uint8_t* p = body.data();
  const uint8_t* end = p + body.size();
  message = {};
  while (p < end) {
    uint8_t tag = 0;
    ByteView content;
    if (!der_item(p, end, tag, content)) return false;
    if (tag == 0xa2) return der_unwrap(content, 0x04, message);
  }
  return true;
}

struct Field {
  const char* name;
  size_t at;  // offset of its Len/MaxLen/BufferOffset triple in the fixed part
};

// A payload field's bytes; fails naming it when they do not lie after the fixed part and inside
// the message.
Status field(ByteView m, size_t fixed, Field f, const char* what, ByteView& out) {
  const size_t len = load_le16(&m[f.at]);
  const size_t off = load_le32(&m[f.at + 4]);
  out = {};
  if (len == 0) return Status::Ok();
  if (off < fixed || off > m.size() || len > m.size() - off)
    return Status::InvalidArgument(std::string("NTLMSSP ") + what + ": " + f.name + " (" + std::to_string(len) +
                                   " bytes at offset " + std::to_string(off) + ") is not inside the " +
                                   std::to_string(m.size()) + "-byte message after its " + std::to_string(fixed) +
                                   "-byte header (MS-NLMP 2.2.1)");
  out = m.subspan(off, len);
  return Status::Ok();
}

Status bad(const char* what, const std::string& why) {
  return Status::InvalidArgument(std::string("NTLMSSP ") + what + ": " + why);
}

Status check_header(ByteView m, uint32_t type, size_t fixed, const char* what) {
  if (m.size() < fixed || m.size() > kMaxMessage)
    return bad(what, std::to_string(m.size()) + " bytes, outside " + std::to_string(fixed) + " .. " +
                         std::to_string(kMaxMessage));
  if (message_type(m) != type) return bad(what, "MessageType is " + std::to_string(message_type(m)));
  return Status::Ok();
}

// DomainName, UserName, Workstation: bounded, whole UTF-16 units under UNICODE, no NUL (a name
// `alice\0` must not log on as `alice`).
Status check_name(ByteView v, const char* name, bool unicode) {
  if (v.size() > kMaxNameBytes)
    return bad("AUTHENTICATE", std::string(name) + " of " + std::to_string(v.size()) + " bytes is over " +
                                   std::to_string(kMaxNameBytes));
  const size_t unit = unicode ? 2 : 1;
  if (v.size() % unit) return bad("AUTHENTICATE", std::string(name) + " has an odd length under UNICODE");
  for (size_t i = 0; i < v.size(); i += unit)
    if (v[i] == 0 && (unit == 1 || v[i + 1] == 0))
      return bad("AUTHENTICATE", std::string(name) + " contains a NUL character at byte " + std::to_string(i));
  return Status::Ok();
}

Status check_av_pairs(ByteView v) {
  size_t pos = 0;
  for (size_t count = 0; count < kMaxAvPairs; ++count) {
    if (v.size() - pos < 4)
      return bad("AUTHENTICATE", "NTLMv2 AV pair " + std::to_string(count) + " is cut off (MS-NLMP 2.2.2.1)");
    const uint16_t id = load_le16(&v[pos]);
    const size_t len = load_le16(&v[pos + 2]);
    pos += 4;
    if (len > v.size() - pos)
      return bad("AUTHENTICATE", "NTLMv2 AV pair " + std::to_string(count) + " (AvId " + std::to_string(id) + ") of " +
                                     std::to_string(len) + " bytes runs past the response");
    if (id == kAvEol) {
      if (len != 0) return bad("AUTHENTICATE", "NTLMv2 MsvAvEOL with a value of " + std::to_string(len) + " bytes");
      return Status::Ok();
    }
    pos += len;
  }
  return bad("AUTHENTICATE",
             "NTLMv2 response holds more than " + std::to_string(kMaxAvPairs) + " AV pairs before MsvAvEOL");
}

Status check_ntlmv2(ByteView nt, uint64_t now) {
  if (nt.size() < kNtProofStr + kClientFixed + 4 || nt.size() > kMaxNtResponse)
    return bad("AUTHENTICATE", "NtChallengeResponse of " + std::to_string(nt.size()) +
                                   " bytes is neither NTLMv1 (24) nor an NTLMv2_RESPONSE (48 .. " +
                                   std::to_string(kMaxNtResponse) + ")");
  ByteView client = nt.subspan(kNtProofStr);
  if (client[0] != 1 || client[1] != 1)
    return bad("AUTHENTICATE", "NTLMv2 RespType/HiRespType are " + std::to_string(client[0]) + "/" +
                                   std::to_string(client[1]) + ", not 1/1 (MS-NLMP 2.2.2.7)");
  const uint64_t ts = load_le64(&client[8]);
  const uint64_t skew = ts > now ? ts - now : now - ts;
  if (ts == 0 || skew > kMaxLifetime)
    return bad("AUTHENTICATE", "NTLMv2 TimeStamp " + std::to_string(ts) +
                                   " is not within 36 hours of the server's clock (MaxLifetime, MS-NLMP 3.1.1.1)");
  return check_av_pairs(client.subspan(kClientFixed));
}

Status check_flags(uint32_t flags, uint32_t challenge_flags, ByteView key) {
  if ((flags ^ challenge_flags) & kFlagKeyExch)
    return bad("AUTHENTICATE", "NegotiateFlags " + hex32(flags) + (flags & kFlagKeyExch ? " add" : " drop") +
                                   " NTLMSSP_NEGOTIATE_KEY_EXCH against the CHALLENGE's " + hex32(challenge_flags));
  if (const uint32_t extra = flags & kSessionFlags & ~challenge_flags)
    return bad("AUTHENTICATE", "NegotiateFlags " + hex32(flags) + " claim " + hex32(extra) + ", which the CHALLENGE (" +
                                   hex32(challenge_flags) + ") did not agree to");
  if ((flags & kFlagKeyExch) && key.size() != 16)
    return bad("AUTHENTICATE", "EncryptedRandomSessionKey of " + std::to_string(key.size()) +
                                   " bytes with NTLMSSP_NEGOTIATE_KEY_EXCH (16 required, MS-NLMP 3.2.5.1.2)");
  return Status::Ok();
}

}  // namespace

Status find_message(ByteView token, ByteView& message) {
  message = {};
  if (token.size() >= 8 && std::equal(kSignature, kSignature + 8, token.begin())) {
    message = token;
    return Status::Ok();
  }
  ByteView inner;
  const uint8_t* p = token.data();
  const uint8_t* end = p + token.size();
  uint8_t tag = 0;
  bool ok = der_item(p, end, tag, inner);
  if (ok && tag == 0x60) {  // [APPLICATION 0] { thisMech OID, [0] NegTokenInit }
    ok = inner.size() >= sizeof kSpnegoOid && std::equal(kSpnegoOid, kSpnegoOid + sizeof kSpnegoOid, inner.begin());
    ByteView init;
    ok = ok && der_unwrap(inner.subspan(ok ? sizeof kSpnegoOid : 0), 0xa0, init) && token_in_sequence(init, message);
  } else if (ok && tag == 0xa1) {  // [1] NegTokenResp
    ok = token_in_sequence(inner, message);
  } else {
    ok = false;
  }
  if (!ok)
    return Status::InvalidArgument("authentication token of " + std::to_string(token.size()) +
                                   " bytes is neither an NTLMSSP message nor a well-formed SPNEGO token");
  return Status::Ok();
}

uint32_t message_type(ByteView m) {
  if (m.size() < 12 || !std::equal(kSignature, kSignature + 8, m.begin())) return 0;
  return load_le32(&m[8]);
}

bool negotiate_flags(ByteView m, uint32_t& flags) {
  const uint32_t type = message_type(m);
  const size_t at = type == kChallenge ? 20 : type == kAuthenticate ? 60 : 0;
  if (at == 0 || m.size() < at + 4) return false;
  flags = load_le32(&m[at]);
  return true;
}

Status check_negotiate(ByteView m) {
  if (Status s = check_header(m, kNegotiate, kNegotiateFixed, "NEGOTIATE"); !s.ok()) return s;
  ByteView v;
  if (Status s = field(m, kNegotiateFixed, {"DomainName", 16}, "NEGOTIATE", v); !s.ok()) return s;
  return field(m, kNegotiateFixed, {"Workstation", 24}, "NEGOTIATE", v);
}

Status check_authenticate(ByteView m, uint32_t challenge_flags, uint64_t now, Authenticate& a) {
  a = {};
  if (Status s = check_header(m, kAuthenticate, kAuthenticateFixed, "AUTHENTICATE"); !s.ok()) return s;
  const Field fields[] = {{"LmChallengeResponse", 12}, {"NtChallengeResponse", 20},
                          {"DomainName", 28},          {"UserName", 36},
                          {"Workstation", 44},         {"EncryptedRandomSessionKey", 52}};
  ByteView* out[] = {&a.lm, &a.nt, &a.domain, &a.user, &a.workstation, &a.key};
  for (size_t i = 0; i < 6; ++i)
    if (Status s = field(m, kAuthenticateFixed, fields[i], "AUTHENTICATE", *out[i]); !s.ok()) return s;
  a.flags = load_le32(&m[60]);
  if (Status s = check_flags(a.flags, challenge_flags, a.key); !s.ok()) return s;
  const bool unicode = challenge_flags & kFlagUnicode;
  for (auto [v, name] : {std::pair{a.domain, "DomainName"}, {a.user, "UserName"}, {a.workstation, "Workstation"}})
    if (Status s = check_name(v, name, unicode); !s.ok()) return s;
  if (a.lm.size() != 0 && a.lm.size() != 1 && a.lm.size() != kNtlmV1Response)
    return bad("AUTHENTICATE", "LmChallengeResponse of " + std::to_string(a.lm.size()) + " bytes (0, 1 or 24)");
  if (a.nt.empty()) return bad("AUTHENTICATE", "no NtChallengeResponse: anonymous and LM-only logons are refused");
  if (a.nt.size() == kNtlmV1Response) return Status::Ok();
  return check_ntlmv2(a.nt, now);
}

bool server_challenge(ByteView challenge, ByteView& out) {
  if (message_type(challenge) != kChallenge || challenge.size() < 32) return false;
  out = challenge.subspan(24, 8);
  return true;
}

uint64_t filetime_now() {
  constexpr uint64_t kUnixEpoch = 116444736000000000ull;  // 1970-01-01 as a FILETIME
  const auto since = std::chrono::system_clock::now().time_since_epoch();
  return kUnixEpoch + uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(since).count()) * 10;
}

}  // namespace perfsim::rpc::ntlmssp
