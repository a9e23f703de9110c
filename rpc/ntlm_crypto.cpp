#include "rpc/ntlm_crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <zlib.h>

#include <cstring>

#include "core/utf16.h"

namespace perfsim::rpc::ntlm {
namespace {

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

// DES of one block under a 7-byte key spread over 8 bytes, the parity bits left 0 (section 6, DES()).
bool des7(const uint8_t* k, const uint8_t* in, uint8_t* out) {
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

}  // namespace

Status crypto_status() {
  if (crypto()) return Status::Ok();
  return Status::Unsupported(
      "OpenSSL's legacy provider (RC4, MD4, DES) could not be loaded: is libssl3's ossl-modules/legacy.so installed?");
}

bool md4(ByteView m, Key16& out) {
  unsigned n = 0;
  return crypto() && EVP_Digest(m.data(), m.size(), out.data(), &n, crypto()->md4, nullptr) && n == 16;
}

bool md5(ByteView a, ByteView b, Key16& out) {
  if (!crypto()) return false;
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  bool ok = c && EVP_DigestInit_ex(c, crypto()->md5, nullptr) && EVP_DigestUpdate(c, a.data(), a.size()) &&
            EVP_DigestUpdate(c, b.data(), b.size()) && EVP_DigestFinal_ex(c, out.data(), nullptr);
  EVP_MD_CTX_free(c);
  return ok;
}

bool hmac_md5(ByteView key, ByteView a, ByteView b, ByteView c, Key16& out) {
  if (!crypto()) return false;
  EVP_MAC_CTX* m = EVP_MAC_CTX_new(crypto()->hmac);
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("MD5"), 0),
                         OSSL_PARAM_construct_end()};
  size_t n = 0;
  bool ok = m && EVP_MAC_init(m, key.data(), key.size(), params) && EVP_MAC_update(m, a.data(), a.size()) &&
            EVP_MAC_update(m, b.data(), b.size()) && EVP_MAC_update(m, c.data(), c.size()) &&
            EVP_MAC_final(m, out.data(), &n, out.size()) && n == 16;
  EVP_MAC_CTX_free(m);
  return ok;
}

uint32_t crc32(ByteView m) {
  uLong c = ::crc32(0L, Z_NULL, 0);
  // zlib takes at most uInt at a time.
  for (size_t at = 0; at < m.size();) {
    const uInt n = uInt(std::min<size_t>(m.size() - at, 1u << 30));
    c = ::crc32(c, m.data() + at, n);
    at += n;
  }
  return uint32_t(c);
}

bool random_bytes(uint8_t* p, size_t n) { return RAND_bytes(p, int(n)) == 1; }

Status nt_hash(std::string_view password, Key16& out) {
  if (Status s = crypto_status(); !s.ok()) return s;
  Bytes le;
  put_utf16le(le, utf8_to_utf16(password));
  return md4(le, out) ? Status::Ok() : crypto_status();
}

bool ntowfv2(const Key16& nt_hash, ByteView user_dom_le, Key16& out) {
  return hmac_md5(ByteView(nt_hash.data(), 16), user_dom_le, out);
}

bool desl(const Key16& k, const uint8_t challenge[8], uint8_t out[24]) {
  if (!crypto()) return false;
  uint8_t key[21] = {};
  memcpy(key, k.data(), 16);
  return des7(key, challenge, out) && des7(key + 7, challenge, out + 8) && des7(key + 14, challenge, out + 16);
}

Rc4::~Rc4() { EVP_CIPHER_CTX_free(ctx_); }

bool Rc4::init(ByteView key) {
  if (!crypto()) return false;
  EVP_CIPHER_CTX_free(ctx_);
  ctx_ = EVP_CIPHER_CTX_new();
  // RC4's key length varies (5, 7, 8 or 16 bytes here): set it before the key.
  return ctx_ && EVP_EncryptInit_ex2(ctx_, crypto()->rc4, nullptr, nullptr, nullptr) &&
         EVP_CIPHER_CTX_set_key_length(ctx_, int(key.size())) &&
         EVP_EncryptInit_ex2(ctx_, nullptr, key.data(), nullptr, nullptr);
}

bool Rc4::apply(uint8_t* p, size_t n) {
  int out = 0;
  return n == 0 || (ctx_ && EVP_EncryptUpdate(ctx_, p, &out, p, int(n)) && size_t(out) == n);
}

}  // namespace perfsim::rpc::ntlm
