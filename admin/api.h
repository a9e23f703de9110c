// The admin HTTP API of a serve run, without sockets: a request (method, target, body) in, a
// response (status, content type, body) out. admin/server.h carries it over HTTP/1.1; tests call
// it directly too. Endpoints: README.md.
//
// Contract:
//  - Every request passes the access rule first (README.md, "Who may call it"): a Host header naming
//    this server, an Origin (when sent) equal to the page's own, and on every method but GET and
//    HEAD `X-Perfsim: 1` or `Content-Type: application/json`; else 403 naming the header. With a
//    token (AdminAccess::token), then the token: a Bearer Authorization or the cookie, else 401
//    with WWW-Authenticate; `?token=TOKEN` on a GET answers 303 to the same target without it,
//    setting the cookie (HttpOnly, SameSite=Strict).
//  - Errors are JSON `{"error": "what was wrong"}` with 400 (bad input: the parser's message), 404
//    (no such endpoint or host), 405 (the endpoint exists, not with this method; Allow lists the
//    methods), 503 (a journal endpoint whose source is not wired).
//  - Changes go to the hosts through their atomic setters (SimulatedHost::set_faults, set_quirks,
//    control): a refused change leaves what is in force unchanged.
//  - handle() may be called from any one thread at a time (the admin server's); it reads hosts that
//    worker threads serve concurrently and never blocks them.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/rates.h"
#include "core/status.h"
#include "replayer/host.h"

namespace perfsim::admin {

// What the call journal (another part of perfsim) gives the API; the serve command wires them.
// An empty function makes its endpoints answer 503 {"error":"journal not enabled"}.
struct AdminSources {
  // GET /metrics: Prometheus text format 0.0.4, appended after the admin's own per-host lines.
  std::function<std::string()> metrics_text;
  // GET /api/journal?host=&session=&since=&limit=: empty host/session = all; since = the first
  // entry id to return (0 = the oldest kept); limit = at most this many (0 = the journal's default).
  std::function<nlohmann::json(const std::string& host, const std::string& session, uint64_t since, uint64_t limit)>
      journal;
  std::function<void()> clear_journal;       // DELETE /api/journal
  std::function<nlohmann::json()> sessions;  // GET /api/sessions: the per-session collector diagnosis
  // {"HOST": {"errors": N, "sessions": N}} by system name: failed calls and sessions opened, for
  // /api/fleet's totals and the hosts' "errors" (journal::Metrics::health_json). Empty: all 0.
  std::function<nlohmann::json()> health;
  // The pid of the run's smbd (0: none now); /metrics then adds its session's processes and
  // resident memory (process_metrics.h). Empty: no SMB.
  std::function<int()> smbd_pid;
  // The server's own counters for /metrics (connections open, refused at the limit, closed to make
  // room), as Prometheus text; empty: none.
  std::function<std::string()> server_metrics_text;
};

// One simulated host as the API shows it.
struct AdminHost {
  std::string id;  // the host's name, unique in the run (a repeated name gets "@N", N its position)
  std::shared_ptr<replayer::SimulatedHost> host;
  std::vector<std::string> addresses;  // where it is served: "ADDR:PORT" (TCP), "smb:ADDR:PORT"
  std::string profile;                 // the OS profile its quirks came from ("" = none named)
  // The quirks before explicit settings (defaults, fingerprint, profile): PUT .../quirks starts
  // from these.
  replayer::Quirks base_quirks;
};

struct HttpRequest {
  std::string method;  // "GET", "PUT", ...
  std::string target;  // path and query, as sent ("/api/journal?limit=5")
  std::string content_type;
  std::string body;
  // The headers the access rule reads: nullopt when not sent ("" when sent empty).
  std::optional<std::string> host;
  std::optional<std::string> origin;
  std::optional<std::string> x_perfsim;
  // What the token check reads (AdminAccess::token; token.h): Authorization and Cookie.
  std::optional<std::string> authorization;
  std::optional<std::string> cookie;
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // 405: the methods the endpoint takes
  // More header fields, in order (Location, Set-Cookie, WWW-Authenticate of the token check).
  std::vector<std::pair<std::string, std::string>> headers;
};

// Where the dashboard's files come from: the page and script (admin/web, or a test's folder) and
// Debian's libjs-chart.js (chart.min.js in /usr/share/javascript/chart.js).
struct WebFiles {
  std::string dir;
  std::string chart_js = "/usr/share/javascript/chart.js/chart.min.js";
};

// The Host names the API answers besides the loopback ones (localhost, 127.0.0.0/8, [::1]), so
// that a page whose DNS name was rebound to this machine is refused.
struct AdminAccess {
  std::string listen;  // the bound address ("127.0.0.1", "::1"); a wildcard (0.0.0.0, ::) accepts any IP literal
  std::vector<std::string> hosts;  // more names or addresses (perfsim serve --admin-host), as parse_admin_host gives
  // Non-empty: every request must carry it (perfsim serve --admin-token-file; token.h), else 401.
  std::string token;
};

// A --admin-host value: a DNS name or an IP address, without a port. `out` is its form as compared
// with a Host header: lower case, an IPv6 address in brackets. The error says what to write.
Status parse_admin_host(std::string_view text, std::string& out);
// Why `req` is refused (403) by the access rule, naming the header and what is accepted; "" = allowed.
std::string access_refusal(const AdminAccess& access, const HttpRequest& req);

class AdminApi {
 public:
  // `fault_limits`: what PUT /api/faults checks a plan against (the server's idle timeout);
  // `access`: who may call it (access.h).
  AdminApi(std::vector<AdminHost> hosts, AdminSources sources, WebFiles web, replayer::FaultLimits fault_limits = {},
           AdminAccess access = {});
  HttpResponse handle(const HttpRequest& req);
  // AdminServer::start() gives the address it bound, before the first request.
  void set_access(AdminAccess access) { access_ = std::move(access); }
  // false: /metrics gives fleet-wide sums (perfsim_hosts, perfsim_host_perf_queries_total without a host
  // label) instead of lines per host (perfsim serve --metrics-per-host; journal/metrics.h).
  void set_metrics_per_host(bool on) { metrics_per_host_ = on; }
  // Gives each host a unique id (AdminHost::id) from its name.
  static void assign_ids(std::vector<AdminHost>& hosts);

