// The version table (profiles.h ObjectVersion): which Windows versions serve each object of the
// synth catalogue under which name, and whether Perflib keeps its names as V1 strings (in
// Perflib\<LLL>, what `lodctr /s` backs up) or as a V2 counter set's (the provider's manifest and
// binary: Microsoft, "Performance Counters Schema", learn.microsoft.com/windows/win32/perfctrs/
// performance-counters-schema). Sources, as the `source` column cites them (public documents and
// real data only):
//  - the Windows 2000 Performance Counters Reference (learn.microsoft.com/previous-versions/windows/
//    it-pro/windows-2000-server/cc982962: "all performance objects and counters provided for use with
//    tools in the Performance snap-in of Windows 2000") for the standard objects and the PerfOS,
//    PerfNet, spooler and Tcpip objects of 2000; perfsim serves the standard ones from its oldest
//    profile (NT 4.0) on. Their fixed title indices (README, Profiles: System 2, Memory 4, ...) are
//    the ones Windows serves; no public document lists them.
//  - issue 30 item 8: real `lodctr /s` backups. The XP x64 SP2 one (the Server 2003 SP2 code base)
//    names the TCP/IP objects IPv4, IPv6, TCPv4, UDPv4, TCPv6, UDPv6, ICMPv6 (and ICMP); 2000 and
//    XP name them TCP, IP, UDP, ICMP (Win32_PerfRawData_Tcpip_UDP, previous-versions aa394342: "the
//    UDP object", Tcpip performance library).
//  - WMI classes (learn.microsoft.com, cimwin32prov and previous-versions): the class of a V1
//    object is named after its service (Win32_PerfRawData_Tcpip_NetworkAdapter, _PerfOS_Cache), a
//    V2 counter set's after its manifest provider (Win32_PerfRawData_Counters_ProcessorInformation,
//    _LocalSessionManager_TerminalServices); Win32_PerfRawData_TermService_TerminalServices
//    (aa394343) says the Terminal Services object of XP and 2003 came from the TermService
//    performance library (V1), which Vista's Local Session Manager counter set replaced.
//  - the .NET Framework's CLR objects (service .NETFramework, netfxperf.dll: an extensible counter
//    DLL whose strings LodCtr loads, V1) come with the framework, which the OS includes from
//    Server 2003 on (windows/os.cpp dotnet_framework cites Microsoft's ".NET Framework versions
//    and dependencies"); the framework's own documentation lists the objects (Microsoft, .NET
//    Framework 1.1 "Performance Counters", learn.microsoft.com/previous-versions/dotnet/
//    netframework-1.1/w8f5kw2e: .NET CLR Exceptions, Loading, LocksAndThreads, Memory, ...). Older
//    hosts get them with `--role dotnet` (synth/roles/dotnet.toml).
//  - issue 30 item 8 also: real `lodctr /s` backups of a 2008-era host (no Terminal Services) and of five
//    Windows 8+ hosts (no Processor Information, Thermal Zone Information, Terminal Services):
//    the V2 sets are the ones a V1 backup lacks.
#include <string_view>

#include "synth/profiles.h"

