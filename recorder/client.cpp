#include "recorder/client.h"

#include <boost/asio.hpp>

#include "core/utf16.h"
#include "rpc/association.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"

namespace perfsim::recorder {

namespace asio = boost::asio;
using asio::ip::tcp;

struct WinregClient::Impl {
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
    asio::async_write(sock, asio::buffer(b.data(), b.size()), [&](auto e, size_t) { ec = e; done = true; });
    return wait(done, ec, "send");
  }

  Status read_exact(size_t n, Bytes& out) {
    out.resize(n);
    bool done = false;
    boost::system::error_code ec;
    asio::async_read(sock, asio::buffer(out), [&](auto e, size_t) { ec = e; done = true; });
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

WinregClient::WinregClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WinregClient::~WinregClient() = default;

Status WinregClient::connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                             std::unique_ptr<WinregClient>& out) {
  auto impl = std::make_unique<Impl>();
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
  impl->sock.async_connect(tcp::endpoint(addr, port), [&](auto e) { ec = e; done = true; });
  if (Status s = impl->wait(done, ec, "connect"); !s.ok())
    return Status::IOError("cannot reach " + host + ":" + std::to_string(port) + ": " + s.message() +
                           " (is perfsim serve / the host listening there?)");
  impl->sock.set_option(tcp::no_delay(true));
  std::unique_ptr<WinregClient> c(new WinregClient(std::move(impl)));
  if (Status s = c->bind(); !s.ok()) return s;
  out = std::move(c);
  return Status::Ok();
}

Status WinregClient::bind() {
  rpc::Bind b;
  b.max_xmit_frag = max_xmit_;
  b.max_recv_frag = max_recv_;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  const uint32_t id = next_call_id_++;
  if (Status s = impl_->write(rpc::build_bind(rpc::PType::kBind, id, b)); !s.ok()) return s;
  Bytes pdu;
  if (Status s = impl_->read_pdu(pdu); !s.ok()) return s;
  rpc::Header h;
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return s;
  if (h.ptype == rpc::PType::kBindNak) return Status::IOError("the server refused the winreg bind (bind_nak)");
  rpc::BindAck ack;
  if (h.ptype != rpc::PType::kBindAck) return Status::Corruption(std::string("expected bind_ack, got ") + rpc::ptype_name(h.ptype));
  if (Status s = rpc::parse_bind_ack(pdu, h, ack); !s.ok()) return s;
  if (ack.results.empty() || ack.results[0].result != rpc::kResultAcceptance)
    return Status::IOError("the server does not offer winreg over NDR 2.0");
  max_xmit_ = std::min(max_xmit_, ack.max_recv_frag);
  max_recv_ = std::min(max_recv_, ack.max_xmit_frag);
  return Status::Ok();
}

Status WinregClient::call(uint16_t opnum, ByteView stub, Bytes& out) {
  const uint32_t id = next_call_id_++;
  std::vector<Bytes> frags;
  rpc::build_request_fragments(id, 0, opnum, stub, max_xmit_, frags);
  for (const Bytes& f : frags)
    if (Status s = impl_->write(f); !s.ok()) return s;
  out.clear();
  for (;;) {
    Bytes pdu;
    if (Status s = impl_->read_pdu(pdu); !s.ok()) return s;
    rpc::Header h;
    if (Status s = rpc::parse_header(pdu, h); !s.ok()) return s;
    if (h.call_id != id) return Status::Corruption("response for call " + std::to_string(h.call_id) + " while waiting for " + std::to_string(id));
    if (h.ptype == rpc::PType::kFault) {
      rpc::Fault f;
      if (Status s = rpc::parse_fault(pdu, h, f); !s.ok()) return s;
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%08x", f.status);
      return Status::IOError(std::string("the server answered with DCE/RPC fault ") + buf);
    }
    if (h.ptype != rpc::PType::kResponse) return Status::Corruption(std::string("expected a response, got ") + rpc::ptype_name(h.ptype));
    rpc::Response r;
    if (Status s = rpc::parse_response(pdu, h, r); !s.ok()) return s;
    out.insert(out.end(), r.stub.begin(), r.stub.end());
    if (out.size() > 80u * 1024 * 1024) return Status::Corruption("response larger than 80 MiB");
    if (h.pfc_flags & rpc::kPfcLastFrag) return Status::Ok();
  }
}

Status WinregClient::open_hive(uint16_t opnum, winreg::PolicyHandle& h) {
  winreg::OpenHiveRequest req;
  req.access_mask = 0x02000000;  // MAXIMUM_ALLOWED
  Bytes out;
  if (Status s = call(opnum, winreg::encode(req), out); !s.ok()) return s;
  winreg::OpenHiveResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  if (resp.result != 0) return Status::IOError("open hive failed: " + werror_name(resp.result));
  h = resp.handle;
  return Status::Ok();
}

Status WinregClient::open_key(const winreg::PolicyHandle& parent, const std::string& path, winreg::PolicyHandle& h, uint32_t& werr) {
  winreg::OpenKeyRequest req;
  req.parent_handle = parent;
  req.keyname = utf8_to_utf16(path);
  req.access_mask = 0x02000000;
  Bytes out;
  if (Status s = call(winreg::kOpenKey, winreg::encode(req), out); !s.ok()) return s;
  winreg::OpenKeyResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  werr = resp.result;
  h = resp.handle;
  return Status::Ok();
}

Status WinregClient::close_key(const winreg::PolicyHandle& h, uint32_t& werr) {
  winreg::CloseKeyRequest req;
  req.handle = h;
  Bytes out;
  if (Status s = call(winreg::kCloseKey, winreg::encode(req), out); !s.ok()) return s;
  winreg::CloseKeyResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  werr = resp.result;
  return Status::Ok();
}

Status WinregClient::query_value(const winreg::PolicyHandle& h, const std::string& name, std::optional<uint32_t> buffer,
                                 winreg::QueryValueResponse& out) {
  winreg::QueryValueRequest req;
  req.handle = h;
  req.value_name = utf8_to_utf16(name);
  req.type = 0;
  if (buffer) req.data = Bytes();  // an empty conformant array of max_count data_size, as samba sends
  req.data_size = buffer.value_or(0);
  req.data_length = 0;
  Bytes stub;
  if (Status s = call(winreg::kQueryValue, winreg::encode(req), stub); !s.ok()) return s;
  return winreg::decode(stub, out);
}

Status WinregClient::query_value_growing(const winreg::PolicyHandle& h, const std::string& name, const Growth& g, ValueResult& out) {
  out = ValueResult{};
  uint32_t offer = g.initial;
  for (out.tries = 1; out.tries <= g.max_tries; ++out.tries) {
    winreg::QueryValueResponse r;
    if (Status s = query_value(h, name, offer, r); !s.ok()) return s;
    out.status = r.result;
    out.type = r.type.value_or(0);
    out.last_offered = offer;
    out.last_size = r.data_size.value_or(0);
    if (r.result != winreg::kWerrMoreData) {
      if (r.data) out.data = std::move(*r.data);
      return Status::Ok();
    }
    uint64_t next = offer;
    switch (g.kind) {
      case Growth::Kind::kReturned: next = out.last_size > offer ? out.last_size : uint64_t(offer) * 2; break;
      case Growth::Kind::kDouble: next = uint64_t(offer) * 2; break;
      case Growth::Kind::kAdd: next = uint64_t(offer) + g.step; break;
    }
    offer = uint32_t(std::min<uint64_t>(next, 0x4000000));  // 64 MiB: the IDL's range
  }
  --out.tries;
  return Status::IOError("'" + name + "' still answered " + werror_name(out.status) + " after " + std::to_string(out.tries) +
                         " tries (last buffer " + std::to_string(out.last_offered) + " bytes)");
}

std::string werror_name(uint32_t code) {
  switch (code) {
    case 0: return "WERR_OK (0)";
    case 2: return "WERR_FILE_NOT_FOUND (2)";
    case 5: return "WERR_ACCESS_DENIED (5)";
    case 6: return "WERR_INVALID_HANDLE (6)";
    case 87: return "WERR_INVALID_PARAMETER (87)";
    case 122: return "WERR_INSUFFICIENT_BUFFER (122)";
    case 170: return "WERR_BUSY (170)";
    case 234: return "WERR_MORE_DATA (234)";
    case 259: return "WERR_NO_MORE_ITEMS (259)";
    default: return "WERROR " + std::to_string(code);
  }
}

}  // namespace perfsim::recorder
