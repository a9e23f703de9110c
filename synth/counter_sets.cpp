// Counter sets: the objects added to the first catalogue, Perflib V1 objects of extensible
// providers (Tcpip, PerfNet, ...) and Perflib V2 counter sets alike (which is which, and from which
// Windows version on: versions.cpp); perfsim registers their names after the standard objects, so
// their title indices lie above Base Index. Names are the English (009) ones; counter types are
// those the WMI class of each set documents (Win32_PerfRawData_Counters_ProcessorInformation,
// learn.microsoft.com; synth/README.md has the table); help texts are short paraphrases.
#include "perfdata/winperf.h"
#include "synth/profiles.h"

namespace perfsim::synth {
namespace {

using namespace winperf;

using os_version::kWin10;  // counters added later than their set (SetCounter::since)
using os_version::kWin7;   // counters dropped after their version (SetCounter::until)
using os_version::kWin8;

CounterSet processor_information() {
  return {Family::kProcessorInformation,
          "Processor Information",
          "Counters for each processor, named NUMA node,processor, with node and system totals.",
          "Counters",
          true,
          {
              {"% Processor Time", "Percentage of elapsed time the processor ran non-idle threads.",
               PERF_100NSEC_TIMER_INV},
              {"% User Time", "Percentage of elapsed time spent in user mode.", PERF_100NSEC_TIMER},
              {"% Privileged Time", "Percentage of elapsed time spent in privileged mode.", PERF_100NSEC_TIMER},
              {"Interrupts/sec", "Rate of hardware interrupts the processor serviced.", PERF_COUNTER_COUNTER},
              {"% DPC Time", "Percentage of time spent on deferred procedure calls.", PERF_100NSEC_TIMER},
              {"% Interrupt Time", "Percentage of time spent servicing hardware interrupts.", PERF_100NSEC_TIMER},
              {"DPCs Queued/sec", "Rate at which DPCs are queued on the processor.", PERF_COUNTER_COUNTER},
              {"DPC Rate", "Rate at which DPCs are queued between clock ticks.", PERF_COUNTER_RAWCOUNT},
              {"% Idle Time", "Percentage of time the processor was idle.", PERF_100NSEC_TIMER},
              {"% C1 Time", "Percentage of time spent in the C1 idle state.", PERF_100NSEC_TIMER},
              {"% C2 Time", "Percentage of time spent in the C2 idle state.", PERF_100NSEC_TIMER},
              {"% C3 Time", "Percentage of time spent in the C3 idle state.", PERF_100NSEC_TIMER},
              {"C1 Transitions/sec", "Rate of entries into the C1 state.", PERF_COUNTER_BULK_COUNT},
              {"C2 Transitions/sec", "Rate of entries into the C2 state.", PERF_COUNTER_BULK_COUNT},
              {"C3 Transitions/sec", "Rate of entries into the C3 state.", PERF_COUNTER_BULK_COUNT},
              {"% Priority Time", "Percentage of elapsed time the processor ran threads that are not low priority.",
               PERF_100NSEC_TIMER_INV},
              {"Parking Status", "Whether the processor is parked (1) or not (0).", PERF_COUNTER_RAWCOUNT},
              {"Processor Frequency", "Current frequency of the processor, in megahertz.", PERF_COUNTER_RAWCOUNT},
              {"% of Maximum Frequency", "Current frequency as a percentage of the maximum.", PERF_COUNTER_RAWCOUNT},
              {"Processor State Flags", "Flags describing the processor's state.", PERF_COUNTER_RAWCOUNT},
              {"Clock Interrupts/sec", "Rate of clock tick interrupts the processor serviced.", PERF_COUNTER_COUNTER, 0,
               PERF_DETAIL_NOVICE, kWin8},
              {"Average Idle Time", "Average idle time between breaks, as a share of the interval.",
               PERF_PRECISION_100NS_TIMER, PERF_PRECISION_TIMESTAMP, PERF_DETAIL_NOVICE, kWin8},
              {"Idle Break Events/sec", "Rate at which the processor left the idle state.", PERF_COUNTER_BULK_COUNT, 0,
               PERF_DETAIL_NOVICE, kWin8},
              {"% Processor Performance", "Work done, as a percentage of what the nominal frequency would do.",
               PERF_AVERAGE_BULK, PERF_AVERAGE_BASE, PERF_DETAIL_NOVICE, kWin8},
              {"% Processor Utility", "Busy time scaled by % Processor Performance.", PERF_AVERAGE_BULK,
               PERF_AVERAGE_BASE, PERF_DETAIL_NOVICE, kWin8},
              {"% Privileged Utility", "Privileged time scaled by % Processor Performance.", PERF_AVERAGE_BULK,
               PERF_AVERAGE_BASE, PERF_DETAIL_NOVICE, kWin8},
              {"% Performance Limit", "Percentage of nominal performance a limit takes away.", PERF_COUNTER_RAWCOUNT, 0,
               PERF_DETAIL_NOVICE, kWin10},
              {"Performance Limit Flags", "Why the processor's performance is limited.", PERF_COUNTER_RAWCOUNT, 0,
               PERF_DETAIL_NOVICE, kWin10},
          }};
}

constexpr uint32_t R = PERF_COUNTER_RAWCOUNT, C = PERF_COUNTER_COUNTER, B = PERF_COUNTER_BULK_COUNT;

// A counter whose help is its name's meaning, said once for the protocol objects' many counters.
SetCounter n(const char* name, uint32_t type) { return {name, name, type}; }

// TCPv4 and TCPv6 (Win32_PerfRawData_Tcpip_TCPv4 / _TCPv6): the same counters. Windows 2000 to
// 2003 served TCPv4's counters as "TCP" (Win32_PerfRawData_Tcpip_TCP), and likewise IP and UDP;
// Vista split the IP stack's objects by IP version.
CounterSet tcp(bool v6) {
  return {v6 ? Family::kTcpV6 : Family::kTcpV4,
          v6 ? "TCPv6" : "TCPv4",
          "TCP segments and connections over IP version 4 or 6.",
          "Tcpip",
          false,
          {n("Segments/sec", C), n("Connections Established", R), n("Connections Active", R),
           n("Connections Passive", R), n("Connection Failures", R), n("Connections Reset", R),
           n("Segments Received/sec", C), n("Segments Sent/sec", C), n("Segments Retransmitted/sec", C)},
          v6 ? nullptr : "TCP"};
}

// IPv4 and IPv6 (Win32_PerfRawData_Tcpip_IPv4 / _IPv6); IP before Vista.
CounterSet ip(bool v6) {
  return {v6 ? Family::kIpV6 : Family::kIpV4,
          v6 ? "IPv6" : "IPv4",
          "IP datagrams and fragments of IP version 4 or 6.",
          "Tcpip",
          false,
          {n("Datagrams/sec", C), n("Datagrams Received/sec", C), n("Datagrams Received Header Errors", R),
           n("Datagrams Received Address Errors", R), n("Datagrams Forwarded/sec", C),
           n("Datagrams Received Unknown Protocol", R), n("Datagrams Received Discarded", R),
           n("Datagrams Received Delivered/sec", C), n("Datagrams Sent/sec", C), n("Datagrams Outbound Discarded", R),
           n("Datagrams Outbound No Route", R), n("Fragments Received/sec", C), n("Fragments Re-assembled/sec", C),
           n("Fragment Re-assembly Failures", R), n("Fragmented Datagrams/sec", C), n("Fragmentation Failures", R),
           n("Fragments Created/sec", C)},
          v6 ? nullptr : "IP"};
}

// UDPv4 and UDPv6 (Win32_PerfRawData_Tcpip_UDPv4 / _UDPv6); UDP before Vista.
CounterSet udp(bool v6) {
  return {v6 ? Family::kUdpV6 : Family::kUdpV4,
          v6 ? "UDPv6" : "UDPv4",
          "UDP datagrams over IP version 4 or 6.",
          "Tcpip",
          false,
          {n("Datagrams/sec", C), n("Datagrams Received/sec", C), n("Datagrams No Port/sec", C),
           n("Datagrams Received Errors", R), n("Datagrams Sent/sec", C)},
          v6 ? nullptr : "UDP"};
}

// ICMP (Win32_PerfRawData_Tcpip_ICMP), served since Windows 2000.
CounterSet icmp() {
  return {Family::kIcmp,
          "ICMP",
          "ICMP messages received and sent over IP version 4.",
          "Tcpip",
          false,
          {n("Messages/sec", C),
           n("Messages Received/sec", C),
           n("Messages Received Errors", R),
           n("Received Dest. Unreachable", R),
           n("Received Time Exceeded", R),
           n("Received Parameter Problem", R),
           n("Received Source Quench", R),
           n("Received Redirect/sec", C),
           n("Received Echo/sec", C),
           n("Received Echo Reply/sec", C),
           n("Received Timestamp/sec", C),
           n("Received Timestamp Reply/sec", C),
           n("Received Address Mask", R),
           n("Received Address Mask Reply", R),
           n("Messages Sent/sec", C),
           n("Messages Outbound Errors", R),
           n("Sent Destination Unreachable", R),
           n("Sent Time Exceeded", R),
           n("Sent Parameter Problem", R),
           n("Sent Source Quench", R),
           n("Sent Redirect/sec", C),
           n("Sent Echo/sec", C),
           n("Sent Echo Reply/sec", C),
           n("Sent Timestamp/sec", C),
           n("Sent Timestamp Reply/sec", C),
           n("Sent Address Mask", R),
           n("Sent Address Mask Reply", R)}};
}

// ICMPv6 (Win32_PerfRawData_Tcpip_ICMPv6).
CounterSet icmp6() {
  return {Family::kIcmpV6,
          "ICMPv6",
          "ICMP messages received and sent over IP version 6.",
          "Tcpip",
          false,
          {n("Messages/sec", C),
           n("Messages Received/sec", C),
           n("Messages Received Errors", R),
           n("Received Dest. Unreachable", R),
           n("Received Packet Too Big", R),
           n("Received Time Exceeded", R),
           n("Received Parameter Problem", R),
           n("Received Echo/sec", C),
           n("Received Echo Reply/sec", C),
           n("Received Membership Query", R),
           n("Received Membership Report", R),
           n("Received Membership Reduction", R),
           n("Received Router Solicit", R),
           n("Received Router Advert", R),
           n("Received Neighbor Solicit", R),
           n("Received Neighbor Advert", R),
           n("Received Redirect/sec", C),
           n("Messages Sent/sec", C),
           n("Messages Outbound Errors", R),
           n("Sent Destination Unreachable", R),
           n("Sent Packet Too Big", R),
           n("Sent Time Exceeded", R),
           n("Sent Parameter Problem", R),
           n("Sent Echo/sec", C),
           n("Sent Echo Reply/sec", C),
           n("Sent Membership Query", R),
           n("Sent Membership Report", R),
           n("Sent Membership Reduction", R),
           n("Sent Router Solicit", R),
           n("Sent Router Advert", R),
           n("Sent Neighbor Solicit", R),
           n("Sent Neighbor Advert", R),
           n("Sent Redirect/sec", C)}};
}

// Network Adapter (Win32_PerfRawData_Tcpip_NetworkAdapter): Network Interface's counters, per
// adapter, plus the offload counters of 2012.
CounterSet network_adapter() {
  return {Family::kNetworkAdapter,
          "Network Adapter",
          "Bytes and packets of each network adapter.",
          "Tcpip",
          true,
          {n("Bytes Total/sec", B),
           n("Packets/sec", C),
           n("Packets Received/sec", C),
           n("Packets Sent/sec", C),
           n("Current Bandwidth", R),
           n("Bytes Received/sec", B),
           n("Packets Received Unicast/sec", C),
           n("Packets Received Non-Unicast/sec", C),
           n("Packets Received Discarded", R),
           n("Packets Received Errors", R),
           n("Packets Received Unknown", R),
           n("Bytes Sent/sec", B),
           n("Packets Sent Unicast/sec", C),
           n("Packets Sent Non-Unicast/sec", C),
           n("Packets Outbound Discarded", R),
           n("Packets Outbound Errors", R),
           n("Output Queue Length", R),
           n("Offloaded Connections", PERF_COUNTER_LARGE_RAWCOUNT),
           {"TCP Active RSC Connections", "TCP Active RSC Connections", PERF_COUNTER_LARGE_RAWCOUNT, 0,
            PERF_DETAIL_NOVICE, kWin8},
           {"TCP RSC Coalesced Packets/sec", "TCP RSC Coalesced Packets/sec", B, 0, PERF_DETAIL_NOVICE, kWin8},
           {"TCP RSC Exceptions/sec", "TCP RSC Exceptions/sec", B, 0, PERF_DETAIL_NOVICE, kWin8},
           {"TCP RSC Average Packet Size", "TCP RSC Average Packet Size", PERF_COUNTER_LARGE_RAWCOUNT, 0,
            PERF_DETAIL_NOVICE, kWin8}}};
}

// Process V2 (Win32_PerfRawData_Counters_ProcessV2): Process's counters per "name:pid" instance,
// IDs and sizes 64-bit; Server 2022 (build 20348) serves it, with or without the legacy Process.
CounterSet process_v2() {
  constexpr uint32_t L = PERF_COUNTER_LARGE_RAWCOUNT, T = PERF_100NSEC_TIMER;
  return {Family::kProcessV2,
          "Process V2",
          "Counters for the running processes, one instance per name:process ID.",
          "Counters",
          true,
          {n("% Processor Time", T),
           n("% User Time", T),
           n("% Privileged Time", T),
           n("Virtual Bytes Peak", L),
           n("Virtual Bytes", L),
           n("Page Faults/sec", C),
           n("Working Set Peak", L),
           n("Working Set", L),
           n("Page File Bytes Peak", L),
           n("Page File Bytes", L),
           n("Private Bytes", L),
           n("Thread Count", R),
           n("Priority Base", R),
           n("Elapsed Time", PERF_ELAPSED_TIME),
           n("Process ID", L),
           n("Creating Process ID", L),
           n("Pool Paged Bytes", L),
           n("Pool Nonpaged Bytes", L),
           n("Handle Count", R),
           n("IO Read Operations/sec", B),
           n("IO Write Operations/sec", B),
           n("IO Data Operations/sec", B),
           n("IO Other Operations/sec", B),
           n("IO Read Bytes/sec", B),
           n("IO Write Bytes/sec", B),
           n("IO Data Bytes/sec", B),
           n("IO Other Bytes/sec", B),
           n("Working Set - Private", L)}};
}

// Cache (Win32_PerfRawData_PerfOS_Cache): the file system cache's activity; hit ratios are
// sample fractions (hits over tries).
CounterSet cache() {
  constexpr uint32_t F = PERF_SAMPLE_FRACTION, FB = PERF_SAMPLE_BASE;
  return {
      Family::kCache,
      "Cache",
      "Activity of the file system cache, which keeps recently used disk data in memory.",
      "PerfOS",
      false,
      {n("Data Maps/sec", C),
       n("Sync Data Maps/sec", C),
       n("Async Data Maps/sec", C),
       {"Data Map Hits %", "Data Map Hits %", F, FB},
       n("Data Map Pins/sec", C),
       n("Pin Reads/sec", C),
       n("Sync Pin Reads/sec", C),
       n("Async Pin Reads/sec", C),
       {"Pin Read Hits %", "Pin Read Hits %", F, FB},
       n("Copy Reads/sec", C),
       n("Sync Copy Reads/sec", C),
       n("Async Copy Reads/sec", C),
       {"Copy Read Hits %", "Copy Read Hits %", F, FB},
       n("MDL Reads/sec", C),
       n("Sync MDL Reads/sec", C),
       n("Async MDL Reads/sec", C),
       {"MDL Read Hits %", "MDL Read Hits %", F, FB},
       n("Read Aheads/sec", C),
       n("Fast Reads/sec", C),
       n("Sync Fast Reads/sec", C),
       n("Async Fast Reads/sec", C),
       n("Fast Read Resource Misses/sec", C),
       n("Fast Read Not Possibles/sec", C),
       n("Lazy Write Flushes/sec", C),
       n("Lazy Write Pages/sec", C),
       n("Data Flushes/sec", C),
       n("Data Flush Pages/sec", C),
       {"Dirty Pages", "Dirty Pages", PERF_COUNTER_LARGE_RAWCOUNT, 0, PERF_DETAIL_NOVICE, kWin8},
       {"Dirty Page Threshold", "Dirty Page Threshold", PERF_COUNTER_LARGE_RAWCOUNT, 0, PERF_DETAIL_NOVICE, kWin8}}};
}

// Server (Win32_PerfRawData_PerfNet_Server): the SMB server service.
CounterSet server() {
  return {Family::kServer,
          "Server",
          "Communication between this computer and the network through the Server service.",
          "PerfNet",
          false,
          {n("Bytes Total/sec", B),
           n("Bytes Received/sec", B),
           n("Bytes Transmitted/sec", B),
           n("Sessions Timed Out", R),
           n("Sessions Errored Out", R),
           n("Sessions Logged Off", R),
           n("Sessions Forced Off", R),
           n("Errors Logon", R),
           n("Errors Access Permissions", R),
           n("Errors Granted Access", R),
           n("Errors System", R),
           n("Blocking Requests Rejected", R),
           n("Work Item Shortages", R),
           n("Files Opened Total", R),
           n("Files Open", R),
           n("Server Sessions", R),
           n("File Directory Searches", R),
           n("Pool Nonpaged Bytes", R),
           n("Pool Nonpaged Failures", R),
           n("Pool Nonpaged Peak", R),
           n("Pool Paged Bytes", R),
           n("Pool Paged Failures", R),
           n("Pool Paged Peak", R),
           n("Context Blocks Queued/sec", C),
           n("Logon/sec", C),
           n("Logon Total", R)}};
}

// Server Work Queues (Win32_PerfRawData_PerfNet_ServerWorkQueues): one queue per processor and
// the blocking queue.
CounterSet server_work_queues() {
  return {Family::kServerWorkQueues,
          "Server Work Queues",
          "The Server service's work queues: one per processor and the blocking queue.",
          "PerfNet",
          true,
          {n("Queue Length", R), n("Active Threads", R), n("Available Threads", R), n("Available Work Items", R),
           n("Borrowed Work Items", R), n("Work Item Shortages", R), n("Current Clients", R),
           n("Bytes Received/sec", B), n("Bytes Sent/sec", B), n("Bytes Transferred/sec", B),
           n("Read Operations/sec", B), n("Read Bytes/sec", B), n("Write Operations/sec", B), n("Write Bytes/sec", B),
           n("Total Bytes/sec", B), n("Total Operations/sec", B), n("Context Blocks Queued/sec", C)}};
}

// Redirector (Win32_PerfRawData_PerfNet_Redirector): the SMB client.
CounterSet redirector() {
  return {Family::kRedirector,
          "Redirector",
          "Network connections from this computer to other computers' shares (the SMB client).",
          "PerfNet",
          false,
          {n("Bytes Total/sec", B),
           n("File Data Operations/sec", C),
           n("Packets/sec", B),
           n("Bytes Received/sec", B),
           n("Packets Received/sec", B),
           n("Read Bytes Paging/sec", B),
           n("Read Bytes Non-Paging/sec", B),
           n("Read Bytes Cache/sec", B),
           n("Read Bytes Network/sec", B),
           n("Bytes Transmitted/sec", B),
           n("Packets Transmitted/sec", B),
           n("Write Bytes Paging/sec", B),
           n("Write Bytes Non-Paging/sec", B),
           n("Write Bytes Cache/sec", B),
           n("Write Bytes Network/sec", B),
           n("File Read Operations/sec", C),
           n("Read Operations Random/sec", C),
           n("Read Packets/sec", C),
           n("Reads Large/sec", C),
           n("Read Packets Small/sec", C),
           n("File Write Operations/sec", C),
           n("Write Operations Random/sec", C),
           n("Write Packets/sec", C),
           n("Writes Large/sec", C),
           n("Write Packets Small/sec", C),
           n("Reads Denied/sec", C),
           n("Writes Denied/sec", C),
           n("Network Errors/sec", C),
           n("Server Sessions", R),
           n("Server Reconnects", R),
           n("Connects Core", R),
           n("Connects LAN Manager 2.0", R),
           n("Connects LAN Manager 2.1", R),
           n("Connects Windows NT", R),
           n("Server Disconnects", R),
           n("Server Sessions Hung", R),
           n("Current Commands", R)}};
}

// Browser (Win32_PerfRawData_PerfNet_Browser; types from the Windows counter reference).
CounterSet browser() {
  return {Family::kBrowser,
          "Browser",
          "Announcements, enumerations and other transmissions of the Computer Browser service.",
          "PerfNet",
          false,
          {n("Announcements Server/sec", B),
           n("Announcements Domain/sec", B),
           n("Announcements Total/sec", B),
           n("Election Packets/sec", C),
           n("Mailslot Writes/sec", C),
           n("Server List Requests/sec", C),
           n("Enumerations Server/sec", C),
           n("Enumerations Domain/sec", C),
           n("Enumerations Other/sec", C),
           n("Enumerations Total/sec", C),
           n("Server Announce Allocations Failed/sec", C),
           n("Mailslot Allocations Failed", R),
           n("Missed Server Announcements", R),
           n("Missed Mailslot Datagrams", R),
           n("Missed Server List Requests", R),
           n("Mailslot Receives Failed", R),
           n("Mailslot Writes Failed", R),
           n("Mailslot Opens Failed/sec", C),
           n("Duplicate Master Announcements", R),
           n("Illegal Datagrams/sec", B)}};
}

// Terminal Services (Win32_PerfRawData_LocalSessionManager_TerminalServices): session counts.
CounterSet terminal_services() {
  return {Family::kTerminalServices,
          "Terminal Services",
          "Remote Desktop Services session counts.",
          "LSM",
          false,
          {n("Active Sessions", R), n("Inactive Sessions", R), n("Total Sessions", R)}};
}

// Thermal Zone Information (Win32_PerfRawData_Counters_ThermalZoneInformation), one ACPI zone.
CounterSet thermal_zone() {
  return {Family::kThermalZone,
          "Thermal Zone Information",
          "Temperatures and throttling of the ACPI thermal zones.",
          "Counters",
          true,
          {n("Temperature", R),
           n("% Passive Limit", R),
           n("Throttle Reasons", R),
           {"High Precision Temperature", "High Precision Temperature", R, 0, PERF_DETAIL_NOVICE, kWin10}}};
}

// NUMA Node Memory (Win32_PerfRawData_Counters_NUMANodeMemory): one node, Memory's totals.
CounterSet numa_node_memory() {
  return {Family::kNumaNodeMemory,
          "NUMA Node Memory",
          "Physical memory of each NUMA node, in megabytes.",
          "Counters",
          true,
          {n("Total MBytes", R), n("Free & Zero Page List MBytes", R), n("Available MBytes", R),
           n("Standby List MBytes", R), n("Modified List MBytes", R)}};
}

// Print Queue (Win32_PerfRawData_Spooler_PrintQueue): one printer and _Total.
CounterSet print_queue() {
  return {Family::kPrintQueue,
          "Print Queue",
          "Jobs, pages and errors of each print queue.",
          "Spooler",
          true,
          {n("Total Jobs Printed", R), n("Bytes Printed/sec", B), n("Total Pages Printed", R), n("Jobs", R),
           n("References", R), n("Max References", R), n("Jobs Spooling", R), n("Max Jobs Spooling", R),
           n("Out of Paper Errors", R), n("Not Ready Errors", R), n("Job Errors", R),
           n("Enumerate Network Printer Calls", R), n("Add Network Printer Calls", R)}};
}

constexpr uint32_t L = PERF_COUNTER_LARGE_RAWCOUNT, T = PERF_100NSEC_TIMER;

// Terminal Services Session (Win32_PerfRawData_TermService_TerminalServicesSession): per session,
// the Process counters of its processes and the session's protocol traffic. The Process counters
// and the traffic counters' types are those the Windows Server 2003 counter reference lists for
// the object (technet cc960280); served from Vista, whose Process byte counters are 64-bit. The
// traffic counters (bytes, frames, errors) end with 6.1 (Windows 7 / 2008 R2): Windows 8 / 2012
// on register only the Process counters for the object (real `lodctr /s` backups of Windows 8+
// hosts lack the traffic counters' names, issue 45 section 3; windows_exporter's terminal_services
// collector reads just those 15), and RDP 8's per-session traffic is the RemoteFX Network object's.
CounterSet terminal_services_session() {
  auto traffic = [](const char* name, uint32_t type) { return SetCounter{name, name, type, 0, 100, 0, kWin7}; };
  return {Family::kTerminalServicesSession,
          "Terminal Services Session",
          "Resources and protocol traffic of each Terminal Services session.",
          "TermService",
          true,
          {n("% Processor Time", T),     n("% User Time", T),         n("% Privileged Time", T),
           n("Thread Count", R),         n("Handle Count", R),        n("Page Faults/sec", C),
           n("Working Set", L),          n("Working Set Peak", L),    n("Virtual Bytes", L),
           n("Virtual Bytes Peak", L),   n("Private Bytes", L),       n("Page File Bytes", L),
           n("Page File Bytes Peak", L), n("Pool Paged Bytes", R),    n("Pool Nonpaged Bytes", R),
           traffic("Input Bytes", C),    traffic("Output Bytes", C),  traffic("Total Bytes", C),
           traffic("Input Frames", C),   traffic("Output Frames", C), traffic("Total Frames", C),
           traffic("Input Errors", R),   traffic("Output Errors", R), traffic("Total Errors", R)}};
}

// Job Object (Win32_PerfRawData_PerfProc_JobObject): each named job's processes.
CounterSet job_object() {
  return {Family::kJobObject,
          "Job Object",
          "Processor time, page faults and processes of each named job object.",
          "PerfProc",
          true,
          {n("Current % Processor Time", T), n("Current % User Mode Time", T), n("Current % Kernel Mode Time", T),
           n("This Period mSec - Processor", L), n("This Period mSec - User Mode", L),
           n("This Period mSec - Kernel Mode", L), n("Pages/Sec", C), n("Process Count - Total", R),
           n("Process Count - Active", R), n("Process Count - Terminated", R), n("Total mSec - Processor", L),
           n("Total mSec - User Mode", L), n("Total mSec - Kernel Mode", L)}};
}

}  // namespace

const std::vector<CounterSet>& counter_sets() {
  static const std::vector<CounterSet> v = {processor_information(),
                                            tcp(false),
                                            tcp(true),
                                            ip(false),
                                            ip(true),
                                            udp(false),
                                            udp(true),
                                            icmp(),
                                            icmp6(),
                                            network_adapter(),
                                            process_v2(),
                                            cache(),
                                            server(),
                                            server_work_queues(),
                                            redirector(),
                                            browser(),
                                            terminal_services(),
                                            thermal_zone(),
                                            numa_node_memory(),
                                            print_queue(),
                                            terminal_services_session(),
                                            job_object()};
  return v;
}

void register_counter_sets(const Profile& p, std::vector<ObjectDesc>* objects, std::vector<NameDef>* names) {
  const uint32_t version = version_of(p);
  uint32_t next = (p.host.base_index + 2) & ~1u;  // the first even index above Base Index
  auto take = [&](const char* name, const char* help) {
    const uint32_t i = next;
    next += 2;
    if (names) names->push_back({i, name, help});
    return i;
  };
  for (const CounterSet& set : counter_sets()) {
    if (!serves(p, set)) continue;
    ObjectDesc o;
    o.index = take(served_name(p, set), set.help);
    o.provider = set.provider;
    o.multi = set.multi;
    o.family = set.family;
    o.perflib = object_version(served_name(p, set))->perflib;
    for (const SetCounter& c : set.counters) {
      if (c.since > version || (c.until && c.until < version)) continue;
      const uint32_t i = take(c.name, c.help);
      o.counters.push_back({i, c.type, size_for(c.type), c.detail, 0, c.name});
      o.object_timer |= c.type == PERF_ELAPSED_TIME;  // Elapsed Time needs the 100 ns object clock
      if (c.base) o.counters.push_back({i, c.base, size_for(c.base), c.detail, 0, c.name});
    }
    if (objects) objects->push_back(std::move(o));
  }
}

}  // namespace perfsim::synth
