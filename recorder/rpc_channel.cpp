#include "recorder/rpc_channel.h"

#include <cstdio>

#include "rpc/association.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"

namespace perfsim::recorder {
namespace {

std::string fault_text(uint32_t status) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", status);
  return buf;
}

rpc::Bind winreg_bind(uint16_t max_xmit, uint16_t max_recv) {
  rpc::Bind b;
  b.max_xmit_frag = max_xmit;
  b.max_recv_frag = max_recv;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  return b;
}

// The token a bind_ack / alter_context_resp carries (empty when none).
Status answer_token(ByteView pdu, const rpc::Header& h, ByteView& token) {
  token = {};
  if (h.auth_length == 0) return Status::Ok();
  rpc::SecTrailer t;
  if (Status s = rpc::parse_sec_trailer(pdu.last(std::min(pdu.size(), size_t(h.auth_length) + 8)), t); !s.ok())
    return s;
  token = t.value;
  return Status::Ok();
}

class RpcChannel final : public Channel {
 public:
  RpcChannel(std::unique_ptr<ByteStream> stream, std::string where, std::string describe, std::optional<TcpAuth> auth,
             std::unique_ptr<rpc::SecurityContext> sec)
      : stream_(std::move(stream)),
        describe_(std::move(describe)),
        where_(std::move(where)),
        auth_(std::move(auth)),
        sec_(std::move(sec)) {}
  Status call(uint16_t opnum, ByteView stub, Bytes& out) override;
  std::string describe() const override { return describe_; }
  Status bind();

 private:
  rpc::SecTrailer trailer() const { return {auth_->auth_type, auth_->auth_level, 0, kContextId, {}}; }
  std::string account() const {
    return auth_->who.domain.empty() ? auth_->who.user : auth_->who.domain + "\\" + auth_->who.user;
  }
  bool signs() const { return auth_ && auth_->auth_level >= rpc::kAuthLevelCall; }
  Status read_pdu(Bytes& pdu);
  Status garbled(const std::string& what, const Status& s) const;
  Status read_response(uint32_t id, Bytes& out);
  Status read_fragment(uint32_t id, Bytes& pdu, ByteView& stub, bool& last);
  Status send_leg(rpc::PType type, uint32_t call_id, ByteView token);
  Status finish_spnego(ByteView token);
  Status verify_response(Bytes& pdu, const rpc::Header& h, rpc::Response& r);
  Status refused(uint32_t status) const;

  static constexpr uint32_t kContextId = 0x79231;  // any value; the server checks every request names it

