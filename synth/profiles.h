// Built-in OS profiles (windows/os.h rows) and the standard perf objects collectors read, as Windows defines them:
// real title indices from the English (009) table, counter types and sizes per OS, providers.
//
// Contract: builtin_objects(p) lists only indices that profile_names(p) names; every counter's
// CounterSize matches the size bits of its type; a counter that needs a base is directly followed
// by its base. Values are not generated here (synth.h does that).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "windows/os.h"

namespace perfsim::synth {

// A built-in OS profile: its windows/ row (names, versions, quirk set) and the row's synth defaults,
// which a spec may change (PerfFreq of an object source, objects.cpp).
struct Profile {
  const windows::OsProfile* os = nullptr;
  windows::SynthDefaults host;
};

// Any name or alias of windows/README.md's list; nullptr for another name.
const Profile* find_profile(std::string_view name);

struct CounterDesc {
  uint32_t index = 0;  // name title index (help = index + 1)
  uint32_t type = 0;
  uint32_t size = 4;
  uint32_t detail = 100;
  int32_t scale = 0;
  const char* name = nullptr;  // counter sets only: writers find their counters by name
};

// Which writer fills an object (synth/model.cpp write_all). Standard objects go by title index;
// counter sets (indices above Base Index, different per profile) by family.
enum class Family : uint8_t {
  kStandard,
  kProcessorInformation,
  kTcpV4,
  kTcpV6,
  kIpV4,
  kIpV6,
  kUdpV4,
  kUdpV6,
  kIcmp,
  kIcmpV6,
  kNetworkAdapter,
  kProcessV2,
  kCache,
  kServer,
  kServerWorkQueues,
  kRedirector,
  kBrowser,
  kTerminalServices,
  kThermalZone,
  kNumaNodeMemory,
  kPrintQueue,
  kTerminalServicesSession,
  kJobObject,
};

// Where Windows keeps an object's names: V1 (extensible counter DLLs and the kernel's objects),
// whose names LodCtr loads into Perflib\<LLL> and `lodctr /s` backs up, or V2 (a counter set of a
// manifest registered with `lodctr /m`, its strings in the provider's binary: Microsoft,
// "Performance Counters Schema"), which no `lodctr /s` backup holds.
enum class Perflib : uint8_t { kV1, kV2 };

struct ObjectDesc {
  uint32_t index = 0;
  std::string provider;  // service name owning the object
  bool costly = false;
  bool multi = true;
  bool object_timer = false;  // object PerfTime/PerfFreq = 100 ns clock (Elapsed Time etc.)
  uint32_t detail = 100;
  int32_t default_counter = 0;
  std::vector<CounterDesc> counters;
  Family family = Family::kStandard;
  Perflib perflib = Perflib::kV1;
};

struct NameDef {
  uint32_t index;
  const char* name;
  const char* help;
};

// A counter of a counter set (an object registered after the standard ones): its 009 name and
// help, type, detail, the first OS version that has it when later than its set's and the last one
// when earlier.
struct SetCounter {
  const char* name;
  const char* help;
  uint32_t type;
  uint32_t base = 0;  // base counter type following it, 0 for none
  uint32_t detail = 100;
  uint32_t since = 0;  // major * 100 + minor; 0 = as its set
  uint32_t until = 0;  // major * 100 + minor of the last version serving it; 0 = as its set
};

struct CounterSet {
  Family family;
  const char* name;
  const char* help;
  const char* provider;
  bool multi;
  std::vector<SetCounter> counters;
  // The name older versions served the same counters under (Windows 2000 and XP: TCP, IP and UDP,
  // which the Server 2003 code base renamed TCPv4, IPv4 and UDPv4). Which versions serve which
  // name is the version table's (object_versions()).
  const char* legacy_name = nullptr;
};

// Windows versions as major * 100 + minor, the unit of ObjectVersion and SetCounter::since/until.
namespace os_version {
inline constexpr uint32_t kNt4 = 400, k2000 = 500, kXp = 501, k2003 = 502, kVista = 600, kWin7 = 601, kWin8 = 602,
                          kWin10 = 1000;
}  // namespace os_version

// The version table: every object of the synth catalogue (standard objects and counter sets, each
// name a set is served under), the Windows versions serving it under that name, V1 or V2, and the
// primary source; the one place these facts live (synth/README.md "Object versions" is checked
// against it).
struct ObjectVersion {
  const char* name;      // English name the object is served under
  uint32_t first;        // major * 100 + minor of the first version perfsim serves it at
  uint32_t first_build;  // that version's first build serving it, for versions several OSes share (10.0); 0: any
  uint32_t last;         // the last version serving it under this name; 0: still served
  Perflib perflib;
  const char* source;
};
const std::vector<ObjectVersion>& object_versions();
const ObjectVersion* object_version(std::string_view name);  // nullptr: no such row
// The profile's version as major * 100 + minor (0 for a profile that is no Windows).
uint32_t version_of(const Profile& p);
bool serves(const Profile& p, const ObjectVersion& v);
// Whether the profile serves the set (under its name or its legacy name).
bool serves(const Profile& p, const CounterSet& set);
// The name the profile serves the set under: the one whose row covers its version.
const char* served_name(const Profile& p, const CounterSet& set);

// The counter sets, in registration order (which gives their title indices: from Base Index + 1
// on, the set's name then its counters, each a fresh even index, on the profiles that have it).
const std::vector<CounterSet>& counter_sets();
// Registers the profile's counter sets: appends their objects and/or their names (either may be null).
void register_counter_sets(const Profile& p, std::vector<ObjectDesc>* objects, std::vector<NameDef>* names);

struct ProviderDesc {
  std::string service, library, open, collect, close;
};

// The standard objects of the profile, in the order Windows returns them in Global/Costly.
std::vector<ObjectDesc> builtin_objects(const Profile& p);
// Whether Memory's and Process's byte counters are 64-bit (from Windows 2000 on; profiles.cpp cites why).
bool large_byte_counters(const Profile& p);
const std::vector<NameDef>& builtin_names();  // the standard (fixed) indices only
// The profile's whole 009 table: builtin_names() and the indices its counter sets registered.
std::vector<NameDef> profile_names(const Profile& p);
const std::vector<ProviderDesc>& builtin_providers();

// CounterSize the type's size bits ask for (4, 8, or 0 for PERF_SIZE_ZERO).
uint32_t size_for(uint32_t type);

// Title indices the generator refers to by name.
namespace idx {
constexpr uint32_t kSystem = 2, kMemory = 4, kProcessorTime = 6, kFileReadOps = 10, kFileWriteOps = 12,
                   kFileControlOps = 14, kFileReadBytes = 16, kFileWriteBytes = 18, kFileControlBytes = 20,
                   kAvailableBytes = 24, kCommittedBytes = 26, kPageFaults = 28, kCommitLimit = 30, kWriteCopies = 32,
                   kTransitionFaults = 34, kCacheFaults = 36, kDemandZeroFaults = 38, kPages = 40, kPageReads = 42,
                   kQueueLength = 44, kThreadState = 46, kPagesOutput = 48, kPageWrites = 50, kPoolPaged = 56,
                   kPoolNonpaged = 58, kPoolPagedAllocs = 60, kPoolNonpagedAllocs = 64, kUserTime = 142,
                   kPrivilegedTime = 144, kContextSwitches = 146, kInterrupts = 148, kSystemCalls = 150,
                   kVirtualBytesPeak = 172, kVirtualBytes = 174, kWorkingSetPeak = 178, kWorkingSet = 180,
                   kPageFileBytesPeak = 182, kPageFileBytes = 184, kPrivateBytes = 186, kCurrentDiskQueue = 198,
                   kDiskTime = 200, kDiskReadTime = 202, kDiskWriteTime = 204, kAvgSecTransfer = 206, kAvgSecRead = 208,
                   kAvgSecWrite = 210, kTransfers = 212, kReads = 214, kWrites = 216, kDiskBytes = 218,
                   kDiskReadBytes = 220, kDiskWriteBytes = 222, kAvgBytesTransfer = 224, kAvgBytesRead = 226,
                   kAvgBytesWrite = 228, kProcess = 230, kThread = 232, kPhysicalDisk = 234, kLogicalDisk = 236,
                   kProcessor = 238, kProcesses = 248, kThreads = 250, kEvents = 252, kSemaphores = 254, kMutexes = 256,
                   kSections = 258, kObjects = 260, kBytesReceived = 264, kPacketsReceived = 266, kWaitReason = 336,
                   kBytesTotal = 388, kPackets = 400, kFileDataOps = 406, kFreeSpace = 408, kFreeMegabytes = 410,
                   kPacketsSent = 452, kBytesSent = 506, kNetworkInterface = 510, kBandwidth = 520, kRecvUnicast = 524,
                   kRecvNonUnicast = 526, kRecvDiscarded = 528, kRecvErrors = 530, kRecvUnknown = 532,
                   kSentUnicast = 536, kSentNonUnicast = 538, kOutDiscarded = 540, kOutErrors = 542, kOutputQueue = 544,
                   kFreePtes = 678, kThreadCount = 680, kPriorityBase = 682, kElapsedTime = 684, kExceptions = 688,
                   kPriorityCurrent = 694, kDpcTime = 696, kInterruptTime = 698, kPagingFile = 700, kUsage = 702,
                   kUsagePeak = 704, kStartAddress = 706, kUserPc = 708, kImage = 740, kImageSpaceNoAccess = 760,
                   kImageSpaceReadOnly = 762, kImageSpaceReadWrite = 764, kImageSpaceWriteCopy = 766,
                   kImageSpaceExec = 768, kImageSpaceExecReadOnly = 770, kImageSpaceExecReadWrite = 772,
                   kImageSpaceExecWriteCopy = 774, kBytesImageReserved = 776, kBytesImageFree = 778,
                   kBytesReserved = 780, kBytesFree = 782, kIdProcess = 784, kProcessAddressSpace = 786,
                   kIdThread = 804, kThreadDetails = 816, kCacheBytes = 818, kCacheBytesPeak = 820, kPagesInput = 822,
                   kHandleCount = 952, kDpcsQueued = 1334, kDpcRate = 1336, kRegistryQuota = 1350,
                   kAvailableKBytes = 1380, kAvailableMBytes = 1382, kAvgDiskQueue = 1400, kAvgDiskReadQueue = 1402,
                   kAvgDiskWriteQueue = 1404, kCommittedInUse = 1406, kCreatingProcessId = 1410, kIoReadOps = 1412,
                   kIoWriteOps = 1414, kIoDataOps = 1416, kIoOtherOps = 1418, kIoReadBytes = 1420, kIoWriteBytes = 1422,
                   kIoDataBytes = 1424, kIoOtherBytes = 1426, kWorkingSetPrivate = 1478, kDiskIdleTime = 1482,
                   kSplitIo = 1484, kIdleTime = 1746, kC1Time = 1748, kC2Time = 1750, kC3Time = 1752,
                   kC1Transitions = 1754, kC2Transitions = 1756, kC3Transitions = 1758, kSystemUpTime = 674;
}  // namespace idx

}  // namespace perfsim::synth
