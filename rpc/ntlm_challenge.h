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

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::rpc {

// Far above any Windows host's (a NetBIOS or DNS name; a few names and a timestamp), small enough
// that the AUTHENTICATE answering it (which carries the target info) fits one DCE/RPC PDU.
inline constexpr size_t kMaxChallengeTargetName = 1024;
inline constexpr size_t kMaxChallengeTargetInfo = 16384;

// Ok when `msg` is a CHALLENGE_MESSAGE as above; else Corruption naming the field and its offset.
Status check_ntlm_challenge(ByteView msg);

}  // namespace perfsim::rpc
