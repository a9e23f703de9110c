#include "recorder/tcp_channel.h"

#include <boost/asio.hpp>
#include <cstdio>

#include "rpc/association.h"
#include "rpc/auth.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"

namespace perfsim::recorder {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

struct Socket {
  asio::io_context ioc;
  tcp::socket sock{ioc};
  std::chrono::milliseconds timeout{5000};
  Bytes rbuf;

  // Runs the io_context until `done` or the timeout; on timeout the socket is closed.
  Status wait(bool& done, boost::system::error_code& ec, const char* what) {
    ioc.restart();
    ioc.run_for(timeout);
    if (!done) {
      boost::system::error_code ignored;
      sock.close(ignored);
      ioc.restart();
      ioc.run();
      return Status::IOError(std::string(what) + " timed out after " + std::to_string(timeout.count()) + " ms");
    }
    if (ec) return Status::IOError(std::string(what) + ": " + ec.message());
    return Status::Ok();
  }

  Status write(ByteView b) {
    bool done = false;
    boost::system::error_code ec;
    asio::async_write(sock, asio::buffer(b.data(), b.size()), [&](auto e, size_t) {
      ec = e;
      done = true;
    });
    return wait(done, ec, "send");
  }

  Status read_exact(size_t n, Bytes& out) {
    out.resize(n);
    bool done = false;
    boost::system::error_code ec;
    asio::async_read(sock, asio::buffer(out), [&](auto e, size_t) {
      ec = e;
      done = true;
    });
    return wait(done, ec, "receive");
  }

  Status read_pdu(Bytes& pdu) {
    Bytes head;
    if (Status s = read_exact(rpc::kHeaderSize, head); !s.ok()) return s;
    size_t len = 0;
    if (Status s = rpc::next_pdu_length(head, 65535, len); !s.ok()) return s;
    if (len < rpc::kHeaderSize) return Status::Corruption("server sent a PDU shorter than its header");
    Bytes rest;
    if (Status s = read_exact(len - rpc::kHeaderSize, rest); !s.ok()) return s;
    pdu = std::move(head);
    pdu.insert(pdu.end(), rest.begin(), rest.end());
    return Status::Ok();
  }
};

std::string fault_text(uint32_t status) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", status);
  return buf;
}

std::string level_name(uint8_t level) {
  switch (level) {
    case rpc::kAuthLevelConnect:
      return "connect";
    case rpc::kAuthLevelPrivacy:
      return "seal";
    default:
      return "sign";
  }
}

class TcpChannel final : public Channel {
 public:
  Status call(uint16_t opnum, ByteView stub, Bytes& out) override;
  std::string describe() const override { return describe_; }
  Status bind();

  std::unique_ptr<Socket> impl_ = std::make_unique<Socket>();
  std::string describe_;
  std::string where_;  // "HOST:PORT", for messages
  uint32_t next_call_id_ = 1;
  uint16_t max_xmit_ = 5840;
  uint16_t max_recv_ = 5840;
  std::optional<TcpAuth> auth_;
  std::unique_ptr<rpc::SecurityContext> sec_;
  bool answered_ = false;  // a call got a response: the logon was accepted
  Status refusal_;         // the host refused our logon and closed: every later call says so

 private:
  rpc::SecTrailer trailer() const { return {auth_->auth_type, auth_->auth_level, 0, kContextId, {}}; }
  std::string account() const {
    return auth_->who.domain.empty() ? auth_->who.user : auth_->who.domain + "\\" + auth_->who.user;
  }
  bool signs() const { return auth_ && auth_->auth_level >= rpc::kAuthLevelCall; }
  Status send_leg(rpc::PType type, uint32_t call_id, ByteView token);
  Status finish_spnego(ByteView token);
  Status verify_response(Bytes& pdu, const rpc::Header& h, rpc::Response& r);
  Status refused(uint32_t status) const;

  static constexpr uint32_t kContextId = 0x79231;  // any value; the server checks every request names it
};

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

}  // namespace

Status parse_auth_level(const std::string& text, uint8_t& level) {
  if (text == "connect")
    level = rpc::kAuthLevelConnect;
  else if (text == "sign" || text == "integrity")
    level = rpc::kAuthLevelIntegrity;
  else if (text == "seal" || text == "privacy")
    level = rpc::kAuthLevelPrivacy;
  else
    return Status::InvalidArgument("--auth-level '" + text + "' is not one of connect, sign, seal");
  return Status::Ok();
}

Status parse_auth_type(const std::string& text, uint8_t& type) {
  if (text == "ntlm" || text == "ntlmssp")
    type = rpc::kAuthTypeNtlmssp;
  else if (text == "spnego" || text == "negotiate")
    type = rpc::kAuthTypeSpnego;
  else
    return Status::InvalidArgument("--auth-type '" + text + "' is not one of ntlm, spnego");
  return Status::Ok();
}

