// The NTLMSSP acceptor (MS-NLMP 3.2.5): the CHALLENGE a host answers a NEGOTIATE with, and the
// verification of the AUTHENTICATE that follows (NTLMv1 and NTLMv2 responses, the MIC, the key
// exchange), over ntlm_crypto.h. perfsim's own: gss-ntlmssp, used before, crashed the server on
// three rounds of hostile AUTHENTICATE messages behind checks that looked right (issues 28 and
// 44: a 512-byte stack buffer for the UTF-8 user and domain, a NULL LM key under LM_KEY, a leak
// per NTLMv1 logon); rpc/README.md says why this design was chosen.
// Contract: every input is a message that passed ntlmssp.h's checks; nothing here keeps a
// buffer of a size the client chooses beyond the message itself, and nothing recurses.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "core/bytes.h"
#include "core/status.h"
#include "rpc/ntlm_challenge.h"
#include "rpc/ntlm_crypto.h"

namespace perfsim::rpc {

// Who the CHALLENGE says answers: a stand-alone Windows server (not a domain member), so the
// target is the computer itself (MS-NLMP 3.2.5.1.1; TARGET_TYPE_SERVER).
struct NtlmTarget {
  std::string computer = "PERFSIM";  // NetBIOS name, as Windows gives it in upper case
  std::string dns_computer;          // empty: the NetBIOS name in lower case
  // VERSION (2.2.2.10): Windows XP SP2 / Server 2003 and later send it when asked
  // (NTLMSSP_NEGOTIATE_VERSION); Windows 2000 does not know the field. None unless the host's
  // Windows is known (server::ntlm_target).
  std::optional<NtlmVersion> version;
  // MsvAvTimestamp (2.2.2.1): "not sent by Windows NT, 2000, XP and Server 2003" (its note).
  bool timestamp = true;
};

// An account as the acceptor keeps it: the name, its UTF-16LE upper case (NTOWFv2 and the lookup
// use it) and its NT hash. Never the password, never on disk.
struct NtlmAccount {
  std::string user;
  Bytes upper_user;
  ntlm::Key16 nt_hash{};
};
Status make_ntlm_account(std::string_view user, std::string_view password, NtlmAccount& out);

// The CHALLENGE_MESSAGE answering `negotiate` (a message that passed ntlmssp::check_negotiate):
// the flags the client asked for that a Windows server grants (never LM_KEY, never
// REQUEST_NON_NT_SESSION_KEY: no LM hash is kept), a fresh random ServerChallenge, the target's
// name and TargetInfo, at `now` (FILETIME).
Status build_challenge(ByteView negotiate, const NtlmTarget& target, uint64_t now, Bytes& out);

// A verified logon.
struct NtlmLogon {
  std::string user, domain;   // as the client named them (UTF-8)
  uint32_t flags = 0;         // negotiated: the AUTHENTICATE's flags within the CHALLENGE's
  ntlm::Key16 session_key{};  // ExportedSessionKey (3.2.5.1.2)
  bool mic = false;           // the AUTHENTICATE carried a MIC (MsvAvFlags 0x2), verified
};

// Verifies `authenticate` (after ntlmssp::check_authenticate) against the accounts: the NTLMv2
// NTProofStr, or the NTLMv1 response (with or without NTLM2 session security), then the MIC when
// MsvAvFlags announces one, and derives the session key. Fails (InvalidArgument, naming why) for
// an unknown account, a wrong password, a wrong MIC.
Status verify_authenticate(std::span<const NtlmAccount> accounts, ByteView negotiate, ByteView challenge,
                           ByteView authenticate, uint64_t now, NtlmLogon& out);

}  // namespace perfsim::rpc
