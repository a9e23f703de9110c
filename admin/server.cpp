#include "admin/server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <thread>

#include "core/json.h"
#include "server/server.h"

namespace perfsim::admin {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::optional<std::string> header(const http::request<http::string_body>& req, beast::string_view name) {
  const auto it = req.find(name);
  if (it == req.end()) return std::nullopt;
  return std::string(it->value());
}

HttpRequest api_request(const http::request<http::string_body>& req) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  r.content_type = std::string(req[http::field::content_type]);
  r.body = req.body();
  r.host = header(req, "Host");
  r.origin = header(req, "Origin");
  r.x_perfsim = header(req, "X-Perfsim");
  r.authorization = header(req, "Authorization");
  r.cookie = header(req, "Cookie");
  return r;
}

// One connection: read a request, answer it, again while the client keeps the connection alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<AdminApi> api, const AdminConfig& cfg)
      : stream_(std::move(socket)), api_(std::move(api)), cfg_(cfg) {}
  void run() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(cfg_.max_body);
    parser_->header_limit(uint32_t(cfg_.max_header));
    stream_.expires_after(cfg_.timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof)
      return close();
    if (ec == http::error::body_limit)
      return send_error(413, "request body larger than " + std::to_string(cfg_.max_body) + " bytes");
    if (ec == http::error::header_limit)
      return send_error(431, "request header larger than " + std::to_string(cfg_.max_header) + " bytes");
    if (ec) return send_error(400, "bad HTTP request: " + ec.message());
    const http::request<http::string_body>& req = parser_->get();
    // RFC 9112 3.2: a request with more than one Host is answered 400; which one counts is unclear.
    if (req.count(http::field::host) > 1) return send_error(400, "more than one Host header");
    const HttpResponse out = api_->handle(api_request(req));
    auto res = std::make_shared<http::response<http::string_body>>(http::status(out.status), req.version());
    res->set(http::field::server, "perfsim-admin");
    res->set(http::field::content_type, out.content_type);
    res->set(http::field::cache_control, "no-store");
    if (!out.allow.empty()) res->set(http::field::allow, out.allow);
    for (const auto& [name, value] : out.headers) res->insert(name, value);
    res->keep_alive(req.keep_alive());
    if (req.method() != http::verb::head) res->body() = out.body;
    res->prepare_payload();
    if (req.method() == http::verb::head) res->content_length(out.body.size());
    write(std::move(res));
  }

  void send_error(unsigned status, const std::string& what) {
    auto res = std::make_shared<http::response<http::string_body>>(http::status(status), 11);
    res->set(http::field::server, "perfsim-admin");
    res->set(http::field::content_type, "application/json");
    res->body() = json_text(nlohmann::json{{"error", what}}) + "\n";
    res->keep_alive(false);  // what follows in the stream cannot be trusted
    res->prepare_payload();
    write(std::move(res));
  }

  void write(std::shared_ptr<http::response<http::string_body>> res) {
    stream_.expires_after(cfg_.timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      if (ec || !res->keep_alive()) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<AdminApi> api_;
  const AdminConfig& cfg_;
};

}  // namespace

struct AdminServer::Impl {
  AdminConfig cfg;
  std::shared_ptr<AdminApi> api;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::string address;
  uint16_t port = 0;

  void accept() {
    acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) std::make_shared<Session>(std::move(s), api, cfg)->run();
      accept();
    });
  }
};

AdminServer::AdminServer(AdminConfig cfg, std::shared_ptr<AdminApi> api) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = std::move(cfg);
  impl_->api = std::move(api);
}

AdminServer::~AdminServer() { stop(); }

const std::string& AdminServer::address() const { return impl_->address; }
uint16_t AdminServer::port() const { return impl_->port; }

Status AdminServer::start() {
  std::string addr;
  uint16_t port = 0;
  if (Status s = server::parse_listen_address(impl_->cfg.listen, impl_->cfg.allow_remote, addr, port); !s.ok())
    return Status::InvalidArgument("--admin: " + s.message());
  for (const std::string& h : impl_->cfg.hosts) {
    std::string unused;
    if (Status s = parse_admin_host(h, unused); !s.ok()) return Status::InvalidArgument("--admin-host: " + s.message());
  }
  beast::error_code ec;
  const tcp::endpoint ep(asio::ip::make_address(addr, ec), port);
  tcp::acceptor& a = impl_->acceptor;
  if (!ec) a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    a.close(ec);
    return Status::InvalidArgument("--admin " + impl_->cfg.listen + ": cannot listen: " + ec.message() +
                                   " (is the port in use? try another one, or port 0)");
  }
  impl_->address = addr;
  impl_->port = a.local_endpoint().port();
  impl_->api->set_access({addr, impl_->cfg.hosts, impl_->cfg.token});  // before the thread: no request is served yet
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return Status::Ok();
}

void AdminServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->io.stop();  // open sessions go with the io_context
  impl_->thread.join();
  beast::error_code ignored;
  impl_->acceptor.close(ignored);  // the thread is gone: nothing else touches it
}

}  // namespace perfsim::admin