Status connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                   std::unique_ptr<Channel>& out, const std::optional<TcpAuth>& auth) {
  auto c = std::make_unique<TcpChannel>();
  c->auth_ = auth;
  if (auth) {
    if (Status s = rpc::SecurityContext::client(auth->who, auth->auth_type, c->sec_); !s.ok()) return s;
  }
  Socket* impl = c->impl_.get();
  impl->timeout = timeout;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) {
    tcp::resolver res(impl->ioc);
    auto r = res.resolve(host, std::to_string(port), ec);
    if (ec || r.empty()) return Status::IOError("cannot resolve '" + host + "': " + ec.message());
    addr = r.begin()->endpoint().address();
  }
  bool done = false;
  impl->sock.async_connect(tcp::endpoint(addr, port), [&](auto e) {
    ec = e;
    done = true;
  });
  if (Status s = impl->wait(done, ec, "connect"); !s.ok())
    return Status::IOError("cannot reach " + host + ":" + std::to_string(port) + ": " + s.message() +
                           " (is perfsim serve / the host listening there?)");
  impl->sock.set_option(tcp::no_delay(true));
  c->where_ = host + ":" + std::to_string(port);
  c->describe_ =
      "ncacn_ip_tcp:" + host + "[" + std::to_string(port) + (auth ? "," + level_name(auth->auth_level) : "") + "]";
  if (auth)
    c->describe_ += std::string(" as ") + (auth->who.domain.empty() ? "" : auth->who.domain + "\\") + auth->who.user +
                    (auth->auth_type == rpc::kAuthTypeSpnego ? ", SPNEGO" : ", NTLMSSP");
  if (Status s = c->bind(); !s.ok()) return s;
  out = std::move(c);
  return Status::Ok();
}

Status TcpChannel::bind() {
  const uint32_t id = next_call_id_++;
  Bytes pdu = rpc::build_bind(rpc::PType::kBind, id, winreg_bind(max_xmit_, max_recv_));
  if (auth_) {
    Bytes token;
    if (Status s = sec_->step({}, token); !s.ok()) return s;
    pdu[3] |= rpc::kPfcPendingCancel;  // PFC_SUPPORT_HEADER_SIGN in a bind (MS-RPCE 2.2.2.3)
    rpc::append_auth(pdu, trailer(), token, 4);
  }
  if (Status s = impl_->write(pdu); !s.ok()) return s;
  if (Status s = impl_->read_pdu(pdu); !s.ok()) return s;
  rpc::Header h;
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return s;
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
    return Status::Corruption(std::string("expected bind_ack, got ") + rpc::ptype_name(h.ptype));
  if (Status s = rpc::parse_bind_ack(pdu, h, ack); !s.ok()) return s;
  if (ack.results.empty() || ack.results[0].result != rpc::kResultAcceptance)
    return Status::IOError("the server does not offer winreg over NDR 2.0");
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

Status TcpChannel::send_leg(rpc::PType type, uint32_t call_id, ByteView token) {
  Bytes pdu = type == rpc::PType::kAuth3 ? rpc::build_empty(type, rpc::kPfcFirstFrag | rpc::kPfcLastFrag, call_id)
                                         : rpc::build_bind(type, call_id, winreg_bind(max_xmit_, max_recv_));
  rpc::append_auth(pdu, trailer(), token, 4);
  return impl_->write(pdu);
}

Status TcpChannel::finish_spnego(ByteView token) {
  const uint32_t id = next_call_id_++;
  if (Status s = send_leg(rpc::PType::kAlterContext, id, token); !s.ok()) return s;
  Bytes pdu;
  if (Status s = impl_->read_pdu(pdu); !s.ok()) return s;
  rpc::Header h;
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return s;
  if (h.ptype == rpc::PType::kFault) {
    rpc::Fault f;
    return rpc::parse_fault(pdu, h, f).ok() ? refused(f.status)
                                            : Status::Corruption("unreadable fault after the SPNEGO leg");
  }
  if (h.ptype != rpc::PType::kAlterContextResp)
    return Status::Corruption(std::string("expected alter_context_resp, got ") + rpc::ptype_name(h.ptype));
  ByteView last;
  if (Status s = answer_token(pdu, h, last); !s.ok()) return s;
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
Status TcpChannel::refused(uint32_t status) const {
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
Status TcpChannel::verify_response(Bytes& pdu, const rpc::Header& h, rpc::Response& r) {
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

Status TcpChannel::call(uint16_t opnum, ByteView stub, Bytes& out) {
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
    if (Status s = impl_->write(f); !s.ok()) return s;
  out.clear();
  for (;;) {
    Bytes pdu;
    if (Status s = impl_->read_pdu(pdu); !s.ok()) return s;
    rpc::Header h;
    if (Status s = rpc::parse_header(pdu, h); !s.ok()) return s;
    if (h.call_id != id)
      return Status::Corruption("response for call " + std::to_string(h.call_id) + " while waiting for " +
                                std::to_string(id));
    if (h.ptype == rpc::PType::kFault) {
      rpc::Fault f;
      if (Status s = rpc::parse_fault(pdu, h, f); !s.ok()) return s;
      Status s = refused(f.status);
      if (auth_ && !answered_ && f.status == rpc::kFaultAccessDenied) refusal_ = s;
      return s;
    }
    if (h.ptype != rpc::PType::kResponse)
      return Status::Corruption(std::string("expected a response, got ") + rpc::ptype_name(h.ptype));
    rpc::Response r;
    if (Status s = rpc::parse_response(pdu, h, r); !s.ok()) return s;
    if (signs())
      if (Status s = verify_response(pdu, h, r); !s.ok()) return s;
    answered_ = true;
    out.insert(out.end(), r.stub.begin(), r.stub.end());
    if (out.size() > 80u * 1024 * 1024) return Status::Corruption("response larger than 80 MiB");
    if (h.pfc_flags & rpc::kPfcLastFrag) return Status::Ok();
  }
}

}  // namespace perfsim::recorder
