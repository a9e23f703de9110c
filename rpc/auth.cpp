#include "rpc/auth.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include "core/utf16.h"
#include "rpc/ntlm_challenge.h"
#include "rpc/ntlmssp.h"
#include "rpc/pdu.h"

namespace perfsim::rpc {
namespace {

// gss-ntlmssp's mechanism OID (1.3.6.1.4.1.311.2.2.10) and SPNEGO's (1.3.6.1.5.5.2).
gss_OID_desc kNtlmsspOid = {10, const_cast<char*>("\x2b\x06\x01\x04\x01\x82\x37\x02\x02\x0a")};
gss_OID_desc kSpnegoOid = {6, const_cast<char*>("\x2b\x06\x01\x05\x05\x02")};
// gss-ntlmssp's cred store key for the acceptor's account file (its gssapi_ntlmssp.h, not
// packaged by Debian).
constexpr const char* kKeyfileKey = "ntlmssp_keyfile";

std::string gss_error(const std::string& what, OM_uint32 major, OM_uint32 minor) {
  std::string out = what + ": ";
  for (int pass = 0; pass < 2; ++pass) {
    OM_uint32 ctx = 0, min2 = 0;
    do {
      gss_buffer_desc msg = GSS_C_EMPTY_BUFFER;
      gss_display_status(&min2, pass == 0 ? major : minor, pass == 0 ? GSS_C_GSS_CODE : GSS_C_MECH_CODE, GSS_C_NO_OID,
                         &ctx, &msg);
      if (msg.length) out.append(static_cast<const char*>(msg.value), msg.length).append("; ");
      gss_release_buffer(&min2, &msg);
    } while (ctx != 0);
  }
  return out;
}

// OpenSSL's legacy provider holds RC4 and MD4; a private library context keeps it away from the
// rest of the process.
struct Crypto {
  OSSL_LIB_CTX* lib = nullptr;
  EVP_CIPHER* rc4 = nullptr;
  EVP_MD* md4 = nullptr;
  EVP_MD* md5 = nullptr;
  EVP_MAC* hmac = nullptr;
  EVP_CIPHER* des = nullptr;
};

const Crypto* crypto() {
  static const Crypto c = [] {
    Crypto x;
    x.lib = OSSL_LIB_CTX_new();
    if (!x.lib || !OSSL_PROVIDER_load(x.lib, "legacy") || !OSSL_PROVIDER_load(x.lib, "default")) return x;
    x.rc4 = EVP_CIPHER_fetch(x.lib, "RC4", nullptr);
    x.md4 = EVP_MD_fetch(x.lib, "MD4", nullptr);
    x.md5 = EVP_MD_fetch(x.lib, "MD5", nullptr);
    x.hmac = EVP_MAC_fetch(x.lib, "HMAC", nullptr);
    x.des = EVP_CIPHER_fetch(x.lib, "DES-ECB", nullptr);
    return x;
  }();
  if (!c.rc4 || !c.md4 || !c.md5 || !c.hmac || !c.des) return nullptr;
  return &c;
}

Status no_crypto() {
  return Status::Unsupported(
      "OpenSSL's legacy provider (RC4, MD4, DES) could not be loaded: is libssl3's ossl-modules/legacy.so installed?");
}

bool md5(ByteView a, ByteView b, uint8_t out[16]) {
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  bool ok = c && EVP_DigestInit_ex(c, crypto()->md5, nullptr) && EVP_DigestUpdate(c, a.data(), a.size()) &&
            EVP_DigestUpdate(c, b.data(), b.size()) && EVP_DigestFinal_ex(c, out, nullptr);
  EVP_MD_CTX_free(c);
  return ok;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789ABCDEF";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

// The NT hash: MD4 of the UTF-16LE password (MS-NLMP 3.3.1 NTOWFv1).
Status nt_hash(const std::string& password, std::array<uint8_t, 16>& out) {
  Bytes le;
  put_utf16le(le, utf8_to_utf16(password));
  unsigned n = 0;
  if (!EVP_Digest(le.data(), le.size(), out.data(), &n, crypto()->md4, nullptr) || n != 16) return no_crypto();
  return Status::Ok();
}

// DES (FIPS 46-2) of one block under a 7-byte key spread over 8 bytes, the low bit of each (the
// parity bit) left 0: MS-NLMP 6, "DES()".
bool des_block(const uint8_t* key7, const uint8_t* in, uint8_t* out) {
  const uint8_t* k = key7;
  const uint8_t key[8] = {k[0],
                          uint8_t(k[0] << 7 | k[1] >> 1),
                          uint8_t(k[1] << 6 | k[2] >> 2),
                          uint8_t(k[2] << 5 | k[3] >> 3),
                          uint8_t(k[3] << 4 | k[4] >> 4),
                          uint8_t(k[4] << 3 | k[5] >> 5),
                          uint8_t(k[5] << 2 | k[6] >> 6),
                          uint8_t(k[6] << 1)};
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  int n = 0;
  bool ok = c && EVP_EncryptInit_ex2(c, crypto()->des, key, nullptr, nullptr) && EVP_CIPHER_CTX_set_padding(c, 0) &&
            EVP_EncryptUpdate(c, out, &n, in, 8) && n == 8;
  EVP_CIPHER_CTX_free(c);
  return ok;
}

// An NTLMv1 NtChallengeResponse (MS-NLMP 3.3.1): DESL(NT hash, challenge), the challenge being the
// server's, or with NTLM2 session security MD5(server || client challenge)[0..7].
bool ntlmv1_response(const std::array<uint8_t, 16>& hash, ByteView server_chal, ByteView lm, bool ess,
                     uint8_t out[24]) {
  uint8_t chal[16];
  if (ess) {
    if (lm.size() < 8 || !md5(server_chal, lm.first(8), chal)) return false;
  } else {
    memcpy(chal, server_chal.data(), 8);
  }
  uint8_t key[21] = {};
  memcpy(key, hash.data(), 16);
  return des_block(key, chal, out) && des_block(key + 7, chal, out + 8) && des_block(key + 14, chal, out + 16);
}

// The NegotiateFlags of the NTLMSSP message of `type` inside a raw or SPNEGO-wrapped token.
bool ntlm_flags(ByteView token, uint32_t type, uint32_t& flags) {
  ByteView m;
  return ntlmssp::find_message(token, m).ok() && ntlmssp::message_type(m) == type && ntlmssp::negotiate_flags(m, flags);
}

// DER length at p (short or long form up to 4 octets); false past `end`.
bool der_length(const uint8_t*& p, const uint8_t* end, size_t& n) {
  if (p >= end) return false;
  uint8_t b = *p++;
  if (b < 0x80) {
    n = b;
  } else {
    size_t k = b & 0x7f;
    if (k == 0 || k > 4 || size_t(end - p) < k) return false;
    n = 0;
    while (k--) n = (n << 8) | *p++;
  }
  return n <= size_t(end - p);
}

// The field `tag` ([0] negState .. [3] mechListMIC) of a SPNEGO NegTokenResp ([1] SEQUENCE {...},
// MS-SPNG 2.2.1 / RFC 4178 4.2.2) in `field` (nullopt when absent). False when the token is not
// a NegTokenResp whose DER lengths hold.
bool negtokenresp_field(ByteView token, uint8_t tag, std::optional<ByteView>& field) {
  const uint8_t* p = token.data();
  const uint8_t* end = p + token.size();
  size_t n = 0;
  field.reset();
  if (p == end || *p++ != 0xa1 || !der_length(p, end, n)) return false;
  end = p + n;
  if (p == end || *p++ != 0x30 || !der_length(p, end, n)) return false;
  end = p + n;
  while (p < end) {
    const uint8_t t = *p++;
    if (!der_length(p, end, n)) return false;
    if (t == tag) field = ByteView(p, n);
    p += n;
  }
  return true;
}

bool has_mech_list_mic(ByteView token) {
  std::optional<ByteView> mic;
  return negtokenresp_field(token, 0xa3, mic) && mic;
}

// A server's handshake token, checked before GSSAPI sees it. Only a client's first leg goes
// without one: MIT's SPNEGO (krb5 1.20) dereferences NULL when a later leg gets none
// (fuzz_client: an alter_context_resp without auth_length). The NTLMSSP CHALLENGE, raw or as a
// NegTokenResp's responseToken ([2] OCTET STRING), must pass rpc/ntlm_challenge.h: gss-ntlmssp
// trusts parts of it.
Status check_server_token(uint8_t auth_type, ByteView in) {
  if (in.empty()) return Status::InvalidArgument("the server's answer carries no authentication token for this leg");
  if (auth_type != kAuthTypeSpnego) return check_ntlm_challenge(in);
  std::optional<ByteView> inner;
  if (!negtokenresp_field(in, 0xa2, inner))
    return Status::Corruption("the server's SPNEGO token is not a NegTokenResp (RFC 4178 4.2.2)");
  if (!inner) return Status::Ok();
  const uint8_t* p = inner->data();
  size_t n = 0;
  if (inner->empty() || *p++ != 0x04 || !der_length(p, inner->data() + inner->size(), n))
    return Status::Corruption("the server's SPNEGO responseToken is not an OCTET STRING");
  return check_ntlm_challenge(ByteView(p, n));
}

// One direction of NTLM2 session security (MS-NLMP 3.4.4.2): signing key, RC4 handle, sequence.
struct Direction {
  uint8_t sign_key[16] = {};
  EVP_CIPHER_CTX* rc4 = nullptr;
  uint32_t seq = 0;

  ~Direction() { EVP_CIPHER_CTX_free(rc4); }
  bool init(ByteView session_key, uint32_t flags, const char* sign_magic, const char* seal_magic) {
    if (!md5(session_key, ByteView(reinterpret_cast<const uint8_t*>(sign_magic), strlen(sign_magic) + 1), sign_key))
      return false;
    // SEALKEY (MS-NLMP 3.4.5.3): the key weakened to 56 or 40 bits unless 128-bit was negotiated.
    size_t n = (flags & ntlmssp::kFlag128) ? 16 : (flags & ntlmssp::kFlag56) ? 7 : 5;
    uint8_t seal_key[16];
    if (!md5(session_key.first(std::min(n, session_key.size())),
             ByteView(reinterpret_cast<const uint8_t*>(seal_magic), strlen(seal_magic) + 1), seal_key))
      return false;
    rc4 = EVP_CIPHER_CTX_new();
    return rc4 && EVP_EncryptInit_ex2(rc4, crypto()->rc4, seal_key, nullptr, nullptr);
  }
  bool rc4_apply(uint8_t* p, size_t n) {
    int out = 0;
    return n == 0 || (EVP_EncryptUpdate(rc4, p, &out, p, int(n)) && size_t(out) == n);
  }
  // The 16-byte signature of `msg` with the current sequence number (MS-NLMP 3.4.4.2 MAC).
  bool mac(ByteView msg, bool key_exch, uint8_t sig[16]) {
    uint8_t seqb[4];
    store_le32(seqb, seq);
    EVP_MAC_CTX* c = EVP_MAC_CTX_new(crypto()->hmac);
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("MD5"), 0),
                           OSSL_PARAM_construct_end()};
    uint8_t h[16];
    size_t hn = 0;
    bool ok = c && EVP_MAC_init(c, sign_key, 16, params) && EVP_MAC_update(c, seqb, 4) &&
              EVP_MAC_update(c, msg.data(), msg.size()) && EVP_MAC_final(c, h, &hn, sizeof h) && hn == 16;
    EVP_MAC_CTX_free(c);
    if (!ok) return false;
    if (key_exch && !rc4_apply(h, 8)) return false;
    store_le32(sig, 1);
    memcpy(sig + 4, h, 8);
    store_le32(sig + 12, seq);
    ++seq;
    return true;
  }
};

const char* kClientSign = "session key to client-to-server signing key magic constant";
const char* kClientSeal = "session key to client-to-server sealing key magic constant";
const char* kServerSign = "session key to server-to-client signing key magic constant";
const char* kServerSeal = "session key to server-to-client sealing key magic constant";

}  // namespace

