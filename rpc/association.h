// Server side of one connection-oriented DCE/RPC association, independent of the transport:
// fed complete PDUs (see frame.h), it answers binds and alter_contexts (presentation context
// and bind-time feature negotiation), reassembles fragmented requests up to a configured bound,
// hands each complete request to the interface, and fragments responses at the negotiated
// max_xmit_frag. Every request gets a response or a fault PDU with the request's call_id;
// only protocol violations ask the transport to close the connection.
// Authentication (auth.h): with an AuthService configured, binds may carry NTLMSSP or SPNEGO at
// levels connect to privacy; the handshake's later legs come as auth3 or alter_context, requests
// are verified (and unsealed) fragment by fragment, responses signed (and sealed). Without one, a
// bind with auth gets bind_nak "invalid auth type".
// Not supported (noted, answered properly): big-endian/non-ASCII stubs (fault nca_unsupported_type),
// concurrent multiplexing (calls are handled one at a time).
#pragma once
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/byte_chain.h"
#include "core/bytes.h"
#include "rpc/auth.h"
#include "rpc/pdu.h"

namespace perfsim::rpc {

// The smallest fragment we agree to send or receive: a response header plus 8 stub bytes
// (C706 says clients accept 1432; tests use small sizes to exercise fragmentation).
inline constexpr uint16_t kMinFragSize = 32;

struct AssociationConfig {
  SyntaxId interface = winreg_syntax();
  std::string secondary_address;                // "\\PIPE\\winreg" over SMB, the port number over TCP
  uint16_t max_frag = 5840;                     // our limit in both directions
  uint32_t max_request_stub = 4 * 1024 * 1024;  // reassembly bound (MS-RPCE 3.3.3.5.4: fault 5 above)
  uint32_t assoc_group_id = 0x12b45;            // given to a client that asks for a new group (0)
  uint8_t bind_time_features = 0x02;            // features we accept: keep-connection-on-orphan
  std::shared_ptr<const AuthService> auth;      // accounts for authenticated binds; null: none accepted
  // Calls on an unauthenticated association fault with access denied, as Windows does for an
  // interface registered secure-only (RestrictRemoteClients, rpc/README.md).
  bool require_auth = false;
  NtlmTarget ntlm_target;  // the host the NTLMSSP CHALLENGE names (name, Windows version)
};

// One complete request, ready to execute.
struct Call {
  uint32_t call_id = 0;
  uint16_t context_id = 0;
  uint16_t opnum = 0;
  Bytes stub;
};

// What feeding one PDU produced.
struct Step {
  std::vector<Bytes> replies;  // PDUs to send, in order
  std::optional<Call> call;    // a complete request: execute it and pass the result to respond()
  bool close = false;          // protocol violation: send replies, then close the connection
};

// The interface implementation (winreg): returns 0 and fills stub_out with the NDR response
// stub, or returns a fault status (kFaultOpRangeError for unknown opnums, kFaultBadStubData for
// undecodable input, ...). stub_out may be up to 64 MiB; it is fragmented here.
using CallHandler = std::function<uint32_t(uint16_t opnum, ByteView stub_in, Bytes& stub_out)>;
// The same, with a stub that may reference (share) payload buffers instead of holding copies.
using GatherCallHandler = std::function<uint32_t(uint16_t opnum, ByteView stub_in, ByteChain& stub_out)>;

// A non-owning reference to a call handler of the serving path: two words, no allocation, for a
// handler that outlives the call (server::RpcHandler's, instead of a std::function per handler).
class CallRef {
 public:
  template <class F>
  explicit CallRef(F& f)
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        fn_([](void* o, uint16_t opnum, ByteView in, ByteChain& out) -> uint32_t {
          return (*static_cast<F*>(o))(opnum, in, out);
        }) {}
  uint32_t operator()(uint16_t opnum, ByteView in, ByteChain& out) const { return fn_(obj_, opnum, in, out); }

 private:
  void* obj_;
  uint32_t (*fn_)(void*, uint16_t, ByteView, ByteChain&);
};

class Association {
 public:
  explicit Association(AssociationConfig config = {});

  // Consumes one complete PDU (exactly frag_length bytes).
  Step receive(ByteView pdu);
  // Appends the response fragments for `call`, or a fault PDU when fault != 0.
  void respond(const Call& call, uint32_t fault, ByteView stub_out, std::vector<Bytes>& out) const;
  // receive(), then run `handler` on a completed call and append its response.
  Step process(ByteView pdu, const CallHandler& handler);
  // The serving path: like process(), but the replies go to `out` and response fragments
  // reference the handler's stub pieces (byte for byte what process() sends). Returns Step::close.
  bool process(ByteView pdu, const GatherCallHandler& handler, std::vector<ByteChain>& out);
  // The same through a CallRef.
  bool serve(ByteView pdu, CallRef handler, std::vector<ByteChain>& out);

