// The simulated host: Model's public methods, building the state (init), the tick loop and the
// object writers. The entities move in dynamics.cpp; the state they share is model_state.h.
#include "synth/model.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "perfdata/winperf.h"
#include "synth/model_state.h"

namespace perfsim::synth {

using namespace winperf;

// ---- object templates ----------------------------------------------------------------------

ObjState make_state(const CatalogObject& co) {
  ObjState s;
  s.cat = &co;
  perfdata::Object& o = s.obj;
  o.name_index = co.desc.index;
  o.help_index = co.desc.index + 1;
  o.detail_level = co.desc.detail;
  o.default_counter = co.desc.default_counter;
  o.num_instances = co.desc.multi ? 0 : PERF_NO_INSTANCES;
  uint32_t off = kCounterBlockSize;
  for (const CounterDesc& c : co.desc.counters) {
    perfdata::CounterDef d;
    d.name_index = c.index;
    d.help_index = c.index + 1;
    d.default_scale = c.scale;
    d.detail_level = c.detail;
    d.type = c.type;
    d.size = c.size;
    if (c.size == 8) off = align_up(off, 8);  // 64-bit counters sit on 8-byte boundaries
    d.offset = off;
    off += c.size;
    if (!is_base_type(c.type)) s.pos.emplace(c.index, int32_t(o.counters.size()));  // keeps the first
    o.counters.push_back(d);
  }
  s.data_bytes = off - kCounterBlockSize;
  if (!co.desc.multi) o.counter_block = perfdata::make_counter_block(s.data_bytes);
  o.num_counters = uint32_t(o.counters.size());
  return s;
}

// ---- construction --------------------------------------------------------------------------

Model::Model(const Spec& spec, const Profile& profile, const Catalog& catalog) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.spec = spec;
  s.profile = &profile;
  s.rng = Rng(mix_seed(spec.seed, 0x686f7374));
  s.cpu_sig = Signal(spec.cpu, mix_seed(spec.seed, 1));
  s.mem_sig = Signal(spec.memory, mix_seed(spec.seed, 2));
  s.disk_sig = Signal(spec.disk_iops, mix_seed(spec.seed, 3));
  s.net_sig = Signal(spec.network, mix_seed(spec.seed, 4));
  for (const CatalogObject& co : catalog.objects) {
    s.objects.push_back(make_state(co));
    ObjState& o = s.objects.back();
    if (co.desc.provider == "PerfProc" && catalog.process_v1_disabled) o.enabled = false;
    if (co.custom) s.customs.push_back(Custom{s.objects.size() - 1, {}, 0, 0});
  }
  s.init();
}

Model::~Model() = default;

