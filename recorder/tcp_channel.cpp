#include "recorder/tcp_channel.h"

#include <boost/asio.hpp>

#include "recorder/client.h"
#include "rpc/auth.h"

namespace perfsim::recorder {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// A connected TCP socket as rpc_channel.h's byte stream; every wait is bounded by `timeout`.
struct Socket final : ByteStream {
  asio::io_context ioc;
  tcp::socket sock{ioc};
  std::chrono::milliseconds timeout{5000};

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

  Status write(ByteView b) override {
    bool done = false;
    boost::system::error_code ec;
    asio::async_write(sock, asio::buffer(b.data(), b.size()), [&](auto e, size_t) {
      ec = e;
      done = true;
    });
    return wait(done, ec, "send");
  }

  Status read_exact(size_t n, Bytes& out) override {
    out.resize(n);
    bool done = false;
    boost::system::error_code ec;
    asio::async_read(sock, asio::buffer(out), [&](auto e, size_t) {
      ec = e;
      done = true;
    });
    return wait(done, ec, "receive");
  }
};

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
  std::unique_ptr<rpc::SecurityContext> sec;
  if (auth) {
    if (Status s = rpc::SecurityContext::client(auth->who, auth->auth_type, sec); !s.ok()) return s;
  }
  auto impl = std::make_unique<Socket>();
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
  const std::string where = host + ":" + std::to_string(port);
  std::string describe =
      "ncacn_ip_tcp:" + host + "[" + std::to_string(port) + (auth ? "," + level_name(auth->auth_level) : "") + "]";
  if (auth)
    describe += std::string(" as ") + (auth->who.domain.empty() ? "" : auth->who.domain + "\\") + auth->who.user +
                (auth->auth_type == rpc::kAuthTypeSpnego ? ", SPNEGO" : ", NTLMSSP");
  return bind_rpc_channel(std::move(impl), where, describe, auth, std::move(sec), out);
}

// Here rather than in client.cpp: a client over another channel (perfsim-record.exe) links no sockets.
Status WinregClient::connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                             std::unique_ptr<WinregClient>& out) {
  std::unique_ptr<Channel> ch;
  if (Status s = connect_tcp(host, port, timeout, ch); !s.ok()) return s;
  out = std::make_unique<WinregClient>(std::move(ch));
  return Status::Ok();
}

}  // namespace perfsim::recorder
