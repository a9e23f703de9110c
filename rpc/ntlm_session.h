// NTLM session security (MS-NLMP 3.4): one direction's signing key, RC4 sealing handle and
// sequence number, and the 16-byte NTLMSSP_MESSAGE_SIGNATURE it makes. With NTLM2 session
// security (ESS, every current client) each direction has its own keys (3.4.5.2-3) and an
// HMAC-MD5 checksum (3.4.4.2); without, both directions seal with the ExportedSessionKey (SEALKEY
// without LM_KEY, which perfsim never grants) and the checksum is a CRC-32 (3.4.4.1).
// What the signature covers (DCE/RPC: the PDU, or the stub alone without ESS) is the caller's.
#pragma once
#include <cstdint>

#include "core/bytes.h"
#include "rpc/ntlm_crypto.h"

namespace perfsim::rpc::ntlm {

struct Direction {
  bool ess = false, key_exch = false;
  Key16 sign_key{}, seal_key{};
  Rc4 rc4;
  uint32_t seq = 0;

  // Keys of the client-to-server or server-to-client direction from the ExportedSessionKey and the
  // negotiated flags; the sequence number starts at 0.
  bool init(const Key16& session_key, uint32_t flags, bool client_to_server);
  // A fresh RC4 state from the sealing key, the sequence number kept (MS-SPNG 3.3.5.1, after a
  // mechListMIC).
  bool reset() { return rc4.init(ByteView(seal_key.data(), 16)); }
  bool seal(uint8_t* p, size_t n) { return rc4.apply(p, n); }  // also unseals
  // The signature of `msg` with the current sequence number, which then advances. Seal first:
  // the checksum continues the same RC4 stream (3.4.3).
  bool mac(ByteView msg, uint8_t sig[16]);
  // Whether a received signature is the one computed: without ESS the RandomPad is not compared
  // (Samba's ntlmssp_check_packet compares bytes 8..15).
  bool matches(const uint8_t want[16], const uint8_t got[16]) const;
};

}  // namespace perfsim::rpc::ntlm
