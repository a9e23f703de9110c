// Writers of the counter sets (counter_sets.cpp), whose counters are found by name: Processor
// Information, one instance per processor ("node,processor"), the node's total and _Total, all
// from the same state as Processor, so its _Total equals Processor's.
#include "synth/model_state.h"

namespace perfsim::synth {

void Model::State::write_processor_information(ObjState& o) {
  if (o.obj.instances.size() != cpus.size() + 2) {
    o.obj.instances.clear();
    for (size_t i = 0; i < cpus.size(); ++i) o.add_instance("0," + std::to_string(i));
    o.add_instance("0,_Total");
    o.add_instance("_Total");
  }
  const uint32_t time = o.idx("% Processor Time"), user = o.idx("% User Time"), priv = o.idx("% Privileged Time"),
                 ints = o.idx("Interrupts/sec"), dpc = o.idx("% DPC Time"), intr = o.idx("% Interrupt Time"),
                 dpcs = o.idx("DPCs Queued/sec"), dpc_rate = o.idx("DPC Rate"), idle = o.idx("% Idle Time"),
                 c1 = o.idx("% C1 Time"), c2 = o.idx("% C2 Time"), c3 = o.idx("% C3 Time"),
                 c1t = o.idx("C1 Transitions/sec"), c2t = o.idx("C2 Transitions/sec"),
                 c3t = o.idx("C3 Transitions/sec"), prio = o.idx("% Priority Time"),
                 parking = o.idx("Parking Status"), freq = o.idx("Processor Frequency"),
                 max_freq = o.idx("% of Maximum Frequency"), flags = o.idx("Processor State Flags"),
                 clock = o.idx("Clock Interrupts/sec"), avg_idle = o.idx("Average Idle Time"),
                 breaks = o.idx("Idle Break Events/sec"), perf = o.idx("% Processor Performance"),
                 util = o.idx("% Processor Utility"), priv_util = o.idx("% Privileged Utility"),
                 limit = o.idx("% Performance Limit"), limit_flags = o.idx("Performance Limit Flags");
  Cpu total;
  const uint64_t n = cpus.size();
  for (size_t i = 0; i < cpus.size() + 2; ++i) {
    const bool is_total = i >= cpus.size();  // the node's total, then _Total: one node, same values
    const Cpu& c = is_total ? total : cpus[i];
    const uint64_t div = is_total ? n : 1;
    Bytes& b = o.block(i);
    // Time percentages: _Total averages over processors, as Processor's does.
    o.set(b, time, c.idle / div);
    o.set(b, user, c.user / div);
    o.set(b, priv, c.priv / div);
    o.set(b, ints, c.interrupts);
    o.set(b, dpc, c.dpc / div);
    o.set(b, intr, c.intr / div);
    o.set(b, dpcs, c.dpcs);
    o.set(b, dpc_rate, c.dpc_rate);
    o.set(b, idle, c.idle / div);
    o.set(b, c1, c.c1 / div);
    o.set(b, c2, c.c2 / div);
    o.set(b, c3, c.c3 / div);
    o.set(b, c1t, c.c1t);
    o.set(b, c2t, c.c2t);
    o.set(b, c3t, c.c3t);
    o.set(b, prio, c.low_prio / div);
    o.set(b, parking, 0);
    o.set(b, freq, 2400);
    o.set(b, max_freq, 100);
    o.set(b, flags, 0);
    o.set(b, clock, c.clock_ints);
    o.set_pair(b, avg_idle, c.idle / div, uint64_t(now - boot));
    o.set(b, breaks, c.idle_breaks);
    // Averages (value / base): every processor has the same base, so _Total divides the values.
    const uint64_t base = cpus.empty() ? 0 : cpus[0].util_base;
    o.set_pair(b, perf, c.perf / div, base);
    o.set_pair(b, util, c.util / div, base);
    o.set_pair(b, priv_util, c.priv_util / div, base);
    o.set(b, limit, 0);
    o.set(b, limit_flags, 0);
    if (is_total) continue;
    total.idle += c.idle, total.user += c.user, total.priv += c.priv, total.interrupts += c.interrupts;
    total.dpc += c.dpc, total.intr += c.intr, total.dpcs += c.dpcs, total.dpc_rate += c.dpc_rate;
    total.c1 += c.c1, total.c2 += c.c2, total.c3 += c.c3, total.c1t += c.c1t, total.c2t += c.c2t, total.c3t += c.c3t;
    total.low_prio += c.low_prio, total.clock_ints += c.clock_ints, total.idle_breaks += c.idle_breaks;
    total.perf += c.perf, total.util += c.util, total.priv_util += c.priv_util;
  }
}

}  // namespace perfsim::synth
