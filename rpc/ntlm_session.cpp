#include "rpc/ntlm_session.h"

#include <openssl/crypto.h>

#include <cstring>

#include "rpc/ntlmssp.h"

namespace perfsim::rpc::ntlm {
namespace {

ByteView magic(const char* m) { return ByteView(reinterpret_cast<const uint8_t*>(m), strlen(m) + 1); }

}  // namespace

bool Direction::init(const Key16& session_key, uint32_t flags, bool client_to_server) {
  ess = flags & ntlmssp::kFlagEss;
  key_exch = flags & ntlmssp::kFlagKeyExch;
  seq = 0;
  if (!ess) {
    seal_key = session_key;
    return reset();
  }
  const ByteView key(session_key.data(), 16);
  const char* sign_magic = client_to_server ? "session key to client-to-server signing key magic constant"
                                            : "session key to server-to-client signing key magic constant";
  const char* seal_magic = client_to_server ? "session key to client-to-server sealing key magic constant"
                                            : "session key to server-to-client sealing key magic constant";
  // SEALKEY (3.4.5.3): the key weakened to 56 or 40 bits unless 128-bit was negotiated.
  const size_t n = (flags & ntlmssp::kFlag128) ? 16 : (flags & ntlmssp::kFlag56) ? 7 : 5;
  return md5(key, magic(sign_magic), sign_key) && md5(key.first(n), magic(seal_magic), seal_key) && reset();
}

bool Direction::mac(ByteView msg, uint8_t sig[16]) {
  if (ess) {
    uint8_t seqb[4];
    store_le32(seqb, seq);
    Key16 h;
    if (!hmac_md5(ByteView(sign_key.data(), 16), ByteView(seqb, 4), msg, {}, h)) return false;
    if (key_exch && !rc4.apply(h.data(), 8)) return false;
    store_le32(sig, 1);
    memcpy(sig + 4, h.data(), 8);
    store_le32(sig + 12, seq);
  } else {
    uint8_t x[12] = {};  // RandomPad 0, the Checksum, SeqNum 0: each through the sealing RC4 in turn
    store_le32(x + 4, crc32(msg));
    if (!rc4.apply(x, 12)) return false;
    store_le32(sig, 1);
    store_le32(sig + 4, 0);
    memcpy(sig + 8, x + 4, 4);
    store_le32(sig + 12, load_le32(x + 8) ^ seq);
  }
  ++seq;
  return true;
}

bool Direction::matches(const uint8_t want[16], const uint8_t got[16]) const {
  return ess ? CRYPTO_memcmp(want, got, 16) == 0 : CRYPTO_memcmp(want + 8, got + 8, 8) == 0;
}

}  // namespace perfsim::rpc::ntlm