  std::unique_ptr<ByteStream> stream_;
  std::string describe_;
  std::string where_;  // "HOST:PORT", for messages
  uint32_t next_call_id_ = 1;
  uint16_t max_xmit_ = 5840;
  uint16_t max_recv_ = 5840;
  std::optional<TcpAuth> auth_;
  std::unique_ptr<rpc::SecurityContext> sec_;
  bool answered_ = false;  // a call got a response: the logon was accepted
  Status refusal_;         // the host refused our logon and closed: every later call says so
};

// The next PDU of the stream, cut by its frag_length; errors name the host.
Status RpcChannel::read_pdu(Bytes& pdu) {
  Bytes head;
  if (Status s = stream_->read_exact(rpc::kHeaderSize, head); !s.ok())
    return Status::IOError(where_ + ": " + s.message());
  size_t len = 0;
  if (Status s = rpc::next_pdu_length(head, 65535, len); !s.ok())
    return Status::Corruption(where_ + " sent something that is not a DCE/RPC PDU: " + s.message());
  Bytes rest;
  if (Status s = stream_->read_exact(len - rpc::kHeaderSize, rest); !s.ok())
    return Status::IOError(where_ + ": " + s.message());
  pdu = std::move(head);
  pdu.insert(pdu.end(), rest.begin(), rest.end());
  return Status::Ok();
}

// A PDU of the server's that does not parse, named with the host and where it came.
Status RpcChannel::garbled(const std::string& what, const Status& s) const {
  return Status::Corruption(where_ + " answered " + what + " that does not parse: " + s.message());
}

Status RpcChannel::bind() {
  const uint32_t id = next_call_id_++;
  Bytes pdu = rpc::build_bind(rpc::PType::kBind, id, winreg_bind(max_xmit_, max_recv_));
  if (auth_) {
    Bytes token;
    if (Status s = sec_->step({}, token); !s.ok()) return s;
    pdu[3] |= rpc::kPfcPendingCancel;  // PFC_SUPPORT_HEADER_SIGN in a bind (MS-RPCE 2.2.2.3)
    if (Status s = rpc::append_auth(pdu, trailer(), token, 4); !s.ok())
      return Status::IOError(where_ + ": " + s.message());
  }
  if (Status s = stream_->write(pdu); !s.ok()) return s;
  if (Status s = read_pdu(pdu); !s.ok()) return s;
  rpc::Header h;
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return garbled("the bind with a PDU", s);
  if (h.ptype == rpc::PType::kBindNak) {
    rpc::BindNak nak;
    const bool parsed = rpc::parse_bind_nak(pdu, h, nak).ok();
    if (auth_ && parsed && nak.reject_reason == rpc::kNakInvalidAuthType)
      return Status::IOError(where_ + " refused the authenticated bind (bind_nak: invalid auth type): it takes no " +
                             (auth_->auth_type == rpc::kAuthTypeSpnego ? "SPNEGO" : "NTLMSSP") +
                             " logons; try the other --auth-type, or --anonymous (a user may come from --auth-file or "
                             "$PERFSIM_USER)");
    return Status::IOError(where_ + " refused the winreg bind (bind_nak, reason " +
                           (parsed ? std::to_string(nak.reject_reason) : std::string("unreadable")) + ")");
  }
  rpc::BindAck ack;
  if (h.ptype != rpc::PType::kBindAck)
    return Status::Corruption(where_ + " answered the bind with a " + rpc::ptype_name(h.ptype) +
                              " PDU, expected bind_ack");
  if (Status s = rpc::parse_bind_ack(pdu, h, ack); !s.ok()) return garbled("the bind with a bind_ack", s);
  if (ack.results.empty() || ack.results[0].result != rpc::kResultAcceptance)
    return Status::IOError(where_ + " does not offer winreg over NDR 2.0 (its bind_ack accepts no context)");
  max_xmit_ = std::min(max_xmit_, ack.max_recv_frag);
  max_recv_ = std::min(max_recv_, ack.max_xmit_frag);
  if (!auth_) return Status::Ok();

  ByteView challenge;
  if (Status s = answer_token(pdu, h, challenge); !s.ok() || challenge.empty())
    return Status::Corruption(where_ + "'s bind_ack carries no authentication token (CHALLENGE)");
  Bytes token;
  if (Status s = sec_->step(challenge, token); !s.ok())
    return Status::IOError(where_ + ": the logon of " + account() + " failed on our side: " + s.message());
  // NTLMSSP's last leg is an auth3 (no answer; a refusal shows at the first call). SPNEGO's is an
  // alter_context whose answer completes the context, as Samba and Windows clients do.
  if (auth_->auth_type == rpc::kAuthTypeNtlmssp) return send_leg(rpc::PType::kAuth3, next_call_id_++, token);
  return finish_spnego(token);
}

// The handshake's next leg. Our token answers the server's: an NTLMv2 AUTHENTICATE carries the
// CHALLENGE's target info, so a server can make it larger than a PDU's 16-bit frag_length holds
// (fuzz_client); it is refused rather than sent with a frag_length that wrapped.
Status RpcChannel::send_leg(rpc::PType type, uint32_t call_id, ByteView token) {
  Bytes pdu = type == rpc::PType::kAuth3 ? rpc::build_empty(type, rpc::kPfcFirstFrag | rpc::kPfcLastFrag, call_id)
                                         : rpc::build_bind(type, call_id, winreg_bind(max_xmit_, max_recv_));
  if (Status s = rpc::append_auth(pdu, trailer(), token, 4); !s.ok())
    return Status::IOError(where_ + ": the logon of " + account() + " refused on our side: " + s.message() +
                           " (the CHALLENGE's target info makes our next token too large)");
  return stream_->write(pdu);
}

Status RpcChannel::finish_spnego(ByteView token) {
  const uint32_t id = next_call_id_++;
  if (Status s = send_leg(rpc::PType::kAlterContext, id, token); !s.ok()) return s;
  Bytes pdu;
  if (Status s = read_pdu(pdu); !s.ok()) return s;
  rpc::Header h;
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return garbled("the SPNEGO leg with a PDU", s);
  if (h.ptype == rpc::PType::kFault) {
    rpc::Fault f;
    if (Status s = rpc::parse_fault(pdu, h, f); !s.ok()) return garbled("the SPNEGO leg with a fault", s);
    return refused(f.status);
  }
  if (h.ptype != rpc::PType::kAlterContextResp)
    return Status::Corruption(where_ + " answered the SPNEGO leg with a " + rpc::ptype_name(h.ptype) +
                              " PDU, expected alter_context_resp");
  ByteView last;
  if (Status s = answer_token(pdu, h, last); !s.ok()) return garbled("the SPNEGO leg with an alter_context_resp", s);
  if (last.empty() && !sec_->established())
    return Status::IOError(where_ + " answered the SPNEGO leg of " + account() +
                           "'s logon without a token: the logon cannot complete");
  if (!sec_->established()) {
    Bytes none;
    if (Status s = sec_->step(last, none); !s.ok())
      return Status::IOError(where_ + ": the SPNEGO logon of " + account() + " did not complete: " + s.message());
  }
  if (!sec_->established()) return Status::IOError(where_ + ": the SPNEGO logon needs more legs than we speak");
  return Status::Ok();
}

// Fault 5 before any call was answered is how a host refuses the logon (after a failed auth3 or
// SPNEGO leg) or an unauthenticated call it requires authentication for (rpc/README.md).
Status RpcChannel::refused(uint32_t status) const {
  if (status == rpc::kFaultAccessDenied && !answered_) {
    if (auth_)
      return Status::IOError(where_ + " refused the logon of " + account() +
                             " (DCE/RPC fault access_denied after the " +
                             (auth_->auth_type == rpc::kAuthTypeSpnego ? "SPNEGO" : "NTLMSSP") +
                             " handshake): check user, password and domain");
    return Status::IOError(where_ +
                           " refused an unauthenticated call (DCE/RPC fault access_denied): the host "
                           "requires authenticated RPC; give --user and --password (or --auth-file)");
  }
  return Status::IOError("the server answered with DCE/RPC fault " + fault_text(status));
}

// Checks a response fragment's verifier (the bind's type, level and context) and unseals its stub
// in place at privacy; `r.stub` then views the plaintext.
Status RpcChannel::verify_response(Bytes& pdu, const rpc::Header& h, rpc::Response& r) {
  if (h.auth_length == 0)
    return Status::IOError(where_ + " sent a response without a verifier on a signed association");
  rpc::SecTrailer t;
  if (Status s = rpc::parse_sec_trailer(ByteView(pdu).last(std::min(pdu.size(), size_t(h.auth_length) + 8)), t);
      !s.ok())
    return s;
  if (t.auth_type != auth_->auth_type || t.auth_level != auth_->auth_level || t.value.size() != rpc::kNtlmSignatureSize)
    return Status::IOError(where_ + " sent a response verifier of another auth type or level than the bind's");
  const size_t off = size_t(r.stub.data() - pdu.data()), n = r.stub.size();
  if (Status s = sec_->unprotect(pdu, off, n + t.pad_length, auth_->auth_level == rpc::kAuthLevelPrivacy); !s.ok())
    return Status::IOError(where_ + ": " + s.message());
  r.stub = ByteView(pdu).subspan(off, n);
  return Status::Ok();
}

Status RpcChannel::call(uint16_t opnum, ByteView stub, Bytes& out) {
  if (!refusal_.ok()) return refusal_;
  const uint32_t id = next_call_id_++;
  std::vector<Bytes> frags;
  if (signs()) {
    if (Status s = rpc::build_signed_fragments(*sec_, trailer(), opnum, id, 0, stub, max_xmit_, frags); !s.ok())
      return s;
  } else {
    rpc::build_request_fragments(id, 0, opnum, stub, max_xmit_, frags);  // level connect: no verifier, as Samba
  }
  for (const Bytes& f : frags)
    if (Status s = stream_->write(f); !s.ok()) return s;
  return read_response(id, out);
}

// Reassembles the answer to call `id`: fragments up to the last, bounded in size and in count
// (kMaxResponseStub, kMaxResponseFragments).
Status RpcChannel::read_response(uint32_t id, Bytes& out) {
  out.clear();
  for (size_t fragments = 1;; ++fragments) {
    if (fragments > kMaxResponseFragments)
      return Status::Corruption(where_ + " sent more than " + std::to_string(kMaxResponseFragments) +
                                " fragments for one response without a last one: giving up on call " +
                                std::to_string(id));
    Bytes pdu;
    ByteView stub;
    bool last = false;
    if (Status s = read_fragment(id, pdu, stub, last); !s.ok()) return s;
    if (stub.size() > kMaxResponseStub - out.size())
      return Status::Corruption(where_ + "'s response to call " + std::to_string(id) + " is larger than " +
                                std::to_string(kMaxResponseStub) +
                                " bytes (64 MiB, the largest value winreg carries, and its framing): refused");
    out.insert(out.end(), stub.begin(), stub.end());
    if (last) return Status::Ok();
  }
}

// One fragment of the answer to call `id`: a fault becomes its Status, a response fragment is
// verified (and unsealed) when the level asks; `stub` views its stub inside `pdu`.
Status RpcChannel::read_fragment(uint32_t id, Bytes& pdu, ByteView& stub, bool& last) {
  if (Status s = read_pdu(pdu); !s.ok()) return s;
  rpc::Header h;
  const std::string call = "call " + std::to_string(id);
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return garbled(call + " with a PDU", s);
  if (h.call_id != id)
    return Status::Corruption(where_ + " answered call " + std::to_string(h.call_id) + " while we waited for " +
                              std::to_string(id));
  if (h.ptype == rpc::PType::kFault) {
    rpc::Fault f;
    if (Status s = rpc::parse_fault(pdu, h, f); !s.ok()) return garbled(call + " with a fault", s);
    Status s = refused(f.status);
    if (auth_ && !answered_ && f.status == rpc::kFaultAccessDenied) refusal_ = s;
    return s;
  }
  if (h.ptype != rpc::PType::kResponse)
    return Status::Corruption(where_ + " answered " + call + " with a " + rpc::ptype_name(h.ptype) +
                              " PDU, expected a response");
  rpc::Response r;
  if (Status s = rpc::parse_response(pdu, h, r); !s.ok()) return garbled(call + " with a response", s);
  if (signs())
    if (Status s = verify_response(pdu, h, r); !s.ok()) return s;
  answered_ = true;
  stub = r.stub;
  last = h.pfc_flags & rpc::kPfcLastFrag;
  return Status::Ok();
}

}  // namespace

Status bind_rpc_channel(std::unique_ptr<ByteStream> stream, const std::string& where, const std::string& describe,
                        const std::optional<TcpAuth>& auth, std::unique_ptr<rpc::SecurityContext> sec,
                        std::unique_ptr<Channel>& out) {
  if (auth && !sec) return Status::InvalidArgument("an authenticated bind needs a client security context");
  auto c = std::make_unique<RpcChannel>(std::move(stream), where, describe, auth, std::move(sec));
  if (Status s = c->bind(); !s.ok()) return s;
  out = std::move(c);
  return Status::Ok();
}

}  // namespace perfsim::recorder
