// Fleet files and the host descriptions of a serve run, read with core/config.h.
#include "replayer/fleet_file.h"

#include <charconv>
#include <filesystem>

#include "core/utf16.h"
#include "replayer/quirks.h"

namespace perfsim::replayer {
namespace {

using config::Json;

// A quirk parameter given as a number becomes the text --quirk would have given (5, 0.5).
std::string number_text(double d) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(d);
}

// One [host.quirks] entry: name = true/false, or a table of parameters (numbers or strings) with
// an optional on = true/false.
Status read_quirk(const config::Reader& r, const Json& v, const std::string& path, QuirkSetting& q) {
  if (v.is_boolean()) {
    q.on = v.get<bool>();
    return Status::Ok();
  }
  if (!v.is_object()) return r.type_error(path, "true, false or a table of parameters", v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() == "on" && it->is_boolean())
      q.on = it->get<bool>();  // on = "open" (access-denied) is a parameter
    else if (it->is_string())
      q.params[it.key()] = it->get<std::string>();
    else if (it->is_number())
      q.params[it.key()] = number_text(it->get<double>());
    else
      return r.type_error(config::join(path, it.key()), "a number or a string", *it);
  }
  return Status::Ok();
}

Status read_fleet_host(const config::Reader& r, const Json& h, const std::string& path, FleetHost& s) {
  Status st = r.keys(h, path,
                     {"listen", "capture", "timeline", "profile", "speed", "loop", "count", "name", "clock_spread_s",
                      "variation", "seed", "quirks", "smb_allow", "smb_dialects"});
  if (st.ok()) st = r.require(h, path, "listen");
  if (st.ok()) st = r.string(h, path, "listen", s.listen);
  if (st.ok() && s.listen.empty()) st = r.fail(config::join(path, "listen"), "expected \"ADDR:PORT\"");
  if (st.ok()) st = r.string(h, path, "capture", s.capture);
  if (st.ok()) st = r.string(h, path, "timeline", s.timeline);
  if (st.ok()) st = read_host_replay(r, h, path, s.replay);
  if (st.ok()) st = r.string(h, path, "smb_dialects", s.smb_dialects);
  if (st.ok()) st = r.strings(h, path, "smb_allow", s.smb_allow);
  return st;
}

}  // namespace

std::string HostReplay::key() const {
  std::string k = profile + "|" + std::to_string(speed.value_or(1)) + "|" + std::to_string(loop.value_or(true)) + "|" +
                  std::to_string(count) + "|" + name + "|" + std::to_string(clock_spread_s) + "|" +
                  std::to_string(variation) + "|" + std::to_string(seed);
  for (const auto& q : quirks) {
    k += "|" + q.name + (q.on ? "+" : "-");
    for (const auto& [p, v] : q.params) k += p + "=" + v + ",";
  }
  return k;
}

Status read_host_replay(const config::Reader& r, const Json& h, const std::string& path, HostReplay& out) {
  Status s = r.string(h, path, "profile", out.profile);
  if (s.ok() && h.contains("speed")) s = r.number(h, path, "speed", out.speed.emplace());
  if (s.ok() && h.contains("loop")) s = r.boolean(h, path, "loop", out.loop.emplace());
  if (s.ok()) s = r.integer(h, path, "count", out.count, 1, UINT32_MAX);
  if (s.ok()) s = r.string(h, path, "name", out.name);
  if (s.ok()) s = r.number(h, path, "clock_spread_s", out.clock_spread_s);
  if (s.ok()) s = r.number(h, path, "variation", out.variation);
  if (s.ok()) s = r.integer(h, path, "seed", out.seed, 0, INT64_MAX);
  if (!s.ok()) return s;
  if (out.count > 1 && out.name.empty())
    return r.fail(config::join(path, "count"), "count > 1 needs name = \"PATTERN-{n}\"");
  if (!h.contains("quirks")) return Status::Ok();
  const Json& q = h["quirks"];
  const std::string qp = config::join(path, "quirks");
  if (!q.is_object()) return r.type_error(qp, "a table of quirks", q);
  for (auto it = q.begin(); it != q.end(); ++it) {
    QuirkSetting qs{it.key(), true, {}};
    if (Status st = read_quirk(r, *it, config::join(qp, it.key()), qs); !st.ok()) return st;
    out.quirks.push_back(std::move(qs));
  }
  return Status::Ok();
}

