// The admin API's access rule (README.md, "Who may call it"). Without a token (token.h) the API
// has no authentication, so loopback is its fence; a browser on this machine is the one client that jumps it, sending
// requests here on behalf of any page it shows. Each check refuses what such a page can make it
// send:
//  - Host: after DNS rebinding the page's own name resolves here and the browser treats this
//    server as the page's origin, free to read and write; the Host header still names the page.
//  - Origin: a cross-origin request a browser sends without asking first carries the page's origin.
//  - X-Perfsim / a JSON Content-Type on every change: neither is a CORS-safelisted request-header
//    (Fetch standard), so a cross-origin page gets such a request sent only after a CORS preflight,
//    which this server never grants; a form or a "simple" fetch cannot carry them.
#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <cctype>

#include "admin/api.h"

namespace perfsim::admin {
namespace {

namespace ip = boost::asio::ip;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

// A host as the rule compares it: an IPv4 address in dotted decimal, an IPv6 address in brackets
// (both as Boost prints them, so every spelling of one address compares equal), a DNS name in
// lower case. False for anything else (a stray character, an empty name).
bool normalize_host(std::string_view h, std::string& out) {
  boost::system::error_code ec;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    const ip::address_v6 a = ip::make_address_v6(std::string(h.substr(1, h.size() - 2)), ec);
    if (ec) return false;
    out = "[" + a.to_string() + "]";
    return true;
  }
  if (const ip::address_v4 a = ip::make_address_v4(std::string(h), ec); !ec) {
    out = a.to_string();
    return true;
  }
  if (h.empty() || h.size() > 253 || !std::all_of(h.begin(), h.end(), name_char)) return false;
  out = lower(h);
  return true;
}

// A Host header (RFC 9110 7.2: uri-host [ ":" port ]) -> its normalized host; false when malformed.
// The port is not compared: a tunnel (ssh -L 9000:127.0.0.1:8135) changes it, and a rebinding
// page's name is what gives it away.
bool host_of(std::string_view authority, std::string& host) {
  std::string_view h = authority, port;
  if (!h.empty() && h.front() == '[') {
    const size_t close = h.find(']');
    if (close == std::string_view::npos) return false;
    port = h.substr(close + 1);
    h = h.substr(0, close + 1);
    if (!port.empty() && port.front() != ':') return false;
  } else if (const size_t colon = h.find(':'); colon != std::string_view::npos) {
    port = h.substr(colon);
    h = h.substr(0, colon);
  }
  if (!port.empty()) {
    port.remove_prefix(1);
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), digit)) return false;
  }
  return normalize_host(h, host);
}

// An IP literal as normalize_host writes it -> the address; false for a DNS name.
bool address_of(const std::string& host, ip::address& out) {
  boost::system::error_code ec;
  const bool bracketed = host.size() >= 2 && host.front() == '[';
  out = ip::make_address(bracketed ? host.substr(1, host.size() - 2) : host, ec);
  return !ec;
}

bool accepted(const AdminAccess& access, const std::string& host) {
  if (host == "localhost") return true;
  ip::address a, listen;
  if (address_of(host, a)) {
    if (a.is_loopback()) return true;
    boost::system::error_code ec;
    listen = ip::make_address(access.listen, ec);
    if (!ec && listen == a) return true;
    // Bound to every address: any of them may be the one dialled, and an IP literal cannot be rebound.
    if (!ec && listen.is_unspecified() && (listen.is_v6() || a.is_v4())) return true;
  }
  for (const std::string& h : access.hosts)
    if (std::string n; parse_admin_host(h, n).ok() && n == host) return true;
  return false;
}

std::string accepted_text(const AdminAccess& access) {
  std::string s = "localhost, 127.0.0.0/8, [::1]";
  boost::system::error_code ec;
  const ip::address listen = ip::make_address(access.listen, ec);
  if (!ec && listen.is_unspecified())
    s += ", any IP address (listening on " + access.listen + ")";
  else if (!ec && !listen.is_loopback())
    s += ", " + (listen.is_v6() ? "[" + listen.to_string() + "]" : listen.to_string());
  for (const std::string& h : access.hosts) s += ", " + h;
  return s + ", each with or without a port; name more with perfsim serve --admin-host NAME";
}

std::string host_refusal(const AdminAccess& access, const std::optional<std::string>& host) {
  if (!host) return "no Host header; this admin server answers requests for " + accepted_text(access);
  std::string name;
  if (host_of(*host, name) && accepted(access, name)) return "";
  return "Host '" + *host +
         "' is not a name of this admin server (a page whose DNS name was pointed here must not reach it: DNS "
         "rebinding); accepted: " +
         accepted_text(access);
}

// Origin (RFC 6454) is the page's scheme://host[:port]; the server's own page sends its Host.
std::string origin_refusal(const HttpRequest& req) {
  if (!req.origin) return "";
  const std::string origin = lower(*req.origin), own = lower(req.host.value_or(""));
  if (origin == "http://" + own || origin == "https://" + own) return "";
  return "Origin '" + *req.origin + "' is not this server's own (a request from another site's page); accepted: no " +
         "Origin, or http://" + req.host.value_or("") + " (the scheme and the request's Host)";
}

// "Text/Plain; charset=x" -> "text/plain": the MIME type's essence (RFC 9110 8.3.1).
std::string essence(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  return lower(t);
}

std::string change_refusal(const HttpRequest& req) {
  if (req.method == "GET" || req.method == "HEAD") return "";
  if (req.x_perfsim == "1" || essence(req.content_type) == "application/json") return "";
  return req.method +
         " needs the header 'X-Perfsim: 1' (or a Content-Type: application/json body): another site's page "
         "cannot send either without a CORS preflight, which this server never grants; e.g. curl -H 'X-Perfsim: 1' "
         "-X " +
         req.method + " ...";
}

}  // namespace

Status parse_admin_host(std::string_view text, std::string& out) {
  boost::system::error_code ec;
  if (text.find(':') != std::string_view::npos && text.front() != '[') {  // an IPv6 address without brackets
    const ip::address_v6 a = ip::make_address_v6(std::string(text), ec);
    if (!ec) {
      out = "[" + a.to_string() + "]";
      return Status::Ok();
    }
  } else if (!text.empty() && normalize_host(text, out)) {
    return Status::Ok();
  }
  return Status::InvalidArgument("'" + std::string(text) +
                                 "' is not a host name or IP address; write a name (perfsim.example), an IPv4 "
                                 "address (192.0.2.10) or an IPv6 address ([2001:db8::1]), without a port");
}

std::string access_refusal(const AdminAccess& access, const HttpRequest& req) {
  if (std::string why = host_refusal(access, req.host); !why.empty()) return why;
  if (std::string why = origin_refusal(req); !why.empty()) return why;
  return change_refusal(req);
}

}  // namespace perfsim::admin