  bool bound() const { return bound_; }
  uint16_t max_xmit_frag() const { return max_xmit_; }  // largest PDU we send
  uint16_t max_recv_frag() const { return max_recv_; }  // largest PDU the client may send
  uint32_t assoc_group_id() const { return assoc_group_; }
  // kAuthLevelNone until an authenticated bind; then the level it asked for.
  uint8_t auth_level() const { return sec_ ? auth_level_ : kAuthLevelNone; }
  bool authenticated() const { return sec_ && sec_->established(); }
  std::string auth_peer() const { return authenticated() ? sec_->peer_name() : std::string(); }
  // Why the last handshake leg failed (empty: none did), for the transport's log; taking it
  // clears it, so each failure is logged once.
  const std::string& auth_error() const { return auth_error_; }
  std::string take_auth_error() { return std::exchange(auth_error_, std::string()); }
  const AssociationConfig& config() const { return cfg_; }

 private:
  struct Partial {
    Call call;
    uint32_t fault = 0;  // set when the call is already doomed; the fault goes out at the last fragment
  };

  Step on_bind(ByteView pdu, const Header& h);
  Step on_alter_context(ByteView pdu, const Header& h);
  Step on_request(ByteView pdu, const Header& h);
  Step on_auth3(ByteView pdu, const Header& h);
  Step bind_auth(const Header& h, ByteView verifier, Bytes& token, SecTrailer& t);
  Status same_auth(const SecTrailer& t, const char* pdu) const;
  Status verify_request(ByteView pdu, const Header& h, ByteView& stub, Bytes& plain, uint32_t& fault);
  bool signs() const { return sec_ && auth_level_ >= kAuthLevelCall; }
  void respond_signed(uint32_t call_id, uint16_t context_id, ByteView stub, std::vector<Bytes>& out) const;
  std::vector<ContextResult> negotiate(const std::vector<ContextElem>& contexts);
  ContextResult negotiate_one(const ContextElem& c) const;
  bool context_accepted(uint16_t id) const;
  Step protocol_error(uint32_t call_id) const;

  AssociationConfig cfg_;
  bool bound_ = false;
  uint16_t max_xmit_;
  uint16_t max_recv_;
  uint32_t assoc_group_ = 0;
  // Inline for the usual one or two contexts: an idle association allocates nothing for them.
  boost::container::small_vector<uint16_t, 4> accepted_contexts_;
  std::optional<Partial> partial_;
  // Authentication: the context, what the bind asked for, and whether a leg failed (the next
  // request is then refused, as Windows refuses it after a failed auth3).
  std::unique_ptr<SecurityContext> sec_;
  uint8_t auth_level_ = kAuthLevelNone;
  uint32_t auth_context_id_ = 0;
  bool auth_failed_ = false;
  std::string auth_error_;
};

// Splits `stub` into request/response fragments of at most max_frag bytes each (stub chunks a
// multiple of 8 except the last, alloc_hint = bytes left). Used by the server for responses and
// by clients for requests.
void build_response_fragments(uint32_t call_id, uint16_t context_id, ByteView stub, uint16_t max_frag,
                              std::vector<Bytes>& out);
// The same fragments, gathered: each is its header followed by the stub's pieces for that
// fragment, sharing (not copying) the stub's shared pieces. Flattened, byte-identical to the above.
void build_response_fragments(uint32_t call_id, uint16_t context_id, const ByteChain& stub, uint16_t max_frag,
                              std::vector<ByteChain>& out);
void build_request_fragments(uint32_t call_id, uint16_t context_id, uint16_t opnum, ByteView stub, uint16_t max_frag,
                             std::vector<Bytes>& out);
// Request or response fragments signed (and sealed at privacy) by `sec`: stub chunks padded to
// kAuthPadAlignment, each followed by the sec_trailer `t` and its signature. `opnum` < 0 builds
// responses.
Status build_signed_fragments(SecurityContext& sec, const SecTrailer& t, int opnum, uint32_t call_id,
                              uint16_t context_id, ByteView stub, uint16_t max_frag, std::vector<Bytes>& out);

}  // namespace perfsim::rpc
