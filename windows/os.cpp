// The rows. Sources:
// - versions and builds: Microsoft, "Operating System Version" (learn.microsoft.com/windows/win32/
//   sysinfo/operating-system-version) and "Windows Server release information"; Windows 10-based
//   servers keep CurrentVersion "6.3" and add CurrentMajorVersionNumber 10 (same page, "version
//   lie" for programs not manifested for Windows 10).
// - SMB dialects: [MS-SMB2] 1.7 and Appendix A (2.002 Vista/2008, 2.1 7/2008 R2, 3.0 8/2012,
//   3.0.2 8.1/2012 R2, 3.1.1 10/2016); older Windows spoke only NT LM 0.12 ([MS-CIFS] 1.7).
//   SMB1 (NT1) stays on by default up to 2016: Microsoft, "SMBv1 is not installed by default in
//   Windows 10 version 1709, Windows Server version 1709 and later versions" (support.microsoft.com
//   KB 4034314), and "How to detect, enable and disable SMBv1, SMBv2, and SMBv3 in Windows"
//   (learn.microsoft.com/windows-server/storage/file-server/troubleshoot/detect-enable-and-disable-
//   smbv1-v2-v3): "SMB 1.0 isn't installed by default in any edition of Windows 11 or Windows
//   Server 2019 and later". So 2008-2016 rows start at NT1, 2019/2022 at SMB2_02; the
//   smb1-disabled quirk (replayer/quirk_table.cpp) is a host whose admin removed SMB1.
// - synth memory sizes: within what each version's x86 editions address (Microsoft, "Memory Limits
//   for Windows and Windows Server Releases": 4 GB for 2000 Server, XP, 2003 Standard) and what
//   hosts of the era had; 32-bit rows keep memory + paging file below 4 GB (their counters are DWORDs).
// - .NET Framework included in the OS (its CLR performance counters with it, .NETFramework service):
//   Microsoft, ".NET Framework versions and dependencies" (learn.microsoft.com/dotnet/framework/
//   migration-guide/versions-and-dependencies; github dotnet/docs), "Included in" Windows Server:
//   1.1 and 2.0 in 2003, 2.0 in 2008 SP2 and 2008 R2 SP1 (3.0 and 3.5 there only as features to
//   enable), 4.5 in 2012, 4.5.1 in 2012 R2, 4.6.2 in 2016, 4.7.2 in 2019, 4.8 in 2022 ("install/
//   on-server-2022": ".NET Framework 4.8 is included with Server 2022"). KB 2696944: "On Windows
//   Vista SP2 and Windows Server 2008 SP2, the .NET Framework 2.0 SP2 and the .NET Framework 3.0
//   SP2 are built into the operating system". Only the x86 editions of 2003 include 1.1 (Aaron
//   Stebner, Microsoft, "What version of the .NET Framework is included in what version of the
//   OS?"); the 2003 row is x86. The framework brings the CLR counter objects (Microsoft, .NET
//   Framework 1.1 "Performance Counters", learn.microsoft.com/previous-versions/dotnet/
//   netframework-1.1/w8f5kw2e: .NET CLR Memory, Loading, LocksAndThreads, Exceptions, ...).
//   NT 4.0, 2000 and XP Professional include none (a download).
// - quirk sets and PerfFreq: shared/docs/quirks.md (each quirk's own source there).
// - ERROR_MORE_DATA on HKEY_PERFORMANCE_DATA (more_data; windows/README.md, "A buffer too small",
//   says what is known and what is assumed): Microsoft, RegQueryValueEx (learn.microsoft.com/
//   windows/win32/api/winreg/nf-winreg-regqueryvalueexw): for HKEY_PERFORMANCE_DATA "the value
//   returned through the lpcbData parameter is undefined", grow the buffer and call again.
//   win2000: Zenoss (Chad Gibbons, "Oddities in Gathering Windows Performance Data", 2009-02-17):
//   "the size was always the same size as the input", success about 64 KB past it, a behaviour
//   "quite different than on the other Windows operating systems we have tried so far" (unnamed;
//   in 2009 chiefly 2003, which keeps MS-RRP's rrp-exact on that word alone).
//   2012 R2: impacket's hBaseRegQueryValue, which retries with the size the answer carries, hangs
//   reading "230" but reads "Counter 009" (fortra/impacket issue #1677): the perf data's size is
//   not usable, the name table's is. 2008-2012 and 2016-2022 are assumed to answer as 2012 R2
//   (HKPD through the Perflib V2 era's code, Vista on; unknown, so the answer a size-trusting
//   collector fails on); the size said (the offer, a NULL buffer 0) follows Windows 2000's echo
//   and Wine's conformance tests of real Windows (dlls/advapi32/tests/registry.c: NULL data ->
//   ERROR_MORE_DATA, size 0). Perflib itself never learns the size: a provider's Collect function
//   on a short buffer makes "no attempt ... to indicate the required buffer size" (Microsoft,
//   PM_COLLECT_PROC, learn.microsoft.com/windows/win32/api/winperf/nc-winperf-pm_collect_proc).
// - NTLM (accepts_ntlmv1): Microsoft, "Network security: LAN Manager authentication level"
//   (learn.microsoft.com/windows/security/threat-protection/security-policy-settings/network-security-
//   lan-manager-authentication-level): the level decides what a host sends as a client and what it
//   accepts as a server; at levels 0-3 "Domain controllers accept LM, NTLM, and NTLMv2
//   authentication", 4 refuses LM, only 5 refuses LM and NTLM. Defaults: 0 on 2000 (Windows 2000
//   Group Policy reference, technet cc938105: "The default setting for servers is Send LM & NTLM
//   responses"), 3 ("Send NTLMv2 response only") on stand-alone and member servers of 2008 R2 and
//   later (the page's default values). No version defaults to 5, so every Windows row accepts
//   NTLMv1 (rpc/README.md, "NTLMv1: accepted for every profile", decided so for DCE/RPC).
//   Samba: `ntlm auth` defaults to ntlmv2-only since 4.5 (smb.conf(5)), so the samba row refuses it.
//   LM responses: not modelled (no LM hash is kept; server/README.md, Known differences).
// - Guest (guest_enabled): Microsoft, "Accounts: Guest account status" (learn.microsoft.com/
//   windows/security/threat-protection/security-policy-settings/accounts-guest-account-status):
//   Disabled by default on stand-alone, member and DC servers; Microsoft's Forefront Client Security
//   "Guest Account check" (technet bb418978): "The Guest account is disabled by default in Microsoft
//   Windows Server 2003, Windows XP, and Windows 2000 Server" (XP's simple file sharing, ForceGuest,
//   is not modelled). NT 4.0: no Microsoft source found, so the nt4 row keeps perfsim's earlier
//   behaviour (enabled). Samba: `map to guest` defaults to Never (smb.conf(5)).
// - Null sessions and \PIPE\winreg (anonymous_winreg): Microsoft, "Network access: Restrict
//   anonymous access to Named Pipes and Shares" (RestrictNullSessAccess = 1: "Unauthenticated users
//   can access only the server pipes listed in the value of the NullSessionPipes entry"; Windows
//   2000 Registry Reference, technet cc957461, default 1; KB Q126645: "use of the Null Session is
//   restricted by default on Windows NT version 3.5"); winreg is in no version's default
//   NullSessionPipes ("Network access: Named Pipes that can be accessed anonymously"; [MS-SRVS]
//   3.1.6.17 is the lookup). So no Windows row lets a null session open winreg. Samba has no such
//   list (its `restrict anonymous` defaults to 0), so the samba row keeps allowing it.
// - Samba's version: its srvsvc/wkssvc and CurrentVersion value
//   (source3/registry/reg_backend_current_version.c) report lp_{major,minor}_announce_version(),
//   which source3/include/smb.h's SAMBA_{MAJOR,MINOR}_NBT_ANNOUNCE_VERSION set to 6.1 "to mimic
//   Win2K8R2"; that registry key has no CurrentBuildNumber.
#include "windows/os.h"

