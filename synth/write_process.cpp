// Writers of the PerfProc objects: Process and Thread (Global) and the costly Process Address
// Space, Image and Thread Details, whose instances all follow the process list.
#include "synth/model_state.h"

#include <algorithm>
#include <iterator>

namespace perfsim::synth {

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
  for (size_t i = 0; i < procs.size(); ++i) {
    const Process& p = procs[i];
    Bytes& b = o.block(i);
    o.set(b, idx::kProcessorTime, p.user + p.priv);
    o.set(b, idx::kUserTime, p.user);
    o.set(b, idx::kPrivilegedTime, p.priv);
    o.set(b, idx::kVirtualBytesPeak, cap(std::max(uint64_t(p.vb), p.vb_peak), o, idx::kVirtualBytesPeak));
    o.set(b, idx::kVirtualBytes, cap(uint64_t(p.vb), o, idx::kVirtualBytes));
    o.set(b, idx::kPageFaults, p.faults);
    o.set(b, idx::kWorkingSetPeak, cap(std::max(uint64_t(p.ws), p.ws_peak), o, idx::kWorkingSetPeak));
    o.set(b, idx::kWorkingSet, cap(uint64_t(p.ws), o, idx::kWorkingSet));
    o.set(b, idx::kPageFileBytesPeak, cap(std::max(private_bytes(p), p.pf_peak), o, idx::kPageFileBytesPeak));
    o.set(b, idx::kPageFileBytes, cap(private_bytes(p), o, idx::kPageFileBytes));
    o.set(b, idx::kPrivateBytes, cap(private_bytes(p), o, idx::kPrivateBytes));
    o.set(b, idx::kThreadCount, p.threads.size());
    o.set(b, idx::kPriorityBase, p.prio);
    o.set(b, idx::kElapsedTime, uint64_t(p.start));
    o.set(b, idx::kIdProcess, p.pid);
    o.set(b, idx::kCreatingProcessId, p.ppid);
    o.set(b, idx::kPoolPaged, uint64_t(p.pool_p));
    o.set(b, idx::kPoolNonpaged, uint64_t(p.pool_np));
    o.set(b, idx::kHandleCount, uint64_t(p.handles));
    o.set(b, idx::kIoReadOps, p.io_ops[0]);
    o.set(b, idx::kIoWriteOps, p.io_ops[1]);
    o.set(b, idx::kIoDataOps, p.io_ops[0] + p.io_ops[1]);
    o.set(b, idx::kIoOtherOps, p.io_ops[2]);
    o.set(b, idx::kIoReadBytes, p.io_bytes[0]);
    o.set(b, idx::kIoWriteBytes, p.io_bytes[1]);
    o.set(b, idx::kIoDataBytes, p.io_bytes[0] + p.io_bytes[1]);
    o.set(b, idx::kIoOtherBytes, p.io_bytes[2]);
    o.set(b, idx::kWorkingSetPrivate, uint64_t(p.ws * 0.6));
  }
  write_process_total(o);
}

