// The NTLMSSP CHALLENGE_MESSAGE a server answers a client's NEGOTIATE with (MS-NLMP 2.2.1.2),
// checked before gss-ntlmssp parses it. gss-ntlmssp 1.2 (Debian 12) trusts parts of it: an empty
// TargetName under NTLMSSP_TARGET_TYPE_DOMAIN/SERVER makes it dereference NULL (fuzz_client found
// it), and it reads MsvAvTimestamp / MsvAvFlags values at their full size whatever length their AV
// pair declares. A client (rpc/auth.h, `perfsim record`/`query` with a user) must not hand a
// hostile server's bytes to it unchecked.
// Checks: signature and type; the fixed part (with Version when NTLMSSP_NEGOTIATE_VERSION is set);
// TargetNameFields and TargetInfoFields inside the message and after the fixed part, bounded in
// size; a target name when a target type is named, of whole UTF-16 units under
// NTLMSSP_NEGOTIATE_UNICODE; the AV pair list (2.2.2.1) well formed: every pair inside the
// list, the fixed-size pairs (MsvAvFlags 4, MsvAvTimestamp 8, MsvAvChannelBindings 16,
// MsvAvSingleHost at least 48) at their size, names of whole UTF-16 units, ended by an MsvAvEOL
// of length 0.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::rpc {

// Far above any Windows host's (a NetBIOS or DNS name; a few names and a timestamp), small enough
// that the AUTHENTICATE answering it (which carries the target info) fits one DCE/RPC PDU.
inline constexpr size_t kMaxChallengeTargetName = 1024;
inline constexpr size_t kMaxChallengeTargetInfo = 16384;

// Ok when `msg` is a CHALLENGE_MESSAGE as above; else Corruption naming the field and its offset.
Status check_ntlm_challenge(ByteView msg);

// The VERSION structure (MS-NLMP 2.2.2.10) a server puts in its CHALLENGE: the Windows version
// and build it runs ("for debugging purposes only" there, yet Windows fills it in: 4.2.4.3's
// example says 6.0 build 6000).
struct NtlmVersion {
  uint8_t major = 0;
  uint8_t minor = 0;
  uint16_t build = 0;
  bool operator==(const NtlmVersion&) const = default;
};

// The VERSION of a CHALLENGE that passes check_ntlm_challenge with NTLMSSP_NEGOTIATE_VERSION set;
// nullopt otherwise, and for a build of 0: no Windows build is 0, and it is what servers with no
// Windows version to give write (zeros; Samba's 6.1 build 0, auth/ntlmssp/ntlmssp_server.c).
std::optional<NtlmVersion> ntlm_challenge_version(ByteView msg);

// The same, for a CHALLENGE somewhere in a security blob: raw NTLMSSP (a DCE/RPC auth_value of
// RPC_C_AUTHN_WINNT) or wrapped in SPNEGO (RPC_C_AUTHN_GSS_NEGOTIATE, SMB2 SESSION_SETUP's
// buffer), where it is the responseToken's OCTET STRING, its bytes contiguous (RFC 4178 4.2.2).
// The first "NTLMSSP\0" + type 2 in the blob is read up to the blob's end.
std::optional<NtlmVersion> find_ntlm_challenge_version(ByteView blob);

}  // namespace perfsim::rpc
