// NTLMSSP messages (MS-NLMP 2.2.1) as a server receives them, checked by perfsim before any
// library sees them. gss-ntlmssp trusts what the handshake agreed on: an AUTHENTICATE that drops
// KEY_EXCH, or carries an EncryptedRandomSessionKey of the wrong length, made it copy 16 bytes
// from a NULL or short buffer (issue 28). So every field is checked here against the message's
// size and against what NEGOTIATE and CHALLENGE agreed, and a failure names the field.
// Tokens come raw (auth_type 10) or inside SPNEGO (9, RFC 4178 / MS-SPNG: the NTLMSSP message is
// the mechToken of a NegTokenInit or the responseToken of a NegTokenResp).
#pragma once
#include <cstdint>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::rpc::ntlmssp {

// MessageType (MS-NLMP 2.2.1.1-2.2.1.3).
inline constexpr uint32_t kNegotiate = 1;
inline constexpr uint32_t kChallenge = 2;
inline constexpr uint32_t kAuthenticate = 3;

// NegotiateFlags (MS-NLMP 2.2.2.5).
inline constexpr uint32_t kFlagUnicode = 0x00000001;
inline constexpr uint32_t kFlagOem = 0x00000002;
inline constexpr uint32_t kFlagRequestTarget = 0x00000004;
inline constexpr uint32_t kFlagSign = 0x00000010;
inline constexpr uint32_t kFlagSeal = 0x00000020;
inline constexpr uint32_t kFlagLmKey = 0x00000080;
inline constexpr uint32_t kFlagNtlm = 0x00000200;
inline constexpr uint32_t kFlagAlwaysSign = 0x00008000;
inline constexpr uint32_t kFlagTargetTypeDomain = 0x00010000;
inline constexpr uint32_t kFlagTargetTypeServer = 0x00020000;
inline constexpr uint32_t kFlagEss = 0x00080000;  // NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY
inline constexpr uint32_t kFlagTargetInfo = 0x00800000;
inline constexpr uint32_t kFlagVersion = 0x02000000;
inline constexpr uint32_t kFlag128 = 0x20000000;
inline constexpr uint32_t kFlagKeyExch = 0x40000000;
inline constexpr uint32_t kFlag56 = 0x80000000;
// AvIds of the AV pair lists in CHALLENGE TargetInfo and NTLMv2 responses (MS-NLMP 2.2.2.1).
inline constexpr uint16_t kAvEol = 0;
inline constexpr uint16_t kAvNbComputerName = 1;
inline constexpr uint16_t kAvNbDomainName = 2;
inline constexpr uint16_t kAvDnsComputerName = 3;
inline constexpr uint16_t kAvDnsDomainName = 4;
inline constexpr uint16_t kAvDnsTreeName = 5;
inline constexpr uint16_t kAvFlags = 6;
inline constexpr uint16_t kAvTimestamp = 7;
inline constexpr uint16_t kAvSingleHost = 8;
inline constexpr uint16_t kAvTargetName = 9;
inline constexpr uint16_t kAvChannelBindings = 10;

// The flags that decide session security: an AUTHENTICATE may not claim one the CHALLENGE did not
// agree to (the keys would differ between the library and perfsim's session security).
inline constexpr uint32_t kSessionFlags =
    kFlagSign | kFlagSeal | kFlagLmKey | kFlagEss | kFlag128 | kFlag56 | kFlagKeyExch;

// Bounds of our own (MS-NLMP sets none): far above what Windows, Samba or impacket send. A
// Windows NTLMv2 response with every AV pair of MS-NLMP 2.2.2.1 is under 1 KiB.
inline constexpr size_t kMaxMessage = 8192;
inline constexpr size_t kMaxNameBytes = 512;  // DomainName, UserName, Workstation (256 UTF-16 units)
inline constexpr size_t kMaxNtResponse = 4096;
inline constexpr size_t kMaxAvPairs = 32;  // MS-NLMP 2.2.2.1 defines 11 AvIds, each at most once
// How far an NTLMv2 TimeStamp may be from the server's clock, in FILETIME units: MS-NLMP 3.1.1.1's
// MaxLifetime bounds a challenge/response pair's life; Windows' value is not confirmed here, so
// this window (36 hours either side) is a lenient one of ours.
inline constexpr uint64_t kMaxLifetime = 36ull * 3600 * 10'000'000;

// The NTLMSSP message in `token`: the token itself when it starts with the NTLMSSP signature,
// else the mechToken / responseToken of a DER SPNEGO token (empty when it carries none, e.g. a
// NegTokenResp with only a mechListMIC). Fails on anything else.
Status find_message(ByteView token, ByteView& message);

// MessageType of an NTLMSSP message (0 when it has no NTLMSSP header) and its NegotiateFlags (at
// offset 20 in CHALLENGE, 60 in AUTHENTICATE; false for NEGOTIATE's or a short message).
uint32_t message_type(ByteView message);
bool negotiate_flags(ByteView message, uint32_t& flags);

// A NEGOTIATE_MESSAGE (2.2.1.1): the fixed part (32 bytes), DomainName and Workstation inside it.
Status check_negotiate(ByteView message);

// The payload fields of an AUTHENTICATE_MESSAGE, as views into it.
struct Authenticate {
  ByteView lm, nt, domain, user, workstation, key;
  uint32_t flags = 0;
};

// An AUTHENTICATE_MESSAGE (2.2.1.3) answering a CHALLENGE whose NegotiateFlags were
// `challenge_flags`, received at `now` (FILETIME: 100 ns since 1601-01-01 UTC):
// - every payload field inside the message, after the 64-byte fixed part, within the bounds above;
// - DomainName and UserName without NUL characters, of whole UTF-16 units under UNICODE;
// - KEY_EXCH as the CHALLENGE had it, and then an EncryptedRandomSessionKey of exactly 16 bytes;
//   no session-security flag the CHALLENGE lacked;
// - LmChallengeResponse of 0, 1 or 24 bytes; NtChallengeResponse of 24 bytes (NTLMv1), or an
//   NTLMv2_RESPONSE (2.2.2.8): RespType and HiRespType 1, a TimeStamp within kMaxLifetime of
//   `now`, AV pairs (2.2.2.1) inside the response, at most kMaxAvPairs, ending in MsvAvEOL.
//   An empty NtChallengeResponse (anonymous, or LM only) is refused: no host here takes either.
// `out` gets the fields of a message that passes.
Status check_authenticate(ByteView message, uint32_t challenge_flags, uint64_t now, Authenticate& out);

// ServerChallenge of a CHALLENGE_MESSAGE (2.2.1.2, offset 24); false when it is too short.
bool server_challenge(ByteView challenge, ByteView& out);

// The current time as a FILETIME.
uint64_t filetime_now();

}  // namespace perfsim::rpc::ntlmssp
