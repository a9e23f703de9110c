// Fleet files and the host descriptions of a serve run, read with core/config.h.
#include "replayer/fleet_file.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "core/utf16.h"
#include "replayer/limits.h"
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

// addresses = "A.B.C.D/P" and port = N instead of listen: the members' addresses.
Status read_address_range(const config::Reader& r, const Json& h, const std::string& path, FleetHost& s) {
  std::string cidr;
  uint16_t port = 0;
  Status st = r.string(h, path, "addresses", cidr);
  if (st.ok()) st = r.integer(h, path, "port", port, 0, 65535);
  if (!st.ok()) return st;
  if (h.contains("listen"))
    return r.fail(config::join(path, "addresses"), "give listen = \"ADDR:PORT\" or addresses + port, not both");
  uint32_t capacity = 0;
  if (Status e = parse_address_range(cidr, s.first_address, capacity); !e.ok())
    return r.fail(config::join(path, "addresses"), e.message());
  if (s.replay.count > capacity)
    return r.fail(config::join(path, "count"), std::to_string(s.replay.count) + " hosts do not fit in addresses \"" +
                                                   cidr + "\" (" + std::to_string(capacity) + " addresses from " +
                                                   ipv4_text(s.first_address) + "); give a wider range");
  s.listen = ipv4_text(s.first_address) + ":" + std::to_string(port);
  return Status::Ok();
}

Status read_fleet_host(const config::Reader& r, const Json& h, const std::string& path, FleetHost& s) {
  Status st =
      r.keys(h, path,
             {"listen", "addresses", "port", "capture", "timeline", "profile", "speed", "loop", "between", "count",
              "name", "clock_spread_s", "variation", "seed", "quirks", "smb_allow", "smb_dialects", "event"});
  if (st.ok()) st = read_host_replay(r, h, path, s.replay);
  if (st.ok() && h.contains("addresses")) {
    st = read_address_range(r, h, path, s);
  } else if (st.ok()) {
    if (h.contains("port")) return r.fail(config::join(path, "port"), "port goes with addresses = \"A.B.C.D/P\"");
    st = r.require(h, path, "listen");
    if (st.ok()) st = r.string(h, path, "listen", s.listen);
    if (st.ok() && s.listen.empty()) st = r.fail(config::join(path, "listen"), "expected \"ADDR:PORT\"");
  }
  if (st.ok()) st = r.string(h, path, "capture", s.capture);
  if (st.ok()) st = r.string(h, path, "timeline", s.timeline);
  if (st.ok()) st = r.string(h, path, "smb_dialects", s.smb_dialects);
  if (st.ok()) st = r.strings(h, path, "smb_allow", s.smb_allow);
  return st;
}

}  // namespace

std::string HostReplay::key() const {
  std::string k = profile + "|" + std::to_string(speed.value_or(1)) + "|" + std::to_string(loop.value_or(true)) + "|" +
                  between_name(between.value_or(Between::kInterpolate)) + "|" + std::to_string(count) + "|" + name +
                  "|" + std::to_string(clock_spread_s) + "|" + std::to_string(variation) + "|" + std::to_string(seed);
  for (const HostEvent& e : events) k += "|" + to_json(e).dump();
  for (const auto& q : quirks) {
    k += "|" + q.name + (q.on ? "+" : "-");
    for (const auto& [p, v] : q.params) k += p + "=" + v + ",";
  }
  return k;
}

