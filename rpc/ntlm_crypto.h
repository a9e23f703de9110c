// The NTLM functions of MS-NLMP 3.3 and 6 over OpenSSL's primitives (MD4, MD5, HMAC-MD5, RC4,
// DES) and zlib's CRC-32: no primitive is written here, only their composition. Shared by the
// NTLMSSP acceptor (ntlm_server.h) and the session security of auth.cpp.
// The legacy algorithms live in a private OpenSSL library context (legacy + default providers),
// fetched once per process: nothing is fetched per logon, so nothing leaks per logon (issue 44:
// gss-ntlmssp 1.2 fetched MD4 in a new library context on every NTLMv1 logon and kept it).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/bytes.h"
#include "core/status.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace perfsim::rpc::ntlm {

using Key16 = std::array<uint8_t, 16>;

// Ok when OpenSSL's legacy provider (RC4, MD4, DES) loaded; else Unsupported saying what to install.
Status crypto_status();

bool md4(ByteView m, Key16& out);
bool md5(ByteView a, ByteView b, Key16& out);
bool hmac_md5(ByteView key, ByteView a, ByteView b, ByteView c, Key16& out);
inline bool hmac_md5(ByteView key, ByteView a, Key16& out) { return hmac_md5(key, a, {}, {}, out); }
uint32_t crc32(ByteView m);
// Cryptographically random bytes (a ServerChallenge).
bool random_bytes(uint8_t* p, size_t n);

// NTOWFv1 (MS-NLMP 3.3.1): MD4 of the UTF-16LE password.
Status nt_hash(std::string_view password, Key16& out);
// NTOWFv2 (3.3.2): HMAC_MD5(NT hash, UTF-16LE(Uppercase(User) || UserDom)); `user_dom_le` is
// that string already in UTF-16LE.
bool ntowfv2(const Key16& nt_hash, ByteView user_dom_le, Key16& out);
// DESL (section 6): the 24-byte NTLMv1 response of a 16-byte key to an 8-byte challenge.
bool desl(const Key16& key, const uint8_t challenge[8], uint8_t out[24]);

// An RC4 stream (one direction's sealing handle, or a one-shot key exchange).
class Rc4 {
 public:
  Rc4() = default;
  ~Rc4();
  Rc4(const Rc4&) = delete;
  Rc4& operator=(const Rc4&) = delete;
  bool init(ByteView key);
  bool apply(uint8_t* p, size_t n);  // in place
  bool ready() const { return ctx_ != nullptr; }

 private:
  EVP_CIPHER_CTX* ctx_ = nullptr;
};

}  // namespace perfsim::rpc::ntlm
