// The admin API's access rule (admin/README.md, "Who may call it") on AdminApi itself, without
// sockets: what a browser sends for another site's page (a "simple" cross-site POST, a form, a
// page on a rebound DNS name) is refused with a 403 naming the header, and changes nothing on the
// host; what curl and the dashboard send is answered.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "admin/api.h"
#include "tests/admin/rig.h"

namespace {

using nlohmann::json;
namespace admin = perfsim::admin;
namespace replayer = perfsim::replayer;

constexpr const char* kHost = "127.0.0.1:8135";  // what a browser at http://127.0.0.1:8135/ sends

struct Api {
  std::shared_ptr<replayer::SimulatedHost> host = perfsim::testing::bundled_host({replayer::TimelineMode::kStep, 0});
  bool cleared = false;
  admin::AdminApi api;
  explicit Api(admin::AdminAccess access = {"127.0.0.1", {}, ""})
      : api(std::vector<admin::AdminHost>{{"", host, {}, "", {}}}, sources(), admin::WebFiles{PERFSIM_ADMIN_WEB_DIR},
            replayer::FaultLimits{}, std::move(access)) {}
  admin::AdminSources sources() {
    admin::AdminSources s;
    s.clear_journal = [this] { cleared = true; };
    return s;
  }
  std::string timeline() const { return "/api/hosts/" + host->name() + "/timeline"; }
};

admin::HttpRequest request(const std::string& method, const std::string& target, const std::string& body = "",
                           const std::string& content_type = "") {
  admin::HttpRequest r;
  r.method = method;
  r.target = target;
  r.content_type = content_type;
  r.body = body;
  r.host = kHost;
  return r;
}

admin::HttpRequest with_change_header(admin::HttpRequest r) {
  r.x_perfsim = "1";
  return r;
}

std::string error_of(const admin::HttpResponse& r) { return json::parse(r.body).at("error").get<std::string>(); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("access: a cross-site simple POST pausing a host is refused 403 and the host keeps running") {
  Api a;
  SECTION("text/plain from another site's page: the Origin gives it away") {
    admin::HttpRequest r = request("POST", a.timeline(), "pause", "text/plain;charset=UTF-8");
    r.origin = "http://evil.example";
    const admin::HttpResponse out = a.api.handle(r);
    CHECK(out.status == 403);
    CHECK(out.content_type == "application/json");
    CHECK(contains(error_of(out), "Origin 'http://evil.example'"));
    CHECK(contains(error_of(out), "http://127.0.0.1:8135"));  // what would be accepted
  }
  SECTION("text/plain with no Origin (an old browser or an extension stripping it): no X-Perfsim") {
    const admin::HttpResponse out = a.api.handle(request("POST", a.timeline(), "pause", "text/plain"));
    CHECK(out.status == 403);
    CHECK(contains(error_of(out), "X-Perfsim: 1"));
    CHECK(contains(error_of(out), "CORS preflight"));
  }
  SECTION("an HTML form: application/x-www-form-urlencoded") {
    const admin::HttpResponse out =
        a.api.handle(request("POST", a.timeline() + "?pause", "", "application/x-www-form-urlencoded"));
    CHECK(out.status == 403);
    CHECK(contains(error_of(out), "X-Perfsim"));
  }
  SECTION("multipart/form-data, and a JSON-looking parameter of text/plain") {
    CHECK(a.api.handle(request("POST", a.timeline(), "pause", "multipart/form-data; boundary=x")).status == 403);
    CHECK(a.api.handle(request("POST", a.timeline(), "pause", "text/plain; charset=application/json")).status == 403);
  }
  SECTION("no Content-Type at all (fetch with mode no-cors and no body)") {
    CHECK(a.api.handle(request("POST", a.timeline() + "?pause")).status == 403);
  }
  CHECK_FALSE(a.host->timeline_paused());
}

TEST_CASE("access: PUT faults and quirks and DELETE journal need X-Perfsim or JSON, and change nothing without") {
  Api a;
  const std::string plan = "[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n";
  CHECK(a.api.handle(request("PUT", "/api/faults", plan, "text/plain")).status == 403);
  CHECK(a.host->faults() == nullptr);
  CHECK(a.api.handle(request("PUT", "/api/hosts/" + a.host->name() + "/quirks", "busy:every=1")).status == 403);
  CHECK_FALSE(a.host->quirks().busy.active());
  CHECK(a.api.handle(request("DELETE", "/api/journal")).status == 403);
  CHECK_FALSE(a.cleared);

  // The same with the header, or with a JSON body: answered.
  CHECK(a.api.handle(with_change_header(request("PUT", "/api/faults", plan))).status == 200);
  REQUIRE(a.host->faults() != nullptr);
  CHECK(a.host->faults()->rules.size() == 1);
  const admin::HttpResponse j =
      a.api.handle(request("PUT", "/api/faults", R"({"fault":[{"kind":"busy"},{"kind":"latency","ms":1}]})",
                           "Application/JSON; charset=utf-8"));
  CHECK(j.status == 200);
  CHECK(a.host->faults()->rules.size() == 2);
  CHECK(a.api.handle(with_change_header(request("PUT", "/api/hosts/" + a.host->name() + "/quirks", "busy:every=1")))
            .status == 200);
  CHECK(a.host->quirks().busy.active());
  CHECK(a.api.handle(with_change_header(request("DELETE", "/api/journal"))).status == 200);
  CHECK(a.cleared);
  // Only the value 1: the header's presence is what a page cannot fake, its value is the contract.
  admin::HttpRequest zero = request("POST", a.timeline(), "pause");
  zero.x_perfsim = "0";
  CHECK(a.api.handle(zero).status == 403);
}

TEST_CASE("access: a rebound DNS name in Host is refused on GET and on POST") {
  Api a;
  for (const char* method : {"GET", "HEAD"}) {
    admin::HttpRequest r = request(method, "/api/hosts");
    r.host = "evil.example:8135";
    const admin::HttpResponse out = a.api.handle(r);
    CHECK(out.status == 403);
    CHECK(contains(error_of(out), "Host 'evil.example:8135'"));
    CHECK(contains(error_of(out), "DNS rebinding"));
    CHECK(contains(error_of(out), "localhost, 127.0.0.0/8, [::1]"));
    CHECK(contains(error_of(out), "--admin-host"));
  }
  admin::HttpRequest post = with_change_header(request("POST", a.timeline(), "pause"));
  post.host = "evil.example:8135";
  post.origin = "http://evil.example:8135";  // same-origin in the browser's eyes after rebinding
  CHECK(a.api.handle(post).status == 403);
  CHECK_FALSE(a.host->timeline_paused());
  // The dashboard's page itself too: a rebound page could read it and everything it links to.
  admin::HttpRequest page = request("GET", "/");
  page.host = "evil.example";
  CHECK(a.api.handle(page).status == 403);
  admin::HttpRequest none = request("GET", "/api/hosts");
  none.host.reset();
  const admin::HttpResponse out = a.api.handle(none);
  CHECK(out.status == 403);
  CHECK(contains(error_of(out), "no Host header"));
}

TEST_CASE("access: Host names and forms accepted and refused") {
  Api a;
  const auto answered = [&](const std::string& host) {
    admin::HttpRequest r = request("GET", "/api/hosts");
    r.host = host;
    return a.api.handle(r).status == 200;
  };
  for (const char* ok : {"127.0.0.1", "127.0.0.1:8135", "localhost", "LocalHost:9000", "127.0.0.2:1", "127.255.0.9",
                         "[::1]", "[::1]:8135", "[0:0:0:0:0:0:0:1]:80", "localhost:"}) {
    INFO(ok);
    CHECK(answered(ok));
  }
  for (const char* bad : {"", "evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "localhost.",
                          "192.0.2.10", "[::2]", "::1", "127.0.0.1:80:80", "127.0.0.1:abc", "127.0.0.1:123456", "[::1",
                          "[::1]x", "127.1", "0x7f.0.0.1", "local host", "[evil.example]"}) {
    INFO(bad);
    CHECK_FALSE(answered(bad));
  }
}

TEST_CASE("access: an Origin other than the page's own is refused") {
  Api a;
  const auto status = [&](const std::string& origin, const std::string& host = kHost) {
    admin::HttpRequest r = request("GET", "/api/hosts");
    r.host = host;
    r.origin = origin;
    return a.api.handle(r).status;
  };
  CHECK(status("http://127.0.0.1:8135") == 200);
  CHECK(status("HTTP://127.0.0.1:8135") == 200);
  CHECK(status("https://127.0.0.1:8135") == 200);  // behind a TLS proxy that keeps Host
  CHECK(status("http://localhost", "localhost") == 200);
  CHECK(status("http://localhost:3000") == 403);  // another local service's page
  CHECK(status("http://127.0.0.1:9999") == 403);
  CHECK(status("http://127.0.0.1") == 403);
  CHECK(status("null") == 403);  // a sandboxed frame or a file:// page
  CHECK(status("") == 403);
  CHECK(status("http://127.0.0.1:8135/") == 403);
  CHECK(status("ftp://127.0.0.1:8135") == 403);
}

TEST_CASE("access: the listen address and --admin-host names are accepted besides loopback") {
  const auto answered = [](admin::AdminAccess access, const std::string& host) {
    Api a(std::move(access));
    admin::HttpRequest r = request("GET", "/api/hosts");
    r.host = host;
    return a.api.handle(r).status == 200;
  };
  CHECK(answered({"192.0.2.10", {}, ""}, "192.0.2.10:8135"));
  CHECK_FALSE(answered({"192.0.2.10", {}, ""}, "192.0.2.11:8135"));
  CHECK(answered({"2001:db8::7", {}, ""}, "[2001:db8:0:0::7]:8135"));
  // A wildcard listen address: every IP literal (none can be rebound), no DNS name unless named.
  CHECK(answered({"0.0.0.0", {}, ""}, "198.51.100.7:8135"));
  CHECK_FALSE(answered({"0.0.0.0", {}, ""}, "[2001:db8::1]:8135"));
  CHECK_FALSE(answered({"0.0.0.0", {}, ""}, "perfsim.example:8135"));
  CHECK(answered({"::", {}, ""}, "[2001:db8::1]:8135"));
  CHECK(answered({"::", {}, ""}, "198.51.100.7"));
  const admin::AdminAccess named{"127.0.0.1", {"perfsim.example", "2001:db8::5", "192.0.2.99"}, ""};
  CHECK(answered(named, "PERFSIM.example:8135"));
  CHECK(answered(named, "[2001:db8:0::5]"));
  CHECK(answered(named, "192.0.2.99:1"));
  CHECK_FALSE(answered(named, "other.example"));
  CHECK_FALSE(answered(named, "sub.perfsim.example"));
  Api a(named);
  admin::HttpRequest r = request("GET", "/");
  r.host = "other.example";
  CHECK(contains(error_of(a.api.handle(r)), "perfsim.example"));  // the refusal lists the names
}

TEST_CASE("access: parse_admin_host takes a name or an address and says what to write otherwise") {
  std::string out;
  CHECK(admin::parse_admin_host("Perfsim.Example", out).ok());
  CHECK(out == "perfsim.example");
  CHECK(admin::parse_admin_host("2001:DB8:0::1", out).ok());
  CHECK(out == "[2001:db8::1]");
  CHECK(admin::parse_admin_host("[::1]", out).ok());
  CHECK(out == "[::1]");
  CHECK(admin::parse_admin_host("192.0.2.10", out).ok());
  CHECK(out == "192.0.2.10");
  for (const char* bad : {"", "perfsim.example:8135", "192.0.2.10:80", "[::1]:80", "a b", "http://x", "[nope]"}) {
    INFO(bad);
    const perfsim::Status s = admin::parse_admin_host(bad, out);
    CHECK_FALSE(s.ok());
    CHECK(contains(s.message(), "without a port"));
  }
}

TEST_CASE("access: the dashboard and curl's plain requests are still answered") {
  Api a;
  admin::HttpRequest page = request("GET", "/");
  page.host = "localhost:8135";
  const admin::HttpResponse out = a.api.handle(page);
  CHECK(out.status == 200);
  CHECK(contains(out.body, "dashboard.js"));
  CHECK(a.api.handle(request("GET", "/dashboard.js")).status == 200);
  CHECK(a.api.handle(request("GET", "/metrics")).status == 200);
  // The dashboard's own fetches are same-origin GETs: a browser may add its Origin, which matches.
  admin::HttpRequest fetch = request("GET", "/api/hosts");
  fetch.origin = std::string("http://") + kHost;
  CHECK(a.api.handle(fetch).status == 200);
  // curl -X POST -H 'X-Perfsim: 1' -d pause: curl sends form-urlencoded; the header is what counts.
  const admin::HttpResponse p =
      a.api.handle(with_change_header(request("POST", a.timeline(), "pause", "application/x-www-form-urlencoded")));
  CHECK(p.status == 200);
  CHECK(json::parse(p.body)["timeline"]["paused"] == true);
  CHECK(a.host->timeline_paused());
}

// --admin-token-file (admin/token.h): for machines several people share, where loopback lets every
// local user in. Every request needs the token; Host and Origin are still checked first.
TEST_CASE("access: with a token, a request without it or with another is a 401, with it is answered") {
  const std::string token = "0123456789abcdef0123456789abcdef";
  Api a(admin::AdminAccess{"127.0.0.1", {}, token});
  const std::string timeline = a.timeline();

  admin::HttpRequest bare = request("GET", "/api/hosts");
  admin::HttpResponse r = a.api.handle(bare);
  CHECK(r.status == 401);
  CHECK(contains(error_of(r), "--admin-token-file"));
  REQUIRE(r.headers.size() == 1);
  CHECK(r.headers[0] == std::pair<std::string, std::string>{"WWW-Authenticate", "Bearer realm=\"perfsim-admin\""});

  admin::HttpRequest wrong = bare;
  wrong.authorization = "Bearer " + std::string(token.size(), 'x');
  r = a.api.handle(wrong);
  CHECK(r.status == 401);
  CHECK(contains(r.headers.at(0).second, "error=\"invalid_token\""));
  wrong.authorization = "Bearer " + token.substr(0, 31);  // a prefix is not the token
  CHECK(a.api.handle(wrong).status == 401);
  wrong.authorization = "Basic " + token;  // another scheme
  CHECK(a.api.handle(wrong).status == 401);

  admin::HttpRequest bearer = bare;
  bearer.authorization = "bearer " + token;  // the scheme is case-insensitive (RFC 9110 11.1)
  CHECK(a.api.handle(bearer).status == 200);

  admin::HttpRequest cookie = bare;
  cookie.cookie = "theme=dark; perfsim_admin_token=" + token;
  CHECK(a.api.handle(cookie).status == 200);
  cookie.cookie = "perfsim_admin_token=nope; other=" + token;
  CHECK(a.api.handle(cookie).status == 401);

  // A change with neither X-Perfsim nor the token: the host keeps running either way.
  admin::HttpRequest pause = with_change_header(request("POST", timeline, "pause"));
  CHECK(a.api.handle(pause).status == 401);
  CHECK_FALSE(a.host->timeline_paused());
  pause.authorization = "Bearer " + token;
  CHECK(a.api.handle(pause).status == 200);
  CHECK(a.host->timeline_paused());

  // A rebinding page that somehow had the token is still refused by Host first.
  admin::HttpRequest rebound = bearer;
  rebound.host = "evil.example";
  CHECK(a.api.handle(rebound).status == 403);
}

TEST_CASE("access: ?token= on a GET sets an HttpOnly SameSite cookie and sends the browser on without it") {
  const std::string token = "0123456789abcdef0123456789abcdef";
  Api a(admin::AdminAccess{"127.0.0.1", {}, token});
  admin::HttpResponse r = a.api.handle(request("GET", "/?q=web&token=" + token + "&order=name"));
  CHECK(r.status == 303);
  std::map<std::string, std::string> h(r.headers.begin(), r.headers.end());
  CHECK(h["Location"] == "/?q=web&order=name");
  CHECK(h["Set-Cookie"] == "perfsim_admin_token=" + token + "; Path=/; HttpOnly; SameSite=Strict");
  CHECK(a.api.handle(request("GET", "/api/hosts?token=" + token)).headers.at(0).second == "/api/hosts");
  // A wrong one is a 401, and a POST's query is no way in.
  CHECK(a.api.handle(request("GET", "/?token=abc")).status == 401);
  CHECK(a.api.handle(with_change_header(request("POST", a.timeline() + "?token=" + token, "pause"))).status == 401);
  CHECK_FALSE(a.host->timeline_paused());
}

TEST_CASE("access: without a token configured, no Authorization is asked for") {
  Api a;
  CHECK(a.api.handle(request("GET", "/api/hosts")).status == 200);
  CHECK(a.api.handle(request("GET", "/api/hosts?token=whatever")).status == 200);
}
