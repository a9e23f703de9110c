// Writers of the OS-wide objects (PerfOS): System, Memory, Paging File, Objects. System's rates are the
// processes' sums; Memory draws the displayed load and keeps the paging accumulators.
#include "synth/model_state.h"

#include <algorithm>
#include <cmath>

namespace perfsim::synth {

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
  pagefile_used = pagefile_mb * std::clamp(0.05 + 0.4 * std::max(0.0, used - 0.5) + 0.01 * rng.normal(), 0.01, 1.0);
  pagefile_peak = std::max(pagefile_peak, pagefile_used);
  const uint64_t limit = total + uint64_t(pagefile_mb * kMiB);
  // The processes' memory is part of the host's: their working sets are in use, their private
  // bytes committed (Process counters, write_process).
  double ws = 0, priv = 0;
  for (const Process& p : procs) ws += p.ws, priv += double(private_bytes(p));
  const uint64_t avail = std::min(uint64_t(double(total) * (1 - used)), total - std::min(total, uint64_t(ws * 1.1)));
  const uint64_t committed = std::min<uint64_t>(
      std::max(uint64_t(double(total) * used * 1.1) + uint64_t(pagefile_used * kMiB), uint64_t(priv * 1.2)), limit);
  available = avail;
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

// Objects: Processes and Threads are System's; the other kernel objects follow the open handles.
void Model::State::write_objects(ObjState& o) {
  Bytes& b = o.obj.counter_block;
  double handles = 0;
  for (const Process& p : procs) handles += p.handles;
  o.set(b, idx::kProcesses, procs.size());
  o.set(b, idx::kThreads, thread_total(procs));
  o.set(b, idx::kEvents, uint64_t(handles * 0.30));
  o.set(b, idx::kSemaphores, uint64_t(handles * 0.04));
  o.set(b, idx::kMutexes, uint64_t(handles * 0.01));
  o.set(b, idx::kSections, uint64_t(handles * 0.08));
}

}  // namespace perfsim::synth