 private:
  const AdminHost* find(const std::string& id) const;
  HttpResponse host_route(const HttpRequest& req, const std::vector<std::string>& parts,
                          const std::map<std::string, std::string>& query);
  HttpResponse faults(const HttpRequest& req);
  HttpResponse put_quirks(const AdminHost& h, const std::string& body);
  HttpResponse timeline(const AdminHost& h, const HttpRequest& req, const std::map<std::string, std::string>& query);
  HttpResponse route(const HttpRequest& req);
  HttpResponse journal(const HttpRequest& req, const std::map<std::string, std::string>& query);
  HttpResponse file(const std::string& path, const std::string& content_type, const std::string& missing_hint) const;
  std::string metrics() const;
  HttpResponse index_page(const std::map<std::string, std::string>& query) const;
  static constexpr uint64_t kDashboardPage = 50;  // host rows a dashboard page shows (dashboard.js pageSize)
  std::string process_text() const;
  struct HostFigures {
    uint64_t calls = 0, errors = 0, sessions_open = 0, sessions_opened = 0;
  };
  static HostFigures figures_of(const nlohmann::json& health, const std::string& name);
  static void add_figures(nlohmann::json& j, const HostFigures& f, double calls_per_s);
  CallRates::Window rate_window(const nlohmann::json& health, std::vector<uint64_t>& calls) const;
  nlohmann::json host_state(const AdminHost& h) const;
  HttpResponse hosts_page(const std::map<std::string, std::string>& query, bool with_totals) const;
  size_t faults_in_force(const AdminHost& h, double since_s) const;
  HttpResponse sessions_page(const std::map<std::string, std::string>& query) const;

  std::vector<AdminHost> hosts_;
  AdminSources sources_;
  WebFiles web_;
  replayer::FaultLimits fault_limits_;
  AdminAccess access_;
  bool metrics_per_host_ = true;
  // Requests are handled one at a time (AdminServer's thread): the window needs no lock.
  CallRates::Clock::time_point started_ = CallRates::Clock::now();
  mutable std::unique_ptr<CallRates> rates_;
};

// A host's state as GET /api/hosts/NAME gives it.
nlohmann::json host_json(const AdminHost& h);
// A host's events (replayer/events.h) in position order: each as written, plus position_s and
// happened (whether the timeline has reached it); GET/POST /api/hosts/NAME/events.
nlohmann::json events_json(const replayer::SimulatedHost& h);
// The quirks in force, by the names and parameters --quirk uses.
nlohmann::json quirks_json(const replayer::Quirks& q);
// Decodes %XX and '+' in a query component; false on a bad escape.
bool url_decode(std::string_view in, std::string& out);

}  // namespace perfsim::admin
