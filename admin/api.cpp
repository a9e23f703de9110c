#include "admin/api.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <functional>
#include <tuple>
#include <fstream>
#include <sstream>

#include "admin/process_metrics.h"
#include "admin/series.h"
#include "admin/token.h"
#include "core/config.h"
#include "core/file.h"
#include "core/json.h"
#include "core/text.h"
#include "core/utf16.h"
#include "replayer/faults.h"
#include "replayer/fleet_file.h"
#include "replayer/quirk_engine.h"

namespace perfsim::admin {
namespace {

using nlohmann::json;
constexpr int64_t kFiletimeUnixEpoch = 116444736000000000;

HttpResponse error(unsigned status, const std::string& what) {
  HttpResponse r;
  r.status = status;
  r.body = json_text(json{{"error", what}}) + "\n";
  return r;
}

HttpResponse ok_json(const json& j) {
  HttpResponse r;
  r.body = json_text(j, 2) + "\n";
  return r;
}

HttpResponse not_allowed(const std::string& method, const std::string& path, const std::string& allow) {
  HttpResponse r = error(405, method + " is not allowed on " + path + "; use " + allow);
  r.allow = allow;
  return r;
}

HttpResponse from_status(const Status& s) {
  return error(s.code() == Status::Code::kNotFound ? 404 : 400, s.message());
}

std::string iso_time(int64_t filetime) {
  const int64_t ms = (filetime - kFiletimeUnixEpoch) / 10000;
  const std::time_t secs = std::time_t(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, int((ms % 1000 + 1000) % 1000));
}

const char* mode_name(replayer::TimelineMode m) {
  switch (m) {
    case replayer::TimelineMode::kRealtime:
      return "realtime";
    case replayer::TimelineMode::kStep:
      return "step";
    case replayer::TimelineMode::kFrozen:
      return "frozen";
  }
  return "?";
}

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// "a=1&b=x" -> {a: 1, b: x}; a bad %-escape makes the whole query bad.
bool parse_query(std::string_view q, std::map<std::string, std::string>& out) {
  for (const std::string& kv : split_nonempty(std::string(q), "&")) {
    const size_t eq = kv.find('=');
    std::string k, v;
    if (!url_decode(kv.substr(0, eq), k)) return false;
    if (eq != std::string::npos && !url_decode(kv.substr(eq + 1), v)) return false;
    out[k] = v;
  }
  return true;
}

// A header value's parameter list "a=1; b=2" (RFC 6265 4.2.1's cookie-string) -> the value of `name`.
std::optional<std::string> cookie_value(std::string_view cookies, std::string_view name) {
  for (const std::string& pair : split_nonempty(cookies, ";")) {
    const std::string p = trim(pair);
    if (p.size() > name.size() && p.compare(0, name.size(), name) == 0 && p[name.size()] == '=')
      return p.substr(name.size() + 1);
  }
  return std::nullopt;
}

// "Bearer TOKEN" (RFC 6750 2.1; the scheme is case-insensitive, RFC 9110 11.1) -> TOKEN.
std::optional<std::string> bearer_of(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() || !iequals(authorization.substr(0, kScheme.size()), kScheme))
    return std::nullopt;
  return trim(authorization.substr(kScheme.size()));
}

HttpResponse token_refusal(bool wrong) {
  HttpResponse r = error(
      401, std::string(wrong ? "the admin token given is not this server's" : "this admin server asks for its token") +
               " (perfsim serve --admin-token-file FILE): send 'Authorization: Bearer TOKEN', e.g. curl -H "
               "\"Authorization: Bearer $(cat FILE)\" ..., or open /?token=TOKEN once in a browser");
  // RFC 6750 3: the challenge; error="invalid_token" when a token was sent and is not the one.
  r.headers.emplace_back("WWW-Authenticate",
                         std::string("Bearer realm=\"perfsim-admin\"") + (wrong ? ", error=\"invalid_token\"" : ""));
  return r;
}

// nullopt: the request goes on. A right `?token=` on a GET or HEAD becomes the cookie and a 303 to
// the target without it, so the token leaves the address bar and the browser's history.
std::optional<HttpResponse> token_gate(const std::string& token, const HttpRequest& req) {
  if (token.empty()) return std::nullopt;
  std::optional<std::string> given;
  if (req.authorization) given = bearer_of(*req.authorization);
  if (given && token_matches(*given, token)) return std::nullopt;
  if (req.cookie)
    if (const auto c = cookie_value(*req.cookie, kTokenCookie); c && token_matches(*c, token)) return std::nullopt;
  const size_t qmark = req.target.find('?');
  if (qmark != std::string::npos && (req.method == "GET" || req.method == "HEAD")) {
    std::string kept;
    std::optional<std::string> from_query;
    for (const std::string& kv : split_nonempty(req.target.substr(qmark + 1), "&")) {
      std::string k, v;
      const size_t eq = kv.find('=');
      if (url_decode(kv.substr(0, eq), k) && k == "token") {
        if (eq != std::string::npos && url_decode(kv.substr(eq + 1), v)) from_query = v;
        continue;
      }
      kept += (kept.empty() ? "" : "&") + kv;
    }
    if (from_query) {
      if (!token_matches(*from_query, token)) return token_refusal(true);
      HttpResponse r;
      r.status = 303;
      r.body = json_text(json{{"see", "the same page, the token kept in a cookie"}}) + "\n";
      r.headers.emplace_back("Location", req.target.substr(0, qmark) + (kept.empty() ? "" : "?" + kept));
      r.headers.emplace_back("Set-Cookie",
                             std::string(kTokenCookie) + "=" + token + "; Path=/; HttpOnly; SameSite=Strict");
      return r;
    }
  }
  return token_refusal(given.has_value());
}

Status query_uint(const std::map<std::string, std::string>& q, const char* key, uint64_t& out) {
  auto it = q.find(key);
  if (it == q.end() || it->second.empty()) return Status::Ok();
  return config::parse_uint(it->second, std::string("query parameter ") + key, out);
}

}  // namespace

