// How the entities evolve between ticks. Kept consistent the way Windows' own counters are:
// processor busy time is split among the processes' threads (Idle gets the idle time), so
// process times add up to processors x elapsed.
#include "synth/model_state.h"

#include <algorithm>
#include <cmath>

#include "perfdata/winperf.h"

namespace perfsim::synth {

using namespace winperf;

namespace {

const char* const kImageNames[] = {"ntdll",  "kernel32", "KERNELBASE", "user32", "advapi32", "msvcrt",
                                   "rpcrt4", "sechost",  "combase",    "ws2_32", "ole32",    "shell32"};

// Splits `total` among weights with integer parts that add up exactly (the rest to the first).
void split(uint64_t total, const std::vector<double>& w, std::vector<uint64_t>& out) {
  double sum = 0;
  for (double x : w) sum += x;
  out.assign(w.size(), 0);
  if (w.empty()) return;
  uint64_t given = 0;
  for (size_t i = 0; i < w.size(); ++i) given += out[i] = sum > 0 ? uint64_t(double(total) * w[i] / sum) : 0;
  out[0] += total - std::min(given, total);
}

}  // namespace

Process Model::State::make_process(const std::string& name, int64_t start, uint32_t nthreads, uint32_t ppid) {
  Process p;
  p.name = name;
  p.pid = new_cid();
  p.ppid = ppid;
  p.start = start;
  p.weight = std::exp(rng.normal() * 1.2);
  p.user_ratio = rng.uniform(0.4, 0.9);
  p.io_rate = std::exp(rng.normal()) * 5;
  p.prio = rng.chance(0.8) ? 8 : (rng.chance(0.5) ? 13 : 4);
  // Whole bytes (so a sum of them is exact), scaled to the host's memory (init's ws_scale).
  p.ws_init = p.ws = std::floor(std::exp(rng.uniform(std::log(2e6), std::log(4e8))) * ws_scale);
  p.vb = std::min(p.ws * rng.uniform(3, 12), max_virtual());
  p.pool_p = rng.uniform(5e4, 5e5);
  p.pool_np = rng.uniform(5e3, 5e4);
  p.handles = std::round(rng.uniform(50, 1500));
  const bool large = profile->host.large_counters;
  for (uint32_t k = 0; k < nthreads; ++k) {
    Thread t;
    t.tid = new_cid();
    t.start = k == 0 ? start : start + int64_t(rng.below(uint64_t(std::max<int64_t>(now - start, 1))));
    t.weight = std::exp(rng.normal());
    t.prio = p.prio + uint32_t(rng.below(3));
    t.start_addr = large ? 0x7FF800000000ull + rng.below(1ull << 32) : 0x77000000ull + rng.below(0x800000);
    t.user_pc = t.start_addr + rng.below(0x10000);
    p.threads.push_back(t);
  }
  const uint32_t nimages = spec.images_per_process;
  if (nimages) p.images.push_back(name);
  for (uint32_t k = 1; k < nimages; ++k) p.images.push_back(kImageNames[(k - 1) % std::size(kImageNames)]);
  // A process that was already running has done work before the capture: seed its totals.
  const double age_s = double(std::max<int64_t>(now - start, 0)) / k100ns;
  const double share = p.weight / (spec.process_count + 1.0) * spec.processors * 0.3;
  p.user = uint64_t(age_s * share * p.user_ratio * k100ns);
  p.priv = uint64_t(age_s * share * (1 - p.user_ratio) * k100ns);
  if (!p.threads.empty()) p.threads[0].user = p.user, p.threads[0].priv = p.priv;
  p.faults = uint64_t(std::min(age_s * 5, 1e8));
  return p;
}

void Model::State::step_cpu(int64_t dt, double t) {
  const double load = std::clamp(cpu_sig.at(t) / 100.0, 0.0, 1.0);
  const double dt_s = double(dt) / k100ns;
  for (Cpu& c : cpus) {
    const double f = std::clamp(load + 0.08 * rng.normal(), 0.0, 1.0);
    const uint64_t busy = uint64_t(std::llround(f * double(dt)));
    const uint64_t idle = uint64_t(dt) - busy;
    const uint64_t user = uint64_t(double(busy) * rng.uniform(0.55, 0.8));
    const uint64_t priv = busy - user;
    c.busy_now = busy, c.idle_now = idle;
    c.idle += idle, c.user += user, c.priv += priv;
    c.intr += priv / 25, c.dpc += priv / 30;
    const uint64_t c1 = idle / 2, c2 = idle / 3;
    c.c1 += c1, c.c2 += c2, c.c3 += idle - c1 - c2;
    c.interrupts += uint64_t((400 + 3000 * f) * dt_s * rng.uniform(0.9, 1.1));
    c.dpcs += uint64_t((40 + 400 * f) * dt_s);
    c.c1t += uint64_t((200 + 800 * (1 - f)) * dt_s), c.c2t += uint64_t(100 * dt_s), c.c3t += uint64_t(50 * dt_s);
    c.dpc_rate = uint32_t(rng.below(2 + uint64_t(20 * f)));
  }
}

void Model::State::step_processes(int64_t dt) {
  const double dt_s = double(dt) / k100ns;
  uint64_t busy = 0;
  for (const Cpu& c : cpus) busy += c.busy_now;
  // Processor time: busy time among the processes, idle time to Idle (thread k = processor k).
  std::vector<double> w(procs.size() - 1);
  for (size_t i = 1; i < procs.size(); ++i) w[i - 1] = procs[i].weight * rng.uniform(0.3, 1.7);
  std::vector<uint64_t> share, tshare;
  split(busy, w, share);
  Process& idle = procs[0];
  for (size_t k = 0; k < idle.threads.size(); ++k) {
    idle.threads[k].priv += cpus[k].idle_now;
    idle.priv += cpus[k].idle_now;
  }
  const double cpu_total = double(dt) * double(cpus.size());
  uint64_t cs_tick = 0;
  for (size_t i = 1; i < procs.size(); ++i) {
    Process& p = procs[i];
    std::vector<double> tw(p.threads.size());
    for (size_t k = 0; k < tw.size(); ++k) tw[k] = p.threads[k].weight * rng.uniform(0.5, 1.5);
    split(share[i - 1], tw, tshare);
    for (size_t k = 0; k < p.threads.size(); ++k) {
      Thread& th = p.threads[k];
      const uint64_t user = uint64_t(double(tshare[k]) * p.user_ratio);
      th.user += user, th.priv += tshare[k] - user;
      p.user += user, p.priv += tshare[k] - user;
      const double frac = double(tshare[k]) / double(dt);
      const uint64_t cs = uint64_t((1 + 3000 * frac) * dt_s * rng.uniform(0.5, 1.5));
      th.cswitch += cs;
      cs_tick += cs;
      th.state = rng.chance(std::min(frac, 1.0)) ? 2 : 5;
      th.wait = th.state == 5 ? uint32_t(rng.chance(0.7) ? 6 : 15) : 0;
      th.user_pc = th.start_addr + rng.below(0x10000);
    }
    const double cpu_frac = double(share[i - 1]) / cpu_total;
    const uint64_t new_faults = uint64_t((0.5 + 2000 * cpu_frac) * dt_s * rng.uniform(0.5, 1.5));
    p.faults += new_faults;
    faults += new_faults;
    const double ops = p.io_rate * dt_s * rng.uniform(0.3, 1.7);
    const uint64_t r = uint64_t(ops * 0.5), wr = uint64_t(ops * 0.3), other = uint64_t(ops * 0.2 + 1);
    const uint64_t rb = r * (4096 + rng.below(60000)), wb = wr * (4096 + rng.below(30000)), ob = other * 120;
    p.io_ops[0] += r, p.io_ops[1] += wr, p.io_ops[2] += other;
    p.io_bytes[0] += rb, p.io_bytes[1] += wb, p.io_bytes[2] += ob;
    file_ops[0] += r, file_ops[1] += wr, file_ops[2] += other;
    file_bytes[0] += rb, file_bytes[1] += wb, file_bytes[2] += ob;
    p.ws = std::floor(std::clamp(p.ws * std::exp(0.02 * rng.normal()), p.ws_init * 0.5, p.ws_init * 2));
    p.vb = std::min(std::max(p.vb * std::exp(0.005 * rng.normal()), p.ws * 2), max_virtual());
    p.handles = std::round(std::clamp(p.handles + rng.normal() * 3, 20.0, 100000.0));
    p.ws_peak = std::max(p.ws_peak, uint64_t(p.ws));
    p.vb_peak = std::max(p.vb_peak, uint64_t(p.vb));
    p.pf_peak = std::max(p.pf_peak, private_bytes(p));
  }
  cswitch += cs_tick;
  syscalls += cs_tick * 3 + uint64_t(busy / 1000);
  exceptions += uint64_t(dt_s * rng.uniform(0, 5));
}

void Model::State::churn(int64_t dt) {
  double expected = spec.process_churn_per_hour * double(dt) / (3600.0 * k100ns);
  uint32_t n = uint32_t(expected) + (rng.chance(expected - std::floor(expected)) ? 1 : 0);
  for (; n > 0; --n) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < procs.size(); ++i)
      if (!procs[i].pinned && i >= 10) candidates.push_back(i);
    if (!candidates.empty()) procs.erase(procs.begin() + long(candidates[rng.below(candidates.size())]));
    const std::string name = spec.process_names.empty() ? filler_name(rng.below(64))
                                                        : spec.process_names[rng.below(spec.process_names.size())];
    const uint32_t threads = spec.threads_min + uint32_t(rng.below(spec.threads_max - spec.threads_min + 1));
    procs.push_back(make_process(name, now - int64_t(rng.below(uint64_t(dt))), threads, service_parent(name)));
    procs_dirty = true;
    ++procs_generation;
  }
  for (Custom& c : customs) {
    const ObjectSpec& os = *objects[c.state].cat->custom;
    if (c.instances.empty() || os.instances.churn_per_hour <= 0) continue;
    c.churn_carry += os.instances.churn_per_hour * double(dt) / (3600.0 * k100ns);
    for (; c.churn_carry >= 1; c.churn_carry -= 1) {
      CustomInstance& ci = c.instances[rng.below(c.instances.size())];
      ci.name = os.instances.prefix + std::to_string(c.serial++);
      for (size_t k = 0; k < ci.signals.size(); ++k)
        ci.signals[k] = Signal(os.counters[k].value, mix_seed(seed, objects[c.state].index(), k * 100003 + c.serial));
      std::fill(ci.acc.begin(), ci.acc.end(), 0.0);
      ci.scale = instance_scale(seed, objects[c.state].index(), c.serial, c.instances.size() > 1);
      ObjState& o = objects[c.state];
      o.obj.instances.clear();  // rebuilt by write_custom
    }
  }
}

