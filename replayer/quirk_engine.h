// The quirk engine: what happens to one perf QueryValue between the host's content and the wire.
// SimulatedHost::query hands a QuirkCall through the call-path stages of the quirk table
// (quirk_table.h) in this order, then through the injected faults:
//   refuse  (access-denied on query, busy)    before any content is made;
//   answer  (empty-names-under-stress)       the content edited;
//   buffer  (the buffer policy)              sizes and ERROR_MORE_DATA, MS-RRP 3.1.5.17 unless a
//                                            buffer quirk answers (perf data only);
//   delay   (slow-global, hang)              how long the answer takes to leave;
//   faults  (replayer/faults.h)              what the fault plan adds.
// Chances are drawn from the host's seed, the call number and a salt per quirk, so the same host
// answers the same call the same way whatever else is switched on.
#pragma once
#include <cstdint>
#include <string_view>

#include "replayer/answer.h"
#include "replayer/faults.h"
#include "replayer/quirks.h"

namespace perfsim::replayer {

class Recording;

struct QuirkCall {
  PerfKey key = PerfKey::kData;
  std::string_view value_name;
  BufferOffer offer;
  uint64_t call = 0;  // the host's perf query number, from 0
  uint64_t seed = 0;  // the host's seed (HostOptions::identity)
  // Where the answer is served from: win2000-echo-oversize sizes against the Global sample of
  // this position.
  const Recording* recording = nullptr;
  uint32_t position = 0;
  ValueContent content;  // what the value holds (stage answer on)
  ValueAnswer answer;    // the answer (stage buffer on)
  uint32_t applied = 0;  // Applied bits of the stages so far; ORed into the answer at the end

  // Whether `c` fires on this call: every `every`-th call, or with its probability (salted draw).
  bool fires(const Chance& c, uint64_t salt) const;
};

// Stage refuse: true when a quirk answered (c.answer) before content is made.
bool refuse_call(const Quirks& q, QuirkCall& c);
// Stages answer, buffer and delay over c.content: c.answer is what leaves.
void shape_answer(const Quirks& q, QuirkCall& c);
// The plan's rules matching `host_name` and the call, applied to c.answer in plan order.
void inject_faults(const FaultPlan& plan, std::string_view host_name, QuirkCall& c);

// The steady clock in nanoseconds: fault schedules (FaultPlan::loaded_ns) and timelines run on it.
int64_t steady_ns();
// The draws' mixer (SplitMix64 finalizer): also a fleet host's variation factor.
uint64_t splitmix(uint64_t x);
// Adds `ms` to the delay before an answer leaves, saturating at an hour (limits.h): however many
// quirks and fault rules add up, a call is never held longer, and the sum never wraps.
void add_delay(ValueAnswer& a, double ms);

}  // namespace perfsim::replayer
