// DCE/RPC connection-oriented PDUs (C706 chapter 12, MS-RPCE 2.2.2): the 16-byte common header
// and the bodies of bind, bind_ack, bind_nak, alter_context(_resp), request, response, fault,
// auth3, shutdown, co_cancel and orphaned.
// Parsers are bounds-checked, honour the data representation (drep) for integers, check that
// frag_length matches the buffer and report the offset of any problem. Views in parsed structs
// point into the caller's buffer. Builders always write little-endian (drep 10 00 00 00) and
// fill in frag_length themselves.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::rpc {

enum class PType : uint8_t {
  kRequest = 0,
  kResponse = 2,
  kFault = 3,
  kBind = 11,
  kBindAck = 12,
  kBindNak = 13,
  kAlterContext = 14,
  kAlterContextResp = 15,
  kAuth3 = 16,
  kShutdown = 17,
  kCoCancel = 18,
  kOrphaned = 19,
};
const char* ptype_name(PType t);

// pfc_flags bits.
inline constexpr uint8_t kPfcFirstFrag = 0x01;
inline constexpr uint8_t kPfcLastFrag = 0x02;
inline constexpr uint8_t kPfcPendingCancel = 0x04;  // also "supports header signing" in bind
inline constexpr uint8_t kPfcConcMpx = 0x10;
inline constexpr uint8_t kPfcDidNotExecute = 0x20;
inline constexpr uint8_t kPfcMaybe = 0x40;
inline constexpr uint8_t kPfcObjectUuid = 0x80;

inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kRequestHeaderSize = 24;   // common header + alloc_hint, p_cont_id, opnum
inline constexpr size_t kResponseHeaderSize = 24;  // common header + alloc_hint, p_cont_id, cancel, rsvd
inline constexpr size_t kFaultSize = 32;
inline constexpr uint8_t kDrepLittleEndian = 0x10;

// Fault / reject status codes (nca_status, MS-RPCE 2.2.2.11 and C706 appendix E).
inline constexpr uint32_t kFaultAccessDenied = 0x00000005;
inline constexpr uint32_t kFaultCommFailure = 0x1c010001;
inline constexpr uint32_t kFaultOpRangeError = 0x1c010002;
inline constexpr uint32_t kFaultUnknownInterface = 0x1c010003;
inline constexpr uint32_t kFaultProtoError = 0x1c01000b;
inline constexpr uint32_t kFaultUnsupportedType = 0x1c010017;
inline constexpr uint32_t kFaultContextMismatch = 0x1c00001a;  // a context handle the server never gave
inline constexpr uint32_t kFaultInvalidPresContext = 0x1c00001c;
inline constexpr uint32_t kFaultServerTooBusy = 0x1c010014;
inline constexpr uint32_t kFaultOutOfResources = 0x000006d9;
inline constexpr uint32_t kFaultBadStubData = 0x000006f7;
inline constexpr uint32_t kFaultSecPkgError = 0x00000721;  // nca_s_fault_sec_pkg_error

// p_cont_elem results and reasons (bind_ack / alter_context_resp).
inline constexpr uint16_t kResultAcceptance = 0;
inline constexpr uint16_t kResultUserRejection = 1;
inline constexpr uint16_t kResultProviderRejection = 2;
inline constexpr uint16_t kResultNegotiateAck = 3;
inline constexpr uint16_t kReasonNotSpecified = 0;
inline constexpr uint16_t kReasonAbstractSyntaxNotSupported = 1;
inline constexpr uint16_t kReasonTransferSyntaxesNotSupported = 2;
inline constexpr uint16_t kReasonLocalLimitExceeded = 3;

// bind_nak reject reasons.
inline constexpr uint16_t kNakNotSpecified = 0;
inline constexpr uint16_t kNakTemporaryCongestion = 1;
inline constexpr uint16_t kNakLocalLimitExceeded = 2;
inline constexpr uint16_t kNakProtocolVersionNotSupported = 4;
inline constexpr uint16_t kNakInvalidAuthType = 8;

// A UUID in its textual field order; the wire form stores the first three fields per drep.
struct Uuid {
  uint32_t time_low = 0;
  uint16_t time_mid = 0;
  uint16_t time_hi = 0;
  std::array<uint8_t, 8> rest{};

  static std::optional<Uuid> parse(std::string_view text);  // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string to_string() const;
  bool operator==(const Uuid&) const = default;
};

struct SyntaxId {
  Uuid uuid;
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  bool operator==(const SyntaxId&) const = default;
};

// Well-known syntaxes.
SyntaxId winreg_syntax();  // 338cd001-2244-31f1-aaaa-900038001003 v1.0
SyntaxId ndr20_syntax();   // 8a885d04-1ceb-11c9-9fe8-08002b104860 v2.0
SyntaxId ndr64_syntax();   // 71710533-beba-4937-8319-b5dbef9ccc36 v1.0
// Bind-time feature negotiation pseudo transfer syntax: uuid prefix 6cb71c2c-9812-4540, v1.0;
// the last 8 bytes are the feature bitmask (MS-RPCE 3.3.1.5.3).
bool is_bind_time_feature_syntax(const SyntaxId& s);
uint8_t bind_time_features(const SyntaxId& s);  // first bitmask octet
SyntaxId bind_time_feature_syntax(uint8_t features);