Status parse_sec_trailer(ByteView v, SecTrailer& out) {
  if (v.size() < kSecTrailerSize)
    return Status::Corruption("auth verifier of " + std::to_string(v.size()) + " bytes is shorter than a sec_trailer");
  out.auth_type = v[0];
  out.auth_level = v[1];
  out.pad_length = v[2];
  out.context_id = load_le32(&v[4]);
  out.value = v.subspan(kSecTrailerSize);
  return Status::Ok();
}

void append_auth(Bytes& pdu, SecTrailer t, ByteView value, size_t align) {
  size_t pad = (align - pdu.size() % align) % align;
  pdu.insert(pdu.end(), pad, 0);
  t.pad_length = uint8_t(pad);
  pdu.push_back(t.auth_type);
  pdu.push_back(t.auth_level);
  pdu.push_back(t.pad_length);
  pdu.push_back(0);
  put_le32(pdu, t.context_id);
  put_bytes(pdu, value);
  store_le16(&pdu[8], uint16_t(pdu.size()));
  store_le16(&pdu[10], uint16_t(value.size()));
}

Status parse_account(std::string_view text, Account& out) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0)
    return Status::InvalidArgument("account '" + std::string(text.substr(0, colon)) +
                                   "' is not NAME:PASSWORD (e.g. alice:Secret1)");
  std::string_view name = text.substr(0, colon);
  if (size_t bs = name.find_first_of("\\/"); bs != std::string_view::npos) name = name.substr(bs + 1);
  if (name.empty() || name.find_first_of(":\r\n") != std::string_view::npos)
    return Status::InvalidArgument("account name in '" + std::string(text.substr(0, colon)) + "' is empty or invalid");
  out.user = std::string(name);
  out.password = std::string(text.substr(colon + 1));
  if (out.password.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("the password of account '" + out.user + "' contains a line break");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
struct AuthService::Impl {
  std::string keyfile;
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  // Each account's user name and NT hash, for the NTLMv1 responses perfsim verifies itself
  // (check_ntlmv1).
  std::vector<std::pair<std::string, std::array<uint8_t, 16>>> nt_hashes;
  ~Impl() {
    OM_uint32 minor = 0;
    if (cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &cred);
    if (!keyfile.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::path(keyfile).parent_path(), ec);
    }
  }
};

