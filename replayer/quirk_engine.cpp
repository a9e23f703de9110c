#include "replayer/quirk_engine.h"

#include "replayer/events.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "replayer/limits.h"
#include "replayer/quirk_table.h"

namespace perfsim::replayer {
namespace {

// The call-path rows of one stage, in table order: the table is walked once, not per call.
struct Stages {
  std::vector<const QuirkRow*> refuse, answer, buffer, delay;
  Stages() {
    for (const QuirkRow& r : quirk_table()) {
      if (!r.on_call) continue;
      if (r.stage == QuirkStage::kRefuse) refuse.push_back(&r);
      if (r.stage == QuirkStage::kAnswer) answer.push_back(&r);
      if (r.stage == QuirkStage::kBuffer) buffer.push_back(&r);
      if (r.stage == QuirkStage::kDelay) delay.push_back(&r);
    }
  }
};

const Stages& stages() {
  static const Stages s;
  return s;
}

bool is_perf_data(const ValueContent& c) { return c.status == windows::kErrorSuccess && c.type == windows::kRegBinary; }

}  // namespace

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void add_delay(ValueAnswer& a, double ms) {
  const double total = double(a.delay_ms) + (ms > 0 ? ms : 0);
  a.delay_ms = uint32_t(std::min(total, limits::kMaxDelayMs));
}

bool QuirkCall::fires(const Chance& c, uint64_t salt) const {
  if (c.every && (call + 1) % c.every == 0) return true;
  if (c.probability <= 0) return false;
  const double u = double(splitmix(seed ^ salt ^ (call * 0x2545F4914F6CDD1Dull)) >> 11) / double(1ull << 53);
  return u < c.probability;
}

bool refuse_call(const Quirks& q, QuirkCall& c) {
  for (const QuirkRow* r : stages().refuse) {
    if (!r->on_call(*r, q, c)) continue;
    c.answer.applied |= c.applied;
    return true;
  }
  return false;
}

void shape_answer(const Quirks& q, QuirkCall& c) {
  for (const QuirkRow* r : stages().answer) r->on_call(*r, q, c);
  bool answered = false;
  if (is_perf_data(c.content))
    for (const QuirkRow* r : stages().buffer)
      if ((answered = r->on_call(*r, q, c))) break;
  if (!answered) c.answer = rrp_exact(std::move(c.content), c.offer);
  for (const QuirkRow* r : stages().delay) r->on_call(*r, q, c);
  c.answer.applied |= c.applied;
}

void inject_faults(const FaultPlan& plan, std::string_view host_name, QuirkCall& c) {
  ValueAnswer& a = c.answer;
  const double since_s = double(steady_ns() - plan.loaded_ns) / 1e9;
  for (size_t i = 0; i < plan.rules.size(); ++i) {
    const FaultRule& r = plan.rules[i];
    if (!rule_in_force(r, host_name, since_s) || !glob_match(r.value, c.value_name) || !c.fires(r.when, 0xFA17 + i))
      continue;
    auto unit = [&](uint64_t salt) {
      return (double(splitmix(c.seed ^ (c.call * 31 + i) ^ salt) >> 11) + 0.5) / double(1ull << 53);
    };
    a.applied |= 1u << (kAppliedFaultBase + uint32_t(r.kind));
    switch (r.kind) {
      case FaultKind::kLatency: {
        double ms = r.ms;
        if (r.shape == LatencyShape::kUniform) ms = r.ms + unit(1) * (r.max_ms - r.ms);
        if (r.shape == LatencyShape::kLognormal)  // median r.ms; Box-Muller normal from two uniforms
          ms = r.ms * std::exp(r.sigma * std::sqrt(-2 * std::log(unit(2))) * std::cos(6.283185307179586 * unit(3)));
        add_delay(a, std::min(ms, plan.max_latency_ms));
        break;
      }
      case FaultKind::kStall:
        add_delay(a, r.seconds * 1000);
        break;
      case FaultKind::kBusy:
        a = ValueAnswer{windows::kErrorBusy, 0, 0, {}, a.delay_ms, 0, false, a.applied};
        break;
      case FaultKind::kAccessDenied:
        a = ValueAnswer{windows::kErrorAccessDenied, 0, 0, {}, a.delay_ms, 0, false, a.applied};
        break;
      case FaultKind::kRpcFault:
        a.rpc_fault = r.code;
        break;
      case FaultKind::kReset:
        a.drop_connection = true;
        break;
      case FaultKind::kTruncate:
        a.data = a.data.first(r.bytes);
        break;
      case FaultKind::kBandwidth:
        add_delay(a, double(a.data.size()) * 1000 / r.bytes_per_s);
        break;
    }
  }
}

std::string_view applied_name(uint32_t bit) {
  for (const QuirkRow& r : quirk_table())
    if (r.applied_bit >= 0 && r.bit() == bit) return r.name;
  for (uint32_t k = 0; k < kFaultKinds; ++k)
    if (bit == 1u << (kAppliedFaultBase + k)) return fault_applied_name(FaultKind(k));
  if (bit == 1u << kAppliedBetween) return "between:interpolate";
  for (const EventRow& e : event_table())
    if (bit == 1u << e.applied_bit) return e.applied_name;
  return "";
}

std::string applied_names(uint32_t mask) {
  std::string out;
  for (uint32_t i = 0; i < kAppliedBits; ++i) {
    const std::string_view n = (mask >> i) & 1 ? applied_name(1u << i) : std::string_view();
    if (n.empty()) continue;
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

}  // namespace perfsim::replayer
