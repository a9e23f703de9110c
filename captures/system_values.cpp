#include "captures/system_values.h"

#include <string>

#include "captures/registry_values.h"
#include "windows/constants.h"
#include "windows/system.h"

namespace perfsim::captures {
namespace {

// %SystemRoot%: \WINNT up to 2000, \WINDOWS for XP/2003, \Windows from Vista on.
std::string system_root(const windows::OsProfile& os) {
  if (os.major < 5 || (os.major == 5 && os.minor == 0)) return "C:\\WINNT";
  return os.major == 5 ? "C:\\WINDOWS" : "C:\\Windows";
}

void add_environment(std::vector<RegistryValue>& v, const windows::OsProfile& os, const windows::SystemFacts& f,
                     uint32_t processors) {
  auto sz = [&](const char* name, std::string_view text) {
    v.push_back({kEnvironmentKey, name, windows::kRegSz, reg_sz(text)});
  };
  // REG_EXPAND_SZ: the values that name %SystemRoot% (RegQueryValueEx leaves them unexpanded).
  auto expand = [&](const char* name, std::string_view text) {
    v.push_back({kEnvironmentKey, name, windows::kRegExpandSz, reg_sz(text)});
  };
  const bool vista = os.major >= 6;
  expand("ComSpec", "%SystemRoot%\\system32\\cmd.exe");
  sz("NUMBER_OF_PROCESSORS", std::to_string(processors));
  sz("OS", "Windows_NT");
  expand("Path", os.major < 5 ? "%SystemRoot%\\system32;%SystemRoot%"
                              : "%SystemRoot%\\system32;%SystemRoot%;%SystemRoot%\\System32\\Wbem");
  sz("PATHEXT", os.major < 5 ? ".COM;.EXE;.BAT;.CMD"
                : vista      ? ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"
                             : ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH");
  sz("PROCESSOR_ARCHITECTURE", f.arch);
  sz("PROCESSOR_IDENTIFIER", f.identifier);
  sz("PROCESSOR_LEVEL", f.level);
  sz("PROCESSOR_REVISION", f.revision);
  expand("TEMP", "%SystemRoot%\\TEMP");
  expand("TMP", "%SystemRoot%\\TEMP");
  expand("windir", "%SystemRoot%");
}

}  // namespace

std::vector<RegistryValue> system_values(const windows::OsProfile& os, uint32_t processors,
                                         std::string_view computer_name) {
  const windows::SystemFacts& f = windows::system_facts(os);
  std::vector<RegistryValue> v;
  auto cv = [&](const char* name, std::string_view text) {
    v.push_back({kCurrentVersionKey, name, windows::kRegSz, reg_sz(text)});
  };
  cv("CurrentVersion", os.current_version);
  if (!os.build.empty()) cv("CurrentBuildNumber", os.build);
  cv("ProductName", os.product_name);
  if (!os.csd_version.empty()) cv("CSDVersion", os.csd_version);
  if (f.current_build == "=")
    cv("CurrentBuild", os.build);
  else if (!f.current_build.empty())
    cv("CurrentBuild", f.current_build);
  if (!f.edition_id.empty()) cv("EditionID", f.edition_id);
  if (os.current_major_version_number) {
    v.push_back({kCurrentVersionKey, "CurrentMajorVersionNumber", windows::kRegDword,
                 reg_dword(os.current_major_version_number)});
    v.push_back({kCurrentVersionKey, "CurrentMinorVersionNumber", windows::kRegDword, reg_dword(os.minor)});
  }
  v.push_back({kProductOptionsKey, "ProductType", windows::kRegSz, reg_sz(f.product_type)});
  if (!f.windows_keys) return v;  // Samba's registry has none of the rest
  v.push_back({kCurrentVersionKey, "InstallDate", windows::kRegDword, reg_dword(f.install_date)});
  cv("SystemRoot", system_root(os));
  add_environment(v, os, f, processors);
  v.push_back({kComputerNameKey, "ComputerName", windows::kRegSz, reg_sz(computer_name)});
  return v;
}

}  // namespace perfsim::captures
