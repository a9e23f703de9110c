// server::Smbd's readiness promise with a samba-dcerpcd that starts late, as on a loaded machine:
// start() returns only when lsarpc is served, so a collector's first lsarpc open (rpcclient
// lsaquery) works at once. CI met the race (issue 55): smbd accepted, samba-dcerpcd had not yet
// bound its sockets, and smbd answered the open with OBJECT_NAME_NOT_FOUND.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "server/smbd.h"
#include "support.h"
#include "tests/common/host_tools.h"

using namespace perfsim;
namespace fs = std::filesystem;

namespace {

const char* const kDcerpcd = "/usr/libexec/samba/samba-dcerpcd";

// A directory standing in for Samba's libexec: samba-dcerpcd behind a script that starts it
// `delay_s` late, beside links to the real rpcd_classic and rpcd_lsad (Smbd looks for them there).
std::string late_dcerpcd(const fs::path& dir, int delay_s) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path libexec = fs::path(kDcerpcd).parent_path();
  for (const char* rpcd : {"rpcd_classic", "rpcd_lsad"}) fs::create_symlink(libexec / rpcd, dir / rpcd);
  const fs::path script = dir / "samba-dcerpcd";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "# sleep-ok: the point of the test, a samba-dcerpcd that comes up late\n"
                        << "sleep " << delay_s << "\n"
                        << "exec " << kDcerpcd << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  return script.string();
}

TEST_CASE("server::Smbd start() waits for a late samba-dcerpcd: the first lsarpc open works", "[smb]") {
  const std::string address = "127.0.0.225", user = "perfready", password = "R3ady-pw";
  server::SmbdConfig cfg;
  cfg.port = testing::free_port();
  cfg.dir = std::string(SMB_WORK_DIR) + "-ready";
  fs::remove_all(cfg.dir);
  cfg.hosts = {{address, {}, "PERFREADY"}};
  cfg.users = {{user, password}};
  cfg.dcerpcd = late_dcerpcd(std::string(SMB_WORK_DIR) + "-ready-libexec", 4);
  cfg.ready_timeout = std::chrono::seconds(60);
  server::Smbd smbd(cfg);
  {
    const Status st = smbd.prepare();
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  {
    const Status st = smbd.start();
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  const interop::CommandResult lsa =
      interop::run_command("timeout 60 rpcclient " + address + " -p " + std::to_string(cfg.port) + " -U " + user + "%" +
                           password + " -c lsaquery 2>&1");
  smbd.stop();
  INFO(lsa.output);
  CHECK(lsa.exit_status == 0);
  CHECK(interop::contains(lsa.output, "Domain Name:"));
}

}  // namespace
