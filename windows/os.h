// One row per OS version perfsim knows: the facts about it that every folder needs (names, the
// versions its registry and srvsvc report, the SMB dialects it spoke, the quirk set it shows, the
// defaults of a synthetic host, its NTLM policy). Folders read these rows instead of deciding OS
// facts themselves; README.md in this folder is the one list of profile names.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace perfsim::windows {

// SMB dialects smbd offers for the OS ("NT1", "SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02", "SMB3_11").
struct SmbDialectRange {
  std::string_view min;
  std::string_view max;
};

// What a synthetic host of the OS looks like where synth's object building asks (synth/profiles.cpp).
struct SynthDefaults {
  int64_t perf_freq = 10000000;  // QueryPerformanceFrequency typical for the OS (quirks.md perffreq)
  // An x64 host (false: x86): 64-bit address-space and image counters, start addresses and virtual
  // sizes; Memory's and Process's byte counters are 64-bit from Windows 2000 on either way
  // (synth/profiles.cpp large_byte_counters).
  bool large_counters = true;
  bool xp_counters = true;                // counters added in XP/2003 (% Idle Time, C-states, Split IO)
  bool vista_counters = true;             // counters added in Vista/2008 (Working Set - Private)
  uint32_t perflib_version = 0x00010001;  // Perflib\Version
  uint32_t base_index = 1847;             // Perflib\Base Index
  // Physical memory of a host of the era (a spec's memory_mb overrides it); with 32-bit memory
  // counters, small enough that Commit Limit (memory + paging file) fits in a DWORD.
  uint64_t memory_mb = 16384;
};

struct OsProfile {
  std::string_view name;                      // canonical: what captures and fingerprints store
  std::vector<std::string_view> aliases;      // other names commands accept (client names, "2000")
  std::string_view product_name;              // CurrentVersion\ProductName
  std::string_view current_version;           // CurrentVersion\CurrentVersion ("6.3" on 2016+ too)
  uint32_t major = 0, minor = 0;              // the real version; also srvsvc/wkssvc sv101_version_*
  uint32_t current_major_version_number = 0;  // CurrentMajorVersionNumber; 0: value absent (before 10)
  std::string_view build;                     // CurrentBuildNumber; "" when the host has none
  uint32_t first_build = 0;                   // builds from this one on are this OS (OSes sharing 10.0)
  std::string_view csd_version;               // CSDVersion (service pack), "" when none
  bool by_version = true;                     // found by find_os_by_version (false: not Windows)
  SmbDialectRange smb;
  std::string_view more_data;            // the quirks.md buffer policy (ERROR_MORE_DATA behaviour)
  std::vector<std::string_view> quirks;  // further quirks.md quirks the OS shows by default
  SynthDefaults synth;
  // Logon policy of a stand-alone host left at its defaults (os.cpp cites each; windows/README.md):
  // NTLMv1 logons accepted (every Windows level but 5, "Refuse LM & NTLM", which no version
  // defaults to; Samba's `ntlm auth` is ntlmv2-only since 4.5), the Guest account enabled (a failed
  // logon then becomes a guest session), and null sessions allowed to open \PIPE\winreg.
  bool accepts_ntlmv1 = true;
  bool guest_enabled = false;
  bool anonymous_winreg = false;
  // The .NET Framework the OS includes, installed with it ("" none; os.cpp cites it): its CLR
  // counter objects are served without `--role dotnet` (synth/README.md, Roles).
  std::string_view dotnet_framework;
};

// srvsvc/wkssvc platform_id of every profile: PLATFORM_ID_NT ([MS-SRVS] 2.2.4.41, [MS-WKST] 2.2.5.1).
inline constexpr uint32_t kPlatformIdNt = 500;

// Every row, oldest first.
const std::vector<OsProfile>& os_profiles();
// By canonical name or alias, case-insensitive; a leading "win" is optional ("win2008" = "2008",
// "winxp" = "xp"). nullptr for any other name.
const OsProfile* find_os(std::string_view name);
// NotFound naming the known profiles when `name` is none of them: "unknown profile 'x'; known: ...".
Status check_os_name(std::string_view name);
// The Windows row of version major.minor and build `build` (build only tells apart OSes sharing a
// version, e.g. 10.0); nullptr when there is none.
const OsProfile* find_os_by_version(uint32_t major, uint32_t minor, uint32_t build);
// The row a host's CurrentVersion and CurrentBuildNumber values name. Windows 10-based hosts keep
// CurrentVersion "6.3" for old programs, so 6.3 with a build from 10000 on is read as 10.0.
const OsProfile* find_os_by_registry(std::string_view current_version, std::string_view build);
// Canonical names, oldest first, and the same joined with ", " for help texts.
std::vector<std::string> os_names();
std::string os_name_list();
// Whether `quirk` (a quirks.md name) is the row's buffer policy or in its quirk set.
bool has_quirk(const OsProfile& os, std::string_view quirk);

}  // namespace perfsim::windows