void Model::State::init() {
  const int64_t interval = int64_t(spec.interval_ms) * 10000;
  now = spec.start_100ns - interval;
  last = now;
  boot = spec.start_100ns - int64_t(spec.uptime_s) * k100ns;
  const double up_s = double(spec.uptime_s);
  cpus.resize(spec.processors);
  for (Cpu& c : cpus) {
    c.idle = uint64_t(up_s * 0.8 * k100ns);
    c.user = uint64_t(up_s * 0.13 * k100ns);
    c.priv = uint64_t(up_s * 0.07 * k100ns);
    c.intr = c.priv / 20, c.dpc = c.priv / 30;
    c.c1 = c.idle / 2, c.c2 = c.idle / 4, c.c3 = c.idle / 8;
    c.interrupts = uint64_t(std::min(up_s * 800, 1e9));
    c.dpcs = uint64_t(std::min(up_s * 80, 1e9));
  }
  Process idle;
  idle.name = "Idle";
  idle.idle = idle.pinned = true;
  idle.start = boot;
  idle.prio = 0;
  idle.ws = idle.ws_init = 8192;
  for (uint32_t k = 0; k < spec.processors; ++k) {
    Thread t;
    t.tid = 0;
    t.start = boot;
    t.prio = 0;
    t.state = 2;
    t.wait = 0;
    idle.threads.push_back(t);
  }
  procs.push_back(idle);
  procs.push_back(make_process("System", boot, std::max<uint32_t>(spec.threads_min, 4) + uint32_t(rng.below(60))));
  procs.back().pid = 4, procs.back().ppid = 0, procs.back().pinned = true;
  for (uint32_t i = 0; i < spec.process_count; ++i) {
    const std::string name = i < spec.process_names.size() ? spec.process_names[i]
                             : spec.process_names.empty()
                                 ? kProcessNames[i % std::size(kProcessNames)]
                                 : spec.process_names[i % spec.process_names.size()];
    const int64_t start = boot + int64_t(rng.below(uint64_t(spec.start_100ns - boot - 60 * k100ns) + 1));
    const uint32_t n = spec.threads_min + uint32_t(rng.below(spec.threads_max - spec.threads_min + 1));
    procs.push_back(make_process(name, i < 8 ? boot + int64_t(i + 1) * 30 * k100ns : start, n));
  }
  double total_share = 0;
  for (size_t i = 0; i < spec.volumes.size(); ++i) {
    Volume v;
    v.name = spec.volumes[i];
    v.disk = uint32_t(i % spec.physical_disks);
    v.share = i == 0 ? 1.0 : 0.5 / double(i);
    total_share += v.share;
    v.size_mb = spec.volume_size_gb * 1024;
    v.free_mb = v.size_mb * rng.uniform(0.2, 0.8);
    v.read_ms = rng.uniform(2, 8);
    v.write_ms = rng.uniform(0.5, 4);
    volumes.push_back(v);
  }
  for (Volume& v : volumes) v.share /= total_share;
  for (size_t i = 0; i < spec.adapters.size(); ++i) nics.push_back(Nic{spec.adapters[i], 1.0 / double(spec.adapters.size())});
  pagefile_mb = std::clamp<double>(double(spec.memory_mb), 1024, 32768);
  if (!profile->host.large_counters) pagefile_mb = std::min(pagefile_mb, 4095.0);
  for (Custom& c : customs) {
    const ObjectSpec& os = *objects[c.state].cat->custom;
    const uint32_t n = std::max<uint32_t>(os.instances.count, 1);
    for (uint32_t i = 0; i < n; ++i) {
      CustomInstance ci;
      ci.name = i < os.instances.names.size() ? os.instances.names[i] : os.instances.prefix + std::to_string(c.serial);
      ++c.serial;
      for (size_t k = 0; k < os.counters.size(); ++k)
        ci.signals.emplace_back(os.counters[k].value, mix_seed(spec.seed, objects[c.state].index(), k * 100003 + c.serial));
      ci.acc.assign(objects[c.state].cat->desc.counters.size(), 0.0);
      c.instances.push_back(std::move(ci));
    }
  }
}

// ---- the tick loop ------------------------------------------------------------------------

ModelClock Model::advance(int64_t now_100ns) {
  State& s = *s_;
  const int64_t dt = std::max<int64_t>(now_100ns - s.now, 1);
  s.last = s.now;
  s.now = now_100ns;
  s.step(dt);
  s.write_all();
  ModelClock clock;
  clock.perf_freq = s.profile->host.perf_freq;
  const int64_t span = s.now - s.boot;
  clock.perf_time = span / k100ns * clock.perf_freq + span % k100ns * clock.perf_freq / k100ns;
  for (ObjState& o : s.objects) {
    if (o.cat->desc.object_timer) {
      o.obj.perf_time = s.now;  // object timer: the 100 ns clock, as Windows' Process/Thread/System
      o.obj.perf_freq = k100ns;
    } else {
      o.obj.perf_time = clock.perf_time;
      o.obj.perf_freq = clock.perf_freq;
    }
  }
  return clock;
}

void Model::State::step(int64_t dt) {
  const double t = double(now - spec.start_100ns) / k100ns;
  if (now > spec.start_100ns) churn(dt);
  step_cpu(dt, t);
  step_processes(dt);
  step_disks(dt, t);
  step_network(dt, t);
  for (Custom& c : customs) step_custom(c, dt, t);
}

