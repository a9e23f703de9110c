// The admin HTTP API (admin/api.h) without sockets. The input: a selector byte choosing the
// listen address, --admin-host names and whether an admin token is set (AdminAccess), then a
// request as text: "METHOD TARGET\n", header lines "Name: value\n" up to an empty line (Host,
// Origin, X-Perfsim, Content-Type, Authorization and Cookie are read, the rest ignored; a repeated
// one replaces the earlier), then the body. AdminApi::handle
// answers it over a host of the bundled default-2022 capture on a stepping timeline, with journal
// sources answering from memory.
//
// Beyond the sanitizers, the contract is checked (README.md, "Who may call it"): no Host, or an
// Origin other than the page's own, is a 403; a change answered 200 carried X-Perfsim: 1 or a
// JSON Content-Type; a GET, or a change not answered 200, leaves the host as it was; a JSON
// answer parses, an error one has its "error". With a token set, nothing is answered 2xx unless the
// request carried it (a Bearer Authorization, or the perfsim_admin_token cookie), and a 303 comes
// only for a GET or HEAD whose query names it, sets the cookie and drops the token from Location.
#include <algorithm>
#include <cctype>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "admin/api.h"
#include "captures/reader.h"
#include "core/text.h"
#include "core/utf16.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_recording.h"
#include "replayer/host.h"

using namespace perfsim;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The next line of `text` (without its '\n'); `text` keeps what follows.
std::string_view next_line(std::string_view& text) {
  const size_t nl = text.find('\n');
  const std::string_view line = text.substr(0, nl);
  text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  return line;
}

admin::HttpRequest parse_request(std::string_view text) {
  admin::HttpRequest r;
  const std::string_view first = next_line(text);
  const size_t sp = first.find(' ');
  r.method = std::string(first.substr(0, sp));
  r.target = sp == std::string_view::npos ? "/" : trim(first.substr(sp + 1));
  for (std::string_view line = next_line(text); !trim(line).empty(); line = next_line(text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = lower(trim(line.substr(0, colon)));
    const std::string value = trim(line.substr(colon + 1));
    if (name == "host") r.host = value;
    if (name == "origin") r.origin = value;
    if (name == "x-perfsim") r.x_perfsim = value;
    if (name == "content-type") r.content_type = value;
    if (name == "authorization") r.authorization = value;
    if (name == "cookie") r.cookie = value;
  }
  r.body = std::string(text);
  return r;
}

// Short, so that the fuzzer meets it; the check does not depend on its length.
constexpr std::string_view kToken = "c0ffee";

admin::AdminAccess access(uint8_t selector) {
  static const char* const listen[] = {"127.0.0.1", "192.0.2.10", "0.0.0.0", "::"};
  admin::AdminAccess a;
  a.listen = listen[selector & 3];
  if (selector & 4) a.hosts = {"perfsim.example", "2001:db8::5"};
  if (selector & 8) a.token = std::string(kToken);
  return a;
}

// Whether the request carries the token, read here by a rule of its own rather than the API's.
bool carries_token(const admin::HttpRequest& req) {
  if (req.authorization && lower(req.authorization->substr(0, 7)) == "bearer " &&
      trim(req.authorization->substr(7)) == kToken)
    return true;
  return req.cookie &&
         (" " + *req.cookie + ";").find(" perfsim_admin_token=" + std::string(kToken) + ";") != std::string::npos;
}

std::optional<std::string> header(const admin::HttpResponse& res, std::string_view name) {
  for (const auto& [n, v] : res.headers)
    if (lower(n) == lower(name)) return v;
  return std::nullopt;
}

void check_token(const admin::HttpRequest& req, const admin::HttpResponse& res) {
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (res.status >= 200 && res.status < 300) fuzz::require(carries_token(req));
  if (res.status == 303) {
    fuzz::require(get && !carries_token(req) && req.target.find('?') != std::string::npos);
    const std::optional<std::string> location = header(res, "Location"), cookie = header(res, "Set-Cookie");
    fuzz::require(location && cookie && cookie->find("HttpOnly") != std::string::npos);
    const size_t q = location->find('?');
    for (const std::string& kv : split_nonempty(q == std::string::npos ? "" : location->substr(q + 1), "&"))
      fuzz::require(kv != "token" && kv.rfind("token=", 0) != 0);
  }
  if (res.status == 401) fuzz::require(header(res, "WWW-Authenticate").has_value());
}

// A --admin-host value that parses gives a form that parses to itself.
void check_host_value(const std::optional<std::string>& host) {
  std::string once, twice;
  if (!host || !admin::parse_admin_host(*host, once).ok()) return;
  fuzz::require(admin::parse_admin_host(once, twice).ok() && twice == once);
}

void check_answer(const admin::HttpRequest& req, const admin::HttpResponse& res) {
  static const unsigned statuses[] = {200, 303, 400, 401, 403, 404, 405, 503};
  fuzz::require(std::find(std::begin(statuses), std::end(statuses), res.status) != std::end(statuses));
  if (res.content_type == "application/json") {
    const nlohmann::json j = nlohmann::json::parse(res.body, nullptr, false);
    fuzz::require(!j.is_discarded());
    if (res.status >= 400) fuzz::require(j.is_object() && j.contains("error") && j["error"].is_string());
  }
  if (!req.host) fuzz::require(res.status == 403);
  if (req.origin && req.host) {
    const std::string o = lower(*req.origin), h = lower(*req.host);
    if (o != "http://" + h && o != "https://" + h) fuzz::require(res.status == 403);
  }
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (!get && res.status == 200)
    fuzz::require(req.x_perfsim == "1" || lower(req.content_type).find("application/json") != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t selector = in.u8();
  const ByteView rest = in.rest();
  const admin::HttpRequest req =
      parse_request(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));

  std::shared_ptr<replayer::SimulatedHost> host;
  fuzz::require(
      replayer::SimulatedHost::create(fuzz::default_recording(), {replayer::TimelineMode::kStep, 0}, host).ok());
  bool cleared = false;
  admin::AdminSources sources;
  sources.metrics_text = [] { return std::string("perfsim_journal_drops_total 0\n"); };
  sources.journal = [](const std::string& h, const std::string& s, uint64_t since, uint64_t limit) {
    return nlohmann::json{
        {"entries", nlohmann::json::array()}, {"host", h}, {"session", s}, {"since", since}, {"limit", limit}};
  };
  sources.clear_journal = [&cleared] { cleared = true; };
  sources.sessions = [] { return nlohmann::json::array(); };
  admin::AdminApi api({{"", host, {"127.0.0.1:4135"}, "2022", host->quirks()}}, sources,
                      admin::WebFiles{fuzz::source_path("admin/web")}, replayer::FaultLimits{}, access(selector));

  const admin::AdminHost view{host->name(), host, {}, "", {}};
  const nlohmann::json before = admin::host_json(view);
  const auto faults_before = host->faults();
  const admin::HttpResponse res = api.handle(req);
  check_answer(req, res);
  if (selector & 8)
    check_token(req, res);
  else
    fuzz::require(res.status != 401 && res.status != 303);
  check_host_value(req.host);
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (get || res.status != 200) {
    fuzz::require(admin::host_json(view) == before);
    fuzz::require(host->faults() == faults_before);
    fuzz::require(!cleared);
  }
  return 0;
}