Status parse_fleet(const config::Doc& doc, std::vector<FleetHost>& out) {
  const config::Reader r(doc);
  if (Status s = r.keys(doc.root, "", {"host"}); !s.ok()) return s;
  const Json& hosts = doc.root.contains("host") ? doc.root["host"] : Json::array();
  if (!hosts.is_array() || hosts.empty())
    return r.fail("host", "no [[host]] tables (each needs listen = \"ADDR:PORT\")");
  for (size_t i = 0; i < hosts.size(); ++i) {
    FleetHost s;
    if (Status st = read_fleet_host(r, hosts[i], config::index("host", i), s); !st.ok()) return st;
    if (!s.capture.empty() && std::filesystem::path(s.capture).is_relative())
      s.capture = (std::filesystem::path(doc.origin).parent_path() / s.capture).string();
    out.push_back(std::move(s));
  }
  return Status::Ok();
}

Status read_fleet(const std::string& path, std::vector<FleetHost>& out) {
  config::Doc doc;
  if (Status s = config::load_file(path, doc, "fleet file"); !s.ok()) return s;
  return parse_fleet(doc, out);
}

std::string fleet_listen(const std::string& listen, uint32_t index) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || index == 0) return listen;
  uint16_t port = 0;
  if (!config::parse_uint_as(std::string_view(listen).substr(colon + 1), "port", port).ok() || port == 0) return listen;
  return listen.substr(0, colon + 1) + std::to_string(port + index);
}

void expand_fleet(std::vector<FleetHost>& hosts) {
  for (size_t i = 0, n = hosts.size(); i < n; ++i) {
    for (uint32_t k = 1; k < hosts[i].replay.count; ++k) {
      FleetHost member = hosts[i];
      member.fleet_index = k;
      member.listen = fleet_listen(hosts[i].listen, k);
      hosts.push_back(std::move(member));
    }
  }
}

Status parse_quirk_arg(const std::string& text, QuirkSetting& out) {
  out = QuirkSetting{};
  const size_t colon = text.find(':');
  std::string head = text.substr(0, colon);
  if (const size_t eq = head.find('='); eq != std::string::npos) {
    const std::string v = head.substr(eq + 1);
    if (v != "on" && v != "off") return Status::InvalidArgument("quirk '" + text + "': after '=' comes on or off");
    out.on = v == "on";
    head = head.substr(0, eq);
  }
  out.name = head;
  if (colon != std::string::npos) {
    for (const std::string& kv : split_nonempty(text.substr(colon + 1), ",")) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        return Status::InvalidArgument("quirk '" + text + "': parameters are PARAM=VALUE, comma-separated");
      out.params[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  Quirks probe;  // checked now, so a typo is a usage error before anything listens
  return apply_setting(probe, out);
}

Status parse_timeline(const std::string& s, HostOptions& opt) {
  if (s == "realtime") {
    opt.mode = TimelineMode::kRealtime;
    return Status::Ok();
  }
  if (s == "step") {
    opt.mode = TimelineMode::kStep;
    return Status::Ok();
  }
  if (s.rfind("frozen:", 0) == 0 &&
      config::parse_uint_as(std::string_view(s).substr(7), "frozen:K", opt.frozen_tick).ok()) {
    opt.mode = TimelineMode::kFrozen;
    return Status::Ok();
  }
  return Status::InvalidArgument("timeline '" + s + "' is not one of realtime, step, frozen:K (K a sample number)");
}

}  // namespace perfsim::replayer