void Model::State::write_all() {
  if (procs_dirty) rebuild_process_instances();
  for (ObjState& o : objects) {
    if (o.cat->custom || !o.enabled) continue;
    switch (o.index()) {
      case idx::kSystem: write_system(o); break;
      case idx::kMemory: write_memory(o); break;
      case idx::kProcessor: write_processor(o); break;
      case idx::kProcess: write_process(o); break;
      case idx::kThread: write_thread(o); break;
      case idx::kPhysicalDisk: write_disks(o, false); break;
      case idx::kLogicalDisk: write_disks(o, true); break;
      case idx::kNetworkInterface: write_network(o); break;
      case idx::kPagingFile: write_paging(o); break;
      default: break;
    }
  }
  write_costly(find(idx::kProcessAddressSpace), find(idx::kImage), find(idx::kThreadDetails));
  for (Custom& c : customs) write_custom(c, now - last);
}

// ---- lending objects to a query ------------------------------------------------------------

void Model::emit(bool costly, perfdata::DataBlock& block) {
  for (ObjState& o : s_->objects)
    if (o.enabled && o.cat->desc.costly == costly) block.objects.push_back(std::move(o.obj));
}

void Model::restore(bool costly, perfdata::DataBlock& block) {
  size_t k = 0;
  for (ObjState& o : s_->objects)
    if (o.enabled && o.cat->desc.costly == costly && k < block.objects.size()) o.obj = std::move(block.objects[k++]);
  block.objects.clear();
}

namespace {

size_t thread_total(const std::vector<Process>& procs) {
  size_t n = 0;
  for (const Process& p : procs) n += p.threads.size();
  return n;
}

}  // namespace

void Model::State::write_system(ObjState& o) {
  Bytes& b = o.obj.counter_block;
  o.set(b, idx::kFileReadOps, file_ops[0]);
  o.set(b, idx::kFileWriteOps, file_ops[1]);
  o.set(b, idx::kFileControlOps, file_ops[2]);
  o.set(b, idx::kFileReadBytes, file_bytes[0]);
  o.set(b, idx::kFileWriteBytes, file_bytes[1]);
  o.set(b, idx::kFileControlBytes, file_bytes[2]);
  o.set(b, idx::kContextSwitches, cswitch);
  o.set(b, idx::kSystemCalls, syscalls);
  o.set(b, idx::kFileDataOps, file_ops[0] + file_ops[1]);
  o.set(b, idx::kSystemUpTime, uint64_t(boot));
  double busy = 0;
  for (const Cpu& c : cpus) busy += double(c.busy_now);
  const double load = busy / (double(now - last) * double(cpus.size()));
  o.set(b, idx::kQueueLength, rng.below(1 + uint64_t(load > 0.8 ? cpus.size() * 4 : 2)));
  o.set(b, idx::kProcesses, procs.size());
  o.set(b, idx::kThreads, thread_total(procs));
  o.set(b, idx::kExceptions, exceptions);
  o.set_pair(b, idx::kRegistryQuota, 12000 + rng.below(200), 100000);
}

