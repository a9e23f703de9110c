#include <catch2/catch.hpp>

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>

#include "recorder/build.h"
#include "replayer/quirks.h"
#include "server/smbd.h"
#include "synth/profiles.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "windows/constants.h"
#include "windows/os.h"
#include "windows/system.h"

using namespace perfsim;
namespace fs = std::filesystem;

namespace {

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = char(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Every name a command must take: canonical names, aliases, and both with a "win" prefix and upper-cased.
std::vector<std::string> every_spelling(const windows::OsProfile& os) {
  std::vector<std::string> v{std::string(os.name), upper(os.name), "win" + std::string(os.name)};
  for (std::string_view a : os.aliases) v.insert(v.end(), {std::string(a), upper(a), "Win" + std::string(a)});
  return v;
}

replayer::BufferPolicy policy_of(std::string_view more_data) {
  if (more_data == "win32-undefined") return replayer::BufferPolicy::kWin32Undefined;
  if (more_data == "win2000-echo-oversize") return replayer::BufferPolicy::kWin2000Echo;
  if (more_data == "nt4-unsettled") return replayer::BufferPolicy::kNt4Unsettled;
  if (more_data == "samba-truncate") return replayer::BufferPolicy::kSambaTruncate;
  if (more_data == "echo-offered") return replayer::BufferPolicy::kEchoOffered;
  return replayer::BufferPolicy::kRrpExact;
}

using Run = perfsim::testing::CommandResult;

// Runs the built perfsim with `args`, stopped with SIGTERM after `seconds` (timeout's exit code 124).
Run run_perfsim(const std::string& args, int seconds = 60) {
  return perfsim::testing::run_command(PERFSIM_EXE, args, seconds);
}

}  // namespace

TEST_CASE("every profile name and alias resolves to its row, and nothing else does") {
  REQUIRE(windows::os_names() == std::vector<std::string>{"nt4", "win2000", "xp", "2003", "2008", "2008r2", "2012",
                                                          "2012r2", "2016", "2019", "2022", "samba"});
  for (const windows::OsProfile& os : windows::os_profiles())
    for (const std::string& name : every_spelling(os)) {
      INFO(name);
      CHECK(windows::find_os(name) == &os);
      CHECK(windows::check_os_name(name).ok());
    }
  for (const char* bad : {"", "win", "win95", "2012r3", "rrp-exact", "10.0"}) {
    INFO(bad);
    CHECK(windows::find_os(bad) == nullptr);
    const Status s = windows::check_os_name(bad);
    CHECK(s.code() == Status::Code::kNotFound);
    CHECK(s.message() == "unknown profile '" + std::string(bad) + "'; known: " + windows::os_name_list());
  }
  CHECK(windows::os_name_list().find("nt4, win2000, xp, 2003") == 0);
}

TEST_CASE("versions map to profiles and profiles to versions") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    INFO(os.name);
    CHECK(!os.product_name.empty());
    if (!os.by_version) continue;
    const uint32_t build = uint32_t(std::stoul(std::string(os.build)));
    CHECK(windows::find_os_by_version(os.major, os.minor, build) == &os);
    CHECK(windows::find_os_by_registry(os.current_version, os.build) == &os);
    CHECK(recorder::profile_for_version(std::string(os.current_version), std::string(os.build)) == os.name);
  }
  // The fix of issue 12: 6.2 was no profile for the recorder.
  CHECK(recorder::profile_for_version("6.2", "9200") == "2012");
  // CurrentVersion stays 6.3 on Windows 10-based hosts; the build tells them apart.
  CHECK(recorder::profile_for_version("6.3", "9600") == "2012r2");
  CHECK(recorder::profile_for_version("6.3", "14393") == "2016");
  CHECK(recorder::profile_for_version("6.3", "19045") == "2019");  // later builds: the newest server before them
  CHECK(recorder::profile_for_version("6.3", "20348") == "2022");
  CHECK(recorder::profile_for_version("6.3", "10240") == "");  // Windows 10 1507: no server of its own
  CHECK(recorder::profile_for_version("6.4", "1") == "");
  CHECK(recorder::profile_for_version("", "") == "");
  // Samba reports 6.1 like 2008 R2 (its smb.h) and is no Windows version: found by name only.
  CHECK(recorder::profile_for_version("6.1", "") == "2008r2");
  const windows::OsProfile* samba = windows::find_os("samba");
  REQUIRE(samba);
  CHECK(windows::find_os_by_version(samba->major, samba->minor, 0) != samba);
}

