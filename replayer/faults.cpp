#include "replayer/faults.h"

#include <chrono>
#include <cctype>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace perfsim::replayer {
namespace {

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool kind_of(const std::string& s, FaultKind& k) {
  static const std::pair<const char*, FaultKind> kinds[] = {
      {"latency", FaultKind::kLatency}, {"busy", FaultKind::kBusy}, {"access-denied", FaultKind::kAccessDenied},
      {"rpc-fault", FaultKind::kRpcFault}, {"reset", FaultKind::kReset}, {"stall", FaultKind::kStall},
      {"truncate", FaultKind::kTruncate}, {"bandwidth", FaultKind::kBandwidth}};
  for (const auto& [name, kind] : kinds)
    if (s == name) { k = kind; return true; }
  return false;
}

Status rule_of(const toml::table& t, const std::string& where, FaultRule& r) {
  static const char* const known[] = {"host", "value", "kind", "every", "probability", "from_s", "until_s", "shape",
                                      "ms", "max_ms", "sigma", "seconds", "code", "bytes", "bytes_per_s"};
  for (const auto& [key, node] : t) {
    bool ok = false;
    for (const char* k : known) ok = ok || key.str() == k;
    if (!ok) return Status::InvalidArgument(where + ": unknown key '" + std::string(key.str()) + "'");
  }
  r.host = t["host"].value_or(std::string("*"));
  r.value = t["value"].value_or(std::string("*"));
  const std::string kind = t["kind"].value_or(std::string());
  if (!kind_of(kind, r.kind))
    return Status::InvalidArgument(where + ": kind '" + kind + "' is not one of latency, busy, access-denied, rpc-fault, reset, stall, truncate, bandwidth");
  const bool has_every = t.contains("every"), has_p = t.contains("probability");
  r.when.every = uint32_t(t["every"].value_or(int64_t(0)));
  r.when.probability = t["probability"].value_or(has_every ? 0.0 : 1.0);
  if (!has_every && !has_p) r.when.probability = 1.0;
  if (r.when.probability < 0 || r.when.probability > 1) return Status::InvalidArgument(where + ": probability must be within 0..1");
  r.from_s = t["from_s"].value_or(0.0);
  r.until_s = t["until_s"].value_or(0.0);
  const std::string shape = t["shape"].value_or(std::string("fixed"));
  if (shape == "fixed") r.shape = LatencyShape::kFixed;
  else if (shape == "uniform") r.shape = LatencyShape::kUniform;
  else if (shape == "lognormal") r.shape = LatencyShape::kLognormal;
  else return Status::InvalidArgument(where + ": shape must be fixed, uniform or lognormal");
  r.ms = t["ms"].value_or(0.0);
  r.max_ms = t["max_ms"].value_or(r.ms);
  r.sigma = t["sigma"].value_or(0.5);
  r.seconds = t["seconds"].value_or(0.0);
  r.code = uint32_t(t["code"].value_or(int64_t(r.code)));
  r.bytes = uint32_t(t["bytes"].value_or(int64_t(0)));
  r.bytes_per_s = uint32_t(t["bytes_per_s"].value_or(int64_t(0)));
  if (r.kind == FaultKind::kBandwidth && r.bytes_per_s == 0) return Status::InvalidArgument(where + ": bandwidth needs bytes_per_s > 0");
  if (r.ms < 0 || r.max_ms < r.ms || r.seconds < 0) return Status::InvalidArgument(where + ": negative or inverted time");
  return Status::Ok();
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  auto same = [](char a, char b) { return std::tolower(uint8_t(a)) == std::tolower(uint8_t(b)); };
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || (p[pi] != '*' && same(p[pi], s[si])))) { ++pi; ++si; }
    else if (pi < p.size() && p[pi] == '*') { star = pi++; mark = si; }
    else if (star != std::string_view::npos) { pi = star + 1; si = ++mark; }
    else return false;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

Status parse_fault_plan(std::string_view text, const std::string& origin, std::shared_ptr<const FaultPlan>& out) {
  toml::table t;
  try {
    t = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(origin + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  auto plan = std::make_shared<FaultPlan>();
  if (const toml::array* faults = t["fault"].as_array()) {
    for (const auto& node : *faults) {
      const toml::table* f = node.as_table();
      const std::string where = origin + ": [[fault]] " + std::to_string(plan->rules.size() + 1);
      if (!f) return Status::InvalidArgument(where + " is not a table");
      FaultRule r;
      if (Status s = rule_of(*f, where, r); !s.ok()) return s;
      plan->rules.push_back(std::move(r));
    }
  }
  plan->loaded_ns = steady_ns();
  out = std::move(plan);
  return Status::Ok();
}

Status load_fault_plan(const std::string& path, std::shared_ptr<const FaultPlan>& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(path + ": cannot open the fault plan");
  std::ostringstream text;
  text << f.rdbuf();
  return parse_fault_plan(text.str(), path, out);
}

}  // namespace perfsim::replayer