void Model::State::step_disks(int64_t dt, double t) {
  const double dt_s = double(dt) / k100ns;
  const double iops = std::max(0.0, disk_sig.at(t));
  const int64_t freq = profile->host.perf_freq;
  for (Volume& v : volumes) {
    const double ops = iops * v.share * dt_s * rng.uniform(0.8, 1.2) + v.carry;
    const uint64_t n = uint64_t(ops);
    v.carry = ops - double(n);
    const uint64_t reads = uint64_t(double(n) * rng.uniform(0.4, 0.8)), writes = n - reads;
    const double rlat = v.read_ms / 1000 * rng.uniform(0.7, 1.5), wlat = v.write_ms / 1000 * rng.uniform(0.7, 1.5);
    v.reads += reads, v.writes += writes;
    v.rbytes += reads * (4096 + rng.below(60000)), v.wbytes += writes * (4096 + rng.below(28000));
    v.rticks += uint64_t(double(reads) * rlat * double(freq)),
        v.wticks += uint64_t(double(writes) * wlat * double(freq));
    const double rbusy = double(reads) * rlat * k100ns, wbusy = double(writes) * wlat * k100ns;
    const uint64_t busy = std::min<uint64_t>(uint64_t(rbusy + wbusy), uint64_t(dt));
    const double rpart = rbusy + wbusy > 0 ? rbusy / (rbusy + wbusy) : 0;
    v.busy += busy, v.rbusy += uint64_t(double(busy) * rpart), v.wbusy += busy - uint64_t(double(busy) * rpart);
    v.queue += uint64_t(rbusy + wbusy), v.rqueue += uint64_t(rbusy), v.wqueue += uint64_t(wbusy);
    v.idle += uint64_t(dt) - busy;
    v.split += n / 100;
    v.cur_queue = uint32_t(rng.below(1 + uint64_t(2 * (rbusy + wbusy) / double(dt))));
    v.free_mb = std::clamp(v.free_mb - double(writes) * 1e-5 + rng.normal() * 0.5, 0.0, v.size_mb);
  }
}