void Model::State::write_memory(ObjState& o) {
  Bytes& b = o.obj.counter_block;
  const double dt_s = double(now - last) / k100ns;
  const double used = std::clamp(mem_sig.at(double(now - spec.start_100ns) / k100ns) / 100, 0.0, 1.0);
  const uint64_t total = spec.memory_mb * kMiB;
  const uint64_t avail = uint64_t(double(total) * (1 - used));
  pagefile_used = pagefile_mb * std::clamp(0.05 + 0.4 * std::max(0.0, used - 0.5) + 0.01 * rng.normal(), 0.01, 1.0);
  pagefile_peak = std::max(pagefile_peak, pagefile_used);
  const uint64_t limit = total + uint64_t(pagefile_mb * kMiB);
  const uint64_t committed = std::min<uint64_t>(uint64_t(double(total) * used * 1.1) + uint64_t(pagefile_used * kMiB), limit);
  const double hard = (2 + 400 * std::max(0.0, used - 0.75)) * dt_s;
  page_reads += uint64_t(hard), pages_input += uint64_t(hard * 4);
  page_writes += uint64_t(hard / 2), pages_output += uint64_t(hard * 2);
  write_copies += uint64_t(dt_s * rng.uniform(5, 50)), transition += uint64_t(dt_s * rng.uniform(50, 500));
  cache_faults += uint64_t(dt_s * rng.uniform(10, 200)), demand_zero += uint64_t(dt_s * rng.uniform(100, 1000));
  const uint64_t cache = uint64_t(double(avail) * 0.2);
  cache_peak = std::max(cache_peak, cache);
  double pool_p = 0, pool_np = 0;
  for (const Process& p : procs) pool_p += p.pool_p, pool_np += p.pool_np;
  o.set(b, idx::kPageFaults, faults);
  o.set(b, idx::kAvailableBytes, cap(avail, o, idx::kAvailableBytes));
  o.set(b, idx::kCommittedBytes, cap(committed, o, idx::kCommittedBytes));
  o.set(b, idx::kCommitLimit, cap(limit, o, idx::kCommitLimit));
  o.set(b, idx::kWriteCopies, write_copies);
  o.set(b, idx::kTransitionFaults, transition);
  o.set(b, idx::kCacheFaults, cache_faults);
  o.set(b, idx::kDemandZeroFaults, demand_zero);
  o.set(b, idx::kPages, pages_input + pages_output);
  o.set(b, idx::kPagesInput, pages_input);
  o.set(b, idx::kPageReads, page_reads);
  o.set(b, idx::kPagesOutput, pages_output);
  o.set(b, idx::kPageWrites, page_writes);
  o.set(b, idx::kPoolPaged, cap(uint64_t(pool_p * 3), o, idx::kPoolPaged));
  o.set(b, idx::kPoolNonpaged, cap(uint64_t(pool_np * 3), o, idx::kPoolNonpaged));
  o.set(b, idx::kPoolPagedAllocs, uint64_t(pool_p / 200));
  o.set(b, idx::kPoolNonpagedAllocs, uint64_t(pool_np / 150));
  o.set(b, idx::kFreePtes, 33000000 + rng.below(10000));
  o.set(b, idx::kCacheBytes, cap(cache, o, idx::kCacheBytes));
  o.set(b, idx::kCacheBytesPeak, cap(cache_peak, o, idx::kCacheBytesPeak));
  o.set(b, idx::kCommittedInUse, committed / 4096);  // pages, so the ratio fits DWORDs
  o.set_base(b, idx::kCommittedInUse, limit / 4096);
  o.set(b, idx::kAvailableKBytes, cap(avail / 1024, o, idx::kAvailableKBytes));
  o.set(b, idx::kAvailableMBytes, avail / kMiB);
}

void Model::State::write_paging(ObjState& o) {
  if (o.obj.instances.empty()) {
    o.add_instance("\\??\\" + (volumes.empty() ? std::string("C:") : volumes[0].name) + "\\pagefile.sys");
    o.add_instance("_Total");
  }
  const uint64_t pages = uint64_t(pagefile_mb * 256);  // 4 KB pages
  for (size_t i = 0; i < 2; ++i) {
    Bytes& b = o.block(i);
    o.set_pair(b, idx::kUsage, uint64_t(pagefile_used * 256), pages);
    o.set_pair(b, idx::kUsagePeak, uint64_t(pagefile_peak * 256), pages);
  }
}

void Model::State::write_processor(ObjState& o) {
  if (o.obj.instances.size() != cpus.size() + 1) {
    o.obj.instances.clear();
    for (size_t i = 0; i < cpus.size(); ++i) o.add_instance(std::to_string(i));
    o.add_instance("_Total");
  }
  // _Total holds the average over processors, so the same formula applies to it.
  Cpu total;
  const uint64_t n = cpus.size();
  for (size_t i = 0; i <= cpus.size(); ++i) {
    const Cpu& c = i < cpus.size() ? cpus[i] : total;
    Bytes& b = o.block(i);
    const uint64_t div = i < cpus.size() ? 1 : n;
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
    if (i < cpus.size()) {
      total.idle += c.idle, total.user += c.user, total.priv += c.priv, total.interrupts += c.interrupts;
      total.dpc += c.dpc, total.intr += c.intr, total.dpcs += c.dpcs, total.dpc_rate += c.dpc_rate;
      total.c1 += c.c1, total.c2 += c.c2, total.c3 += c.c3, total.c1t += c.c1t, total.c2t += c.c2t, total.c3t += c.c3t;
    }
  }
}

