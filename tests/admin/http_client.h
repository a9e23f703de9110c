// A blocking HTTP/1.1 client for the admin tests (Boost.Beast): one request per connection to
// 127.0.0.1 (Host: 127.0.0.1 unless `headers` sets another), every wait bounded by the socket's
// 30 s timeout. A change (PUT, POST, DELETE) passes the admin API's access rule only with the
// header `X-Perfsim: 1` or a JSON Content-Type (admin/README.md): callers add it to `headers`.
#pragma once
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perfsim::testing {

struct HttpReply {
  unsigned status = 0;  // 0: no answer (error says why)
  std::string content_type, allow, body, error;
};

inline HttpReply http_request(uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body = "", const std::string& content_type = "",
                              size_t claimed_length = 0,
                              const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context io;
  beast::tcp_stream s(io);
  s.expires_after(std::chrono::seconds(30));
  HttpReply out;
  beast::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) {
    out.error = "connect: " + ec.message();
    return out;
  }
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!content_type.empty()) req.set(http::field::content_type, content_type);
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  if (claimed_length) {  // a header that announces a body we never send (the size limit's test)
    req.content_length(claimed_length);
    req.body().clear();
    http::request_serializer<http::string_body> sr(req);
    http::write_header(s, sr, ec);
  } else {
    http::write(s, req, ec);
  }
  if (ec) {
    out.error = "write: " + ec.message();
    return out;
  }
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(s, buf, res, ec);
  if (ec) {
    out.error = "read: " + ec.message();
    return out;
  }
  out.status = res.result_int();
  out.content_type = std::string(res[http::field::content_type]);
  out.allow = std::string(res[http::field::allow]);
  out.body = res.body();
  return out;
}

}  // namespace perfsim::testing
