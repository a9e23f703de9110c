// DCE/RPC authentication (MS-RPCE 2.2.2.11, 3.3.1.5.2): the sec_trailer, and one security
// context per association speaking NTLMSSP (auth_type 10) or SPNEGO carrying NTLMSSP (9).
// Kept apart from PDU framing (pdu.h, association.h) and from winreg: the association asks a
// SecurityContext for handshake tokens and for the signature / sealing of one PDU.
//
// Server side, the handshake is perfsim's own acceptor (ntlm_server.h: NTLMv1 and v2 verification,
// MIC, key exchange; spnego.h: SPNEGO offering NTLMSSP), over OpenSSL's primitives: gss-ntlmssp
// crashed on hostile AUTHENTICATE messages (rpc/README.md says why this design). Client side it is
// gss-ntlmssp through MIT GSSAPI, its server's tokens checked first (check_ntlm_challenge).
// Session security (MS-NLMP 3.4.4) is composed here from ntlm_crypto.h on both sides, keyed from the
// ExportedSessionKey: with ESS (every current client) HMAC-MD5 over the whole PDU and RC4 over the
// stub, which gss_wrap cannot express (DCE/RPC signs more than it seals); without, CRC-32 and RC4.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"
#include "rpc/ntlm_server.h"

namespace perfsim::rpc {

inline constexpr uint8_t kAuthTypeNone = 0;
inline constexpr uint8_t kAuthTypeSpnego = 9;
inline constexpr uint8_t kAuthTypeNtlmssp = 10;

inline constexpr uint8_t kAuthLevelNone = 1;
inline constexpr uint8_t kAuthLevelConnect = 2;
inline constexpr uint8_t kAuthLevelCall = 3;
inline constexpr uint8_t kAuthLevelPkt = 4;
inline constexpr uint8_t kAuthLevelIntegrity = 5;
inline constexpr uint8_t kAuthLevelPrivacy = 6;

inline constexpr size_t kSecTrailerSize = 8;
inline constexpr size_t kNtlmSignatureSize = 16;
// Stubs of signed/sealed PDUs are padded to this (MS-RPCE 2.2.2.11; Windows and Samba use 16).
inline constexpr size_t kAuthPadAlignment = 16;

// The 8-byte sec_trailer and the auth_value after it.
struct SecTrailer {
  uint8_t auth_type = kAuthTypeNone;
  uint8_t auth_level = kAuthLevelNone;
  uint8_t pad_length = 0;
  uint32_t context_id = 0;
  ByteView value;  // the credentials / signature
};

// `verifier`: sec_trailer + auth_value (e.g. Bind::auth_verifier, or a PDU's last auth_length + 8 bytes).
Status parse_sec_trailer(ByteView verifier, SecTrailer& out);
// Appends auth padding (to `align` from the PDU start), the trailer and `value` to a PDU built
// without auth, and fixes frag_length and auth_length in its header. Fails, leaving `pdu` as it
// was, when the result would not fit the header's 16-bit frag_length (a handshake token a peer
// made large, e.g. an AUTHENTICATE echoing a large CHALLENGE's target info): never sent wrapped.
Status append_auth(Bytes& pdu, SecTrailer t, ByteView value, size_t align);

// One account the server accepts: a user name (no domain: any domain the client names matches)
// and its password.
struct Account {
  std::string user;
  std::string password;
};
// "NAME:PASSWORD" (the password may contain ':'); a "DOMAIN\" prefix on NAME is dropped.
Status parse_account(std::string_view text, Account& out);

// Server-wide: the accounts (names and NT hashes, in memory only). Shared by every association
// (read-only after creation). NTLMv1 and NTLMv2 logons are both accepted (rpc/README.md).
class AuthService {
 public:
  static Status create(const std::vector<Account>& accounts, std::shared_ptr<const AuthService>& out);
  ~AuthService();
  AuthService(const AuthService&) = delete;
  AuthService& operator=(const AuthService&) = delete;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit AuthService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Client side: whom to log on as.
struct ClientIdentity {
  std::string domain;
  std::string user;
  std::string password;
};

// One association's security context, server (accept) or client (initiate) side.
class SecurityContext {
 public:
  // `target`: the host the CHALLENGE names (its name and Windows version).
  static std::unique_ptr<SecurityContext> server(std::shared_ptr<const AuthService> service, uint8_t auth_type,
                                                 const NtlmTarget& target = {});
  static Status client(const ClientIdentity& who, uint8_t auth_type, std::unique_ptr<SecurityContext>& out);
  ~SecurityContext();
  SecurityContext(const SecurityContext&) = delete;
  SecurityContext& operator=(const SecurityContext&) = delete;

  // One handshake leg: consumes the peer's token (empty for a client's first leg), gives the token
  // to send (may be empty). A wrong password, an unknown account or a malformed token fail here.
  Status step(ByteView in, Bytes& out);
  bool established() const;
  uint8_t auth_type() const;
  std::string peer_name() const;  // server side, once established: "DOMAIN\user"

  // Session security of one PDU whose last kNtlmSignatureSize bytes are the auth_value:
  // `stub` (stub + auth padding, inside `pdu`) is sealed in place when `seal`, and the signature
  // is written into the auth_value. With ESS the signature covers the PDU up to the auth_value
  // (header, stub, padding, sec_trailer), else the stub alone.
  Status protect(std::span<uint8_t> pdu, size_t stub_offset, size_t stub_size, bool seal);
  // The reverse for a received PDU: unseals `stub` in place when `sealed` and checks the signature;
  // a wrong signature or a replayed sequence number fails (Status::Code::kPermissionDenied).
  Status unprotect(std::span<uint8_t> pdu, size_t stub_offset, size_t stub_size, bool sealed);

  struct Impl;

 private:
  explicit SecurityContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfsim::rpc