void Model::State::rebuild_process_instances() {
  ObjState* proc = find(idx::kProcess);
  ObjState* thread = find(idx::kThread);
  ObjState* pas = find(idx::kProcessAddressSpace);
  ObjState* image = find(idx::kImage);
  ObjState* details = find(idx::kThreadDetails);
  for (ObjState* o : {proc, thread, pas, image, details})
    if (o) o->obj.instances.clear();
  const uint32_t total_index = uint32_t(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) {
    const Process& p = procs[i];
    if (proc) proc->add_instance(p.name);
    if (pas) pas->add_instance(p.name);
    for (size_t k = 0; k < p.threads.size(); ++k) {
      if (thread) thread->add_instance(std::to_string(k), idx::kProcess, uint32_t(i));
      if (details) details->add_instance(std::to_string(k), idx::kProcessAddressSpace, uint32_t(i));
    }
    if (image)
      for (const std::string& im : p.images) image->add_instance(im, idx::kProcessAddressSpace, uint32_t(i));
  }
  if (proc) proc->add_instance("_Total");
  if (pas) pas->add_instance("_Total");
  if (thread) thread->add_instance("_Total", idx::kProcess, total_index);
  procs_dirty = false;
}

void Model::State::write_process(ObjState& o) {
  Process total;
  total.name = "_Total";
  total.start = boot;
  double ws = 0, vb = 0, pool_p = 0, pool_np = 0, handles = 0;
  size_t threads = 0;
  for (size_t i = 0; i <= procs.size(); ++i) {
    const bool is_total = i == procs.size();
    const Process& p = is_total ? total : procs[i];
    const double pws = is_total ? ws : p.ws, pvb = is_total ? vb : p.vb;
    Bytes& b = o.block(i);
    o.set(b, idx::kProcessorTime, p.user + p.priv);
    o.set(b, idx::kUserTime, p.user);
    o.set(b, idx::kPrivilegedTime, p.priv);
    o.set(b, idx::kVirtualBytesPeak, cap(std::max(uint64_t(pvb), is_total ? total.vb_peak : p.vb_peak), o, idx::kVirtualBytesPeak));
    o.set(b, idx::kVirtualBytes, cap(uint64_t(pvb), o, idx::kVirtualBytes));
    o.set(b, idx::kPageFaults, p.faults);
    o.set(b, idx::kWorkingSetPeak, cap(std::max(uint64_t(pws), is_total ? total.ws_peak : p.ws_peak), o, idx::kWorkingSetPeak));
    o.set(b, idx::kWorkingSet, cap(uint64_t(pws), o, idx::kWorkingSet));
    o.set(b, idx::kPageFileBytesPeak, cap(std::max(uint64_t(pws * 0.8), is_total ? total.pf_peak : p.pf_peak), o, idx::kPageFileBytesPeak));
    o.set(b, idx::kPageFileBytes, cap(uint64_t(pws * 0.8), o, idx::kPageFileBytes));
    o.set(b, idx::kPrivateBytes, cap(uint64_t(pws * 0.8), o, idx::kPrivateBytes));
    o.set(b, idx::kThreadCount, is_total ? threads : p.threads.size());
    o.set(b, idx::kPriorityBase, p.prio);
    o.set(b, idx::kElapsedTime, uint64_t(p.start));
    o.set(b, idx::kIdProcess, p.pid);
    o.set(b, idx::kCreatingProcessId, p.ppid);
    o.set(b, idx::kPoolPaged, uint64_t(is_total ? pool_p : p.pool_p));
    o.set(b, idx::kPoolNonpaged, uint64_t(is_total ? pool_np : p.pool_np));
    o.set(b, idx::kHandleCount, uint64_t(is_total ? handles : p.handles));
    o.set(b, idx::kIoReadOps, p.io_ops[0]);
    o.set(b, idx::kIoWriteOps, p.io_ops[1]);
    o.set(b, idx::kIoDataOps, p.io_ops[0] + p.io_ops[1]);
    o.set(b, idx::kIoOtherOps, p.io_ops[2]);
    o.set(b, idx::kIoReadBytes, p.io_bytes[0]);
    o.set(b, idx::kIoWriteBytes, p.io_bytes[1]);
    o.set(b, idx::kIoDataBytes, p.io_bytes[0] + p.io_bytes[1]);
    o.set(b, idx::kIoOtherBytes, p.io_bytes[2]);
    o.set(b, idx::kWorkingSetPrivate, uint64_t(pws * 0.6));
    if (is_total) break;
    total.user += p.user, total.priv += p.priv, total.faults += p.faults;
    total.vb_peak += p.vb_peak, total.ws_peak += p.ws_peak, total.pf_peak += p.pf_peak;
    for (int k = 0; k < 3; ++k) total.io_ops[k] += p.io_ops[k], total.io_bytes[k] += p.io_bytes[k];
    ws += p.ws, vb += p.vb, pool_p += p.pool_p, pool_np += p.pool_np, handles += p.handles;
    threads += p.threads.size();
  }
}