namespace perfsim::synth {
namespace {

using namespace os_version;
constexpr Perflib V1 = Perflib::kV1, V2 = Perflib::kV2;

const char kStd[] = "Windows 2000 Performance Counters Reference (cc982962); fixed index: no public list; NT 4.0 on";
const char kTcp[] = "2000/XP names (issue 30 item 8); Win32_PerfRawData_Tcpip_UDP (aa394342), _TCP, _IP, _ICMP";
const char kNetfx[] = "the OS's .NET Framework (windows/os.cpp); .NET Framework 1.1 Performance Counters (w8f5kw2e)";
const char kIp[] = "real XP x64 SP2 (2003 SP2 code base) lodctr /s backup, issue 30 item 8; index: no public list";

}  // namespace

const std::vector<ObjectVersion>& object_versions() {
  // clang-format off
  static const std::vector<ObjectVersion> v = {
      // The standard objects: every profile (perfsim's oldest is NT 4.0; they are older).
      {"System", kNt4, 0, 0, V1, kStd},
      {"Memory", kNt4, 0, 0, V1, kStd},
      {"Processor", kNt4, 0, 0, V1, kStd},
      {"Objects", kNt4, 0, 0, V1, kStd},
      {"Process", kNt4, 0, 0, V1, kStd},
      {"Thread", kNt4, 0, 0, V1, kStd},
      {"PhysicalDisk", kNt4, 0, 0, V1, kStd},
      {"LogicalDisk", kNt4, 0, 0, V1, kStd},
      {"Network Interface", kNt4, 0, 0, V1, kStd},
      {"Paging File", kNt4, 0, 0, V1, kStd},
      {"Process Address Space", kNt4, 0, 0, V1, kStd},
      {"Image", kNt4, 0, 0, V1, kStd},
      {"Thread Details", kNt4, 0, 0, V1, kStd},
      // The TCP/IP objects (Tcpip): renamed and joined by IPv6's in the 2003 code base (issue 30 item 8).
      {"TCP", k2000, 0, kXp, V1, kTcp},
      {"IP", k2000, 0, kXp, V1, kTcp},
      {"UDP", k2000, 0, kXp, V1, kTcp},
      {"ICMP", k2000, 0, 0, V1, kTcp},
      {"TCPv4", k2003, 0, 0, V1, kIp},
      {"TCPv6", k2003, 0, 0, V1, kIp},
      {"IPv4", k2003, 0, 0, V1, kIp},
      {"IPv6", k2003, 0, 0, V1, kIp},
      {"UDPv4", k2003, 0, 0, V1, kIp},
      {"UDPv6", k2003, 0, 0, V1, kIp},
      {"ICMPv6", k2003, 0, 0, V1, kIp},
      {"Network Adapter", kWin7, 0, 0, V1, "Win32_PerfRawData_Tcpip_NetworkAdapter (service Tcpip)"},
      // V1 objects of PerfOS, PerfNet, the spooler and PerfProc.
      {"Cache", k2000, 0, 0, V1, "Win32_PerfRawData_PerfOS_Cache; Windows 2000 Performance Counters Reference (cc982962)"},
      {"Server", k2000, 0, 0, V1, "Win32_PerfRawData_PerfNet_Server; Windows 2000 Performance Counters Reference (cc982962)"},
      {"Server Work Queues", k2000, 0, 0, V1, "Win32_PerfRawData_PerfNet_ServerWorkQueues; Windows 2000 Performance Counters Reference (cc982962)"},
      {"Redirector", k2000, 0, 0, V1, "Win32_PerfRawData_PerfNet_Redirector; Windows 2000 Performance Counters Reference (cc982962)"},
      {"Browser", k2000, 0, 0, V1, "Win32_PerfRawData_PerfNet_Browser; Windows 2000 Performance Counters Reference (cc982962)"},
      {"Print Queue", k2000, 0, 0, V1, "Win32_PerfRawData_Spooler_PrintQueue; Windows 2000 Performance Counters Reference (cc982962)"},
      // The CLR's objects, with the .NET Framework the OS includes (1.1 in 2003 ... 4.8 in 2022).
      {".NET CLR Memory", k2003, 0, 0, V1, kNetfx},
      {".NET CLR Exceptions", k2003, 0, 0, V1, kNetfx},
      {".NET CLR LocksAndThreads", k2003, 0, 0, V1, kNetfx},
      {".NET CLR Loading", k2003, 0, 0, V1, kNetfx},
      // Windows has Job Object before Vista (aa394321 names XP/2003's provider; the Windows 2000
      // reference describes it, cc960041) and Terminal Services Session from XP (TermService);
      // perfsim serves the Vista forms (64-bit Process byte counters).
      {"Job Object", kVista, 0, 0, V1, "Win32_PerfRawData_PerfProc_JobObject (aa394321: XP/2003 provider); Windows 2000 reference (cc960041)"},
      {"Terminal Services Session", kVista, 0, 0, V1, "Win32_PerfRawData_TermService_TerminalServicesSession (aa394344, TermService library)"},
      // Perflib V2 counter sets: no `lodctr /s` backup has their names.
      {"Terminal Services", kVista, 0, 0, V2, "Win32_PerfRawData_LocalSessionManager_TerminalServices (XP/2003: V1 TermService, aa394343)"},
      {"Processor Information", kWin7, 0, 0, V2, "Win32_PerfRawData_Counters_ProcessorInformation (provider Counters)"},
      {"Thermal Zone Information", kWin7, 0, 0, V2, "Win32_PerfRawData_Counters_ThermalZoneInformation (provider Counters)"},
      {"NUMA Node Memory", kWin8, 0, 0, V2, "Win32_PerfRawData_Counters_NUMANodeMemory (provider Counters)"},
      {"Process V2", kWin10, 20348, 0, V2, "Win32_PerfRawData_Counters_ProcessV2 (provider Counters; Server 2022)"},
  };
  // clang-format on
  return v;
}

const ObjectVersion* object_version(std::string_view name) {
  for (const ObjectVersion& r : object_versions())
    if (name == r.name) return &r;
  return nullptr;
}

uint32_t version_of(const Profile& p) { return p.os->by_version ? p.os->major * 100 + p.os->minor : 0; }

bool serves(const Profile& p, const ObjectVersion& r) {
  const uint32_t v = version_of(p);
  if (v == 0 || v < r.first || (r.last && v > r.last)) return false;
  return v > r.first || p.os->first_build >= r.first_build;
}

bool serves(const Profile& p, const CounterSet& set) {
  const ObjectVersion* named = object_version(set.name);
  const ObjectVersion* legacy = set.legacy_name ? object_version(set.legacy_name) : nullptr;
  return (named && serves(p, *named)) || (legacy && serves(p, *legacy));
}

const char* served_name(const Profile& p, const CounterSet& set) {
  const ObjectVersion* legacy = set.legacy_name ? object_version(set.legacy_name) : nullptr;
  return legacy && serves(p, *legacy) ? set.legacy_name : set.name;
}

}  // namespace perfsim::synth