bool url_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%') {
      const auto hex = [](char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
      };
      if (i + 2 >= in.size() || hex(in[i + 1]) < 0 || hex(in[i + 2]) < 0) return false;
      out += char(hex(in[i + 1]) * 16 + hex(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

json quirks_json(const replayer::Quirks& q) { return replayer::quirk_settings(q); }

json host_json(const AdminHost& a) {
  const replayer::SimulatedHost& h = *a.host;
  const replayer::Moment m = h.now();
  const uint32_t pos = std::min(m.tick, h.ticks() - 1);
  const int64_t offset = h.recording().offsets()[pos];
  json timeline = {{"mode", mode_name(h.options().mode)},
                   {"paused", h.timeline_paused()},
                   {"position", pos},
                   {"samples", h.ticks()},
                   {"tick", h.recording().tick_number(pos)},
                   {"loop", m.loop},
                   {"offset_s", double(offset) / 1e7},
                   {"sample_time", iso_time(h.recording().start_100ns + offset)}};
  if (h.options().mode == replayer::TimelineMode::kRealtime) {
    timeline["speed"] = h.timeline_speed();
    timeline["between"] = replayer::between_name(h.options().between);  // counters between samples
  }
  json j = {{"id", a.id},
            {"name", h.name()},
            {"addresses", a.addresses},
            {"profile", a.profile},
            {"quirks", quirks_json(h.quirks())},
            {"timeline", timeline},
            {"perf_queries", h.calls()}};
  if (h.events()) j["events"] = events_json(h);
  return j;
}

json events_json(const replayer::SimulatedHost& h) {
  json list = json::array();
  const std::shared_ptr<const replayer::EventTimeline> tl = h.events();
  if (!tl) return list;
  const int64_t now = h.options().mode == replayer::TimelineMode::kFrozen ? 0 : h.position_of(h.now());
  for (const replayer::PreparedEvent& p : tl->events) {
    json e = replayer::to_json(p.event);
    e["position_s"] = double(p.at_100ns) / 1e7;  // where on the timeline it happens
    e["happened"] = p.at_100ns <= now;
    list.push_back(std::move(e));
  }
  return list;
}

namespace {

// Lists the API returns are pages: `limit` entries at most (default kDefaultPage, never above
// kMaxPage) from `offset`, so no answer grows with the fleet or the journal.
constexpr uint64_t kDefaultPage = 1000, kMaxPage = 10000, kDefaultSessions = 200;

struct Page {
  uint64_t offset = 0, limit = kDefaultPage;
};

Status parse_page(const std::map<std::string, std::string>& q, uint64_t default_limit, Page& p) {
  p.limit = default_limit;
  if (Status s = query_uint(q, "offset", p.offset); !s.ok()) return s;
  if (Status s = query_uint(q, "limit", p.limit); !s.ok()) return s;
  if (p.limit == 0 || p.limit > kMaxPage)
    return Status::InvalidArgument(fmt::format("limit must be 1 .. {}, got {}", kMaxPage, p.limit));
  return Status::Ok();
}

bool icontains(const std::string& text, const std::string& part) {
  auto low = [](std::string v) {
    for (char& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
    return v;
  };
  return low(text).find(low(part)) != std::string::npos;
}

// ?q= (part of the id, name or an address, any case), ?profile= (exactly), ?state=paused|running.
Status host_filter(const std::map<std::string, std::string>& q, std::function<bool(const AdminHost&)>& keep) {
  const auto get = [&](const char* k) { return q.count(k) ? q.at(k) : std::string(); };
  const std::string text = get("q"), profile = get("profile"), state = get("state");
  if (!state.empty() && state != "paused" && state != "running")
    return Status::InvalidArgument("state must be paused or running, got '" + state + "'");
  keep = [=](const AdminHost& h) {
    if (!profile.empty() && h.profile != profile) return false;
    if (!state.empty() && h.host->timeline_paused() != (state == "paused")) return false;
    if (text.empty() || icontains(h.id, text) || icontains(h.host->name(), text)) return true;
    for (const std::string& a : h.addresses)
      if (icontains(a, text)) return true;
    return false;
  };
  return Status::Ok();
}

}  // namespace

AdminApi::AdminApi(std::vector<AdminHost> hosts, AdminSources sources, WebFiles web, replayer::FaultLimits fault_limits,
                   AdminAccess access)
    : hosts_(std::move(hosts)),
      sources_(std::move(sources)),
      web_(std::move(web)),
      fault_limits_(fault_limits),
      access_(std::move(access)) {
  assign_ids(hosts_);
}

void AdminApi::assign_ids(std::vector<AdminHost>& hosts) {
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < hosts.size(); ++i) {
    AdminHost& h = hosts[i];
    if (h.id.empty()) h.id = h.host->name();
    if (seen[h.id]++) h.id += "@" + std::to_string(i);
  }
}

const AdminHost* AdminApi::find(const std::string& id) const {
  for (const AdminHost& h : hosts_)
    if (h.id == id) return &h;
  for (const AdminHost& h : hosts_)  // names are case-insensitive on Windows
    if (iequals(h.id, id)) return &h;
  return nullptr;
}

std::string AdminApi::metrics() const {
  if (!metrics_per_host_) {
    uint64_t calls = 0;
    for (const AdminHost& h : hosts_) calls += h.host->calls();
    std::string out = fmt::format(
        "# HELP perfsim_hosts Simulated hosts this run serves.\n# TYPE perfsim_hosts gauge\nperfsim_hosts {}\n"
        "# HELP perfsim_host_perf_queries_total Perf-data queries (winreg QueryValue under HKPD/HKPT/HKPN) the hosts "
        "answered (fleet-wide: the sum over hosts).\n# TYPE perfsim_host_perf_queries_total counter\n"
        "perfsim_host_perf_queries_total {}\n",
        hosts_.size(), calls);
    if (sources_.metrics_text) out += sources_.metrics_text();
    return out + process_text();
  }
  std::string out =
      "# HELP perfsim_host_perf_queries_total Perf-data queries (winreg QueryValue under HKPD/HKPT/HKPN) a simulated "
      "host "
      "answered.\n# TYPE perfsim_host_perf_queries_total counter\n";
  for (const AdminHost& h : hosts_)
    out += fmt::format("perfsim_host_perf_queries_total{{host=\"{}\"}} {}\n", escape_label(h.id), h.host->calls());
  out +=
      "# HELP perfsim_host_timeline_position The timeline position (sample) a host serves now.\n"
      "# TYPE perfsim_host_timeline_position gauge\n";
  for (const AdminHost& h : hosts_)
    out += fmt::format("perfsim_host_timeline_position{{host=\"{}\"}} {}\n", escape_label(h.id), h.host->now().tick);
  if (sources_.metrics_text) out += sources_.metrics_text();
  return out + process_text();
}

// What a Prometheus client library exports of its process, and smbd's session for an SMB run.
std::string AdminApi::process_text() const {
  return (sources_.server_metrics_text ? sources_.server_metrics_text() : std::string()) + process_metrics_text() +
         (sources_.smbd_pid ? smbd_metrics_text(sources_.smbd_pid()) : std::string());
}

namespace {

// 1234567 -> "1,234,567", as the dashboard's toLocaleString('en-US') writes it.
std::string grouped(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// `<b id="ID">-</b>` -> `<b id="ID" data-value="VALUE">TEXT</b>`; the page unchanged when the id is not there.
void fill_tile(std::string& page, const std::string& id, const std::string& value, const std::string& text) {
  const std::string from = "<b id=\"" + id + "\">-</b>";
  const size_t at = page.find(from);
  if (at != std::string::npos)
    page.replace(at, from.size(), "<b id=\"" + id + "\" data-value=\"" + value + "\">" + text + "</b>");
}

// The rate's label, the one wording of its window (admin/README.md "Figures").
std::string rate_label(double window_s, bool since_start) {
  return since_start ? fmt::format("calls/s since start ({:.0f} s)", window_s)
                     : fmt::format("calls/s over the last {:.0f} s", window_s);
}

}  // namespace

// GET /: the page with the fleet's figures already in its tiles and its first page of hosts
// inline (for the script to draw at once), so the first paint shows numbers, not "-", however
// slow the link or the first refresh (a headless screenshot taken at once included).
HttpResponse AdminApi::index_page(const std::map<std::string, std::string>& query) const {
  HttpResponse r = file(web_.dir + "/index.html", "text/html; charset=utf-8", "");
  if (r.status != 200) return r;
  std::map<std::string, std::string> q;
  for (const char* k : {"q", "profile", "state", "order"})
    if (query.count(k)) q[k] = query.at(k);
  q["limit"] = std::to_string(kDashboardPage);
  if (!q.count("order")) q["order"] = "failing";
  const HttpResponse fleet = hosts_page(q, true);
  if (fleet.status != 200) return r;  // a bad ?state= or ?order=: the script says why
  const json f = json::parse(fleet.body);
  for (const char* t : {"hosts", "calls", "perf_queries", "errors", "faults", "failing", "sessions_open",
                        "sessions_opened", "paused"}) {
    std::string id = std::string("total-") + t;
    std::replace(id.begin(), id.end(), '_', '-');
    fill_tile(r.body, id, std::to_string(f[t].get<uint64_t>()), grouped(f[t].get<uint64_t>()));
  }
  const std::string rate = fmt::format("{:.1f}", f["calls_per_s"].get<double>());
  fill_tile(r.body, "total-rate", rate, rate);
  const std::string label = "<span id=\"rate-label\">calls/s</span>";
  if (const size_t at = r.body.find(label); at != std::string::npos)
    r.body.replace(at, label.size(),
                   fmt::format("<span id=\"rate-label\" data-window-s=\"{}\">", f["rate_window_s"].get<double>()) +
                       rate_label(f["rate_window_s"].get<double>(), f["rate_since_start"].get<bool>()) + "</span>");
  std::string inline_json = f.dump();
  for (size_t at = 0; (at = inline_json.find("</", at)) != std::string::npos; at += 3)
    inline_json.replace(at, 2, "<\\/");  // a name holding "</script>" cannot end the block
  const std::string slot = "<script id=\"initial-fleet\" type=\"application/json\"></script>";
  if (const size_t at = r.body.find(slot); at != std::string::npos)
    r.body.replace(at, slot.size(),
                   "<script id=\"initial-fleet\" type=\"application/json\">" + inline_json + "</script>");
  return r;
}

HttpResponse AdminApi::file(const std::string& path, const std::string& content_type,
                            const std::string& missing_hint) const {
  std::string text;
  if (Status s = read_bounded_file(path, "dashboard file", text); !s.ok())
    return error(404, s.message() + (missing_hint.empty() ? "" : " (" + missing_hint + ")"));
  HttpResponse r;
  r.content_type = content_type;
  r.body = std::move(text);
  return r;
}

HttpResponse AdminApi::handle(const HttpRequest& req) {
  if (std::string why = access_refusal(access_, req); !why.empty()) return error(403, why);
  if (std::optional<HttpResponse> gate = token_gate(access_.token, req)) return *gate;
  return route(req);
}

HttpResponse AdminApi::route(const HttpRequest& req) {
  const size_t qmark = req.target.find('?');
  const std::string path = req.target.substr(0, qmark);
  std::map<std::string, std::string> query;
  if (qmark != std::string::npos && !parse_query(std::string_view(req.target).substr(qmark + 1), query))
    return error(400, "bad %-escape in the query string of " + req.target);
  std::vector<std::string> parts;
  for (const std::string& raw : split_nonempty(path, "/")) {
    std::string p;
    if (!url_decode(raw, p)) return error(400, "bad %-escape in the path " + path);
    parts.push_back(p);
  }
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (parts.empty() || (parts.size() == 1 && (parts[0] == "dashboard.js" || parts[0] == "chart.js"))) {
    if (!get) return not_allowed(req.method, path, "GET");
    if (parts.empty()) return index_page(query);
    if (parts[0] == "dashboard.js") return file(web_.dir + "/dashboard.js", "text/javascript; charset=utf-8", "");
    return file(web_.chart_js, "text/javascript; charset=utf-8",
                "Debian's libjs-chart.js is not installed: apt-get install libjs-chart.js");
  }
  if (parts.size() == 1 && parts[0] == "metrics") {
    if (!get) return not_allowed(req.method, path, "GET");
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = metrics();
    return r;
  }
  if (parts[0] != "api" || parts.size() < 2) return error(404, "no endpoint " + path + " (admin/README.md lists them)");
  const std::string& what = parts[1];
  if ((what == "hosts" || what == "fleet") && parts.size() == 2) {
    if (!get) return not_allowed(req.method, path, "GET");
    return hosts_page(query, what == "fleet");
  }
  if (what == "hosts") return host_route(req, parts, query);
  if (what == "faults" && parts.size() == 2) return faults(req);
  if (what == "journal" && parts.size() == 2) return journal(req, query);
  if (what == "sessions" && parts.size() == 2) {
    if (!get) return not_allowed(req.method, path, "GET");
    if (!sources_.sessions) return error(503, "journal not enabled");
    return sessions_page(query);
  }
  return error(404, "no endpoint " + path + " (admin/README.md lists them)");
}

// How many rules of the fleet's fault plan are in force for `h` now (window and host glob).
size_t AdminApi::faults_in_force(const AdminHost& h, double since_s) const {
  const std::shared_ptr<const replayer::FaultPlan> plan = h.host->faults();
  if (!plan) return 0;
  size_t n = 0;
  for (const replayer::FaultRule& r : plan->rules) n += replayer::rule_in_force(r, h.host->name(), since_s);
  return n;
}

// A host's figures as the journal's metrics count them (admin/README.md "Figures"); 0 without one.
AdminApi::HostFigures AdminApi::figures_of(const json& health, const std::string& name) {
  const auto it = health.find(name);
  if (it == health.end()) return {};
  return {it->value("calls", uint64_t(0)), it->value("errors", uint64_t(0)), it->value("sessions_open", uint64_t(0)),
          it->value("sessions_opened", uint64_t(0))};
}

// Every host's calls now (in hosts_' order) and the fleet's last, through the rate window.
CallRates::Window AdminApi::rate_window(const json& health, std::vector<uint64_t>& calls) const {
  calls.clear();
  uint64_t fleet = 0;
  for (const AdminHost& h : hosts_) calls.push_back(figures_of(health, h.host->name()).calls);
  for (const auto& [name, v] : health.items()) fleet += v.value("calls", uint64_t(0));
  calls.push_back(fleet);
  if (!rates_) rates_ = std::make_unique<CallRates>(hosts_.size() + 1, started_);
  return rates_->update(calls, CallRates::Clock::now());
}

void AdminApi::add_figures(json& j, const HostFigures& f, double calls_per_s) {
  j["calls"] = f.calls;
  j["calls_per_s"] = calls_per_s;
  j["errors"] = f.errors;
  j["sessions_open"] = f.sessions_open;
  j["sessions_opened"] = f.sessions_opened;
}

// GET /api/hosts/NAME: the host's state and figures.
json AdminApi::host_state(const AdminHost& h) const {
  const json health = sources_.health ? sources_.health() : json::object();
  std::vector<uint64_t> calls;
  const CallRates::Window w = rate_window(health, calls);
  const size_t i = size_t(&h - hosts_.data());
  json j = host_json(h);
  add_figures(j, figures_of(health, h.host->name()), CallRates::rate(calls[i], (*w.base)[i], w.seconds));
  j["rate_window_s"] = w.seconds;
  return j;
}

// GET /api/hosts: the page of matching hosts (an array); GET /api/fleet: the fleet's totals with
// that page ({"hosts", "matched", "calls", "perf_queries", "calls_per_s", "rate_window_s",
// "rate_since_start", "paused", "errors", "sessions_open", "sessions_opened", "faults", "failing",
// "profiles", "offset", "limit", "page"}). Each host of the page has its figures and "faults" in
// force; ?order=failing puts the hosts with the most errors (then faults, then calls) first,
// ?order=busy the most calls; the default keeps the fleet's order.
HttpResponse AdminApi::hosts_page(const std::map<std::string, std::string>& query, bool with_totals) const {
  Page page;
  std::function<bool(const AdminHost&)> keep;
  if (Status s = parse_page(query, kDefaultPage, page); !s.ok()) return error(400, s.message());
  if (Status s = host_filter(query, keep); !s.ok()) return error(400, s.message());
  const std::string order = query.count("order") ? query.at("order") : std::string();
  if (!order.empty() && order != "fleet" && order != "failing" && order != "busy")
    return error(400, "order must be fleet, failing or busy, got '" + order + "'");
  const json health = sources_.health ? sources_.health() : json::object();
  std::vector<uint64_t> now;
  const CallRates::Window w = rate_window(health, now);
  const std::shared_ptr<const replayer::FaultPlan> plan = hosts_.empty() ? nullptr : hosts_.front().host->faults();
  const double since_s = plan ? double(replayer::steady_ns() - plan->loaded_ns) / 1e9 : 0;
  struct Row {
    const AdminHost* host;
    HostFigures f;
    double rate;
    uint64_t faults;
  };
  std::vector<Row> rows;
  uint64_t perf_queries = 0, paused = 0, errors = 0, failing = 0;
  json profiles = json::object();  // profile -> hosts: what a dashboard's filter offers
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const AdminHost& h = hosts_[i];
    profiles[h.profile] = profiles.value(h.profile, uint64_t(0)) + 1;
    const Row row{&h, figures_of(health, h.host->name()), CallRates::rate(now[i], (*w.base)[i], w.seconds),
                  faults_in_force(h, since_s)};
    perf_queries += h.host->calls();
    paused += h.host->timeline_paused();
    errors += row.f.errors;
    failing += row.f.errors || row.faults;
    if (keep(h)) rows.push_back(row);
  }
  uint64_t open = 0, opened = 0;
  for (const auto& [name, v] : health.items()) {
    open += v.value("sessions_open", uint64_t(0));
    opened += v.value("sessions_opened", uint64_t(0));
  }
  if (order == "failing")
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.f.errors, a.faults, a.f.calls) > std::tie(b.f.errors, b.faults, b.f.calls);
    });
  if (order == "busy")
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.f.calls > b.f.calls; });
  json list = json::array();
  for (uint64_t i = page.offset; i < rows.size() && i - page.offset < page.limit; ++i) {
    json h = host_json(*rows[i].host);
    add_figures(h, rows[i].f, rows[i].rate);
    h["faults"] = rows[i].faults;
    list.push_back(std::move(h));
  }
  if (!with_totals) return ok_json(list);
  size_t rules = 0;  // in force for some host now
  if (plan)
    for (const replayer::FaultRule& r : plan->rules) rules += replayer::rule_active(r, since_s);
  return ok_json(json{{"hosts", hosts_.size()},
                      {"matched", rows.size()},
                      {"calls", now.back()},
                      {"perf_queries", perf_queries},
                      {"calls_per_s", CallRates::rate(now.back(), w.base->back(), w.seconds)},
                      {"rate_window_s", w.seconds},
                      {"rate_since_start", w.since_start},
                      {"paused", paused},
                      {"errors", errors},
                      {"sessions_open", open},
                      {"sessions_opened", opened},
                      {"faults", rules},
                      {"failing", failing},
                      {"profiles", std::move(profiles)},
                      {"offset", page.offset},
                      {"limit", page.limit},
                      {"page", std::move(list)}});
}

