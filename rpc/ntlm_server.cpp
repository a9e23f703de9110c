#include "rpc/ntlm_server.h"

#include <locale.h>
#include <openssl/crypto.h>
#include <wctype.h>

#include <algorithm>
#include <cstring>

#include "core/utf16.h"
#include "rpc/ntlmssp.h"

namespace perfsim::rpc {
namespace {

using ntlm::Key16;
namespace f = ntlmssp;

constexpr uint8_t kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
constexpr size_t kChallengeFixed = 48;  // 2.2.1.2, up to TargetInfoFields
constexpr size_t kMicOffset = 72;       // 2.2.1.3: after the fixed part and Version
constexpr size_t kMicEnd = kMicOffset + 16;
constexpr uint8_t kNtlmRevisionCurrent = 0x0f;
constexpr uint32_t kAvFlagMic = 0x2;

// Upper case as Windows' RtlUpcaseUnicodeString maps a UTF-16 unit (simple case mapping of the
// BMP; surrogates stay). glibc's C.UTF-8 locale carries Unicode's table.
char16_t upcase(char16_t c) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0));
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? char16_t(c - 32) : c;
  if (!utf8 || (c >= 0xd800 && c <= 0xdfff)) return c;
  const wint_t u = towupper_l(wint_t(c), utf8);
  return u <= 0xffff ? char16_t(u) : c;
}

// A name field as UTF-16 units: UTF-16LE under UNICODE, else OEM bytes (taken as Latin-1).
std::u16string name_units(ByteView v, bool unicode) {
  if (unicode) return load_utf16le(v.data(), v.size() / 2);
  return std::u16string(v.begin(), v.end());
}

Bytes upper_le(std::u16string_view s) {
  std::u16string u(s);
  std::transform(u.begin(), u.end(), u.begin(), upcase);
  Bytes out;
  put_utf16le(out, u);
  return out;
}

void put_av(Bytes& out, uint16_t id, ByteView v) {
  put_le16(out, id);
  put_le16(out, uint16_t(v.size()));
  put_bytes(out, v);
}

