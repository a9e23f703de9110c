// Writer of Processor: one instance per processor of group 0 and _Total.
#include "synth/model_state.h"

namespace perfsim::synth {

// The legacy Processor object knows no groups: above 64 logical processors it lists only the
// processors of one group (group 0 here), as every API "that takes an affinity mask or processor
// number ... but not a group number" reports only "the calling thread's group" (Microsoft, Boot
// Parameters to Test Drivers for Multiple Processor Group Support); Processor Information lists
// them all (write_counter_sets.cpp).
void Model::State::write_processor(ObjState& o) {
  const size_t shown = processor_groups(cpus.size()).front();
  if (o.obj.instances.size() != shown + 1) {
    o.obj.instances.clear();
    for (size_t i = 0; i < shown; ++i) o.add_instance(std::to_string(i));
    o.add_instance("_Total");
  }
  // _Total holds the average over the processors shown, so the same formula applies to it.
  Cpu total;
  const uint64_t n = shown;
  for (size_t i = 0; i <= shown; ++i) {
    const Cpu& c = i < shown ? cpus[i] : total;
    Bytes& b = o.block(i);
    const uint64_t div = i < shown ? 1 : n;
    o.set(b, idx::kProcessorTime, c.idle / div);
    o.set(b, idx::kUserTime, c.user / div);
    o.set(b, idx::kPrivilegedTime, c.priv / div);
    o.set(b, idx::kInterrupts, c.interrupts);
    o.set(b, idx::kDpcTime, c.dpc / div);
    o.set(b, idx::kInterruptTime, c.intr / div);
    o.set(b, idx::kDpcsQueued, c.dpcs);
    o.set(b, idx::kDpcRate, c.dpc_rate);
    o.set(b, idx::kIdleTime, c.idle / div);
    o.set(b, idx::kC1Time, c.c1 / div);
    o.set(b, idx::kC2Time, c.c2 / div);
    o.set(b, idx::kC3Time, c.c3 / div);
    o.set(b, idx::kC1Transitions, c.c1t);
    o.set(b, idx::kC2Transitions, c.c2t);
    o.set(b, idx::kC3Transitions, c.c3t);
    if (i < shown) {
      total.idle += c.idle, total.user += c.user, total.priv += c.priv, total.interrupts += c.interrupts;
      total.dpc += c.dpc, total.intr += c.intr, total.dpcs += c.dpcs, total.dpc_rate += c.dpc_rate;
      total.c1 += c.c1, total.c2 += c.c2, total.c3 += c.c3, total.c1t += c.c1t, total.c2t += c.c2t, total.c3t += c.c3t;
    }
  }
}

}  // namespace perfsim::synth