// GET /api/sessions?host=&offset=&limit=: of the sessions (of `host`, any case), the newest
// `limit` (default kDefaultSessions) after skipping the `offset` newest, oldest first as before.
HttpResponse AdminApi::sessions_page(const std::map<std::string, std::string>& query) const {
  Page page;
  if (Status s = parse_page(query, kDefaultSessions, page); !s.ok()) return error(400, s.message());
  const std::string host = query.count("host") ? query.at("host") : std::string();
  const json all = sources_.sessions();
  std::vector<const json*> matched;
  for (const json& d : all)
    if (host.empty() || (d.contains("host") && d["host"].is_string() && iequals(d["host"].get<std::string>(), host)))
      matched.push_back(&d);
  const size_t end = matched.size() - std::min<size_t>(page.offset, matched.size());
  const size_t begin = end - std::min<size_t>(page.limit, end);
  json list = json::array();
  for (size_t i = begin; i < end; ++i) list.push_back(*matched[i]);
  return ok_json(list);
}

HttpResponse AdminApi::host_route(const HttpRequest& req, const std::vector<std::string>& parts,
                                  const std::map<std::string, std::string>& query) {
  const AdminHost* h = find(parts[2]);
  if (!h)  // not the fleet's names: a 404 of a 100,000-host fleet listed them all
    return error(
        404, fmt::format("no host '{}' (GET /api/hosts?q=TEXT finds hosts by part of a name or address)", parts[2]));
  const std::string path = "/api/hosts/" + parts[2] + (parts.size() > 3 ? "/" + parts[3] : "");
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (parts.size() == 3) return get ? ok_json(host_state(*h)) : not_allowed(req.method, path, "GET");
  if (parts.size() != 4) return error(404, "no endpoint " + req.target);
  const std::string& sub = parts[3];
  if (sub == "quirks") {
    if (get) return ok_json(quirks_json(h->host->quirks()));
    if (req.method != "PUT") return not_allowed(req.method, path, "GET, PUT");
    return put_quirks(*h, req.body);
  }
  if (sub == "timeline") {
    if (req.method != "POST") return not_allowed(req.method, path, "POST");
    return timeline(*h, req, query);
  }
  if (sub == "events") {
    if (get) return ok_json(events_json(*h->host));
    if (req.method != "POST") return not_allowed(req.method, path, "GET, POST");
    replayer::HostEvent e;
    if (Status s = replayer::parse_event_json(trim(req.body), "request body", e); !s.ok())
      return error(400, s.message());
    bool over_budget = false;
    if (Status s = h->host->add_event(e, &over_budget); !s.ok()) return error(over_budget ? 507 : 400, s.message());
    return ok_json(events_json(*h->host));
  }
  if (sub == "counters") {
    if (!get) return not_allowed(req.method, path, "GET");
    json j;
    if (Status s = host_counters(*h->host, j); !s.ok()) return from_status(s);
    return ok_json(j);
  }
  if (sub == "series") {
    if (!get) return not_allowed(req.method, path, "GET");
    SeriesRequest sr;
    for (const char* k : {"object", "counter"})
      if (!query.count(k) || query.at(k).empty())
        return error(400, std::string("series needs ?object=NAME&instance=NAME&counter=NAME; ") + k + " is missing");
    sr.object = query.at("object");
    sr.counter = query.at("counter");
    if (query.count("instance")) sr.instance = query.at("instance");
    uint64_t points = sr.max_points;
    if (Status s = query_uint(query, "points", points); !s.ok()) return error(400, s.message());
    sr.max_points = uint32_t(std::clamp<uint64_t>(points, 1, 5000));
    json j;
    if (Status s = host_series(*h->host, sr, j); !s.ok()) return from_status(s);
    return ok_json(j);
  }
  return error(404, "no endpoint " + req.target + " (admin/README.md lists them)");
}