void Model::State::step_network(int64_t dt, double t) {
  const double dt_s = double(dt) / k100ns;
  const double rate = std::max(0.0, net_sig.at(t));
  for (Nic& n : nics) {
    const uint64_t rb = uint64_t(rate * n.share * 0.65 * dt_s), sb = uint64_t(rate * n.share * 0.35 * dt_s);
    n.rbytes += rb, n.sbytes += sb;
    const uint64_t rp = rb / 900, sp = sb / 600;
    n.rnucast += rp / 50, n.rucast += rp - rp / 50;
    n.snucast += sp / 100, n.sucast += sp - sp / 100;
    if (rng.chance(0.01)) ++n.rdiscard;
  }
}

void Model::State::step_custom(Custom& c, int64_t dt, double t) {
  ObjState& o = objects[c.state];
  const CatalogObject& co = *o.cat;
  const double dt_s = double(dt) / k100ns;
  const int64_t freq = profile->host.perf_freq;
  for (CustomInstance& ci : c.instances) {
    for (size_t i = 0; i < co.desc.counters.size(); ++i) {
      const CounterDesc& d = co.desc.counters[i];
      if (is_base_type(d.type)) continue;
      const CounterSpec& cs = *co.spec_of[i];
      // Its own generator, by its place in the spec: a names file may have left others out.
      const size_t k = size_t(&cs - co.custom->counters.data());
      const double v = scaled(cs.value, ci.signals[k].at(t), ci.scale);
      double& acc = ci.acc[i];
      switch (d.type) {
        case PERF_COUNTER_COUNTER:
        case PERF_COUNTER_BULK_COUNT:
          acc += std::max(v, 0.0) * dt_s;
          break;
        case PERF_100NSEC_TIMER:
          acc += std::clamp(v / 100, 0.0, 1.0) * double(dt);
          break;
        case PERF_100NSEC_TIMER_INV:
          acc += (1 - std::clamp(v / 100, 0.0, 1.0)) * double(dt);
          break;
        case PERF_COUNTER_TIMER:
          acc += std::clamp(v / 100, 0.0, 1.0) * dt_s * double(freq);
          break;
        case PERF_COUNTER_TIMER_INV:
          acc += (1 - std::clamp(v / 100, 0.0, 1.0)) * dt_s * double(freq);
          break;
        case PERF_RAW_FRACTION:
        case PERF_LARGE_RAW_FRACTION:
          acc = std::clamp(v, 0.0, 100.0) / 100 * cs.base;
          ci.acc[i + 1] = cs.base;
          break;
        case PERF_AVERAGE_TIMER:
        case PERF_AVERAGE_BULK: {
          const double ops = std::floor(cs.ops_per_second * dt_s);
          ci.acc[i + 1] += ops;
          acc += std::max(v, 0.0) * ops * (d.type == PERF_AVERAGE_TIMER ? double(freq) : 1.0);
          break;
        }
        case PERF_ELAPSED_TIME:
          if (acc == 0) acc = double(now) - std::max(v, 0.0) * k100ns;  // started v seconds before the first sample
          break;
        default:
          acc = std::max(v, 0.0);
          break;  // raw counts: the value itself
      }
    }
  }
}