#include <algorithm>
#include <cstdlib>
#include <fmt/ranges.h>

#include "core/utf16.h"

namespace perfsim::windows {
namespace {

constexpr SmbDialectRange kNt1{"NT1", "NT1"};
// ERROR_MORE_DATA on perf data from Vista/2008 on: the size offered, not the size needed
// (windows/README.md, "A buffer too small"; the sources are at the top of this file).
constexpr char kEcho[] = "echo-offered";
constexpr char kPipeFirst[] = "pipe-not-available-first";  // RemoteRegistry trigger-started (8/2012+)
// RestrictRemoteClients defaults to "Authenticated" on client SKUs since XP SP2, "None" on servers
// (Microsoft's "Restrict Unauthenticated RPC clients" policy text; windows/README.md).
constexpr char kRestrictRemote[] = "restrict-remote-clients";

// 32-bit NT before XP: DWORD memory sizes, none of the XP or Vista counters.
SynthDefaults old_nt(int64_t perf_freq, uint64_t memory_mb) {
  return {perf_freq, false, false, false, 0x00010001, 1847, memory_mb};
}
// XP/2003: 32-bit, with the XP counters.
SynthDefaults xp_era(int64_t perf_freq, uint64_t memory_mb) {
  return {perf_freq, false, true, false, 0x00010001, 1847, memory_mb};
}
SynthDefaults modern(int64_t perf_freq, uint64_t memory_mb = 16384) {
  return {perf_freq, true, true, true, 0x00010001, 1847, memory_mb};
}

std::vector<OsProfile> make_rows() {
  std::vector<OsProfile> v;
  // One row per OS version, kept as a table.
  // clang-format off
  // NT 4.0: QPC from the 8254 PIT (1,193,182 Hz) on the usual uniprocessor HAL.
  v.push_back({"nt4", {}, "Microsoft Windows NT", "4.0", 4, 0, 0, "1381", 0, "Service Pack 6", true, kNt1,
               "nt4-unsettled", {}, old_nt(1193182, 256), true, true, false, ""});
  // 2000 reads the TSC for QPC (a 2 GHz CPU here).
  v.push_back({"win2000", {"2000"}, "Microsoft Windows 2000", "5.0", 5, 0, 0, "2195", 0, "Service Pack 4", true,
               kNt1, "win2000-echo-oversize", {}, old_nt(1995190000, 1024), true, false, false, ""});
  // XP is 32-bit with the XP counters; QPC is the TSC as on 2000 (a 2.4 GHz CPU here).
  v.push_back({"xp", {}, "Microsoft Windows XP", "5.1", 5, 1, 0, "2600", 0, "Service Pack 3", true, kNt1,
               "win32-undefined", {kRestrictRemote}, xp_era(2394010000, 2048), true, false, false, ""});
  // 2003 is 32-bit; QPC is the ACPI PM timer.
  v.push_back({"2003", {"2003r2"}, "Microsoft Windows Server 2003", "5.2", 5, 2, 0, "3790", 0, "Service Pack 2",
               true, kNt1, "rrp-exact", {}, xp_era(3579545, 2048), true, false, false, "1.1"});
  // Vista/2008 and 7/2008 R2 read the HPET.
  v.push_back({"2008", {"vista"}, "Windows Server (R) 2008 Standard", "6.0", 6, 0, 0, "6002", 0, "Service Pack 2",
               true, {"NT1", "SMB2_02"}, kEcho, {}, modern(14318180, 8192), true, false, false, "2.0 SP2"});
  v.push_back({"2008r2", {"7"}, "Windows Server 2008 R2 Standard", "6.1", 6, 1, 0, "7601", 0, "Service Pack 1",
               true, {"NT1", "SMB2_10"}, kEcho, {}, modern(14318180), true, false, false, "2.0 SP2"});
  // 8/2012 and 8.1/2012 R2 read the invariant TSC divided by 1024.
  v.push_back({"2012", {"8"}, "Windows Server 2012 Standard", "6.2", 6, 2, 0, "9200", 0, "", true,
               {"NT1", "SMB3_00"}, kEcho, {kPipeFirst}, modern(2533203), true, false, false, "4.5"});
  v.push_back({"2012r2", {"8.1"}, "Windows Server 2012 R2 Standard", "6.3", 6, 3, 0, "9600", 0, "", true,
               {"NT1", "SMB3_02"}, kEcho, {kPipeFirst}, modern(2533203), true, false, false, "4.5.1"});
  // Windows 10-based servers share 10.0 and a 10 MHz QPC; the build tells them apart.
  v.push_back({"2016", {"10"}, "Windows Server 2016 Standard", "6.3", 10, 0, 10, "14393", 14393, "", true,
               {"NT1", "SMB3_11"}, kEcho, {kPipeFirst}, modern(10000000), true, false, false, "4.6.2"});
  v.push_back({"2019", {}, "Windows Server 2019 Standard", "6.3", 10, 0, 10, "17763", 17763, "", true,
               {"SMB2_02", "SMB3_11"}, kEcho, {kPipeFirst}, modern(10000000), true, false, false, "4.7.2"});
  v.push_back({"2022", {}, "Windows Server 2022 Standard", "6.3", 10, 0, 10, "20348", 20348, "", true,
               {"SMB2_02", "SMB3_11"}, kEcho, {kPipeFirst, "process-v1-disabled"}, modern(10000000), true, false, false, "4.8"});
  // Samba says 6.1 with no build, like no Windows of its own: found by name only.
  v.push_back({"samba", {}, "Samba", "6.1", 6, 1, 0, "", 0, "", false, {"SMB2_02", "SMB3_11"}, "samba-truncate", {},
               modern(10000000), false, false, true, ""});
  // clang-format on
  return v;
}

bool named(const OsProfile& os, std::string_view name) {
  if (iequals(os.name, name)) return true;
  return std::any_of(os.aliases.begin(), os.aliases.end(), [&](std::string_view a) { return iequals(a, name); });
}

uint32_t to_number(std::string_view s) { return uint32_t(std::strtoul(std::string(s).c_str(), nullptr, 10)); }

}  // namespace

const std::vector<OsProfile>& os_profiles() {
  static const std::vector<OsProfile> rows = make_rows();
  return rows;
}

const OsProfile* find_os(std::string_view name) {
  for (const OsProfile& os : os_profiles())
    if (named(os, name)) return &os;
  // smbd's lookup always took "win2008", "winxp", "win7" for the bare names; keep that for all.
  if (name.size() > 3 && iequals(name.substr(0, 3), "win")) return find_os(name.substr(3));
  return nullptr;
}

Status check_os_name(std::string_view name) {
  if (find_os(name)) return Status::Ok();
  return Status::NotFound("unknown profile '" + std::string(name) + "'; known: " + os_name_list());
}

const OsProfile* find_os_by_version(uint32_t major, uint32_t minor, uint32_t build) {
  const OsProfile* best = nullptr;
  for (const OsProfile& os : os_profiles())
    if (os.by_version && os.major == major && os.minor == minor && os.first_build <= build &&
        (!best || os.first_build > best->first_build))
      best = &os;
  return best;
}

const OsProfile* find_os_by_registry(std::string_view current_version, std::string_view build) {
  const size_t dot = current_version.find('.');
  if (dot == std::string_view::npos) return nullptr;
  uint32_t major = to_number(current_version.substr(0, dot)), minor = to_number(current_version.substr(dot + 1));
  const uint32_t b = to_number(build);
  if (major == 6 && minor == 3 && b >= 10000) major = 10, minor = 0;
  return find_os_by_version(major, minor, b);
}

std::vector<std::string> os_names() {
  std::vector<std::string> v;
  for (const OsProfile& os : os_profiles()) v.emplace_back(os.name);
  return v;
}

std::string os_name_list() {
  std::vector<std::string_view> names;
  for (const OsProfile& os : os_profiles()) names.push_back(os.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

bool has_quirk(const OsProfile& os, std::string_view quirk) {
  return os.more_data == quirk || std::find(os.quirks.begin(), os.quirks.end(), quirk) != os.quirks.end();
}

}  // namespace perfsim::windows