HttpResponse AdminApi::faults(const HttpRequest& req) {
  if (req.method == "GET" || req.method == "HEAD") {
    std::shared_ptr<const replayer::FaultPlan> plan = hosts_.empty() ? nullptr : hosts_.front().host->faults();
    return ok_json(plan ? replayer::to_json(*plan) : json{{"fault", json::array()}});
  }
  if (req.method != "PUT") return not_allowed(req.method, "/api/faults", "GET, PUT");
  const std::string body = trim(req.body);
  const bool is_json = req.content_type.find("json") != std::string::npos || (!body.empty() && body[0] == '{');
  std::shared_ptr<const replayer::FaultPlan> plan;
  const Status s = is_json ? replayer::parse_fault_plan_json(body, "request body", plan, fault_limits_)
                           : replayer::parse_fault_plan(body, "request body", plan, fault_limits_);
  if (!s.ok()) return error(400, s.message());
  for (const AdminHost& h : hosts_) h.host->set_faults(plan);
  return ok_json(replayer::to_json(*plan));
}

HttpResponse AdminApi::put_quirks(const AdminHost& h, const std::string& body) {
  replayer::Quirks q = h.base_quirks;
  q.content = h.host->quirks().content;  // fixed for the host's life (set_quirks)
  std::istringstream in(body);
  std::string word;
  while (in >> word) {  // settings separated by blanks or lines, each as --quirk takes it
    replayer::QuirkSetting s;
    if (Status st = replayer::parse_quirk_arg(word, s); !st.ok()) return error(400, st.message());
    if (Status st = replayer::apply_setting(q, s); !st.ok()) return error(400, st.message());
  }
  if (Status st = h.host->set_quirks(q); !st.ok()) return error(400, st.message());
  return ok_json(host_json(h));
}

