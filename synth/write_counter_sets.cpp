// Writers of the counter sets (counter_sets.cpp), whose counters are found by name: Processor
// Information, one instance per processor ("node,processor"), the node's total and _Total, all
// from the same state as Processor, so its _Total equals Processor's.
#include "synth/model_state.h"

#include <algorithm>

namespace perfsim::synth {

void Model::State::write_counter_set(ObjState& o) {
  switch (o.cat->desc.family) {
    case Family::kProcessorInformation:
      return write_processor_information(o);
    case Family::kNetworkAdapter:
      return write_network_adapter(o);
    case Family::kProcessV2:
      return write_process_v2(o);
    case Family::kCache:
      return write_cache(o);
    case Family::kServer:
    case Family::kServerWorkQueues:
      return write_server(o, o.cat->desc.family == Family::kServerWorkQueues);
    case Family::kRedirector:
      return write_redirector(o);
    case Family::kBrowser:
      return write_browser(o);
    case Family::kTerminalServices:
    case Family::kThermalZone:
    case Family::kNumaNodeMemory:
    case Family::kPrintQueue:
      return write_small_sets(o);
    case Family::kTerminalServicesSession:
      return write_sessions(o);
    case Family::kJobObject:
      return write_jobs(o);
    case Family::kStandard:
      return;
    default:
      return write_protocol(o);
  }
}

namespace {

void add_to_total(Cpu& t, const Cpu& c) {
  t.idle += c.idle, t.user += c.user, t.priv += c.priv, t.interrupts += c.interrupts;
  t.dpc += c.dpc, t.intr += c.intr, t.dpcs += c.dpcs, t.dpc_rate += c.dpc_rate;
  t.c1 += c.c1, t.c2 += c.c2, t.c3 += c.c3, t.c1t += c.c1t, t.c2t += c.c2t, t.c3t += c.c3t;
  t.low_prio += c.low_prio, t.clock_ints += c.clock_ints, t.idle_breaks += c.idle_breaks;
  t.perf += c.perf, t.util += c.util, t.priv_util += c.priv_util;
}

}  // namespace

// Instances "group,number" for every logical processor (groups of at most 64: processor_groups),
// then "group,_Total" of each group, then "_Total" (issue 31; windows_exporter #1593, #344).
void Model::State::write_processor_information(ObjState& o) {
  const std::vector<size_t> groups = processor_groups(cpus.size());
  if (o.obj.instances.size() != cpus.size() + groups.size() + 1) {
    o.obj.instances.clear();
    for (size_t g = 0; g < groups.size(); ++g)
      for (size_t i = 0; i < groups[g]; ++i) o.add_instance(std::to_string(g) + "," + std::to_string(i));
    for (size_t g = 0; g < groups.size(); ++g) o.add_instance(std::to_string(g) + ",_Total");
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
  std::vector<Cpu> totals(groups.size() + 1);  // each group's, then _Total's
  std::vector<uint64_t> counts(groups.size() + 1, cpus.size());
  for (size_t g = 0; g < groups.size(); ++g) counts[g] = groups[g];
  for (size_t i = 0; i < cpus.size() + totals.size(); ++i) {
    const bool is_total = i >= cpus.size();
    const Cpu& c = is_total ? totals[i - cpus.size()] : cpus[i];
    const uint64_t div = is_total ? counts[i - cpus.size()] : 1;
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
    size_t group = 0;
    for (size_t left = i; left >= groups[group]; left -= groups[group]) ++group;
    for (Cpu* t : {&totals[group], &totals.back()}) add_to_total(*t, c);
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

// Process V2: the processes of Process, named "name:pid" (Idle "Idle:0"), then "_Total:0" with
// the sums, so it agrees with Process whether or not the legacy object is served.
void Model::State::write_process_v2(ObjState& o) {
  if (v2_generation != procs_generation || o.obj.instances.size() != procs.size() + 1) {
    o.obj.instances.clear();
    for (const Process& p : procs) o.add_instance(p.name + ":" + std::to_string(p.pid));
    o.add_instance("_Total:0");
    v2_generation = procs_generation;
  }
  struct Sums {
    uint64_t user = 0, priv = 0, faults = 0, threads = 0, ops[3] = {}, bytes[3] = {};
    double ws = 0, vb = 0, pool_p = 0, pool_np = 0, handles = 0, ws_peak = 0, vb_peak = 0, pf_peak = 0;
  };
  auto write = [&](Bytes& b, const Sums& s, uint64_t pid, uint64_t ppid, uint32_t prio, int64_t start) {
    auto set = [&](const char* name, uint64_t v) { o.set(b, o.idx(name), v); };
    set("% Processor Time", s.user + s.priv);
    set("% User Time", s.user);
    set("% Privileged Time", s.priv);
    set("Virtual Bytes Peak", uint64_t(std::max(s.vb_peak, s.vb)));
    set("Virtual Bytes", uint64_t(s.vb));
    set("Page Faults/sec", s.faults);
    set("Working Set Peak", uint64_t(std::max(s.ws_peak, s.ws)));
    set("Working Set", uint64_t(s.ws));
    set("Page File Bytes Peak", uint64_t(std::max(s.pf_peak, s.ws * 0.8)));
    set("Page File Bytes", uint64_t(s.ws * 0.8));
    set("Private Bytes", uint64_t(s.ws * 0.8));
    set("Thread Count", s.threads);
    set("Priority Base", prio);
    set("Elapsed Time", uint64_t(start));
    set("Process ID", pid);
    set("Creating Process ID", ppid);
    set("Pool Paged Bytes", uint64_t(s.pool_p));
    set("Pool Nonpaged Bytes", uint64_t(s.pool_np));
    set("Handle Count", uint64_t(s.handles));
    set("IO Read Operations/sec", s.ops[0]);
    set("IO Write Operations/sec", s.ops[1]);
    set("IO Data Operations/sec", s.ops[0] + s.ops[1]);
    set("IO Other Operations/sec", s.ops[2]);
    set("IO Read Bytes/sec", s.bytes[0]);
    set("IO Write Bytes/sec", s.bytes[1]);
    set("IO Data Bytes/sec", s.bytes[0] + s.bytes[1]);
    set("IO Other Bytes/sec", s.bytes[2]);
    set("Working Set - Private", uint64_t(s.ws * 0.6));
  };
  Sums total;
  for (size_t i = 0; i < procs.size(); ++i) {
    const Process& p = procs[i];
    Sums s;
    s.user = p.user, s.priv = p.priv, s.faults = p.faults, s.threads = p.threads.size();
    for (int k = 0; k < 3; ++k) s.ops[k] = p.io_ops[k], s.bytes[k] = p.io_bytes[k];
    s.ws = p.ws, s.vb = p.vb, s.pool_p = p.pool_p, s.pool_np = p.pool_np, s.handles = p.handles;
    s.ws_peak = double(p.ws_peak), s.vb_peak = double(p.vb_peak), s.pf_peak = double(p.pf_peak);
    write(o.block(i), s, p.pid, p.ppid, p.prio, p.start);
    total.user += s.user, total.priv += s.priv, total.faults += s.faults, total.threads += s.threads;
    for (int k = 0; k < 3; ++k) total.ops[k] += s.ops[k], total.bytes[k] += s.bytes[k];
    total.ws += s.ws, total.vb += s.vb, total.pool_p += s.pool_p, total.pool_np += s.pool_np;
    total.handles += s.handles, total.ws_peak += s.ws_peak, total.vb_peak += s.vb_peak, total.pf_peak += s.pf_peak;
  }
  write(o.block(procs.size()), total, 0, 0, 0, boot);
}

}  // namespace perfsim::synth
