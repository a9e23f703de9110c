// What a host of each OS row (os.h) says about itself in the registry keys system tools read
// (nmap's smb-system-info, WMI-less inventory scripts): its processor, install date, edition and
// product type. Facts only; captures/system_values.h turns them into the registry values, and
// README.md ("System keys") lists the values with their sources.
#pragma once
#include <cstdint>
#include <string_view>

#include "windows/os.h"

namespace perfsim::windows {

struct SystemFacts {
  std::string_view arch;        // PROCESSOR_ARCHITECTURE: "x86" (32-bit rows) or "AMD64"
  std::string_view identifier;  // PROCESSOR_IDENTIFIER of a CPU such a host had
  std::string_view level;       // PROCESSOR_LEVEL (CPU family, decimal)
  std::string_view revision;    // PROCESSOR_REVISION (model and stepping, 4 hex digits)
  uint32_t install_date = 0;    // CurrentVersion\InstallDate: seconds since 1970-01-01 UTC
  // CurrentVersion\CurrentBuild: "" = the value is absent, "=" = the same as CurrentBuildNumber.
  std::string_view current_build;
  std::string_view edition_id;    // CurrentVersion\EditionID (Vista/2008 on), "" when absent
  std::string_view product_type;  // ProductOptions\ProductType: WinNT, ServerNT or LanmanNT
  bool windows_keys = true;       // false: Samba, whose registry has no Environment, ComputerName, InstallDate
};

// The facts of `os`' row (every row has them).
const SystemFacts& system_facts(const OsProfile& os);

}  // namespace perfsim::windows