Bytes le(std::string_view utf8) {
  Bytes b;
  put_utf16le(b, utf8_to_utf16(utf8));
  return b;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// The flags a Windows server grants a client's NEGOTIATE flags with (3.2.5.1.1).
uint32_t grant(uint32_t asked, const NtlmTarget& t) {
  uint32_t g = f::kFlagNtlm | f::kFlagTargetInfo;
  g |= (asked & f::kFlagUnicode) ? f::kFlagUnicode : f::kFlagOem;
  if (asked & f::kFlagRequestTarget) g |= f::kFlagRequestTarget | f::kFlagTargetTypeServer;
  if (t.version) g |= asked & f::kFlagVersion;
  return g | (asked & (f::kFlagSign | f::kFlagSeal | f::kFlagAlwaysSign | f::kFlagEss | f::kFlag128 | f::kFlag56 |
                       f::kFlagKeyExch));
}

// The value of AvId `id` in an NTLMv2 response's AV pairs (already checked well formed).
std::optional<ByteView> av_value(ByteView nt, uint16_t id) {
  ByteView pairs = nt.subspan(16 + 28);
  for (size_t at = 0; at + 4 <= pairs.size();) {
    const uint16_t aid = load_le16(&pairs[at]);
    const size_t len = load_le16(&pairs[at + 2]);
    if (aid == f::kAvEol || len > pairs.size() - at - 4) break;
    if (aid == id) return pairs.subspan(at + 4, len);
    at += 4 + len;
  }
  return std::nullopt;
}

Status refused(const std::string& user, const std::string& why) {
  return Status::InvalidArgument("NTLMSSP logon of '" + user + "': " + why);
}

// NTLMv2 (3.3.2): the NTProofStr under NTOWFv2 of the domain the client named, then of none
// (Samba's ntlm_password_check tries both: clients of stand-alone hosts differ). Gives the
// SessionBaseKey.
bool verify_v2(const NtlmAccount& acc, ByteView user_le, ByteView domain_le, ByteView server_chal, ByteView nt,
               Key16& base) {
  const ByteView proof = nt.first(16), temp = nt.subspan(16);
  for (ByteView dom : {domain_le, ByteView()}) {
    Bytes user_dom(user_le.begin(), user_le.end());
    put_bytes(user_dom, dom);
    Key16 v2, want;
    if (!ntlm::ntowfv2(acc.nt_hash, user_dom, v2) || !ntlm::hmac_md5(v2, server_chal, temp, {}, want)) return false;
    if (CRYPTO_memcmp(want.data(), proof.data(), 16) == 0) return ntlm::hmac_md5(v2, proof, base);
    if (domain_le.empty()) break;
  }
  return false;
}

// NTLMv1 (3.3.1): DESL of the NT hash over the server challenge, or with NTLM2 session security
// over MD5(ServerChallenge || ClientChallenge)[0..7], the client challenge being the LM response's
// first 8 bytes. Gives the KeyExchangeKey (3.4.5.1: HMAC_MD5(SessionBaseKey, ServerChallenge ||
// LmChallengeResponse[0..7]) with ESS, else the SessionBaseKey, MD4 of the NT hash; LM_KEY and
// REQUEST_NON_NT_SESSION_KEY are never granted).
Status verify_v1(const NtlmAccount& acc, ByteView server_chal, const f::Authenticate& a, bool ess, Key16& kx) {
  uint8_t chal[8];
  if (ess) {
    Key16 h;
    if (a.lm.size() < 8)
      return refused(acc.user,
                     "NTLMv1 under NTLM2 session security without a client challenge (an LmChallengeResponse of " +
                         std::to_string(a.lm.size()) + " bytes)");
    if (!ntlm::md5(server_chal, a.lm.first(8), h)) return ntlm::crypto_status();
    memcpy(chal, h.data(), 8);
  } else {
    memcpy(chal, server_chal.data(), 8);
  }
  uint8_t want[24];
  if (!ntlm::desl(acc.nt_hash, chal, want)) return ntlm::crypto_status();
  if (CRYPTO_memcmp(want, a.nt.data(), 24) != 0)
    return refused(acc.user, "the NT response does not verify (NTLMv1; wrong password)");
  Key16 base;
  if (!ntlm::md4(ByteView(acc.nt_hash.data(), 16), base)) return ntlm::crypto_status();
  if (!ess) {
    kx = base;
    return Status::Ok();
  }
  return ntlm::hmac_md5(base, server_chal, a.lm.first(8), {}, kx) ? Status::Ok() : ntlm::crypto_status();
}

// The MIC (3.2.5.1.2): HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE with
// the MIC zeroed). It sits at offset 72, so no payload field may start before its end.
Status verify_mic(const std::string& user, const Key16& key, ByteView negotiate, ByteView challenge, ByteView auth) {
  if (auth.size() < kMicEnd) return refused(user, "MsvAvFlags announces a MIC the message has no room for");
  for (size_t at : {12u, 20u, 28u, 36u, 44u, 52u})
    if (load_le16(&auth[at]) != 0 && load_le32(&auth[at + 4]) < kMicEnd)
      return refused(user, "a payload field overlaps the MIC at offset 72");
  Bytes zeroed(auth.begin(), auth.end());
  std::fill(zeroed.begin() + kMicOffset, zeroed.begin() + kMicEnd, 0);
  Key16 want;
  if (!ntlm::hmac_md5(ByteView(key.data(), 16), negotiate, challenge, zeroed, want)) return ntlm::crypto_status();
  if (CRYPTO_memcmp(want.data(), auth.data() + kMicOffset, 16) != 0)
    return refused(user, "the MIC does not verify (the messages were altered)");
  return Status::Ok();
}

}  // namespace

Status make_ntlm_account(std::string_view user, std::string_view password, NtlmAccount& out) {
  out.user = std::string(user);
  out.upper_user = upper_le(utf8_to_utf16(user));
  return ntlm::nt_hash(password, out.nt_hash);
}

