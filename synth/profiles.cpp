// Profiles and the standard objects. Title indices and names are those of the English (009) table
// of Windows (Perflib\009\Counter); help texts are short paraphrases written for perfsim.
#include "synth/profiles.h"

#include "perfdata/winperf.h"

namespace perfsim::synth {
namespace {

using namespace winperf;

std::vector<Profile> make_profiles() {
  std::vector<Profile> v;
  for (const windows::OsProfile& os : windows::os_profiles()) v.push_back({&os, os.synth});
  return v;
}

const std::vector<Profile>& profiles() {
  static const std::vector<Profile> v = make_profiles();
  return v;
}

CounterDesc c(uint32_t index, uint32_t type, uint32_t detail = PERF_DETAIL_NOVICE, int32_t scale = 0) {
  return CounterDesc{index, type, size_for(type), detail, scale};
}

// A counter followed by its base, both under the counter's title index (as Windows lists them).
void pair(std::vector<CounterDesc>& v, uint32_t index, uint32_t type, uint32_t base_type,
          uint32_t detail = PERF_DETAIL_NOVICE, int32_t scale = 0) {
  v.push_back(c(index, type, detail, scale));
  v.push_back(c(index, base_type, detail, scale));
}

ObjectDesc system_object(const Profile& p) {
  ObjectDesc o{idx::kSystem, "PerfOS", false, false, true, PERF_DETAIL_NOVICE, 0, {}};
  auto& v = o.counters;
  for (uint32_t i : {idx::kFileReadOps, idx::kFileWriteOps, idx::kFileControlOps})
    v.push_back(c(i, PERF_COUNTER_COUNTER));
  for (uint32_t i : {idx::kFileReadBytes, idx::kFileWriteBytes, idx::kFileControlBytes})
    v.push_back(c(i, PERF_COUNTER_BULK_COUNT, PERF_DETAIL_ADVANCED));
  v.push_back(c(idx::kContextSwitches, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kSystemCalls, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kFileDataOps, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kSystemUpTime, PERF_ELAPSED_TIME));
  v.push_back(c(idx::kQueueLength, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kProcesses, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kThreads, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kExceptions, PERF_COUNTER_COUNTER, PERF_DETAIL_WIZARD));
  pair(v, idx::kRegistryQuota, PERF_RAW_FRACTION, PERF_RAW_BASE, PERF_DETAIL_ADVANCED);
  (void)p;
  return o;
}

}  // namespace

// Memory's and Process's byte counters are 64-bit from Windows 2000 on, 32-bit hosts included.
// Memory: Microsoft KB 262330 ("Memory performance counters data size on Windows 2000 and Windows
// XP": Available Bytes, Committed Bytes, Commit Limit, the pool, cache and system code/driver bytes
// became 64-bit LARGE_INTEGER with PERF_SIZE_LARGE; NT 4.0 and earlier DWORD) and
// Win32_PerfRawData_PerfOS_Memory (aa394314: Available KBytes and MBytes uint64 too). Process: a
// real Windows 11 block (netdata apps_os_windows.c) and Win32_PerfRawData_PerfProc_Process
// (aa394323, XP/2003 on), and only that width lets nmap's definition-order reader read Windows
// 2000's and 2003's PIDs right (perfdata/layout.cpp); NT 4.0's Process: no evidence.
bool large_byte_counters(const Profile& p) {
  return p.host.large_counters || p.os->major * 100 + p.os->minor >= os_version::k2000;
}

namespace {

ObjectDesc memory_object(const Profile& p) {
  const uint32_t size_type = large_byte_counters(p) ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_RAWCOUNT;
  ObjectDesc o{idx::kMemory, "PerfOS", false, false, false, PERF_DETAIL_NOVICE, 0, {}};
  auto& v = o.counters;
  v.push_back(c(idx::kPageFaults, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kAvailableBytes, size_type));
  v.push_back(c(idx::kCommittedBytes, size_type));
  v.push_back(c(idx::kCommitLimit, size_type));
  for (uint32_t i : {idx::kWriteCopies, idx::kTransitionFaults, idx::kCacheFaults, idx::kDemandZeroFaults, idx::kPages,
                     idx::kPagesInput, idx::kPageReads, idx::kPagesOutput, idx::kPageWrites})
    v.push_back(c(i, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kPoolPaged, size_type));
  v.push_back(c(idx::kPoolNonpaged, size_type));
  v.push_back(c(idx::kPoolPagedAllocs, PERF_COUNTER_RAWCOUNT, PERF_DETAIL_ADVANCED));
  v.push_back(c(idx::kPoolNonpagedAllocs, PERF_COUNTER_RAWCOUNT, PERF_DETAIL_ADVANCED));
  v.push_back(c(idx::kFreePtes, PERF_COUNTER_RAWCOUNT, PERF_DETAIL_ADVANCED));
  v.push_back(c(idx::kCacheBytes, size_type, PERF_DETAIL_ADVANCED));
  v.push_back(c(idx::kCacheBytesPeak, size_type, PERF_DETAIL_ADVANCED));
  pair(v, idx::kCommittedInUse, PERF_RAW_FRACTION, PERF_RAW_BASE);
  v.push_back(c(idx::kAvailableKBytes, size_type));
  v.push_back(c(idx::kAvailableMBytes, size_type));
  return o;
}

ObjectDesc processor_object(const Profile& p) {
  ObjectDesc o{idx::kProcessor, "PerfOS", false, true, false, PERF_DETAIL_NOVICE, 0, {}};
  auto& v = o.counters;
  v.push_back(c(idx::kProcessorTime, PERF_100NSEC_TIMER_INV));
  v.push_back(c(idx::kUserTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kPrivilegedTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kInterrupts, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kDpcTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kInterruptTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kDpcsQueued, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kDpcRate, PERF_COUNTER_RAWCOUNT));
  if (p.host.xp_counters) {
    for (uint32_t i : {idx::kIdleTime, idx::kC1Time, idx::kC2Time, idx::kC3Time})
      v.push_back(c(i, PERF_100NSEC_TIMER, PERF_DETAIL_ADVANCED));
    for (uint32_t i : {idx::kC1Transitions, idx::kC2Transitions, idx::kC3Transitions})
      v.push_back(c(i, PERF_COUNTER_BULK_COUNT, PERF_DETAIL_ADVANCED));
  }
  return o;
}

// Objects (PerfOS): counts of the kernel's object types, all raw counts, one instance.
ObjectDesc objects_object(const Profile&) {
  ObjectDesc o{idx::kObjects, "PerfOS", false, false, false, PERF_DETAIL_NOVICE, 0, {}};
  for (uint32_t i : {idx::kProcesses, idx::kThreads, idx::kEvents, idx::kSemaphores, idx::kMutexes, idx::kSections})
    o.counters.push_back(c(i, PERF_COUNTER_RAWCOUNT));
  return o;
}

ObjectDesc process_object(const Profile& p) {
  const uint32_t size_type = large_byte_counters(p) ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_RAWCOUNT;
  ObjectDesc o{idx::kProcess, "PerfProc", false, true, true, PERF_DETAIL_NOVICE, 0, {}};
  auto& v = o.counters;
  v.push_back(c(idx::kProcessorTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kUserTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kPrivilegedTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kVirtualBytesPeak, size_type, PERF_DETAIL_EXPERT));
  v.push_back(c(idx::kVirtualBytes, size_type, PERF_DETAIL_EXPERT));
  v.push_back(c(idx::kPageFaults, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kWorkingSetPeak, size_type, PERF_DETAIL_EXPERT));
  v.push_back(c(idx::kWorkingSet, size_type));
  v.push_back(c(idx::kPageFileBytesPeak, size_type, PERF_DETAIL_EXPERT));
  v.push_back(c(idx::kPageFileBytes, size_type, PERF_DETAIL_EXPERT));
  v.push_back(c(idx::kPrivateBytes, size_type));
  v.push_back(c(idx::kThreadCount, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kPriorityBase, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kElapsedTime, PERF_ELAPSED_TIME));
  v.push_back(c(idx::kIdProcess, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kCreatingProcessId, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kPoolPaged, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kPoolNonpaged, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kHandleCount, PERF_COUNTER_RAWCOUNT));
  for (uint32_t i : {idx::kIoReadOps, idx::kIoWriteOps, idx::kIoDataOps, idx::kIoOtherOps, idx::kIoReadBytes,
                     idx::kIoWriteBytes, idx::kIoDataBytes, idx::kIoOtherBytes})
    v.push_back(c(i, PERF_COUNTER_BULK_COUNT));
  if (p.host.vista_counters) v.push_back(c(idx::kWorkingSetPrivate, PERF_COUNTER_LARGE_RAWCOUNT));
  return o;
}

ObjectDesc thread_object(const Profile& p) {
  ObjectDesc o{idx::kThread, "PerfProc", false, true, true, PERF_DETAIL_ADVANCED, 0, {}};
  auto& v = o.counters;
  v.push_back(c(idx::kContextSwitches, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kProcessorTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kUserTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kPrivilegedTime, PERF_100NSEC_TIMER));
  v.push_back(c(idx::kElapsedTime, PERF_ELAPSED_TIME));
  v.push_back(c(idx::kPriorityCurrent, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kPriorityBase, PERF_COUNTER_RAWCOUNT));
  v.push_back(
      c(idx::kStartAddress, p.host.large_counters ? PERF_COUNTER_LARGE_RAWCOUNT_HEX : PERF_COUNTER_RAWCOUNT_HEX));
  v.push_back(c(idx::kThreadState, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kWaitReason, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kIdProcess, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kIdThread, PERF_COUNTER_RAWCOUNT));
  return o;
}

// PhysicalDisk and LogicalDisk share their layout; LogicalDisk starts with the free-space pair.
ObjectDesc disk_object(const Profile& p, bool logical) {
  ObjectDesc o{
      logical ? idx::kLogicalDisk : idx::kPhysicalDisk, "PerfDisk", false, true, false, PERF_DETAIL_NOVICE, 0, {}};
  auto& v = o.counters;
  if (logical) {
    pair(v, idx::kFreeSpace, PERF_RAW_FRACTION, PERF_RAW_BASE);
    v.push_back(c(idx::kFreeMegabytes, PERF_COUNTER_RAWCOUNT));
  }
  v.push_back(c(idx::kCurrentDiskQueue, PERF_COUNTER_RAWCOUNT));
  const uint32_t busy = p.host.xp_counters ? PERF_PRECISION_100NS_TIMER : PERF_100NSEC_TIMER;
  auto busy_counter = [&](uint32_t i) {
    if (p.host.xp_counters)
      pair(v, i, busy, PERF_PRECISION_TIMESTAMP);
    else
      v.push_back(c(i, busy));
  };
  busy_counter(idx::kDiskTime);
  v.push_back(c(idx::kAvgDiskQueue, PERF_COUNTER_100NS_QUEUELEN_TYPE));
  busy_counter(idx::kDiskReadTime);
  v.push_back(c(idx::kAvgDiskReadQueue, PERF_COUNTER_100NS_QUEUELEN_TYPE));
  busy_counter(idx::kDiskWriteTime);
  v.push_back(c(idx::kAvgDiskWriteQueue, PERF_COUNTER_100NS_QUEUELEN_TYPE));
  pair(v, idx::kAvgSecTransfer, PERF_AVERAGE_TIMER, PERF_AVERAGE_BASE);
  pair(v, idx::kAvgSecRead, PERF_AVERAGE_TIMER, PERF_AVERAGE_BASE);
  pair(v, idx::kAvgSecWrite, PERF_AVERAGE_TIMER, PERF_AVERAGE_BASE);
  for (uint32_t i : {idx::kTransfers, idx::kReads, idx::kWrites}) v.push_back(c(i, PERF_COUNTER_COUNTER));
  for (uint32_t i : {idx::kDiskBytes, idx::kDiskReadBytes, idx::kDiskWriteBytes})
    v.push_back(c(i, PERF_COUNTER_BULK_COUNT));
  pair(v, idx::kAvgBytesTransfer, PERF_AVERAGE_BULK, PERF_AVERAGE_BASE, PERF_DETAIL_ADVANCED);
  pair(v, idx::kAvgBytesRead, PERF_AVERAGE_BULK, PERF_AVERAGE_BASE, PERF_DETAIL_ADVANCED);
  pair(v, idx::kAvgBytesWrite, PERF_AVERAGE_BULK, PERF_AVERAGE_BASE, PERF_DETAIL_ADVANCED);
  if (p.host.xp_counters) {
    pair(v, idx::kDiskIdleTime, PERF_PRECISION_100NS_TIMER, PERF_PRECISION_TIMESTAMP, PERF_DETAIL_ADVANCED);
    v.push_back(c(idx::kSplitIo, PERF_COUNTER_COUNTER, PERF_DETAIL_ADVANCED));
  }
  return o;
}

// Network Interface's byte rates by version. NT 4.0: all three PERF_COUNTER_COUNTER, 4 bytes (MSDN
// Library April 2000, Windows NT counters, "Network Interface Object"). 2000 to 2003: Bytes Total/sec
// 64-bit, Bytes Received/sec and Bytes Sent/sec 32-bit (Win32_PerfRawData_Tcpip_NetworkInterface,
// aa394340: uint64 / uint32). Later: all 64-bit (windows_exporter #60/#61: the live class is uint64
// and a 10 Gb adapter's Received/Sent pass 2^32; from which version on is assumed: 2008's new stack).
uint32_t network_bytes_type(const Profile& p, bool total) {
  const uint32_t v = p.os->major * 100 + p.os->minor;  // the layout table's version (samba's row too)
  if (v < os_version::k2000 || (v < os_version::kVista && !total)) return PERF_COUNTER_COUNTER;
  return PERF_COUNTER_BULK_COUNT;
}

ObjectDesc network_object(const Profile& p) {
  ObjectDesc o{idx::kNetworkInterface, "Tcpip", false, true, false, PERF_DETAIL_ADVANCED, 0, {}};
  auto& v = o.counters;
  v.push_back(c(idx::kBytesTotal, network_bytes_type(p, true)));
  for (uint32_t i : {idx::kPackets, idx::kPacketsReceived, idx::kPacketsSent}) v.push_back(c(i, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kBandwidth, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kBytesReceived, network_bytes_type(p, false)));
  v.push_back(c(idx::kRecvUnicast, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kRecvNonUnicast, PERF_COUNTER_COUNTER));
  for (uint32_t i : {idx::kRecvDiscarded, idx::kRecvErrors, idx::kRecvUnknown})
    v.push_back(c(i, PERF_COUNTER_RAWCOUNT));
  v.push_back(c(idx::kBytesSent, network_bytes_type(p, false)));
  v.push_back(c(idx::kSentUnicast, PERF_COUNTER_COUNTER));
  v.push_back(c(idx::kSentNonUnicast, PERF_COUNTER_COUNTER));
  for (uint32_t i : {idx::kOutDiscarded, idx::kOutErrors, idx::kOutputQueue}) v.push_back(c(i, PERF_COUNTER_RAWCOUNT));
  return o;
}

ObjectDesc paging_file_object(const Profile&) {
  ObjectDesc o{idx::kPagingFile, "PerfOS", false, true, false, PERF_DETAIL_ADVANCED, 0, {}};
  pair(o.counters, idx::kUsage, PERF_RAW_FRACTION, PERF_RAW_BASE);
  pair(o.counters, idx::kUsagePeak, PERF_RAW_FRACTION, PERF_RAW_BASE);
  return o;
}

ObjectDesc address_space_object(const Profile& p) {
  const uint32_t t = p.host.large_counters ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_RAWCOUNT;
  ObjectDesc o{idx::kProcessAddressSpace, "PerfProc", true, true, false, PERF_DETAIL_WIZARD, 0, {}};
  for (uint32_t i : {idx::kBytesFree, idx::kBytesReserved, idx::kBytesImageFree, idx::kBytesImageReserved})
    o.counters.push_back(c(i, t, PERF_DETAIL_WIZARD));
  o.counters.push_back(c(idx::kIdProcess, PERF_COUNTER_RAWCOUNT, PERF_DETAIL_WIZARD));
  return o;
}

ObjectDesc image_object(const Profile& p) {
  const uint32_t t = p.host.large_counters ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_RAWCOUNT;
  ObjectDesc o{idx::kImage, "PerfProc", true, true, false, PERF_DETAIL_WIZARD, 0, {}};
  for (uint32_t i = idx::kImageSpaceNoAccess; i <= idx::kImageSpaceExecWriteCopy; i += 2)
    o.counters.push_back(c(i, t, PERF_DETAIL_WIZARD));
  return o;
}

ObjectDesc thread_details_object(const Profile& p) {
  // counter-type-change (quirks.md): User PC is a DWORD on 2000, a 64-bit hex value from 2003 on.
  ObjectDesc o{idx::kThreadDetails, "PerfProc", true, true, false, PERF_DETAIL_WIZARD, 0, {}};
  o.counters.push_back(c(idx::kUserPc, p.host.xp_counters ? PERF_COUNTER_LARGE_RAWCOUNT_HEX : PERF_COUNTER_RAWCOUNT,
                         PERF_DETAIL_WIZARD));
  return o;
}

}  // namespace

uint32_t size_for(uint32_t type) {
  switch (type & PERF_SIZE_MASK) {
    case PERF_SIZE_LARGE:
      return 8;
    case PERF_SIZE_ZERO:
      return 0;
    default:
      return 4;
  }
}

const Profile* find_profile(std::string_view name) {
  const windows::OsProfile* os = windows::find_os(name);
  if (!os) return nullptr;
  for (const Profile& p : profiles())
    if (p.os == os) return &p;
  return nullptr;
}

std::vector<ObjectDesc> builtin_objects(const Profile& p) {
  std::vector<ObjectDesc> v = {system_object(p),  memory_object(p),     processor_object(p),   objects_object(p),
                               process_object(p), thread_object(p),     disk_object(p, false), disk_object(p, true),
                               network_object(p), paging_file_object(p)};
  register_counter_sets(p, &v, nullptr);  // Global: counter sets after the standard objects
  v.push_back(address_space_object(p));
  v.push_back(image_object(p));
  v.push_back(thread_details_object(p));
  return v;
}

std::vector<NameDef> profile_names(const Profile& p) {
  std::vector<NameDef> v = builtin_names();
  register_counter_sets(p, nullptr, &v);
  return v;
}

const std::vector<ProviderDesc>& builtin_providers() {
  static const std::vector<ProviderDesc> v = {
      {"PerfOS", "perfos.dll", "OpenOSObject", "CollectOSObjectData", "CloseOSObject"},
      {"PerfProc", "perfproc.dll", "OpenSysProcessObject", "CollectSysProcessObjectData", "CloseSysProcessObject"},
      {"PerfDisk", "perfdisk.dll", "OpenDiskObject", "CollectDiskObjectData", "CloseDiskObject"},
      {"Tcpip", "perfctrs.dll", "OpenTcpIpPerformanceData", "CollectTcpIpPerformanceData", "CloseTcpIpPerformanceData"},
  };
  return v;
}

const std::vector<NameDef>& builtin_names() {
  static const std::vector<NameDef> v = {
      {2, "System", "Counters that apply to the computer as a whole rather than to one component."},
      {4, "Memory", "Counters describing physical and virtual memory of the computer."},
      {6, "% Processor Time", "Percentage of elapsed time the processor spent running non-idle threads."},
      {10, "File Read Operations/sec", "Rate of file system read requests to all devices."},
      {12, "File Write Operations/sec", "Rate of file system write requests to all devices."},
      {14, "File Control Operations/sec", "Rate of file system operations that are neither reads nor writes."},
      {16, "File Read Bytes/sec", "Rate at which bytes are read by file system read requests."},
      {18, "File Write Bytes/sec", "Rate at which bytes are written by file system write requests."},
      {20, "File Control Bytes/sec", "Rate of bytes moved by file system control requests."},
      {24, "Available Bytes", "Physical memory, in bytes, immediately available to processes."},
      {26, "Committed Bytes", "Committed virtual memory, in bytes."},
      {28, "Page Faults/sec", "Average number of pages faulted per second."},
      {30, "Commit Limit", "Virtual memory, in bytes, that can be committed without growing the paging file."},
      {32, "Write Copies/sec", "Rate of page faults satisfied by copying a page on write."},
      {34, "Transition Faults/sec", "Rate of page faults resolved by recovering pages still in transition."},
      {36, "Cache Faults/sec", "Rate of faults on pages of the file system cache."},
      {38, "Demand Zero Faults/sec", "Rate of page faults that required a zeroed page."},
      {40, "Pages/sec", "Rate at which pages are read from or written to disk to resolve hard page faults."},
      {42, "Page Reads/sec", "Rate of disk reads made to resolve hard page faults."},
      {44, "Processor Queue Length", "Number of threads in the processor queue, ready but not running."},
      {46, "Thread State", "Current state of the thread (0 initialized ... 7 unknown)."},
      {48, "Pages Output/sec", "Rate at which pages are written to disk to free physical memory."},
      {50, "Page Writes/sec", "Rate of disk writes made to free physical memory."},
      {56, "Pool Paged Bytes", "Size, in bytes, of the paged pool."},
      {58, "Pool Nonpaged Bytes", "Size, in bytes, of the nonpaged pool."},
      {60, "Pool Paged Allocs", "Number of allocations made from the paged pool."},
      {64, "Pool Nonpaged Allocs", "Number of allocations made from the nonpaged pool."},
      {142, "% User Time", "Percentage of elapsed time spent in user mode."},
      {144, "% Privileged Time", "Percentage of elapsed time spent in privileged (kernel) mode."},
      {146, "Context Switches/sec", "Rate of switches from one thread to another."},
      {148, "Interrupts/sec", "Average rate of hardware interrupts the processor serviced."},
      {150, "System Calls/sec", "Rate of calls to operating system service routines."},
      {172, "Virtual Bytes Peak", "Largest size, in bytes, of virtual address space used at any time."},
      {174, "Virtual Bytes", "Current size, in bytes, of the virtual address space in use."},
      {178, "Working Set Peak", "Largest working set, in bytes, at any time."},
      {180, "Working Set", "Current size, in bytes, of the working set."},
      {182, "Page File Bytes Peak", "Largest amount of paging-file-backed memory, in bytes, at any time."},
      {184, "Page File Bytes", "Current amount of paging-file-backed memory, in bytes."},
      {186, "Private Bytes", "Current size, in bytes, of memory that cannot be shared."},
      {198, "Current Disk Queue Length", "Requests outstanding on the disk when the data was collected."},
      {200, "% Disk Time", "Percentage of elapsed time the disk was busy with read or write requests."},
      {202, "% Disk Read Time", "Percentage of elapsed time the disk was busy with read requests."},
      {204, "% Disk Write Time", "Percentage of elapsed time the disk was busy with write requests."},
      {206, "Avg. Disk sec/Transfer", "Average time, in seconds, of a disk transfer."},
      {208, "Avg. Disk sec/Read", "Average time, in seconds, of a read from the disk."},
      {210, "Avg. Disk sec/Write", "Average time, in seconds, of a write to the disk."},
      {212, "Disk Transfers/sec", "Rate of read and write operations on the disk."},
      {214, "Disk Reads/sec", "Rate of read operations on the disk."},
      {216, "Disk Writes/sec", "Rate of write operations on the disk."},
      {218, "Disk Bytes/sec", "Rate at which bytes are transferred to or from the disk."},
      {220, "Disk Read Bytes/sec", "Rate at which bytes are read from the disk."},
      {222, "Disk Write Bytes/sec", "Rate at which bytes are written to the disk."},
      {224, "Avg. Disk Bytes/Transfer", "Average number of bytes per disk transfer."},
      {226, "Avg. Disk Bytes/Read", "Average number of bytes per disk read."},
      {228, "Avg. Disk Bytes/Write", "Average number of bytes per disk write."},
      {230, "Process", "Counters for the running programs and system processes."},
      {232, "Thread", "Counters for the threads of each process."},
      {234, "PhysicalDisk", "Counters for each hard disk drive."},
      {236, "LogicalDisk", "Counters for each volume (partition) of a disk."},
      {238, "Processor", "Counters for each processor and their total."},
      {248, "Processes", "Number of processes in the computer when the data was collected."},
      {250, "Threads", "Number of threads in the computer when the data was collected."},
      {252, "Events", "Number of events in the computer when the data was collected."},
      {254, "Semaphores", "Number of semaphores in the computer when the data was collected."},
      {256, "Mutexes", "Number of mutexes in the computer when the data was collected."},
      {258, "Sections", "Number of sections (shared memory mappings) when the data was collected."},
      {260, "Objects", "Counts of the kernel's objects: processes, threads, events, semaphores, mutexes, sections."},
      {264, "Bytes Received/sec", "Rate at which bytes are received on the interface, framing included."},
      {266, "Packets Received/sec", "Rate at which packets are received on the interface."},
      {336, "Thread Wait Reason", "Why the thread is waiting (only meaningful in the Wait state)."},
      {388, "Bytes Total/sec", "Rate at which bytes are sent and received on the interface."},
      {400, "Packets/sec", "Rate at which packets are sent and received on the interface."},
      {406, "File Data Operations/sec", "Rate of read and write operations on all logical disks."},
      {408, "% Free Space", "Percentage of the volume's total usable space that is free."},
      {410, "Free Megabytes", "Unallocated space on the volume, in megabytes."},
      {452, "Packets Sent/sec", "Rate at which packets are sent on the interface."},
      {506, "Bytes Sent/sec", "Rate at which bytes are sent on the interface, framing included."},
      {510, "Network Interface", "Counters for the bytes and packets of each network adapter."},
      {520, "Current Bandwidth", "Estimate of the interface's current bandwidth in bits per second."},
      {524, "Packets Received Unicast/sec", "Rate of unicast packets delivered to a higher layer."},
      {526, "Packets Received Non-Unicast/sec", "Rate of broadcast and multicast packets delivered to a higher layer."},
      {528, "Packets Received Discarded", "Inbound packets discarded although error-free."},
      {530, "Packets Received Errors", "Inbound packets that contained errors."},
      {532, "Packets Received Unknown", "Inbound packets of an unknown or unsupported protocol."},
      {536, "Packets Sent Unicast/sec", "Rate of unicast packets higher layers asked to send."},
      {538, "Packets Sent Non-Unicast/sec", "Rate of broadcast and multicast packets higher layers asked to send."},
      {540, "Packets Outbound Discarded", "Outbound packets discarded although error-free."},
      {542, "Packets Outbound Errors", "Outbound packets that could not be sent because of errors."},
      {544, "Output Queue Length", "Length of the output packet queue, in packets."},
      {674, "System Up Time", "Time, in seconds, since the computer was last started."},
      {678, "Free System Page Table Entries", "Number of page table entries not in use by the system."},
      {680, "Thread Count", "Number of threads currently active in the process."},
      {682, "Priority Base", "Current base priority."},
      {684, "Elapsed Time", "Total elapsed time, in seconds, since the item started."},
      {688, "Exception Dispatches/sec", "Rate at which the system dispatches exceptions."},
      {694, "Priority Current", "Current dynamic priority of the thread."},
      {696, "% DPC Time", "Percentage of time the processor spent on deferred procedure calls."},
      {698, "% Interrupt Time", "Percentage of time the processor spent servicing hardware interrupts."},
      {700, "Paging File", "Counters for each paging file of the computer."},
      {702, "% Usage", "Percentage of the paging file in use."},
      {704, "% Usage Peak", "Peak percentage of the paging file in use."},
      {706, "Start Address", "Starting virtual address of the thread."},
      {708, "User PC", "User program counter of the thread."},
      {740, "Image", "Virtual address usage of the images a process has loaded."},
      {760, "Image Space No Access", "Image virtual memory, in bytes, mapped with no access."},
      {762, "Image Space Read Only", "Image virtual memory, in bytes, mapped read only."},
      {764, "Image Space Read/Write", "Image virtual memory, in bytes, mapped read/write."},
      {766, "Image Space Write Copy", "Image virtual memory, in bytes, mapped copy-on-write."},
      {768, "Image Space Executable", "Image virtual memory, in bytes, mapped executable."},
      {770, "Image Space Exec Read Only", "Image virtual memory, in bytes, mapped executable and read only."},
      {772, "Image Space Exec Read/Write", "Image virtual memory, in bytes, mapped executable and read/write."},
      {774, "Image Space Exec Write Copy", "Image virtual memory, in bytes, mapped executable copy-on-write."},
      {776, "Bytes Image Reserved", "Virtual memory, in bytes, reserved for images."},
      {778, "Bytes Image Free", "Virtual memory, in bytes, free for images."},
      {780, "Bytes Reserved", "Virtual memory, in bytes, reserved by the process."},
      {782, "Bytes Free", "Virtual address space, in bytes, still free in the process."},
      {784, "ID Process", "Unique identifier of the process; reused after the process ends."},
      {786, "Process Address Space", "Detailed virtual memory use of each process."},
      {804, "ID Thread", "Unique identifier of the thread; reused after the thread ends."},
      {816, "Thread Details", "Costly per-thread counters."},
      {818, "Cache Bytes", "Size, in bytes, of the system cache working set."},
      {820, "Cache Bytes Peak", "Largest size, in bytes, of the system cache working set."},
      {822, "Pages Input/sec", "Rate at which pages are read from disk to resolve hard page faults."},
      {952, "Handle Count", "Total number of handles the process has open."},
      {1334, "DPCs Queued/sec", "Rate at which deferred procedure calls are queued on the processor."},
      {1336, "DPC Rate", "Rate at which DPCs are queued between clock ticks."},
      {1350, "% Registry Quota In Use", "Percentage of the registry quota in use."},
      {1380, "Available KBytes", "Physical memory, in kilobytes, immediately available to processes."},
      {1382, "Available MBytes", "Physical memory, in megabytes, immediately available to processes."},
      {1400, "Avg. Disk Queue Length", "Average number of read and write requests queued for the disk."},
      {1402, "Avg. Disk Read Queue Length", "Average number of read requests queued for the disk."},
      {1404, "Avg. Disk Write Queue Length", "Average number of write requests queued for the disk."},
      {1406, "% Committed Bytes In Use", "Ratio of Committed Bytes to the Commit Limit."},
      {1410, "Creating Process ID", "Process ID of the process that created this one."},
      {1412, "IO Read Operations/sec", "Rate of read I/O operations issued by the process."},
      {1414, "IO Write Operations/sec", "Rate of write I/O operations issued by the process."},
      {1416, "IO Data Operations/sec", "Rate of read and write I/O operations issued by the process."},
      {1418, "IO Other Operations/sec", "Rate of I/O operations that are neither reads nor writes."},
      {1420, "IO Read Bytes/sec", "Rate at which the process reads bytes in I/O operations."},
      {1422, "IO Write Bytes/sec", "Rate at which the process writes bytes in I/O operations."},
      {1424, "IO Data Bytes/sec", "Rate at which the process reads and writes bytes in I/O operations."},
      {1426, "IO Other Bytes/sec", "Rate of bytes moved by I/O operations that are neither reads nor writes."},
      {1478, "Working Set - Private", "Size, in bytes, of the working set that only this process uses."},
      {1482, "% Idle Time", "Percentage of time the disk was idle."},
      {1484, "Split IO/Sec", "Rate at which I/Os were split into several I/Os."},
      {1746, "% Idle Time", "Percentage of time the processor was idle."},
      {1748, "% C1 Time", "Percentage of time the processor spent in the C1 low-power idle state."},
      {1750, "% C2 Time", "Percentage of time the processor spent in the C2 low-power idle state."},
      {1752, "% C3 Time", "Percentage of time the processor spent in the C3 low-power idle state."},
      {1754, "C1 Transitions/sec", "Rate at which the processor entered the C1 state."},
      {1756, "C2 Transitions/sec", "Rate at which the processor entered the C2 state."},
      {1758, "C3 Transitions/sec", "Rate at which the processor entered the C3 state."},
  };
  return v;
}

}  // namespace perfsim::synth