struct Header {
  uint8_t rpc_vers = 5;
  uint8_t rpc_vers_minor = 0;
  PType ptype = PType::kRequest;
  uint8_t pfc_flags = kPfcFirstFrag | kPfcLastFrag;
  std::array<uint8_t, 4> drep{kDrepLittleEndian, 0, 0, 0};
  uint16_t frag_length = 0;
  uint16_t auth_length = 0;
  uint32_t call_id = 0;

  bool little_endian() const { return (drep[0] & 0xf0) == kDrepLittleEndian; }
};

// Parses the common header of one complete PDU (`pdu` must be exactly frag_length bytes).
// Checks version 5.0/5.1, a known connection-oriented ptype, frag_length == pdu.size() and
// auth_length fitting inside the PDU.
Status parse_header(ByteView pdu, Header& h);

struct ContextElem {
  uint16_t context_id = 0;
  SyntaxId abstract_syntax;
  std::vector<SyntaxId> transfer_syntaxes;
};

// bind and alter_context share a layout.
struct Bind {
  uint16_t max_xmit_frag = 0;
  uint16_t max_recv_frag = 0;
  uint32_t assoc_group_id = 0;
  std::vector<ContextElem> contexts;
  ByteView auth_verifier;  // sec_trailer + credentials, empty when auth_length == 0
};

struct ContextResult {
  uint16_t result = kResultAcceptance;
  uint16_t reason = kReasonNotSpecified;  // negotiate_ack: the accepted feature bits
  SyntaxId transfer_syntax;               // zero unless accepted
};

// bind_ack and alter_context_resp share a layout.
struct BindAck {
  uint16_t max_xmit_frag = 0;
  uint16_t max_recv_frag = 0;
  uint32_t assoc_group_id = 0;
  std::string secondary_address;  // without the NUL; written with NUL, empty -> length 0
  std::vector<ContextResult> results;
};

struct BindNak {
  uint16_t reject_reason = kNakNotSpecified;
  std::vector<std::pair<uint8_t, uint8_t>> versions;  // supported (major, minor)
};

struct Request {
  uint32_t alloc_hint = 0;
  uint16_t context_id = 0;
  uint16_t opnum = 0;
  std::optional<Uuid> object;  // present when kPfcObjectUuid is set
  ByteView stub;               // stub data of this fragment (auth trailer excluded)
};

struct Response {
  uint32_t alloc_hint = 0;
  uint16_t context_id = 0;
  uint8_t cancel_count = 0;
  ByteView stub;
};

struct Fault {
  uint32_t alloc_hint = 0;
  uint16_t context_id = 0;
  uint8_t cancel_count = 0;
  uint8_t flags = 0;
  uint32_t status = 0;
};

// Body parsers: `pdu` is the whole PDU and `h` its parsed header (ptype must match).
Status parse_bind(ByteView pdu, const Header& h, Bind& out);         // bind or alter_context
Status parse_bind_ack(ByteView pdu, const Header& h, BindAck& out);  // bind_ack or alter_context_resp
Status parse_bind_nak(ByteView pdu, const Header& h, BindNak& out);
Status parse_request(ByteView pdu, const Header& h, Request& out);
Status parse_response(ByteView pdu, const Header& h, Response& out);
Status parse_fault(ByteView pdu, const Header& h, Fault& out);
// auth3, shutdown, co_cancel and orphaned carry nothing beyond the header (plus optional auth).

// Builders. `pfc_flags`/`call_id` go into the header; everything else comes from the body.
// Bind/alter_context auth verifiers are not written (no auth is supported).
Bytes build_bind(PType type, uint32_t call_id, const Bind& b);
Bytes build_bind_ack(PType type, uint32_t call_id, const BindAck& a);
Bytes build_bind_nak(uint32_t call_id, const BindNak& n);
Bytes build_request(uint8_t pfc_flags, uint32_t call_id, const Request& r);
Bytes build_response(uint8_t pfc_flags, uint32_t call_id, const Response& r);
// The 24-byte header of a response whose stub (r.stub ignored) has `stub_size` bytes and is sent
// after it: what build_response writes before the stub.
Bytes build_response_header(uint8_t pfc_flags, uint32_t call_id, const Response& r, size_t stub_size);
Bytes build_fault(uint8_t pfc_flags, uint32_t call_id, const Fault& f);
Bytes build_empty(PType type, uint8_t pfc_flags, uint32_t call_id);  // auth3 (4 pad bytes), shutdown, ...

}  // namespace perfsim::rpc
