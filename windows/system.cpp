// One row per os.cpp row, by name. Sources (README.md, "System keys", has the full list):
// - PROCESSOR_*: the system environment variables Windows sets from the CPU (Microsoft,
//   "Environment Property" of WshShell, previous-versions fd7hxfdd: NUMBER_OF_PROCESSORS,
//   PROCESSOR_ARCHITECTURE, PROCESSOR_IDENTIFIER, PROCESSOR_LEVEL, PROCESSOR_REVISION, OS are
//   System variables). The CPUs are ones hosts of each era ran: Pentium II/III/4 (family 6 model
//   5, 6 model 8, 15 model 2), Core 2 (6/15/11), Nehalem (6/26/5), Sandy/Ivy Bridge (6/45/7,
//   6/62/4), Skylake-SP (6/85/4), Ice Lake-SP (6/106/6); PROCESSOR_REVISION is model and stepping
//   as two hex bytes, the form `set PROCESSOR` prints.
// - ProductType: WinNT for workstations, ServerNT for servers, LanmanNT for domain controllers
//   (the three NT product types: Microsoft, MsiNTProductType and OSVERSIONINFOEX wProductType);
//   Samba answers ServerNT for a standalone server (source3/registry/reg_backend_prod_options.c).
// - CurrentBuild: XP and 2003 keep "1.511.1 () (Obsolete data - do not use)" there and the build
//   in CurrentBuildNumber; from Vista on both hold the build. NT 4.0 and 2000 rows leave it out
//   (no source seen for their text).
// - EditionID: added with Vista/2008 (the product's edition, "ServerStandard" for the rows'
//   Standard editions).
// - InstallDate: REG_DWORD, seconds since 1970 (Microsoft, Windows Server 2003 registry reference,
//   CurrentVersion entries); a date after the row's service pack shipped.
#include "windows/system.h"

#include <vector>

namespace perfsim::windows {
namespace {

constexpr std::string_view kObsoleteBuild = "1.511.1 () (Obsolete data - do not use)";

struct Row {
  std::string_view os;
  SystemFacts facts;
};

const std::vector<Row>& rows() {
  // clang-format off
  static const std::vector<Row> r = {
      {"nt4", {"x86", "x86 Family 6 Model 5 Stepping 2, GenuineIntel", "6", "0502", 946684800, "", "", "ServerNT", true}},
      {"win2000", {"x86", "x86 Family 6 Model 8 Stepping 10, GenuineIntel", "6", "080a", 1057017600, "", "", "ServerNT", true}},
      {"xp", {"x86", "x86 Family 15 Model 2 Stepping 9, GenuineIntel", "15", "0209", 1209600000, kObsoleteBuild, "", "WinNT", true}},
      {"2003", {"x86", "x86 Family 6 Model 15 Stepping 11, GenuineIntel", "6", "0f0b", 1178150400, kObsoleteBuild, "", "ServerNT", true}},
      {"2008", {"AMD64", "Intel64 Family 6 Model 26 Stepping 5, GenuineIntel", "6", "1a05", 1246406400, "=", "ServerStandard", "ServerNT", true}},
      {"2008r2", {"AMD64", "Intel64 Family 6 Model 45 Stepping 7, GenuineIntel", "6", "2d07", 1311984000, "=", "ServerStandard", "ServerNT", true}},
      {"2012", {"AMD64", "Intel64 Family 6 Model 45 Stepping 7, GenuineIntel", "6", "2d07", 1356998400, "=", "ServerStandard", "ServerNT", true}},
      {"2012r2", {"AMD64", "Intel64 Family 6 Model 62 Stepping 4, GenuineIntel", "6", "3e04", 1393632000, "=", "ServerStandard", "ServerNT", true}},
      {"2016", {"AMD64", "Intel64 Family 6 Model 85 Stepping 4, GenuineIntel", "6", "5504", 1491004800, "=", "ServerStandard", "ServerNT", true}},
      {"2019", {"AMD64", "Intel64 Family 6 Model 85 Stepping 7, GenuineIntel", "6", "5507", 1559347200, "=", "ServerStandard", "ServerNT", true}},
      {"2022", {"AMD64", "Intel64 Family 6 Model 106 Stepping 6, GenuineIntel", "6", "6a06", 1661990400, "=", "ServerStandard", "ServerNT", true}},
      {"samba", {"", "", "", "", 0, "", "", "ServerNT", false}},
  };
  // clang-format on
  return r;
}

}  // namespace

const SystemFacts& system_facts(const OsProfile& os) {
  for (const Row& r : rows())
    if (r.os == os.name) return r.facts;
  return rows().back().facts;  // every os.cpp row has one (windows_tests checks); never reached
}

}  // namespace perfsim::windows