void Model::State::write_thread(ObjState& o) {
  size_t at = 0;
  Thread total;
  for (const Process& p : procs) {
    for (const Thread& t : p.threads) {
      Bytes& b = o.block(at++);
      o.set(b, idx::kContextSwitches, t.cswitch);
      o.set(b, idx::kProcessorTime, t.user + t.priv);
      o.set(b, idx::kUserTime, t.user);
      o.set(b, idx::kPrivilegedTime, t.priv);
      o.set(b, idx::kElapsedTime, uint64_t(t.start));
      o.set(b, idx::kPriorityCurrent, t.prio);
      o.set(b, idx::kPriorityBase, p.prio);
      o.set(b, idx::kStartAddress, t.start_addr);
      o.set(b, idx::kThreadState, t.state);
      o.set(b, idx::kWaitReason, t.wait);
      o.set(b, idx::kIdProcess, p.pid);
      o.set(b, idx::kIdThread, t.tid);
      total.cswitch += t.cswitch, total.user += t.user, total.priv += t.priv;
    }
  }
  Bytes& b = o.block(at);
  o.set(b, idx::kContextSwitches, total.cswitch);
  o.set(b, idx::kProcessorTime, total.user + total.priv);
  o.set(b, idx::kUserTime, total.user);
  o.set(b, idx::kPrivilegedTime, total.priv);
  o.set(b, idx::kElapsedTime, uint64_t(boot));
}

