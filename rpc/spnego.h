// SPNEGO tokens (RFC 4178 4.2, MS-SPNG 2.2) as an NTLMSSP-only acceptor reads and writes them, and
// the few DER rules (X.690: low tag numbers, definite lengths) they need. Parsing is flat (no
// recursion) and every length is checked against what holds it.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::rpc::spnego {

// NTLMSSP's mechanism OID 1.3.6.1.4.1.311.2.2.10, its content octets (without tag and length).
inline constexpr uint8_t kNtlmsspOid[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};

// negState (RFC 4178 4.2.2).
inline constexpr uint8_t kAcceptCompleted = 0;
inline constexpr uint8_t kAcceptIncomplete = 1;
inline constexpr uint8_t kReject = 2;
inline constexpr uint8_t kRequestMic = 3;

// One DER item at p: its tag and content; p moves past it. False when it does not fit before `end`
// or uses a form SPNEGO does not (high tag numbers, indefinite or over-4-octet lengths).
bool der_item(const uint8_t*& p, const uint8_t* end, uint8_t& tag, ByteView& content);
// The content of `v` when it is exactly one item with tag `want`.
bool der_unwrap(ByteView v, uint8_t want, ByteView& content);
// Appends an item.
void der_put(Bytes& out, uint8_t tag, ByteView content);

// A NegTokenInit inside its InitialContextToken ([APPLICATION 0] { OID spnego, [0] NegTokenInit }).
struct NegTokenInit {
  std::vector<ByteView> mech_types;  // each OID's content octets, in the client's order
  ByteView mech_types_der;           // the whole MechTypeList item (tag and length too): what
                                     // mechListMIC covers (RFC 4178 5, MS-SPNG 3.1.5.1)
  std::optional<ByteView> mech_token, mech_list_mic;
};
// A NegTokenResp ([1] SEQUENCE { [0] negState, [1] supportedMech, [2] responseToken, [3] mechListMIC }).
struct NegTokenResp {
  std::optional<uint8_t> neg_state;
  std::optional<ByteView> supported_mech, response_token, mech_list_mic;
};

Status parse_init(ByteView token, NegTokenInit& out);
Status parse_resp(ByteView token, NegTokenResp& out);
// A NegTokenResp; `ntlm_mech` adds supportedMech NTLMSSP, empty views leave their field out.
Bytes build_resp(uint8_t neg_state, bool ntlm_mech, ByteView response_token, ByteView mech_list_mic);

}  // namespace perfsim::rpc::spnego