HttpResponse AdminApi::timeline(const AdminHost& h, const HttpRequest& req,
                                const std::map<std::string, std::string>& query) {
  std::string op = trim(req.body);
  if (op.empty() && !query.empty()) {
    op = query.begin()->first;
    if (!query.begin()->second.empty()) op += "=" + query.begin()->second;
  }
  const size_t eq = op.find('=');
  const std::string name = op.substr(0, eq), arg = eq == std::string::npos ? "" : op.substr(eq + 1);
  replayer::TimelineOp t;
  Status s;
  if (name == "pause" || name == "resume" || name == "step") {
    t.kind = name == "pause"    ? replayer::TimelineOpKind::kPause
             : name == "resume" ? replayer::TimelineOpKind::kResume
                                : replayer::TimelineOpKind::kStep;
    if (eq != std::string::npos) return error(400, name + " takes no value");
  } else if (name == "seek") {
    t.kind = replayer::TimelineOpKind::kSeek;
    s = config::parse_uint_as(arg, "seek=K (a sample position)", t.tick);
  } else if (name == "speed") {
    t.kind = replayer::TimelineOpKind::kSpeed;
    s = config::parse_double(arg, "speed=" + arg, t.speed, replayer::limits::kSpeed, replayer::limits::kSpeedUnit);
  } else {
    return error(400, "timeline operation '" + op + "' is not one of pause, resume, step, seek=K, speed=X");
  }
  if (s.ok()) s = h.host->control(t);
  if (!s.ok()) return error(400, s.message());
  return ok_json(host_json(h));
}

HttpResponse AdminApi::journal(const HttpRequest& req, const std::map<std::string, std::string>& query) {
  if (req.method == "DELETE") {
    if (!sources_.clear_journal) return error(503, "journal not enabled");
    sources_.clear_journal();
    return ok_json(json{{"cleared", true}});
  }
  if (req.method != "GET" && req.method != "HEAD") return not_allowed(req.method, "/api/journal", "GET, DELETE");
  if (!sources_.journal) return error(503, "journal not enabled");
  uint64_t since = 0, limit = 0;
  if (Status s = query_uint(query, "since", since); !s.ok()) return error(400, s.message());
  if (Status s = query_uint(query, "limit", limit); !s.ok()) return error(400, s.message());
  uint64_t session = 0;  // checked here; passed on as given
  if (Status s = query_uint(query, "session", session); !s.ok()) return error(400, s.message());
  const auto get = [&](const char* k) { return query.count(k) ? query.at(k) : std::string(); };
  return ok_json(sources_.journal(get("host"), get("session"), since, limit));
}

}  // namespace perfsim::admin