Status read_host_replay(const config::Reader& r, const Json& h, const std::string& path, HostReplay& out) {
  Status s = r.string(h, path, "profile", out.profile);
  if (s.ok() && h.contains("speed"))
    s = r.number(h, path, "speed", out.speed.emplace(), limits::kSpeed, limits::kSpeedUnit);
  if (s.ok() && h.contains("loop")) s = r.boolean(h, path, "loop", out.loop.emplace());
  if (s.ok() && h.contains("between")) {
    std::string text;
    s = r.string(h, path, "between", text);
    if (s.ok())
      if (Status b = parse_between(text, out.between.emplace()); !b.ok())
        s = r.fail(config::join(path, "between"), b.message());
  }
  if (s.ok()) s = r.integer(h, path, "count", out.count, 1, UINT32_MAX);
  if (s.ok()) s = r.string(h, path, "name", out.name);
  if (s.ok()) s = r.number(h, path, "clock_spread_s", out.clock_spread_s, limits::kYearSeconds, " (seconds: a year)");
  if (s.ok()) s = r.number(h, path, "variation", out.variation, limits::kVariation);
  if (s.ok()) s = r.integer(h, path, "seed", out.seed, 0, INT64_MAX);
  if (s.ok() && h.contains("event")) {
    const Json& ev = h["event"];
    const std::string ep = config::join(path, "event");
    if (!ev.is_array()) return r.type_error(ep, "[[host.event]] tables", ev);
    for (size_t i = 0; i < ev.size() && s.ok(); ++i)
      s = read_event(r, ev[i], config::index(ep, i), out.events.emplace_back());
  }
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
    return r.fail("host", "no [[host]] tables (each needs listen = \"ADDR:PORT\" or addresses = \"A.B.C.D/P\")");
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
  // Entry by entry, each entry's members in order: keep_shard's contiguous blocks then give each
  // shard one run of every entry it touches (one address range, one route per machine).
  std::vector<FleetHost> expanded;
  for (const FleetHost& entry : hosts) {
    for (uint32_t k = 0; k < std::max<uint32_t>(entry.replay.count, 1); ++k) {
      FleetHost member = entry;
      member.fleet_index = k;
      if (k == 0)
        ;  // the entry itself
      else if (member.first_address != 0)
        member.listen = ipv4_text(member.first_address + k) + entry.listen.substr(entry.listen.rfind(':'));
      else
        member.listen = fleet_listen(entry.listen, k);
      expanded.push_back(std::move(member));
    }
  }
  hosts = std::move(expanded);
}

std::string ipv4_text(uint32_t host_order) {
  in_addr a{htonl(host_order)};
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

Status parse_address_range(const std::string& cidr, uint32_t& first, uint32_t& capacity) {
  const size_t slash = cidr.find('/');
  in_addr a{};
  uint32_t prefix = 0;
  if (slash == std::string::npos || ::inet_pton(AF_INET, cidr.substr(0, slash).c_str(), &a) != 1 ||
      !config::parse_uint_as(std::string_view(cidr).substr(slash + 1), "prefix", prefix).ok() || prefix > 32)
    return Status::InvalidArgument("'" + cidr + "' is not an IPv4 range A.B.C.D/P (e.g. \"127.1.0.0/16\")");
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t(0) << (32 - prefix);
  const uint32_t ip = ntohl(a.s_addr), network = ip & mask, last = network | ~mask;
  first = ip == network && prefix < 31 ? ip + 1 : ip;
  const uint32_t end = prefix < 31 ? last - 1 : last;  // the broadcast address is no host's
  capacity = first > end ? 0 : end - first + 1;
  if (capacity == 0) return Status::InvalidArgument("'" + cidr + "' holds no host address");
  return Status::Ok();
}

void keep_shard(std::vector<FleetHost>& hosts, uint32_t k, uint32_t n) {
  const size_t m = hosts.size(), begin = m * k / n, end = m * (k + 1) / n;
  std::vector<FleetHost> mine(std::make_move_iterator(hosts.begin() + ptrdiff_t(begin)),
                              std::make_move_iterator(hosts.begin() + ptrdiff_t(end)));
  hosts = std::move(mine);
}

Status parse_shard(const std::string& text, uint32_t& k, uint32_t& n) {
  const size_t slash = text.find('/');
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("--shard " + text + ": " + why +
                                   "; give K/N with 0 <= K < N, e.g. --shard 0/4 for the first of four machines "
                                   "(a StatefulSet pod's ordinal is K)");
  };
  if (slash == std::string::npos) return bad("expected K/N");
  if (!config::parse_uint_as(std::string_view(text).substr(0, slash), "K", k).ok() ||
      !config::parse_uint_as(std::string_view(text).substr(slash + 1), "N", n).ok())
    return bad("K and N are whole numbers");
  if (n == 0) return bad("N must be at least 1");
  if (k >= n) return bad("K must be below N (shards count from 0)");
  return Status::Ok();
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
    std::string last;  // a piece without '=' continues a list value: provider=PerfDisk,PerfNet
    for (const std::string& kv : split_nonempty(text.substr(colon + 1), ",")) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos && !last.empty()) {
        out.params[last] += "," + kv;
        continue;
      }
      if (eq == std::string::npos || eq == 0)
        return Status::InvalidArgument("quirk '" + text + "': parameters are PARAM=VALUE, comma-separated");
      last = kv.substr(0, eq);
      out.params[last] = kv.substr(eq + 1);
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

Status parse_between(const std::string& s, Between& out) {
  for (Between b : {Between::kStep, Between::kInterpolate})
    if (s == between_name(b)) {
      out = b;
      return Status::Ok();
    }
  return Status::InvalidArgument("between '" + s +
                                 "' is not one of step (counters hold until the next sample) or interpolate "
                                 "(counters advance toward the next sample with time)");
}

}  // namespace perfsim::replayer