// Processor Information's counters beyond Processor's, from this tick's busy/idle split. Draws
// only from xrng, so the objects of the first catalog keep their values.
void Model::State::step_counter_sets(int64_t dt) {
  const double dt_s = double(dt) / k100ns;
  const uint32_t ms = uint32_t(dt / 10000);
  for (Cpu& c : cpus) {
    const double f = double(c.busy_now) / double(dt);
    const double perf = xrng.uniform(0.97, 1.0);  // no turbo: at most the nominal frequency
    c.low_prio += c.idle_now + c.busy_now / 20;
    c.clock_ints += uint64_t(64 * dt_s);
    c.idle_breaks += uint64_t((200 + 600 * f) * dt_s * xrng.uniform(0.9, 1.1));
    c.util_base += ms;
    c.perf += uint64_t(100.0 * perf * ms);
    c.util += uint64_t(double(c.busy_now) / 100 * perf);
    c.priv_util += uint64_t(double(c.priv - c.last_priv) / 100 * perf);
    c.last_priv = c.priv;
  }
  step_ip_stack(dt);
}

// The protocols share the adapters' packets: 90% IPv4, 10% IPv6 (all IPv4 before Vista); of what IP delivers, TCP 85%,
// UDP 13%, ICMP the rest. Connections follow the segment rate.
void Model::State::step_ip_stack(int64_t dt) {
  const double dt_s = double(dt) / k100ns;
  uint64_t rx = 0, tx = 0;
  for (const Nic& n : nics) rx += n.rucast + n.rnucast, tx += n.sucast + n.snucast;
  const uint64_t drx = rx - std::min(rx, net.last_rx), dtx = tx - std::min(tx, net.last_tx);
  net.last_rx = rx, net.last_tx = tx;
  for (int v = 0; v < 2; ++v) {
    const double share = !net.ipv6 ? (v == 0 ? 1.0 : 0.0) : v == 0 ? 0.9 : 0.1;
    const uint64_t in = uint64_t(double(drx) * share), out = uint64_t(double(dtx) * share);
    const uint64_t deliv = in - in / 200;
    const uint64_t tcp_in = uint64_t(double(deliv) * 0.85), udp_in = uint64_t(double(deliv) * 0.13);
    const uint64_t tcp_out = uint64_t(double(out) * 0.88), udp_out = uint64_t(double(out) * 0.11);
    net.ip_rx[v] += in, net.ip_deliv[v] += deliv, net.ip_tx[v] += out;
    net.tcp_rx[v] += tcp_in, net.tcp_tx[v] += tcp_out;
    net.tcp_retx[v] += uint64_t(double(tcp_out) * xrng.uniform(0.001, 0.01));
    net.udp_rx[v] += udp_in, net.udp_tx[v] += udp_out, net.udp_noport[v] += udp_in / 50;
    net.icmp_rx[v] += deliv - tcp_in - udp_in, net.icmp_tx[v] += out - tcp_out - udp_out;
    const double seg_rate = double(tcp_in + tcp_out) / std::max(dt_s, 1e-9);
    net.estab[v] = uint32_t((5 + seg_rate / 40) * xrng.uniform(0.9, 1.1));
    net.carry[v] += (0.05 + seg_rate / 2000) * dt_s;
    const uint32_t opened = uint32_t(net.carry[v]);
    net.carry[v] -= opened;
    net.active[v] += opened / 3, net.passive[v] += opened - opened / 3;
    net.failures[v] += uint32_t(xrng.chance(0.02)), net.resets[v] += uint32_t(xrng.chance(0.05));
  }
}

}  // namespace perfsim::synth