// _Total is its instances' sum, counter by counter, as written (a 4-byte counter wraps as its
// type does); what no sum means (IDs, priority) is 0, and its Elapsed Time the boot.
void Model::State::write_process_total(ObjState& o) {
  Bytes& t = o.block(procs.size());
  for (const perfdata::CounterDef& d : o.obj.counters) {
    uint64_t sum = 0;
    for (size_t i = 0; i < procs.size(); ++i) sum += perfdata::read_counter(o.block(i), d);
    switch (d.name_index) {
      case idx::kIdProcess:
      case idx::kCreatingProcessId:
      case idx::kPriorityBase:
        sum = 0;
        break;
      case idx::kElapsedTime:
        sum = uint64_t(boot);
        break;
      default:
        break;
    }
    perfdata::write_counter(t, d, sum);
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

}  // namespace perfsim::synth

namespace perfsim::synth {
namespace {

// The interactive session's processes (session 1 since Vista moved services to session 0);
// everything else, Idle and System included, runs in session 0, "Services".
bool in_console(const std::string& name) {
  static const char* const kConsole[] = {"explorer", "taskhostw", "dwm", "winlogon",
                                         "LogonUI",  "conhost",   "cmd", "powershell"};
  return std::any_of(std::begin(kConsole), std::end(kConsole), [&](const char* c) { return name == c; });
}

// The processes WMI runs its providers in belong to this named job (illustrative: the one job a
// plain server shows; hosts without a provider host running show Job Object with no instances).
constexpr const char* kWmiJob = "WmiProviderSubSystemHostJob";

}  // namespace

// Terminal Services Session: "Services" (session 0) and "Console", each the sum of its
// processes' Process counters, so the two add up to Process(_Total). The console is local, so no
// protocol traffic.
void Model::State::write_sessions(ObjState& o) {
  if (o.obj.instances.empty()) {
    o.add_instance("Services");
    o.add_instance("Console");
  }
  for (size_t s = 0; s < 2; ++s) {
    uint64_t user = 0, priv = 0, page_faults = 0, threads = 0, ws_peak = 0, vb_peak = 0, pf_peak = 0, commit = 0;
    double ws = 0, vb = 0, pool_p = 0, pool_np = 0, handles = 0;
    for (const Process& p : procs) {
      if (in_console(p.name) != (s == 1)) continue;
      user += p.user, priv += p.priv, page_faults += p.faults, threads += p.threads.size();
      ws_peak += std::max(p.ws_peak, uint64_t(p.ws)), vb_peak += std::max(p.vb_peak, uint64_t(p.vb));
      pf_peak += std::max(p.pf_peak, private_bytes(p)), commit += private_bytes(p);
      ws += p.ws, vb += p.vb, pool_p += p.pool_p, pool_np += p.pool_np, handles += p.handles;
    }
    Bytes& b = o.block(s);
    o.set(b, o.idx("% Processor Time"), user + priv);
    o.set(b, o.idx("% User Time"), user);
    o.set(b, o.idx("% Privileged Time"), priv);
    o.set(b, o.idx("Thread Count"), threads);
    o.set(b, o.idx("Handle Count"), uint64_t(handles));
    o.set(b, o.idx("Page Faults/sec"), page_faults);
    o.set(b, o.idx("Working Set"), uint64_t(ws));
    o.set(b, o.idx("Working Set Peak"), ws_peak);
    o.set(b, o.idx("Virtual Bytes"), uint64_t(vb));
    o.set(b, o.idx("Virtual Bytes Peak"), vb_peak);
    o.set(b, o.idx("Private Bytes"), commit);
    o.set(b, o.idx("Page File Bytes"), commit);
    o.set(b, o.idx("Page File Bytes Peak"), pf_peak);
    o.set(b, o.idx("Pool Paged Bytes"), uint64_t(pool_p));
    o.set(b, o.idx("Pool Nonpaged Bytes"), uint64_t(pool_np));
  }
}

// Job Object: the WMI provider hosts' job while any WmiPrvSE runs; no instance otherwise. The
// job's times are its processes' (this period = since the job began: no limits are set).
void Model::State::write_jobs(ObjState& o) {
  uint64_t user = 0, priv = 0, page_faults = 0, members = 0;
  for (const Process& p : procs)
    if (p.name == "WmiPrvSE") user += p.user, priv += p.priv, page_faults += p.faults, ++members;
  if ((members > 0) != !o.obj.instances.empty()) {
    o.obj.instances.clear();
    if (members > 0) o.add_instance(kWmiJob);
  }
  if (members == 0) return;
  Bytes& b = o.block(0);
  constexpr uint64_t k100nsPerMs = 10000;
  o.set(b, o.idx("Current % Processor Time"), user + priv);
  o.set(b, o.idx("Current % User Mode Time"), user);
  o.set(b, o.idx("Current % Kernel Mode Time"), priv);
  for (const char* period : {"This Period mSec - ", "Total mSec - "}) {
    o.set(b, o.idx(std::string(period) + "Processor"), (user + priv) / k100nsPerMs);
    o.set(b, o.idx(std::string(period) + "User Mode"), user / k100nsPerMs);
    o.set(b, o.idx(std::string(period) + "Kernel Mode"), priv / k100nsPerMs);
  }
  o.set(b, o.idx("Pages/Sec"), page_faults);
  o.set(b, o.idx("Process Count - Total"), members);
  o.set(b, o.idx("Process Count - Active"), members);
  o.set(b, o.idx("Process Count - Terminated"), 0);
}

}  // namespace perfsim::synth