void Model::State::write_costly(ObjState* pas, ObjState* image, ObjState* details) {
  const bool large = profile->host.large_counters;
  const uint64_t space = large ? (128ull << 40) : (2ull << 30);  // user address space
  uint64_t at_image = 0, at_detail = 0;
  uint64_t tot[4] = {};
  for (size_t i = 0; i <= procs.size(); ++i) {
    const bool is_total = i == procs.size();
    if (pas) {
      Bytes& b = pas->block(i);
      uint64_t v[4];
      if (is_total) {
        std::copy(std::begin(tot), std::end(tot), v);
      } else {
        const Process& p = procs[i];
        const uint64_t reserved = std::min<uint64_t>(uint64_t(p.vb), space - 1);
        const uint64_t image_reserved = std::min<uint64_t>(uint64_t(p.images.size()) * 0x200000, reserved);
        v[0] = space - reserved, v[1] = reserved, v[2] = 0x10000, v[3] = image_reserved;
        for (int k = 0; k < 4; ++k) tot[k] += v[k];
      }
      pas->set(b, idx::kBytesFree, cap(v[0], *pas, idx::kBytesFree));
      pas->set(b, idx::kBytesReserved, cap(v[1], *pas, idx::kBytesReserved));
      pas->set(b, idx::kBytesImageFree, v[2]);
      pas->set(b, idx::kBytesImageReserved, cap(v[3], *pas, idx::kBytesImageReserved));
      pas->set(b, idx::kIdProcess, is_total ? 0 : procs[i].pid);
    }
    if (is_total) break;
    const Process& p = procs[i];
    if (image)
      for (size_t k = 0; k < p.images.size(); ++k) {
        Bytes& b = image->block(at_image++);
        const uint64_t sz = 0x20000ull << (k % 5);
        for (uint32_t c = idx::kImageSpaceNoAccess; c <= idx::kImageSpaceExecWriteCopy; c += 2) image->set(b, c, 0);
        image->set(b, idx::kImageSpaceReadOnly, sz / 2);
        image->set(b, idx::kImageSpaceReadWrite, sz / 8);
        image->set(b, idx::kImageSpaceWriteCopy, sz / 16);
        image->set(b, idx::kImageSpaceExecReadOnly, sz / 4);
      }
    if (details)
      for (const Thread& t : p.threads) details->set(details->block(at_detail++), idx::kUserPc, t.user_pc);
  }
}

namespace {

void write_disk(const ObjState& o, Bytes& b, const DiskSums& d, uint64_t stamp) {
  o.set_pair(b, idx::kFreeSpace, uint64_t(d.free_mb), uint64_t(d.size_mb));
  o.set(b, idx::kFreeMegabytes, uint64_t(d.free_mb));
  o.set(b, idx::kCurrentDiskQueue, d.cur_queue);
  o.set_pair(b, idx::kDiskTime, d.busy, stamp);
  o.set(b, idx::kAvgDiskQueue, d.queue);
  o.set_pair(b, idx::kDiskReadTime, d.rbusy, stamp);
  o.set(b, idx::kAvgDiskReadQueue, d.rqueue);
  o.set_pair(b, idx::kDiskWriteTime, d.wbusy, stamp);
  o.set(b, idx::kAvgDiskWriteQueue, d.wqueue);
  o.set_pair(b, idx::kAvgSecTransfer, d.rticks + d.wticks, d.reads + d.writes);
  o.set_pair(b, idx::kAvgSecRead, d.rticks, d.reads);
  o.set_pair(b, idx::kAvgSecWrite, d.wticks, d.writes);
  o.set(b, idx::kTransfers, d.reads + d.writes);
  o.set(b, idx::kReads, d.reads);
  o.set(b, idx::kWrites, d.writes);
  o.set(b, idx::kDiskBytes, d.rbytes + d.wbytes);
  o.set(b, idx::kDiskReadBytes, d.rbytes);
  o.set(b, idx::kDiskWriteBytes, d.wbytes);
  o.set_pair(b, idx::kAvgBytesTransfer, d.rbytes + d.wbytes, d.reads + d.writes);
  o.set_pair(b, idx::kAvgBytesRead, d.rbytes, d.reads);
  o.set_pair(b, idx::kAvgBytesWrite, d.wbytes, d.writes);
  o.set_pair(b, idx::kDiskIdleTime, d.idle, stamp);
  o.set(b, idx::kSplitIo, d.split);
}

}  // namespace