Status build_challenge(ByteView negotiate, const NtlmTarget& t, uint64_t now, Bytes& out) {
  if (Status s = ntlm::crypto_status(); !s.ok()) return s;
  const uint32_t asked = negotiate.size() >= 16 ? load_le32(&negotiate[12]) : 0;
  const uint32_t flags = grant(asked, t);
  const bool unicode = flags & f::kFlagUnicode;
  const Bytes nb = le(t.computer);
  const Bytes dns = le(t.dns_computer.empty() ? lower(t.computer) : t.dns_computer);
  Bytes name;
  if (flags & f::kFlagRequestTarget) name = unicode ? nb : Bytes(t.computer.begin(), t.computer.end());
  Bytes info;
  put_av(info, f::kAvNbDomainName, nb);  // a stand-alone server is its own NetBIOS and DNS domain
  put_av(info, f::kAvNbComputerName, nb);
  put_av(info, f::kAvDnsDomainName, dns);
  put_av(info, f::kAvDnsComputerName, dns);
  if (t.timestamp) {
    Bytes ts;
    put_le64(ts, now);
    put_av(info, f::kAvTimestamp, ts);
  }
  put_av(info, f::kAvEol, {});

  out.assign(kSignature, kSignature + 8);
  put_le32(out, f::kChallenge);
  const size_t payload = kChallengeFixed + ((flags & f::kFlagVersion) ? 8 : 0);
  put_le16(out, uint16_t(name.size()));
  put_le16(out, uint16_t(name.size()));
  put_le32(out, uint32_t(payload));
  put_le32(out, flags);
  out.resize(out.size() + 8);
  if (!ntlm::random_bytes(out.data() + 24, 8)) return Status::IOError("no random bytes for the NTLM ServerChallenge");
  out.resize(out.size() + 8, 0);  // Reserved
  put_le16(out, uint16_t(info.size()));
  put_le16(out, uint16_t(info.size()));
  put_le32(out, uint32_t(payload + name.size()));
  if (flags & f::kFlagVersion) {
    out.push_back(t.version->major);
    out.push_back(t.version->minor);
    put_le16(out, t.version->build);
    out.insert(out.end(), {0, 0, 0, kNtlmRevisionCurrent});
  }
  put_bytes(out, name);
  put_bytes(out, info);
  return Status::Ok();
}

Status verify_authenticate(std::span<const NtlmAccount> accounts, ByteView negotiate, ByteView challenge,
                           ByteView authenticate, uint64_t now, NtlmLogon& out) {
  out = {};
  uint32_t challenge_flags = 0;
  ByteView server_chal;
  if (!f::negotiate_flags(challenge, challenge_flags) || !f::server_challenge(challenge, server_chal))
    return Status::InvalidArgument("NTLMSSP: no CHALLENGE was sent before the AUTHENTICATE");
  f::Authenticate a;
  if (Status s = f::check_authenticate(authenticate, challenge_flags, now, a); !s.ok()) return s;
  const bool unicode = challenge_flags & f::kFlagUnicode;
  const std::u16string user = name_units(a.user, unicode), domain = name_units(a.domain, unicode);
  out.user = utf16_to_utf8(user);
  out.domain = utf16_to_utf8(domain);
  out.flags = a.flags & challenge_flags;
  const Bytes user_le = upper_le(user);
  const auto acc =
      std::find_if(accounts.begin(), accounts.end(), [&](const NtlmAccount& x) { return x.upper_user == user_le; });
  if (acc == accounts.end()) return refused(out.user, "no such account");

  Key16 kx;
  if (a.nt.size() == 24) {
    if (Status s = verify_v1(*acc, server_chal, a, out.flags & f::kFlagEss, kx); !s.ok()) return s;
  } else {
    Bytes domain_le;
    put_utf16le(domain_le, domain);
    if (!verify_v2(*acc, user_le, domain_le, server_chal, a.nt, kx))
      return refused(out.user, "the NT response does not verify (NTLMv2; wrong password)");
    const auto av_flags = av_value(a.nt, f::kAvFlags);
    out.mic = av_flags && av_flags->size() == 4 && (load_le32(av_flags->data()) & kAvFlagMic);
  }
  out.session_key = kx;
  if (out.flags & f::kFlagKeyExch) {  // 3.2.5.1.2: RC4K(KeyExchangeKey, EncryptedRandomSessionKey)
    ntlm::Rc4 rc4;
    memcpy(out.session_key.data(), a.key.data(), 16);
    if (!rc4.init(ByteView(kx.data(), 16)) || !rc4.apply(out.session_key.data(), 16)) return ntlm::crypto_status();
  }
  if (out.mic) return verify_mic(out.user, out.session_key, negotiate, challenge, authenticate);
  return Status::Ok();
}

}  // namespace perfsim::rpc
