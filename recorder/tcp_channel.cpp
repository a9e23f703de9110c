#include "recorder/tcp_channel.h"

#include <boost/asio.hpp>
#include <cstdio>

#include "rpc/association.h"
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

class TcpChannel final : public Channel {
 public:
  Status call(uint16_t opnum, ByteView stub, Bytes& out) override;
  std::string describe() const override { return describe_; }
  Status bind();

  std::unique_ptr<Socket> impl_ = std::make_unique<Socket>();
  std::string describe_;
  uint32_t next_call_id_ = 1;
  uint16_t max_xmit_ = 5840;
  uint16_t max_recv_ = 5840;
};

}  // namespace

Status connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                   std::unique_ptr<Channel>& out) {
  auto c = std::make_unique<TcpChannel>();
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
  c->describe_ = "ncacn_ip_tcp:" + host + "[" + std::to_string(port) + "]";
  if (Status s = c->bind(); !s.ok()) return s;
  out = std::move(c);
  return Status::Ok();
}

Status TcpChannel::bind() {
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
  if (h.ptype != rpc::PType::kBindAck)
    return Status::Corruption(std::string("expected bind_ack, got ") + rpc::ptype_name(h.ptype));
  if (Status s = rpc::parse_bind_ack(pdu, h, ack); !s.ok()) return s;
  if (ack.results.empty() || ack.results[0].result != rpc::kResultAcceptance)
    return Status::IOError("the server does not offer winreg over NDR 2.0");
  max_xmit_ = std::min(max_xmit_, ack.max_recv_frag);
  max_recv_ = std::min(max_recv_, ack.max_xmit_frag);
  return Status::Ok();
}

Status TcpChannel::call(uint16_t opnum, ByteView stub, Bytes& out) {
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
    if (h.call_id != id)
      return Status::Corruption("response for call " + std::to_string(h.call_id) + " while waiting for " +
                                std::to_string(id));
    if (h.ptype == rpc::PType::kFault) {
      rpc::Fault f;
      if (Status s = rpc::parse_fault(pdu, h, f); !s.ok()) return s;
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%08x", f.status);
      return Status::IOError(std::string("the server answered with DCE/RPC fault ") + buf);
    }
    if (h.ptype != rpc::PType::kResponse)
      return Status::Corruption(std::string("expected a response, got ") + rpc::ptype_name(h.ptype));
    rpc::Response r;
    if (Status s = rpc::parse_response(pdu, h, r); !s.ok()) return s;
    out.insert(out.end(), r.stub.begin(), r.stub.end());
    if (out.size() > 80u * 1024 * 1024) return Status::Corruption("response larger than 80 MiB");
    if (h.pfc_flags & rpc::kPfcLastFrag) return Status::Ok();
  }
}

}  // namespace perfsim::recorder
