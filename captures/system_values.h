// The registry values a host of a known OS row holds where system tools look for what the host is
// (windows/system.h has the facts, windows/README.md "System keys" the sources): CurrentVersion's
// product and build, Session Manager\Environment's processor variables, ProductOptions'
// ProductType and ComputerName. synth writes them into its captures; the replayer adds the keys a
// capture lacks whole (hosts that did not let the recorder read them, older captures).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "captures/capture.h"
#include "windows/os.h"

namespace perfsim::captures {

inline constexpr char kCurrentVersionKey[] = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";
inline constexpr char kEnvironmentKey[] = "SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment";
inline constexpr char kProductOptionsKey[] = "SYSTEM\\CurrentControlSet\\Control\\ProductOptions";
inline constexpr char kComputerNameKey[] = "SYSTEM\\CurrentControlSet\\Control\\ComputerName\\ComputerName";
// Bias (REG_DWORD, minutes: UTC = local + Bias) and TimeZoneKeyName (REG_SZ): a perfmon log's
// header zone, kept by `import --perfmon` for `series --local-time`.
inline constexpr char kTimeZoneKey[] = "SYSTEM\\CurrentControlSet\\Control\\TimeZoneInformation";

// The values of a host of `os` with `processors` processors named `computer_name`, in the types
// Windows stores them (REG_SZ, REG_EXPAND_SZ for the %SystemRoot% paths, REG_DWORD).
std::vector<RegistryValue> system_values(const windows::OsProfile& os, uint32_t processors,
                                         std::string_view computer_name);

}  // namespace perfsim::captures