AuthService::AuthService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AuthService::~AuthService() = default;

Status AuthService::create(const std::vector<Account>& accounts, std::shared_ptr<const AuthService>& out) {
  if (accounts.empty()) return Status::InvalidArgument("DCE/RPC authentication needs at least one account (--user)");
  if (!crypto()) return no_crypto();
  // A domain other than WORKGROUP makes gss-ntlmssp a "domain server", which accepts NTLMv1 and
  // NTLMv2 (as the Windows hosts of the profiles do); as a plain server it takes one or the other
  // per LM_COMPAT_LEVEL. Configuration is by environment only; an operator's value wins.
  setenv("NETBIOS_DOMAIN_NAME", "PERFSIM", 0);

  auto impl = std::make_unique<Impl>();
  char dir_template[] = "/tmp/perfsim-auth-XXXXXX";
  if (!mkdtemp(dir_template))
    return Status::IOError(std::string("cannot create a private directory in /tmp: ") + strerror(errno));
  impl->keyfile = std::string(dir_template) + "/accounts";
  std::string text;
  for (const Account& a : accounts) {
    std::array<uint8_t, 16> nt;
    if (Status s = nt_hash(a.password, nt); !s.ok()) return s;
    impl->nt_hashes.emplace_back(a.user, nt);
    // smbpasswd format: NAME:UID:LM:NT:FLAGS:LCT. No LM hash: LM logons are refused (as by every host).
    text += a.user + ":0:XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX:" + hex(nt.data(), 16) + ":[U          ]:LCT-00000000:\n";
  }
  {
    FILE* f = fopen(impl->keyfile.c_str(), "w");
    if (!f) return Status::IOError("cannot write " + impl->keyfile + ": " + strerror(errno));
    chmod(impl->keyfile.c_str(), 0600);
    bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = fclose(f) == 0 && ok;
    if (!ok) return Status::IOError("cannot write " + impl->keyfile);
  }

  OM_uint32 major, minor = 0;
  gss_buffer_desc name_buf{7, const_cast<char*>("perfsim")};
  gss_name_t name = GSS_C_NO_NAME;
  major = gss_import_name(&minor, &name_buf, GSS_C_NT_HOSTBASED_SERVICE, &name);
  if (GSS_ERROR(major)) return Status::Unsupported(gss_error("gss_import_name", major, minor));
  gss_key_value_element_desc el{kKeyfileKey, impl->keyfile.c_str()};
  gss_key_value_set_desc store{1, &el};
  gss_OID_desc mech_array[2] = {kNtlmsspOid, kSpnegoOid};
  gss_OID_set_desc mechs{2, mech_array};
  major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, &mechs, GSS_C_ACCEPT, &store, &impl->cred, nullptr,
                                nullptr);
  gss_release_name(&minor, &name);
  if (GSS_ERROR(major))
    return Status::Unsupported(gss_error("acquiring the NTLMSSP acceptor credential", major, minor) +
                               " (is gss-ntlmssp installed, /etc/gss/mech.d/mech.ntlmssp.conf present?)");
  // SPNEGO offers NTLMSSP only: a Kerberos acceptor would need a keytab nobody has here.
  gss_OID_set_desc only_ntlm{1, &kNtlmsspOid};
  gss_set_neg_mechs(&minor, impl->cred, &only_ntlm);
  out.reset(new AuthService(std::move(impl)));
  return Status::Ok();
}