TEST_CASE("every profile name is accepted by every command that takes one") {
  for (const windows::OsProfile& os : windows::os_profiles())
    for (const std::string& name : every_spelling(os)) {
      INFO(name);
      // perfsim synth --profile and a spec's host.profile
      const synth::Profile* sp = synth::find_profile(name);
      REQUIRE(sp);
      CHECK(sp->os == &os);
      // perfsim serve --profile and a fleet host's profile: the row's quirk set, every quirk known
      replayer::Quirks q;
      REQUIRE(replayer::profile_quirks(name, q).ok());
      CHECK(q.buffer == policy_of(os.more_data));
      CHECK(q.pipe_not_available_first == windows::has_quirk(os, "pipe-not-available-first"));
      CHECK(q.process_v1_disabled == windows::has_quirk(os, "process-v1-disabled"));
      CHECK(q.restrict_remote_clients == windows::has_quirk(os, "restrict-remote-clients"));
      for (std::string_view quirk : os.quirks) {
        replayer::Quirks probe;
        CHECK(replayer::apply_setting(probe, replayer::QuirkSetting{std::string(quirk), true, {}}).ok());
      }
      // perfsim serve --smb: the row's dialects
      const server::SmbDialects d = server::smb_dialects_for_profile(name);
      CHECK(d.min == os.smb.min);
      CHECK(d.max == os.smb.max);
    }
  // A name of no row: refused where a person typed it, newest dialects for a capture of no known OS.
  replayer::Quirks q;
  CHECK(replayer::profile_quirks("win95", q).code() == Status::Code::kNotFound);
  CHECK(replayer::profile_quirks("rrp-exact", q).ok());  // plain MS-RRP, no OS
  CHECK(synth::find_profile("win95") == nullptr);
  CHECK(server::smb_dialects_for_profile("").max == "SMB3_11");
}

TEST_CASE("perfsim synth takes every profile name and lists them all for another") {
  const fs::path dir = fs::temp_directory_path() / ("perfsim-windows-" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const windows::OsProfile& os : windows::os_profiles()) {
    const std::string name = os.aliases.empty() ? std::string(os.name) : std::string(os.aliases[0]);
    INFO(name);
    const Run r = run_perfsim("synth --profile " + name + " --duration 15 --interval 15 --out " +
                              (dir / (std::string(os.name) + ".perfcap")).string());
    CHECK(r.code == 0);
    CHECK(r.err.empty());
  }
  const Run bad = run_perfsim("synth --profile win95 --out " + (dir / "x.perfcap").string());
  CHECK(bad.code == 2);
  CHECK(bad.err.find(windows::os_name_list()) != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("perfsim serve takes every profile name and lists them all for another") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    INFO(os.name);
    // Listening means the profile was taken; a refused one exits at once with 2 and prints nothing.
    testing::PerfsimServe serve;
    testing::ServeStart how;
    how.err_path = fs::temp_directory_path().string() + "/perfsim-profile-" + std::to_string(getpid()) + ".err";
    const Status st = serve.start(PERFSIM_EXE, "--listen 127.0.0.1:0 --profile " + std::string(os.name), how);
    INFO(st.ToString());
    CHECK(st.ok());
    CHECK(serve.address() == "127.0.0.1");
    CHECK(serve.stop() == 0);
    fs::remove(how.err_path);
  }
  const Run bad = run_perfsim("serve --json --listen 127.0.0.1:0 --profile win95", 10);
  CHECK(bad.code == 2);  // a usage error, at once
  CHECK(bad.err.find(windows::os_name_list()) != std::string::npos);
}

TEST_CASE("werror_name spells the codes collectors meet") {
  CHECK(windows::werror_name(windows::kErrorMoreData) == "WERR_MORE_DATA (234)");
  CHECK(windows::werror_name(windows::kErrorSuccess) == "WERR_OK (0)");
  CHECK(windows::werror_name(1234) == "WERROR 1234");
}

// Every row has its system facts (windows/system.cpp keys them by name, so a row added without
// them would silently get Samba's): a processor, a product type, and the 32-bit rows x86.
TEST_CASE("every OS row has its system facts, x86 where its address-space counters are 32-bit") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    INFO(os.name);
    const windows::SystemFacts& f = windows::system_facts(os);
    CHECK((f.product_type == "WinNT" || f.product_type == "ServerNT" || f.product_type == "LanmanNT"));
    if (!os.by_version) continue;  // Samba: no Windows keys
    CHECK(f.windows_keys);
    CHECK(f.arch == (os.synth.large_counters ? "AMD64" : "x86"));
    CHECK(f.identifier.substr(0, f.arch == "x86" ? 3 : 7) == (f.arch == "x86" ? "x86" : "Intel64"));
    CHECK(f.install_date > 0);
    CHECK(f.product_type == (os.name == "xp" ? "WinNT" : "ServerNT"));
    CHECK(f.edition_id.empty() == (os.major < 6));
  }
}
