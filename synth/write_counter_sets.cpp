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
                 c3t = o.idx("C3 Transitions/sec"), prio = o.idx("% Priority Time"), parking = o.idx("Parking Status"),
                 freq = o.idx("Processor Frequency"), max_freq = o.idx("% of Maximum Frequency"),
                 flags = o.idx("Processor State Flags"), clock = o.idx("Clock Interrupts/sec"),
                 avg_idle = o.idx("Average Idle Time"), breaks = o.idx("Idle Break Events/sec"),
                 perf = o.idx("% Processor Performance"), util = o.idx("% Processor Utility"),
                 priv_util = o.idx("% Privileged Utility"), limit = o.idx("% Performance Limit"),
                 limit_flags = o.idx("Performance Limit Flags");
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

// TCPv4/v6, IPv4/v6, UDPv4/v6, ICMP, ICMPv6: single-instance objects of the IP stack (NetStack).
void Model::State::write_protocol(ObjState& o) {
  const Family f = o.cat->desc.family;
  const int v = f == Family::kTcpV6 || f == Family::kIpV6 || f == Family::kUdpV6 || f == Family::kIcmpV6;
  Bytes& b = o.obj.counter_block;
  auto set = [&](const char* name, uint64_t value) { o.set(b, o.idx(name), value); };
  const NetStack& n = net;
  switch (f) {
    case Family::kTcpV4:
    case Family::kTcpV6:
      set("Segments/sec", n.tcp_rx[v] + n.tcp_tx[v]);
      set("Connections Established", n.estab[v]);
      set("Connections Active", n.active[v]);
      set("Connections Passive", n.passive[v]);
      set("Connection Failures", n.failures[v]);
      set("Connections Reset", n.resets[v]);
      set("Segments Received/sec", n.tcp_rx[v]);
      set("Segments Sent/sec", n.tcp_tx[v]);
      set("Segments Retransmitted/sec", n.tcp_retx[v]);
      break;
    case Family::kIpV4:
    case Family::kIpV6:
      set("Datagrams/sec", n.ip_rx[v] + n.ip_tx[v]);
      set("Datagrams Received/sec", n.ip_rx[v]);
      set("Datagrams Received Discarded", n.ip_rx[v] - n.ip_deliv[v]);
      set("Datagrams Received Delivered/sec", n.ip_deliv[v]);
      set("Datagrams Sent/sec", n.ip_tx[v]);
      break;  // the error, forwarding and fragment counters stay 0: a host that neither routes nor fragments
    case Family::kUdpV4:
    case Family::kUdpV6:
      set("Datagrams/sec", n.udp_rx[v] + n.udp_tx[v]);
      set("Datagrams Received/sec", n.udp_rx[v] - n.udp_noport[v]);
      set("Datagrams No Port/sec", n.udp_noport[v]);
      set("Datagrams Sent/sec", n.udp_tx[v]);
      break;
    case Family::kIcmp:
    case Family::kIcmpV6:
      set("Messages/sec", n.icmp_rx[v] + n.icmp_tx[v]);
      set("Messages Received/sec", n.icmp_rx[v]);
      set("Messages Sent/sec", n.icmp_tx[v]);
      set("Received Echo/sec", n.icmp_rx[v] / 2);
      set("Sent Echo Reply/sec", n.icmp_rx[v] / 2);
      break;
    default:
      break;
  }
}

// Network Adapter: the same adapters and traffic as Network Interface.
void Model::State::write_network_adapter(ObjState& o) {
  if (o.obj.instances.size() != nics.size()) {
    o.obj.instances.clear();
    for (const Nic& n : nics) o.add_instance(n.name);
  }
  const uint32_t total = o.idx("Bytes Total/sec"), packets = o.idx("Packets/sec"),
                 received = o.idx("Packets Received/sec"), sent = o.idx("Packets Sent/sec"),
                 bandwidth = o.idx("Current Bandwidth"), rbytes = o.idx("Bytes Received/sec"),
                 rucast = o.idx("Packets Received Unicast/sec"), rnucast = o.idx("Packets Received Non-Unicast/sec"),
                 rdiscard = o.idx("Packets Received Discarded"), rerrors = o.idx("Packets Received Errors"),
                 sbytes = o.idx("Bytes Sent/sec"), sucast = o.idx("Packets Sent Unicast/sec"),
                 snucast = o.idx("Packets Sent Non-Unicast/sec"), offloaded = o.idx("Offloaded Connections");
  for (size_t i = 0; i < nics.size(); ++i) {
    const Nic& n = nics[i];
    Bytes& b = o.block(i);
    o.set(b, total, n.rbytes + n.sbytes);
    o.set(b, packets, n.rucast + n.rnucast + n.sucast + n.snucast);
    o.set(b, received, n.rucast + n.rnucast);
    o.set(b, sent, n.sucast + n.snucast);
    o.set(b, bandwidth, spec.bandwidth_bps);
    o.set(b, rbytes, n.rbytes);
    o.set(b, rucast, n.rucast);
    o.set(b, rnucast, n.rnucast);
    o.set(b, rdiscard, n.rdiscard);
    o.set(b, rerrors, n.rerrors);
    o.set(b, sbytes, n.sbytes);
    o.set(b, sucast, n.sucast);
    o.set(b, snucast, n.snucast);
    o.set(b, offloaded, 0);
  }
}

}  // namespace perfsim::synth
