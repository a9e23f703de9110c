#include "core/file.h"
#include "replayer/faults.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cctype>

#include "core/config.h"
#include "replayer/quirk_engine.h"

namespace perfsim::replayer {
namespace {

// "fault:latency", ...: the Applied names (answer.h), the kind names with a prefix.
const std::string* applied_names_of_kinds() {
  static const std::string names[] = {"fault:latency", "fault:busy",  "fault:access-denied", "fault:rpc-fault",
                                      "fault:reset",   "fault:stall", "fault:truncate",      "fault:bandwidth"};
  return names;
}

bool kind_of(const std::string& s, FaultKind& k) {
  for (uint32_t i = 0; i < kFaultKinds; ++i)
    if (s == fault_kind_name(FaultKind(i))) {
      k = FaultKind(i);
      return true;
    }
  return false;
}

Status read_shape(const config::Reader& rd, const config::Json& t, const std::string& where, LatencyShape& out) {
  std::string shape = "fixed";
  if (Status s = rd.string(t, where, "shape", shape); !s.ok()) return s;
  if (shape == "fixed")
    out = LatencyShape::kFixed;
  else if (shape == "uniform")
    out = LatencyShape::kUniform;
  else if (shape == "lognormal")
    out = LatencyShape::kLognormal;
  else
    return rd.fail(config::join(where, "shape"), "\"" + shape + "\" is not one of fixed, uniform, lognormal");
  return Status::Ok();
}

// When the rule fires: every Nth call and/or with a probability (only `every`: probability 0).
Status read_when(const config::Reader& rd, const config::Json& t, const std::string& where, Chance& when) {
  when.probability = t.contains("every") && !t.contains("probability") ? 0.0 : 1.0;
  Status s = rd.integer(t, where, "every", when.every, uint32_t(limits::kEvery.lo), uint32_t(limits::kEvery.hi));
  if (s.ok()) s = rd.number(t, where, "probability", when.probability, limits::kProbability);
  return s;
}

// The kind's own numbers, each within its range (limits.h).
Status read_amounts(const config::Reader& rd, const config::Json& t, const std::string& where, const FaultLimits& lim,
                    FaultRule& r) {
  const config::Bounds latency{0, lim.max_latency_ms};
  const std::string unit = lim.unit();
  Status s = rd.number(t, where, "ms", r.ms, latency, unit);
  r.max_ms = r.ms;
  if (s.ok()) s = rd.number(t, where, "max_ms", r.max_ms, latency, unit);
  if (s.ok()) s = rd.number(t, where, "sigma", r.sigma, limits::kSigma);
  if (s.ok()) s = rd.number(t, where, "seconds", r.seconds, limits::kStallSeconds, " (seconds: at most an hour)");
  if (s.ok()) s = rd.integer(t, where, "code", r.code);
  if (s.ok()) s = rd.integer(t, where, "bytes", r.bytes);
  if (s.ok()) s = rd.integer(t, where, "bytes_per_s", r.bytes_per_s);
  if (!s.ok()) return s;
  if (r.kind == FaultKind::kBandwidth && r.bytes_per_s == 0)
    return rd.fail(config::join(where, "bytes_per_s"), "bandwidth needs bytes_per_s > 0");
  if (r.max_ms < r.ms)
    return rd.fail(config::join(where, "max_ms"), fmt::format("must be at least ms ({}), got {}", r.ms, r.max_ms));
  return Status::Ok();
}

Status rule_of(const config::Reader& rd, const config::Json& t, const std::string& where, const FaultLimits& lim,
               FaultRule& r) {
  Status s = rd.keys(t, where,
                     {"host", "value", "kind", "every", "probability", "from_s", "until_s", "shape", "ms", "max_ms",
                      "sigma", "seconds", "code", "bytes", "bytes_per_s"});
  if (s.ok()) s = rd.string(t, where, "host", r.host);
  if (s.ok()) s = rd.string(t, where, "value", r.value);
  std::string kind;
  if (s.ok()) s = rd.require(t, where, "kind");
  if (s.ok()) s = rd.string(t, where, "kind", kind);
  if (s.ok() && !kind_of(kind, r.kind))
    s = rd.fail(
        config::join(where, "kind"),
        "\"" + kind + "\" is not one of latency, busy, access-denied, rpc-fault, reset, stall, truncate, bandwidth");
  if (s.ok()) s = read_when(rd, t, where, r.when);
  if (s.ok()) s = rd.number(t, where, "from_s", r.from_s, limits::kYearSeconds, " (seconds: at most a year)");
  if (s.ok()) s = rd.number(t, where, "until_s", r.until_s, limits::kYearSeconds, " (seconds: at most a year)");
  if (s.ok()) s = read_shape(rd, t, where, r.shape);
  if (s.ok()) s = read_amounts(rd, t, where, lim, r);
  return s;
}

}  // namespace

FaultLimits FaultLimits::for_idle_timeout(double idle_timeout_s) {
  FaultLimits l;
  if (idle_timeout_s > 0 && idle_timeout_s * 1000 < l.max_latency_ms) {
    l.max_latency_ms = idle_timeout_s * 1000;
    l.idle_timeout_s = idle_timeout_s;
  }
  return l;
}

std::string FaultLimits::unit() const {
  if (idle_timeout_s <= 0) return limits::kDelayUnit;
  return fmt::format(
      " (milliseconds: at most the server's --idle-timeout of {} s, after which a held reply's connection "
      "is closed; use kind = \"stall\" for that)",
      idle_timeout_s);
}

bool glob_match(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  auto same = [](char a, char b) { return std::tolower(uint8_t(a)) == std::tolower(uint8_t(b)); };
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || (p[pi] != '*' && same(p[pi], s[si])))) {
      ++pi;
      ++si;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else
      return false;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool rule_active(const FaultRule& r, double since_s) {
  return since_s >= r.from_s && (r.until_s <= 0 || since_s < r.until_s);
}

bool rule_in_force(const FaultRule& r, std::string_view host_name, double since_s) {
  return rule_active(r, since_s) && glob_match(r.host, host_name);
}

Status parse_fault_plan(std::string_view text, const std::string& origin, std::shared_ptr<const FaultPlan>& out,
                        const FaultLimits& lim) {
  config::Doc doc;
  if (Status s = config::parse_toml(text, origin, doc); !s.ok()) return s;
  return fault_plan_of(doc, out, lim);
}

Status parse_fault_plan_json(std::string_view text, const std::string& origin, std::shared_ptr<const FaultPlan>& out,
                             const FaultLimits& lim) {
  config::Doc doc;
  if (Status s = config::parse_json(text, origin, doc); !s.ok()) return s;
  return fault_plan_of(doc, out, lim);
}

Status fault_plan_of(const config::Doc& doc, std::shared_ptr<const FaultPlan>& out, const FaultLimits& lim) {
  const config::Reader rd(doc);
  if (Status s = rd.keys(doc.root, "", {"fault"}); !s.ok()) return s;
  auto plan = std::make_shared<FaultPlan>();
  if (doc.root.contains("fault")) {
    const config::Json& faults = doc.root["fault"];
    if (!faults.is_array()) return rd.type_error("fault", "[[fault]] tables", faults);
    for (size_t i = 0; i < faults.size(); ++i) {
      FaultRule r;
      if (Status s = rule_of(rd, faults[i], config::index("fault", i), lim, r); !s.ok()) return s;
      plan->rules.push_back(std::move(r));
    }
  }
  plan->loaded_ns = steady_ns();
  plan->max_latency_ms = lim.max_latency_ms;
  out = std::move(plan);
  return Status::Ok();
}

config::Json to_json(const FaultPlan& plan) {
  static const char* const shapes[] = {"fixed", "uniform", "lognormal"};
  config::Json rules = config::Json::array();
  for (const FaultRule& r : plan.rules) {
    config::Json j = {{"host", r.host}, {"value", r.value}, {"kind", fault_kind_name(r.kind)}};
    if (r.when.every) j["every"] = r.when.every;
    if (r.when.probability != (r.when.every ? 0.0 : 1.0)) j["probability"] = r.when.probability;
    if (r.from_s) j["from_s"] = r.from_s;
    if (r.until_s) j["until_s"] = r.until_s;
    switch (r.kind) {
      case FaultKind::kLatency:
        j["shape"] = shapes[int(r.shape)];
        j["ms"] = r.ms;
        if (r.shape == LatencyShape::kUniform) j["max_ms"] = r.max_ms;
        if (r.shape == LatencyShape::kLognormal) j["sigma"] = r.sigma;
        break;
      case FaultKind::kStall:
        j["seconds"] = r.seconds;
        break;
      case FaultKind::kRpcFault:
        j["code"] = r.code;
        break;
      case FaultKind::kTruncate:
        j["bytes"] = r.bytes;
        break;
      case FaultKind::kBandwidth:
        j["bytes_per_s"] = r.bytes_per_s;
        break;
      default:
        break;
    }
    rules.push_back(std::move(j));
  }
  return {{"fault", std::move(rules)}};
}

Status load_fault_plan(const std::string& path, std::shared_ptr<const FaultPlan>& out, const FaultLimits& lim) {
  std::string text;
  if (Status s = read_bounded_file(path, "fault plan", text); !s.ok()) return s;
  return parse_fault_plan(text, path, out, lim);
}

std::string_view fault_kind_name(FaultKind k) {
  return std::string_view(applied_names_of_kinds()[uint32_t(k)]).substr(6);
}

std::string_view fault_applied_name(FaultKind k) { return applied_names_of_kinds()[uint32_t(k)]; }

}  // namespace perfsim::replayer
