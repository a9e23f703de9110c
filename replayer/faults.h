// Injected faults: what a test or a support engineer makes a host do on purpose, on top of its
// quirks. A FaultPlan is a list of rules; each rule matches hosts and value names (case-insensitive
// globs, `*` and `?`), fires on every Nth perf query of the host and/or with a probability, within
// an optional schedule window, and does one thing: latency (fixed, uniform, lognormal), ERROR_BUSY,
// access denied, a DCE/RPC fault, a connection reset, a stall, a truncated payload or a bandwidth
// limit. Plans are immutable; a host swaps its plan atomically (SimulatedHost::set_faults), so a
// reload while serving neither blocks nor drops a connection.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "replayer/limits.h"
#include "replayer/quirks.h"

namespace perfsim::replayer {

enum class FaultKind { kLatency, kBusy, kAccessDenied, kRpcFault, kReset, kStall, kTruncate, kBandwidth };
inline constexpr uint32_t kFaultKinds = 8;
// "latency", "busy", ...: the `kind` a plan writes.
std::string_view fault_kind_name(FaultKind k);
// "fault:latency", ...: the Applied name (answer.h) of an answer the kind shaped.
std::string_view fault_applied_name(FaultKind k);
enum class LatencyShape { kFixed, kUniform, kLognormal };

struct FaultRule {
  std::string host = "*";   // host (system) name glob
  std::string value = "*";  // value name glob ("Global", "2*", "Counter *")
  FaultKind kind = FaultKind::kLatency;
  Chance when{1.0, 0};             // default: every matching call
  double from_s = 0, until_s = 0;  // active from..until seconds after the plan was loaded; until 0 = open
  LatencyShape shape = LatencyShape::kFixed;
  double ms = 0, max_ms = 0, sigma = 0.5;  // latency: fixed ms; uniform ms..max_ms; lognormal median ms
  double seconds = 0;                      // stall
  uint32_t code = 0x000006BE;              // rpc-fault code (default RPC_S_CALL_FAILED)
  uint32_t bytes = 0;                      // truncate: bytes kept
  uint32_t bytes_per_s = 0;                // bandwidth
};

// What a plan's latencies may reach: an hour, or the server's idle timeout where that is less
// and known (perfsim serve: --faults, SIGHUP, PUT /api/faults), because a reply held past it
// closes the connection (server/connection.h): a "latency" would silently become a reset.
struct FaultLimits {
  double max_latency_ms = limits::kMaxDelayMs;
  double idle_timeout_s = 0;  // 0: none known (or none at all)
  // The limits under a server whose idle timeout is `idle_timeout_s` (0: never closes).
  static FaultLimits for_idle_timeout(double idle_timeout_s);
  // " (milliseconds: at most ...)": why the bound is what it is, for refusals.
  std::string unit() const;
};

struct FaultPlan {
  std::vector<FaultRule> rules;
  int64_t loaded_ns = 0;  // steady clock at load: the schedule's zero
  // Lognormal and uniform draws are cut here, so a draw never exceeds what the plan was checked for.
  double max_latency_ms = limits::kMaxDelayMs;
};

// Parses a plan from TOML text: [[fault]] tables with host, value, kind ("latency", "busy",
// "access-denied", "rpc-fault", "reset", "stall", "truncate", "bandwidth"), every, probability,
// from_s, until_s and the kind's parameters (replayer/README.md). `origin` names the text in errors.
// Every number is range-checked (limits.h, README.md "Ranges"); a refusal names the key and range.
Status parse_fault_plan(std::string_view toml_text, const std::string& origin, std::shared_ptr<const FaultPlan>& out,
                        const FaultLimits& lim = {});
// The same plan as JSON: {"fault": [{"kind": "busy", ...}, ...]}, the same keys and checks.
Status parse_fault_plan_json(std::string_view json_text, const std::string& origin,
                             std::shared_ptr<const FaultPlan>& out, const FaultLimits& lim = {});
Status fault_plan_of(const config::Doc& doc, std::shared_ptr<const FaultPlan>& out, const FaultLimits& lim = {});
// The plan in the JSON form parse_fault_plan_json reads (defaults left out).
config::Json to_json(const FaultPlan& plan);
Status load_fault_plan(const std::string& path, std::shared_ptr<const FaultPlan>& out, const FaultLimits& lim = {});

// Case-insensitive glob match (`*`, `?`).
bool glob_match(std::string_view pattern, std::string_view text);
// Whether `r` is in force `since_s` seconds after its plan was loaded: inside its from_s..until_s
// window; for `host_name`: that, and its host glob matches (its value glob and chance are per call).
bool rule_active(const FaultRule& r, double since_s);
bool rule_in_force(const FaultRule& r, std::string_view host_name, double since_s);

}  // namespace perfsim::replayer
