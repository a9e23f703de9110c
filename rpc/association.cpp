#include "rpc/association.h"

#include <algorithm>

namespace perfsim::rpc {
namespace {

constexpr uint8_t kWholePdu = kPfcFirstFrag | kPfcLastFrag;
constexpr uint8_t kPfcSupportHeaderSign = kPfcPendingCancel;  // its meaning in bind / bind_ack
constexpr uint16_t kNakInvalidChecksum = 9;                   // C706 reject reason invalid_checksum

// Faults raised before the interface ran tell the client the call may be retried safely.
bool raised_before_execution(uint32_t fault) {
  return fault == kFaultOpRangeError || fault == kFaultUnknownInterface || fault == kFaultProtoError ||
         fault == kFaultUnsupportedType || fault == kFaultAccessDenied || fault == kFaultBadStubData ||
         fault == kFaultSecPkgError;
}

// The sec_trailer and auth_value: the PDU's last auth_length + 8 bytes (parse_header checked they fit).
ByteView verifier(ByteView pdu, const Header& h) {
  return h.auth_length ? pdu.last(std::min(pdu.size(), size_t(h.auth_length) + kSecTrailerSize)) : ByteView{};
}

Bytes fault_pdu(uint32_t call_id, uint16_t context_id, uint32_t status) {
  Fault f;
  f.context_id = context_id;
  f.status = status;
  uint8_t flags = kWholePdu | (raised_before_execution(status) ? kPfcDidNotExecute : 0);
  return build_fault(flags, call_id, f);
}

Step bind_nak_step(uint32_t call_id, uint16_t reason, bool close) {
  Step s;
  s.replies.push_back(build_bind_nak(call_id, {reason, {{5, 0}}}));
  s.close = close;
  return s;
}

// Cuts stub into chunks that fit max_frag after `header` bytes; every chunk but the last is a
// multiple of 8 so NDR alignment survives reassembly.
// emit(flags, pos, n, left) per fragment of a `size`-byte stub.
template <typename Emit>
void for_each_fragment(size_t size, uint16_t max_frag, size_t header, Emit emit) {
  size_t room = max_frag > header + 8 ? (max_frag - header) & ~size_t(7) : 8;
  size_t pos = 0;
  do {
    size_t n = std::min(room, size - pos);
    uint8_t flags = (pos == 0 ? kPfcFirstFrag : 0) | (pos + n == size ? kPfcLastFrag : 0);
    emit(flags, pos, n, uint32_t(size - pos));
    pos += n;
  } while (pos < size);
}

}  // namespace

void build_response_fragments(uint32_t call_id, uint16_t context_id, ByteView stub, uint16_t max_frag,
                              std::vector<Bytes>& out) {
  for_each_fragment(stub.size(), max_frag, kResponseHeaderSize,
                    [&](uint8_t flags, size_t pos, size_t n, uint32_t left) {
                      out.push_back(build_response(flags, call_id, {left, context_id, 0, stub.subspan(pos, n)}));
                    });
}

void build_response_fragments(uint32_t call_id, uint16_t context_id, const ByteChain& stub, uint16_t max_frag,
                              std::vector<ByteChain>& out) {
  for_each_fragment(stub.size(), max_frag, kResponseHeaderSize,
                    [&](uint8_t flags, size_t pos, size_t n, uint32_t left) {
                      ByteChain f(build_response_header(flags, call_id, {left, context_id, 0, {}}, n));
                      f.append_range(stub, pos, n);
                      out.push_back(std::move(f));
                    });
}

void build_request_fragments(uint32_t call_id, uint16_t context_id, uint16_t opnum, ByteView stub, uint16_t max_frag,
                             std::vector<Bytes>& out) {
  for_each_fragment(stub.size(), max_frag, kRequestHeaderSize, [&](uint8_t flags, size_t pos, size_t n, uint32_t left) {
    out.push_back(build_request(flags, call_id, {left, context_id, opnum, std::nullopt, stub.subspan(pos, n)}));
  });
}

Status build_signed_fragments(SecurityContext& sec, const SecTrailer& t, int opnum, uint32_t call_id,
                              uint16_t context_id, ByteView stub, uint16_t max_frag, std::vector<Bytes>& out) {
  const size_t header = opnum < 0 ? kResponseHeaderSize : kRequestHeaderSize;
  const size_t room = max_frag > header + kSecTrailerSize + kNtlmSignatureSize + kAuthPadAlignment
                          ? (max_frag - header - kSecTrailerSize - kNtlmSignatureSize) & ~(kAuthPadAlignment - 1)
                          : kAuthPadAlignment;
  const bool seal = t.auth_level == kAuthLevelPrivacy;
  Status st = Status::Ok();
  size_t pos = 0;
  do {
    size_t n = std::min(room, stub.size() - pos);
    uint8_t flags = (pos == 0 ? kPfcFirstFrag : 0) | (pos + n == stub.size() ? kPfcLastFrag : 0);
    uint32_t left = uint32_t(stub.size() - pos);
    Bytes f = opnum < 0 ? build_response(flags, call_id, {left, context_id, 0, stub.subspan(pos, n)})
                        : build_request(flags, call_id,
                                        {left, context_id, uint16_t(opnum), std::nullopt, stub.subspan(pos, n)});
    const uint8_t zero_sig[kNtlmSignatureSize] = {};
    if (st = append_auth(f, t, ByteView(zero_sig, kNtlmSignatureSize), kAuthPadAlignment); !st.ok()) return st;
    const size_t padded = n + f[f.size() - kNtlmSignatureSize - kSecTrailerSize + 2];
    if (st = sec.protect(f, header, padded, seal); !st.ok()) return st;
    out.push_back(std::move(f));
    pos += n;
  } while (pos < stub.size());
  return st;
}

Association::Association(AssociationConfig config)
    : cfg_(std::move(config)), max_xmit_(cfg_.max_frag), max_recv_(cfg_.max_frag) {}

Step Association::protocol_error(uint32_t call_id) const {
  Step s;
  s.replies.push_back(fault_pdu(call_id, 0, kFaultProtoError));
  s.close = true;
  return s;
}

Step Association::receive(ByteView pdu) {
  Header h;
  if (Status st = parse_header(pdu, h); !st.ok()) {
    uint32_t call_id = pdu.size() >= kHeaderSize ? load_le32(&pdu[12]) : 0;
    if (pdu.size() >= kHeaderSize && pdu[2] == uint8_t(PType::kBind))
      return bind_nak_step(
          call_id, st.code() == Status::Code::kUnsupported ? kNakProtocolVersionNotSupported : kNakNotSpecified, true);
    return protocol_error(call_id);
  }
  switch (h.ptype) {
    case PType::kBind:
      return on_bind(pdu, h);
    case PType::kAlterContext:
      return on_alter_context(pdu, h);
    case PType::kRequest:
      return on_request(pdu, h);
    case PType::kCoCancel:
      return {};  // calls run to completion; nothing to cancel
    case PType::kOrphaned:
      // The client abandoned a call: forget its fragments, send nothing (MS-RPCE 3.3.3.5.6).
      if (partial_ && partial_->call.call_id == h.call_id) partial_.reset();
      return {};
    case PType::kAuth3:
      return on_auth3(pdu, h);
    default:
      return protocol_error(h.call_id);  // server-to-client PDUs from a client
  }
}

ContextResult Association::negotiate_one(const ContextElem& c) const {
  ContextResult r;
  if (!c.transfer_syntaxes.empty() && is_bind_time_feature_syntax(c.transfer_syntaxes.front())) {
    r.result = kResultNegotiateAck;
    r.reason = uint16_t(bind_time_features(c.transfer_syntaxes.front()) & cfg_.bind_time_features);
    return r;
  }
  const SyntaxId& want = c.abstract_syntax;
  if (want.uuid != cfg_.interface.uuid || want.version_major != cfg_.interface.version_major ||
      want.version_minor > cfg_.interface.version_minor) {
    r.result = kResultProviderRejection;
    r.reason = kReasonAbstractSyntaxNotSupported;
    return r;
  }
  for (const SyntaxId& t : c.transfer_syntaxes) {
    if (t == ndr20_syntax()) {
      r.transfer_syntax = t;
      return r;
    }
  }
  r.result = kResultProviderRejection;
  r.reason = kReasonTransferSyntaxesNotSupported;
  return r;
}

std::vector<ContextResult> Association::negotiate(const std::vector<ContextElem>& contexts) {
  std::vector<ContextResult> results;
  for (const ContextElem& c : contexts) {
    ContextResult r = negotiate_one(c);
    if (r.result == kResultAcceptance && !context_accepted(c.context_id)) accepted_contexts_.push_back(c.context_id);
    results.push_back(r);
  }
  return results;
}

bool Association::context_accepted(uint16_t id) const {
  return std::find(accepted_contexts_.begin(), accepted_contexts_.end(), id) != accepted_contexts_.end();
}

Step Association::on_bind(ByteView pdu, const Header& h) {
  if (bound_) return bind_nak_step(h.call_id, kNakNotSpecified, true);  // one bind per connection
  Bind b;
  if (!parse_bind(pdu, h, b).ok()) return bind_nak_step(h.call_id, kNakNotSpecified, true);
  Bytes token;
  SecTrailer t;
  if (h.auth_length > 0) {
    if (Step nak = bind_auth(h, verifier(pdu, h), token, t); !nak.replies.empty()) return nak;
  }
  uint16_t xmit = std::min(b.max_recv_frag, cfg_.max_frag), recv = std::min(b.max_xmit_frag, cfg_.max_frag);
  if (xmit < kMinFragSize || recv < kMinFragSize) return bind_nak_step(h.call_id, kNakLocalLimitExceeded, false);
  max_xmit_ = xmit;
  max_recv_ = recv;
  assoc_group_ = b.assoc_group_id ? b.assoc_group_id : cfg_.assoc_group_id;
  bound_ = true;
  BindAck ack{max_xmit_, max_recv_, assoc_group_, cfg_.secondary_address, negotiate(b.contexts)};
  Step s;
  s.replies.push_back(build_bind_ack(PType::kBindAck, h.call_id, ack));
  if (sec_) {
    // MS-RPCE 3.3.1.5.2.2: echo PFC_SUPPORT_HEADER_SIGN when the client offers it. An NTLMSSP
    // signature with ESS covers the header either way; the flag tells the client we know that.
    if (h.pfc_flags & kPfcSupportHeaderSign) s.replies.back()[3] |= kPfcSupportHeaderSign;
    if (!append_auth(s.replies.back(), t, token, 4).ok()) return bind_nak_step(h.call_id, kNakNotSpecified, false);
  }
  return s;
}

// The first leg of an authenticated bind: a bind_nak step when refused, else an empty step with
// `token` (the server's answer, e.g. the NTLMSSP CHALLENGE) and the trailer to send it with.
Step Association::bind_auth(const Header& h, ByteView verifier, Bytes& token, SecTrailer& t) {
  if (!cfg_.auth || !parse_sec_trailer(verifier, t).ok() ||
      (t.auth_type != kAuthTypeNtlmssp && t.auth_type != kAuthTypeSpnego)) {
    auth_error_ = cfg_.auth ? "auth type " + std::to_string(t.auth_type) + " is neither NTLMSSP (10) nor SPNEGO (9)"
                            : "authenticated bind, but no accounts are configured (perfsim serve --user)";
    return bind_nak_step(h.call_id, kNakInvalidAuthType, false);
  }
  if (t.auth_level < kAuthLevelConnect || t.auth_level > kAuthLevelPrivacy) {
    auth_error_ = "auth level " + std::to_string(t.auth_level) + " outside connect (2) .. privacy (6)";
    return bind_nak_step(h.call_id, kNakNotSpecified, false);
  }
  auto sec = SecurityContext::server(cfg_.auth, t.auth_type, cfg_.ntlm_target);
  if (Status st = sec->step(t.value, token); !st.ok()) {
    auth_error_ = st.ToString();
    return bind_nak_step(h.call_id, kNakInvalidChecksum, false);
  }
  sec_ = std::move(sec);
  auth_level_ = t.auth_level;
  auth_context_id_ = t.context_id;
  return {};
}

// The third leg of NTLMSSP: no answer. A failure (wrong password, unknown account) shows at the
// next request, which is refused with access denied (Samba's dcesrv_auth3 does the same).
Step Association::on_auth3(ByteView pdu, const Header& h) {
  Step s;
  SecTrailer t;
  if (!sec_ || sec_->established() || auth_failed_ || h.auth_length == 0 ||
      !parse_sec_trailer(verifier(pdu, h), t).ok()) {
    s.close = true;  // an auth3 nobody asked for
    return s;
  }
  // Samba's dcesrv_auth_prepare_auth3 (librpc/rpc/dcesrv_auth.c) marks the association invalid
  // when auth3 names another auth type, level or context than the bind: no answer, and the next
  // request is refused, as after a failed leg.
  Status st = same_auth(t, "auth3");
  Bytes out;
  if (st.ok()) st = sec_->step(t.value, out);
  if (!st.ok() || !sec_->established()) {
    auth_failed_ = true;
    auth_error_ = st.ok() ? "the handshake needs another leg after auth3" : st.ToString();
  }
  return s;
}

Status Association::same_auth(const SecTrailer& t, const char* pdu) const {
  if (t.auth_type == sec_->auth_type() && t.auth_level == auth_level_ && t.context_id == auth_context_id_)
    return Status::Ok();
  return Status::InvalidArgument(std::string(pdu) + " names auth type " + std::to_string(t.auth_type) + " level " +
                                 std::to_string(t.auth_level) + " context " + std::to_string(t.context_id) +
                                 "; the bind had " + std::to_string(sec_->auth_type()) + ", " +
                                 std::to_string(auth_level_) + ", " + std::to_string(auth_context_id_));
}

Step Association::on_alter_context(ByteView pdu, const Header& h) {
  Bind b;
  if (!bound_ || !parse_bind(pdu, h, b).ok()) return protocol_error(h.call_id);
  Bytes token;
  SecTrailer t;
  bool leg = false;  // this alter_context carries a handshake leg (SPNEGO's third, from Samba)
  if (h.auth_length > 0) {
    if (!sec_ || !parse_sec_trailer(verifier(pdu, h), t).ok()) return protocol_error(h.call_id);
    if (!sec_->established()) {
      leg = true;
      // As for auth3 (Samba's dcesrv_auth_alter): the leg carries the bind's type, level and context.
      Status st = same_auth(t, "alter_context");
      if (st.ok()) st = sec_->step(t.value, token);
      if (!st.ok()) {
        // Samba's dcesrv_alter answers a failed leg with this fault and disconnects, as Windows does.
        auth_failed_ = true;
        auth_error_ = st.ToString();
        Step s;
        s.replies.push_back(fault_pdu(h.call_id, 0, kFaultAccessDenied));
        s.close = true;
        return s;
      }
    }
  }
  // alter_context_resp carries no secondary address (MS-RPCE 2.2.2.x: port_any_t length 0).
  BindAck ack{max_xmit_, max_recv_, assoc_group_, {}, negotiate(b.contexts)};
  Step s;
  s.replies.push_back(build_bind_ack(PType::kAlterContextResp, h.call_id, ack));
  if (leg && !append_auth(s.replies.back(), t, token, 4).ok()) {
    s.replies.clear();
    s.close = true;
  }
  return s;
}

Step Association::on_request(ByteView pdu, const Header& h) {
  Request r;
  if (!bound_ || !parse_request(pdu, h, r).ok()) return protocol_error(h.call_id);
  uint32_t refused = 0;
  if (auth_failed_ || (sec_ && !sec_->established()))
    refused = kFaultAccessDenied;  // the handshake failed or never finished
  else if (!sec_ && cfg_.require_auth)
    refused = kFaultAccessDenied;
  Bytes plain;  // the unsealed fragment, at privacy
  if (!refused && signs()) {
    if (Status st = verify_request(pdu, h, r.stub, plain, refused); !st.ok()) auth_error_ = st.ToString();
  }
  if (refused) {
    partial_.reset();
    Step s;
    s.replies.push_back(fault_pdu(h.call_id, r.context_id, refused));
    // A bad verifier ends the association (Samba's dcesrv_fault_disconnect, as Windows does); an
    // unauthenticated call under require_auth only fails that call.
    s.close = sec_ || auth_failed_;
    return s;
  }
  bool first = h.pfc_flags & kPfcFirstFrag;
  if (first == partial_.has_value()) return protocol_error(h.call_id);  // fragment out of sequence
  if (first) {
    // Not emplace(): clang sees Partial (nested, with member initializers) as not default-constructible.
    partial_ = Partial{};
    partial_->call = {h.call_id, r.context_id, r.opnum, {}};
    if (!context_accepted(r.context_id))
      partial_->fault = kFaultUnknownInterface;
    else if (!h.little_endian() || h.drep[1] != 0)
      partial_->fault = kFaultUnsupportedType;
    if (!partial_->fault) partial_->call.stub.reserve(std::min<size_t>(r.alloc_hint, cfg_.max_request_stub));
  } else if (partial_->call.call_id != h.call_id) {
    return protocol_error(h.call_id);  // interleaved calls need concurrent multiplexing
  }
  Partial& p = *partial_;
  if (!p.fault && r.stub.size() > cfg_.max_request_stub - p.call.stub.size()) {
    p.fault = kFaultAccessDenied;
    Bytes().swap(p.call.stub);
  }
  if (!p.fault) put_bytes(p.call.stub, r.stub);
  Step s;
  if (!(h.pfc_flags & kPfcLastFrag)) return s;
  Partial done = std::move(*partial_);
  partial_.reset();
  if (done.fault)
    s.replies.push_back(fault_pdu(done.call.call_id, done.call.context_id, done.fault));
  else
    s.call = std::move(done.call);
  return s;
}

// Checks one request fragment's verifier against the bind's auth and unseals its stub into
// `plain` at privacy; `stub` then views the plaintext. `fault` says how Windows refuses it.
Status Association::verify_request(ByteView pdu, const Header& h, ByteView& stub, Bytes& plain, uint32_t& fault) {
  SecTrailer t;
  fault = kFaultAccessDenied;
  if (h.auth_length == 0) return Status::InvalidArgument("request without a verifier on a signed association");
  if (Status st = parse_sec_trailer(verifier(pdu, h), t); !st.ok()) return st;
  if (t.auth_type != sec_->auth_type() || t.auth_level != auth_level_ || t.context_id != auth_context_id_) {
    fault = t.auth_type != sec_->auth_type() ? kFaultSecPkgError : kFaultAccessDenied;
    return Status::InvalidArgument("request verifier names auth type " + std::to_string(t.auth_type) + " level " +
                                   std::to_string(t.auth_level) + ", not the bind's");
  }
  fault = kFaultSecPkgError;
  if (t.value.size() != kNtlmSignatureSize)
    return Status::InvalidArgument("request verifier of " + std::to_string(t.value.size()) + " bytes, not 16");
  const size_t off = size_t(stub.data() - pdu.data());
  const size_t padded = stub.size() + t.pad_length;
  plain.assign(pdu.begin(), pdu.end());
  if (Status st = sec_->unprotect(plain, off, padded, auth_level_ == kAuthLevelPrivacy); !st.ok()) return st;
  stub = ByteView(plain).subspan(off, stub.size());
  fault = 0;
  return Status::Ok();
}

void Association::respond_signed(uint32_t call_id, uint16_t context_id, ByteView stub, std::vector<Bytes>& out) const {
  SecTrailer t{sec_->auth_type(), auth_level_, 0, auth_context_id_, {}};
  std::vector<Bytes> frags;
  if (build_signed_fragments(*sec_, t, -1, call_id, context_id, stub, max_xmit_, frags).ok())
    for (Bytes& f : frags) out.push_back(std::move(f));
  else
    out.push_back(fault_pdu(call_id, context_id, kFaultSecPkgError));
}

void Association::respond(const Call& call, uint32_t fault, ByteView stub_out, std::vector<Bytes>& out) const {
  if (fault) {
    out.push_back(fault_pdu(call.call_id, call.context_id, fault));
    return;
  }
  if (signs())
    respond_signed(call.call_id, call.context_id, stub_out, out);
  else
    build_response_fragments(call.call_id, call.context_id, stub_out, max_xmit_, out);
}

bool Association::process(ByteView pdu, const GatherCallHandler& handler, std::vector<ByteChain>& out) {
  return serve(pdu, CallRef(handler), out);
}

bool Association::serve(ByteView pdu, CallRef handler, std::vector<ByteChain>& out) {
  Step s = receive(pdu);
  for (Bytes& b : s.replies) out.emplace_back(std::move(b));
  if (!s.call) return s.close;
  ByteChain stub_out;
  if (uint32_t fault = handler(s.call->opnum, s.call->stub, stub_out)) {
    out.emplace_back(fault_pdu(s.call->call_id, s.call->context_id, fault));
  } else if (signs()) {
    // Signing rewrites every fragment, so the shared stub is copied once here; at levels none
    // and connect the zero-copy path below is kept.
    std::vector<Bytes> frags;
    respond_signed(s.call->call_id, s.call->context_id, stub_out.flatten(), frags);
    for (Bytes& f : frags) out.emplace_back(std::move(f));
  } else
    build_response_fragments(s.call->call_id, s.call->context_id, stub_out, max_xmit_, out);
  return s.close;
}

Step Association::process(ByteView pdu, const CallHandler& handler) {
  Step s = receive(pdu);
  if (!s.call) return s;
  Bytes stub_out;
  uint32_t fault = handler(s.call->opnum, s.call->stub, stub_out);
  respond(*s.call, fault, stub_out, s.replies);
  s.call.reset();
  return s;
}

}  // namespace perfsim::rpc
