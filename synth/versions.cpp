// The version table (profiles.h ObjectVersion): which Windows versions serve each object of the
// synth catalogue under which name, and whether Perflib keeps its names as V1 strings (in
// Perflib\<LLL>, what `lodctr /s` backs up) or as a V2 counter set's (the provider's manifest and
// binary: Microsoft, "Performance Counters Schema", learn.microsoft.com/windows/win32/perfctrs/
// performance-counters-schema). Sources, as the `source` column cites them:
//  - "NT5 2003": the Windows Server 2003 source as published (github selfrender/Windows-Server-2003,
//    the SP1/SP2 code base): public/sdk/inc/ntprfctr.h (the standard objects' and the TCP/IP
//    objects' fixed title indices, V1) and base/screg/winreg/cntrtext/perfini/usa/perfc009.ini (the
//    English names at them: 546 IPv4, 548 IPv6, 582 ICMP, 638 TCPv4, 658 UDPv4, 1530 TCPv6, 1532
//    UDPv6, 1534 ICMPv6, 86 Cache, 52 Browser, 262 Redirector, 330 Server, 1300 Server Work
//    Queues, 1450 Print Queue, 1500 Job Object).
//  - "NT5 XP SP1": the Windows XP SP1 source (github tongzx/nt5src, Source/XPSP1/NT/.../perfini/
//    usa/perfc009.ini): 546 IP, 582 ICMP, 638 TCP, 658 UDP, no IPv6 objects; Windows 2000 names
//    them the same (Win32_PerfRawData_Tcpip_TCP, _IP, _UDP).
//  - WMI classes (learn.microsoft.com, cimwin32prov and previous-versions): the class of a V1
//    object is named after its service (Win32_PerfRawData_Tcpip_NetworkAdapter, _PerfOS_Cache), a
//    V2 counter set's after its manifest provider (Win32_PerfRawData_Counters_ProcessorInformation,
//    _LocalSessionManager_TerminalServices); Win32_PerfRawData_TermService_TerminalServices
//    (aa394343) says the Terminal Services object of XP and 2003 came from the TermService
//    performance library (V1), which Vista's Local Session Manager counter set replaced.
//  - the .NET Framework's CLR objects (service .NETFramework, netfxperf.dll: an extensible counter
//    DLL whose strings LodCtr loads, V1) come with the framework, which the OS includes from
//    Server 2003 on (windows/os.cpp dotnet_framework cites Microsoft's ".NET Framework versions
//    and dependencies"); the 2003 source's netfx build has them (com/netfx/binary_release/i386/
//    fre/corperfmonsymbols.h). Older hosts get them with `--role dotnet` (synth/roles/dotnet.toml).
//  - issue 30: real `lodctr /s` backups of a 2008-era host (no Terminal Services) and of five
//    Windows 8+ hosts (no Processor Information, Thermal Zone Information, Terminal Services):
//    the V2 sets are the ones a V1 backup lacks.
#include <string_view>

#include "synth/profiles.h"

namespace perfsim::synth {
namespace {

using namespace os_version;
constexpr Perflib V1 = Perflib::kV1, V2 = Perflib::kV2;

const char kNt5Std[] = "NT5 2003 ntprfctr.h (fixed index) and perfc009.ini; NT 4.0 or earlier";
const char kNt5Xp[] = "NT5 XP SP1 perfc009.ini (546 IP, 582 ICMP, 638 TCP, 658 UDP)";
const char kNetfx[] = "the OS's .NET Framework (windows/os.cpp); NT5 2003 netfx corperfmonsymbols.h";
const char kNt5Ip[] = "NT5 2003 perfc009.ini (546 IPv4, 548 IPv6, 638 TCPv4, 658 UDPv4, 1530-1534 v6)";

}  // namespace

const std::vector<ObjectVersion>& object_versions() {
  // clang-format off
  static const std::vector<ObjectVersion> v = {
      // The standard objects: every profile (perfsim's oldest is NT 4.0; they are older).
      {"System", kNt4, 0, 0, V1, kNt5Std},
      {"Memory", kNt4, 0, 0, V1, kNt5Std},
      {"Processor", kNt4, 0, 0, V1, kNt5Std},
      {"Objects", kNt4, 0, 0, V1, kNt5Std},
      {"Process", kNt4, 0, 0, V1, kNt5Std},
      {"Thread", kNt4, 0, 0, V1, kNt5Std},
      {"PhysicalDisk", kNt4, 0, 0, V1, kNt5Std},
      {"LogicalDisk", kNt4, 0, 0, V1, kNt5Std},
      {"Network Interface", kNt4, 0, 0, V1, kNt5Std},
      {"Paging File", kNt4, 0, 0, V1, kNt5Std},
      {"Process Address Space", kNt4, 0, 0, V1, kNt5Std},
      {"Image", kNt4, 0, 0, V1, kNt5Std},
      {"Thread Details", kNt4, 0, 0, V1, kNt5Std},
      // The TCP/IP objects (Tcpip, perfctrs.dll): renamed and joined by IPv6's in the 2003 code base.
      {"TCP", k2000, 0, kXp, V1, kNt5Xp},
      {"IP", k2000, 0, kXp, V1, kNt5Xp},
      {"UDP", k2000, 0, kXp, V1, kNt5Xp},
      {"ICMP", k2000, 0, 0, V1, kNt5Xp},
      {"TCPv4", k2003, 0, 0, V1, kNt5Ip},
      {"TCPv6", k2003, 0, 0, V1, kNt5Ip},
      {"IPv4", k2003, 0, 0, V1, kNt5Ip},
      {"IPv6", k2003, 0, 0, V1, kNt5Ip},
      {"UDPv4", k2003, 0, 0, V1, kNt5Ip},
      {"UDPv6", k2003, 0, 0, V1, kNt5Ip},
      {"ICMPv6", k2003, 0, 0, V1, kNt5Ip},
      {"Network Adapter", kWin7, 0, 0, V1, "Win32_PerfRawData_Tcpip_NetworkAdapter (service Tcpip)"},
      // V1 objects of PerfOS, PerfNet, the spooler and PerfProc.
      {"Cache", k2000, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 86; Win32_PerfRawData_PerfOS_Cache"},
      {"Server", k2000, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 330; Win32_PerfRawData_PerfNet_Server"},
      {"Server Work Queues", k2000, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 1300; Win32_PerfRawData_PerfNet_ServerWorkQueues"},
      {"Redirector", k2000, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 262; Win32_PerfRawData_PerfNet_Redirector"},
      {"Browser", k2000, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 52; Win32_PerfRawData_PerfNet_Browser"},
      {"Print Queue", k2000, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 1450; Win32_PerfRawData_Spooler_PrintQueue"},
      // The CLR's objects, with the .NET Framework the OS includes (1.1 in 2003 ... 4.8 in 2022).
      {".NET CLR Memory", k2003, 0, 0, V1, kNetfx},
      {".NET CLR Exceptions", k2003, 0, 0, V1, kNetfx},
      {".NET CLR LocksAndThreads", k2003, 0, 0, V1, kNetfx},
      {".NET CLR Loading", k2003, 0, 0, V1, kNetfx},
      // Windows has Job Object from XP (perfc009.ini 1500) and Terminal Services Session from XP
      // (TermService); perfsim serves the Vista forms (64-bit Process byte counters).
      {"Job Object", kVista, 0, 0, V1, "NT5 XP SP1/2003 perfc009.ini 1500; Win32_PerfRawData_PerfProc_JobObject"},
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