namespace {

// The flags of a CHALLENGE not yet sent.
constexpr uint32_t kNoChallenge = 0xffffffff;

// gss-ntlmssp, as the "domain server" that takes NTLMv1 (AuthService::create), falls back to the
// LM response when an NTLMv1 NT response does not verify, and with NTLM2 session security that LM
// response is the client challenge and zeros (MS-NLMP 3.3.1), which any client can send: every
// password was taken. So perfsim verifies an NTLMv1 response itself, against the NT hash only, and
// gss-ntlmssp only ever sees a correct one. Windows compares user names case-insensitively.
Status check_ntlmv1(const AuthService::Impl& service, ByteView challenge, uint32_t challenge_flags,
                    const ntlmssp::Authenticate& a) {
  const std::string user = (challenge_flags & ntlmssp::kFlagUnicode)
                               ? utf16_to_utf8(load_utf16le(a.user.data(), a.user.size() / 2))
                               : std::string(a.user.begin(), a.user.end());
  const auto it = std::find_if(service.nt_hashes.begin(), service.nt_hashes.end(),
                               [&](const auto& e) { return iequals(e.first, user); });
  ByteView server_chal;
  uint8_t want[24];
  if (it == service.nt_hashes.end())
    return Status::InvalidArgument("NTLMv1 logon of an unknown account '" + user + "'");
  if (!ntlmssp::server_challenge(challenge, server_chal) ||
      !ntlmv1_response(it->second, server_chal, a.lm, challenge_flags & ntlmssp::kFlagEss, want))
    return Status::InvalidArgument("NTLMv1 logon of '" + user + "': no LmChallengeResponse to take the client " +
                                   "challenge from under NTLM2 session security");
  if (CRYPTO_memcmp(want, a.nt.data(), 24) != 0)
    return Status::InvalidArgument("NTLMv1 logon of '" + user + "': the NT response does not verify (wrong password)");
  return Status::Ok();
}

// A client's token, checked before gss-ntlmssp sees it (ntlmssp.h): a NEGOTIATE until our
// CHALLENGE went out, then an AUTHENTICATE consistent with it. A SPNEGO token carrying no NTLMSSP
// message (only a mechListMIC, or another mechanism's optimistic token) is MIT SPNEGO's to answer.
Status check_client_token(const AuthService::Impl& service, ByteView challenge, uint32_t challenge_flags, ByteView in) {
  ByteView m;
  if (Status s = ntlmssp::find_message(in, m); !s.ok()) return s;
  const uint32_t type = ntlmssp::message_type(m);
  if (type == 0) return Status::Ok();
  const uint32_t due = challenge.empty() ? ntlmssp::kNegotiate : ntlmssp::kAuthenticate;
  if (type != due)
    return Status::InvalidArgument("NTLMSSP message type " + std::to_string(type) + " where type " +
                                   std::to_string(due) + " was due");
  if (due == ntlmssp::kNegotiate) return ntlmssp::check_negotiate(m);
  ntlmssp::Authenticate a;
  if (Status s = ntlmssp::check_authenticate(m, challenge_flags, ntlmssp::filetime_now(), a); !s.ok()) return s;
  return a.nt.size() == 24 ? check_ntlmv1(service, challenge, challenge_flags, a) : Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
struct SecurityContext::Impl {
  bool is_server = true;
  uint8_t auth_type = kAuthTypeNtlmssp;
  std::shared_ptr<const AuthService> service;    // server side
  gss_cred_id_t own_cred = GSS_C_NO_CREDENTIAL;  // client side
  gss_name_t target = GSS_C_NO_NAME;             // client side
  gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
  bool done = false;
  uint32_t challenge_flags = kNoChallenge;
  Bytes challenge;  // server side: the NTLMSSP CHALLENGE we sent
  uint32_t flags = 0;
  bool ess = false;
  bool mic_in = false, mic_out = false;  // a SPNEGO token of the handshake carried a mechListMIC
  Direction send, recv;
  std::string peer;

  ~Impl() {
    OM_uint32 minor = 0;
    if (ctx != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &ctx, GSS_C_NO_BUFFER);
    if (own_cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &own_cred);
    if (target != GSS_C_NO_NAME) gss_release_name(&minor, &target);
  }

  Status finish() {
    OM_uint32 minor = 0;
    gss_buffer_set_t keys = GSS_C_NO_BUFFER_SET;
    OM_uint32 major = gss_inquire_sec_context_by_oid(&minor, ctx, GSS_C_INQ_SSPI_SESSION_KEY, &keys);
    if (GSS_ERROR(major) || !keys || keys->count < 1)
      return Status::Unsupported(gss_error("reading the NTLM session key", major, minor));
    Bytes key(static_cast<const uint8_t*>(keys->elements[0].value),
              static_cast<const uint8_t*>(keys->elements[0].value) + keys->elements[0].length);
    gss_release_buffer_set(&minor, &keys);
    ess = flags & ntlmssp::kFlagEss;
    if (ess) {
      bool ok =
          is_server
              ? send.init(key, flags, kServerSign, kServerSeal) && recv.init(key, flags, kClientSign, kClientSeal)
              : send.init(key, flags, kClientSign, kClientSeal) && recv.init(key, flags, kServerSign, kServerSeal);
      if (!ok) return no_crypto();
      // A SPNEGO mechListMIC was an NTLM signature: it used sequence number 0 of its direction.
      // MS-SPNG 3.3.5.1 resets the RC4 state afterwards but not the sequence numbers (Samba's
      // ntlmssp_sign_reset(state, false); gss-ntlmssp's reset_crypto keeps them too).
      if (mic_in) recv.seq = 1;
      if (mic_out) send.seq = 1;
    }
    if (is_server) {
      gss_name_t src = GSS_C_NO_NAME;
      if (!GSS_ERROR(gss_inquire_context(&minor, ctx, &src, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr))) {
        gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
        if (!GSS_ERROR(gss_display_name(&minor, src, &b, nullptr)))
          peer.assign(static_cast<const char*>(b.value), b.length);
        gss_release_buffer(&minor, &b);
        gss_release_name(&minor, &src);
      }
    }
    done = true;
    return Status::Ok();
  }
};

SecurityContext::SecurityContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SecurityContext::~SecurityContext() = default;

std::unique_ptr<SecurityContext> SecurityContext::server(std::shared_ptr<const AuthService> service,
                                                         uint8_t auth_type) {
  auto impl = std::make_unique<Impl>();
  impl->service = std::move(service);
  impl->auth_type = auth_type;
  return std::unique_ptr<SecurityContext>(new SecurityContext(std::move(impl)));
}

Status SecurityContext::client(const ClientIdentity& who, uint8_t auth_type, std::unique_ptr<SecurityContext>& out) {
  if (!crypto()) return no_crypto();
  auto impl = std::make_unique<Impl>();
  impl->is_server = false;
  impl->auth_type = auth_type;
  OM_uint32 major, minor = 0;
  std::string uname = who.domain.empty() ? who.user : who.domain + "\\" + who.user;
  gss_buffer_desc ub{uname.size(), uname.data()};
  gss_name_t user = GSS_C_NO_NAME;
  major = gss_import_name(&minor, &ub, GSS_C_NT_USER_NAME, &user);
  if (GSS_ERROR(major)) return Status::InvalidArgument(gss_error("user name '" + uname + "'", major, minor));
  gss_buffer_desc pw{who.password.size(), const_cast<char*>(who.password.data())};
  gss_OID_desc mech_array[2] = {kNtlmsspOid, kSpnegoOid};
  gss_OID_set_desc mechs{auth_type == kAuthTypeSpnego ? 2u : 1u, mech_array};
  major = gss_acquire_cred_with_password(&minor, user, &pw, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &impl->own_cred,
                                         nullptr, nullptr);
  gss_release_name(&minor, &user);
  if (GSS_ERROR(major))
    return Status::Unsupported(gss_error("NTLM credentials for '" + uname + "'", major, minor) +
                               " (is gss-ntlmssp installed?)");
  if (auth_type == kAuthTypeSpnego) {
    gss_OID_set_desc only_ntlm{1, &kNtlmsspOid};
    gss_set_neg_mechs(&minor, impl->own_cred, &only_ntlm);
  }
  gss_buffer_desc tb{7, const_cast<char*>("perfsim")};
  major = gss_import_name(&minor, &tb, GSS_C_NT_HOSTBASED_SERVICE, &impl->target);
  if (GSS_ERROR(major)) return Status::Unsupported(gss_error("gss_import_name", major, minor));
  out.reset(new SecurityContext(std::move(impl)));
  return Status::Ok();
}

Status SecurityContext::step(ByteView in, Bytes& out) {
  Impl& m = *impl_;
  out.clear();
  if (m.done) return Status::InvalidArgument("authentication token after the security context was established");
  if (m.is_server) {
    if (Status s = check_client_token(m.service->impl(), m.challenge, m.challenge_flags, in); !s.ok()) return s;
  } else if (m.ctx != GSS_C_NO_CONTEXT) {
    // The CHALLENGE (or a later SPNEGO leg) a server answers with, checked before the libraries
    // parse it; an empty one made gss-ntlmssp's and MIT SPNEGO's initiators dereference NULL.
    if (Status s = check_server_token(m.auth_type, in); !s.ok()) return s;
  }
  OM_uint32 major, minor = 0;
  // gss-ntlmssp (up to 1.3.1) refuses a NEGOTIATE message without the optional 8-byte Version
  // field (MS-NLMP 2.2.1.1: present only with NTLMSSP_NEGOTIATE_VERSION); impacket sends the
  // 32-byte form Windows accepts. Zeros there mean "no version", so it is completed with them.
  Bytes completed;
  static const uint8_t negotiate_sig[12] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1, 0, 0, 0};
  if (m.is_server && in.size() >= 32 && in.size() < 40 && std::equal(negotiate_sig, negotiate_sig + 12, in.begin())) {
    completed.assign(in.begin(), in.end());
    completed.resize(40, 0);
    in = completed;
  }
  gss_buffer_desc input{in.size(), const_cast<uint8_t*>(in.data())};
  gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
  if (m.is_server) {
    uint32_t f = 0;
    if (ntlm_flags(in, 3, f)) m.flags = f & m.challenge_flags;
    major = gss_accept_sec_context(&minor, &m.ctx, m.service->impl().cred, &input, GSS_C_NO_CHANNEL_BINDINGS, nullptr,
                                   nullptr, &output, nullptr, nullptr, nullptr);
  } else {
    gss_OID mech = m.auth_type == kAuthTypeSpnego ? &kSpnegoOid : &kNtlmsspOid;
    major = gss_init_sec_context(&minor, m.own_cred, &m.ctx, m.target, mech,
                                 GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG | GSS_C_REPLAY_FLAG | GSS_C_SEQUENCE_FLAG, 0,
                                 GSS_C_NO_CHANNEL_BINDINGS, in.empty() ? GSS_C_NO_BUFFER : &input, nullptr, &output,
                                 nullptr, nullptr);
  }
  if (output.length)
    out.assign(static_cast<const uint8_t*>(output.value), static_cast<const uint8_t*>(output.value) + output.length);
  gss_release_buffer(&minor, &output);
  if (GSS_ERROR(major)) return Status::InvalidArgument(gss_error("NTLMSSP authentication failed", major, minor));
  uint32_t f = 0;
  if (m.is_server && ntlm_flags(out, 2, f)) {
    m.challenge_flags = f;
    ByteView c;
    if (ntlmssp::find_message(out, c).ok()) m.challenge.assign(c.begin(), c.end());
  }
  if (!m.is_server && ntlm_flags(out, 3, f)) m.flags = f;
  // Remembered over legs: a client's MIC goes out one leg before its context completes.
  if (m.auth_type == kAuthTypeSpnego) {
    m.mic_in = m.mic_in || has_mech_list_mic(in);
    m.mic_out = m.mic_out || has_mech_list_mic(out);
  }
  if (major & GSS_S_CONTINUE_NEEDED) return Status::Ok();
  return m.finish();
}

bool SecurityContext::established() const { return impl_->done; }
uint8_t SecurityContext::auth_type() const { return impl_->auth_type; }
std::string SecurityContext::peer_name() const { return impl_->peer; }

Status SecurityContext::protect(std::span<uint8_t> pdu, size_t stub_offset, size_t stub_size, bool seal) {
  Impl& m = *impl_;
  if (!m.done || pdu.size() < kNtlmSignatureSize || stub_offset + stub_size > pdu.size() - kNtlmSignatureSize)
    return Status::InvalidArgument("no established security context, or a PDU without room for its signature");
  uint8_t* sig = pdu.data() + pdu.size() - kNtlmSignatureSize;
  uint8_t* stub = pdu.data() + stub_offset;
  if (m.ess) {
    // MS-NLMP 3.4.3: the message is encrypted first, then the checksum with the same RC4 stream;
    // the HMAC is over the plaintext PDU.
    uint8_t s[16];
    Bytes plain;
    if (seal) {
      plain.assign(pdu.begin(), pdu.end() - kNtlmSignatureSize);
      if (!m.send.rc4_apply(stub, stub_size)) return no_crypto();
    }
    ByteView signed_part = seal ? ByteView(plain) : ByteView(pdu.data(), pdu.size() - kNtlmSignatureSize);
    if (!m.send.mac(signed_part, m.flags & ntlmssp::kFlagKeyExch, s)) return no_crypto();
    memcpy(sig, s, 16);
    return Status::Ok();
  }
  OM_uint32 major, minor = 0;
  gss_buffer_desc in{stub_size, stub};
  gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
  if (seal) {
    major = gss_wrap(&minor, m.ctx, 1, GSS_C_QOP_DEFAULT, &in, nullptr, &out);
    if (!GSS_ERROR(major) && out.length == stub_size + 16) {
      memcpy(sig, out.value, 16);
      memcpy(stub, static_cast<uint8_t*>(out.value) + 16, stub_size);
    }
  } else {
    major = gss_get_mic(&minor, m.ctx, GSS_C_QOP_DEFAULT, &in, &out);
    if (!GSS_ERROR(major) && out.length == 16) memcpy(sig, out.value, 16);
  }
  bool ok = !GSS_ERROR(major) && out.length == (seal ? stub_size + 16 : 16);
  gss_release_buffer(&minor, &out);
  if (!ok) return Status::IOError(gss_error(seal ? "gss_wrap" : "gss_get_mic", major, minor));
  return Status::Ok();
}

Status SecurityContext::unprotect(std::span<uint8_t> pdu, size_t stub_offset, size_t stub_size, bool sealed) {
  Impl& m = *impl_;
  if (!m.done || pdu.size() < kNtlmSignatureSize || stub_offset + stub_size > pdu.size() - kNtlmSignatureSize)
    return Status::InvalidArgument("no established security context, or a PDU without room for its signature");
  uint8_t* sig = pdu.data() + pdu.size() - kNtlmSignatureSize;
  uint8_t* stub = pdu.data() + stub_offset;
  const Status bad =
      Status::Corruption("the PDU's NTLMSSP signature does not verify (wrong key, altered or replayed PDU)");
  if (m.ess) {
    if (sealed && !m.recv.rc4_apply(stub, stub_size)) return no_crypto();
    uint8_t want[16];
    if (!m.recv.mac(ByteView(pdu.data(), pdu.size() - kNtlmSignatureSize), m.flags & ntlmssp::kFlagKeyExch, want))
      return no_crypto();
    return memcmp(want, sig, 16) == 0 ? Status::Ok() : bad;
  }
  OM_uint32 major, minor = 0;
  if (sealed) {
    Bytes token(sig, sig + 16);
    token.insert(token.end(), stub, stub + stub_size);
    gss_buffer_desc in{token.size(), token.data()};
    gss_buffer_desc out = GSS_C_EMPTY_BUFFER;
    major = gss_unwrap(&minor, m.ctx, &in, &out, nullptr, nullptr);
    bool ok = !GSS_ERROR(major) && out.length == stub_size;
    if (ok) memcpy(stub, out.value, stub_size);
    gss_release_buffer(&minor, &out);
    return ok ? Status::Ok() : bad;
  }
  gss_buffer_desc msg{stub_size, stub};
  gss_buffer_desc token{16, sig};
  major = gss_verify_mic(&minor, m.ctx, &msg, &token, nullptr);
  return GSS_ERROR(major) ? bad : Status::Ok();
}

}  // namespace perfsim::rpc