void Model::State::write_disks(ObjState& o, bool logical) {
  // Instances: one per volume (LogicalDisk) or per physical disk "N C: D:" (PhysicalDisk), then _Total.
  std::vector<DiskSums> sums;
  std::vector<std::string> names;
  if (logical) {
    for (const Volume& v : volumes) {
      sums.emplace_back().add(v);
      names.push_back(v.name);
    }
  } else {
    for (uint32_t d = 0; d < spec.physical_disks; ++d) {
      DiskSums s;
      std::string name = std::to_string(d);
      for (const Volume& v : volumes)
        if (v.disk == d) s.add(v), name += " " + v.name;
      if (s.busy == 0 && s.idle == 0) s.idle = uint64_t(now - boot);  // a disk without volumes idles
      sums.push_back(s);
      names.push_back(name);
    }
  }
  DiskSums total;
  for (const DiskSums& s : sums) total.add(s);
  // _Total's busy and idle times are averages, so its percentages stay within 0..100.
  const uint64_t n = std::max<size_t>(sums.size(), 1);
  total.busy /= n, total.rbusy /= n, total.wbusy /= n, total.idle /= n;
  sums.push_back(total);
  names.push_back("_Total");
  if (o.obj.instances.size() != names.size()) {
    o.obj.instances.clear();
    for (const std::string& name : names) o.add_instance(name);
  }
  for (size_t i = 0; i < sums.size(); ++i) write_disk(o, o.block(i), sums[i], uint64_t(now));
}

void Model::State::write_network(ObjState& o) {
  if (o.obj.instances.size() != nics.size()) {
    o.obj.instances.clear();
    for (const Nic& n : nics) o.add_instance(n.name);
  }
  for (size_t i = 0; i < nics.size(); ++i) {
    const Nic& n = nics[i];
    Bytes& b = o.block(i);
    o.set(b, idx::kBytesTotal, n.rbytes + n.sbytes);
    o.set(b, idx::kPackets, n.rucast + n.rnucast + n.sucast + n.snucast);
    o.set(b, idx::kPacketsReceived, n.rucast + n.rnucast);
    o.set(b, idx::kPacketsSent, n.sucast + n.snucast);
    o.set(b, idx::kBandwidth, spec.bandwidth_bps);
    o.set(b, idx::kBytesReceived, n.rbytes);
    o.set(b, idx::kRecvUnicast, n.rucast);
    o.set(b, idx::kRecvNonUnicast, n.rnucast);
    o.set(b, idx::kRecvDiscarded, n.rdiscard);
    o.set(b, idx::kRecvErrors, n.rerrors);
    o.set(b, idx::kRecvUnknown, 0);
    o.set(b, idx::kBytesSent, n.sbytes);
    o.set(b, idx::kSentUnicast, n.sucast);
    o.set(b, idx::kSentNonUnicast, n.snucast);
    o.set(b, idx::kOutDiscarded, 0);
    o.set(b, idx::kOutErrors, 0);
    o.set(b, idx::kOutputQueue, 0);
  }
}

void Model::State::write_custom(Custom& c, int64_t) {
  ObjState& o = objects[c.state];
  const CatalogObject& co = *o.cat;
  const InstancesSpec& is = co.custom->instances;
  const bool multi = co.desc.multi;
  if (multi && o.obj.instances.size() != c.instances.size() + (is.total ? 1 : 0)) {
    o.obj.instances.clear();
    for (const CustomInstance& ci : c.instances) o.add_instance(ci.name);
    if (is.total) o.add_instance("_Total");
  }
  std::vector<double> total(co.desc.counters.size(), 0.0);
  auto write = [&](Bytes& b, const std::vector<double>& acc) {
    for (size_t i = 0; i < co.desc.counters.size(); ++i) {
      double v = acc[i];
      if (co.desc.counters[i].size == 4) v = std::fmod(std::max(v, 0.0), 4294967296.0);  // DWORDs wrap
      perfdata::write_counter(b, o.obj.counters[i], uint64_t(std::max(v, 0.0)));
    }
  };
  for (size_t k = 0; k < c.instances.size(); ++k) {
    write(multi ? o.block(k) : o.obj.counter_block, c.instances[k].acc);
    for (size_t i = 0; i < total.size(); ++i) total[i] += c.instances[k].acc[i];
    if (!multi) break;
  }
  if (multi && is.total) {
    for (size_t i = 0; i < total.size(); ++i)
      if (co.desc.counters[i].type == PERF_ELAPSED_TIME) total[i] = c.instances.empty() ? double(now) : c.instances[0].acc[i];
    write(o.block(c.instances.size()), total);
  }
}

}  // namespace perfsim::synth
