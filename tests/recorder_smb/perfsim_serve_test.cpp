// connect_smb + WinregClient against `perfsim serve --smb` (a real smbd in front of perfsim): what
// the recorder reads over SMB is exactly what the served capture holds, as a user and anonymously,
// with SMB3 encryption, and over SMB1; a wrong password and an account refused HKPD each come back
// with what to check.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "recorder/client.h"
#include "recorder/smb_channel.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_smb_serve.h"

namespace perfsim::recorder {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kTick = 3;
// Names and addresses of their own, so tests/smb may run at the same time.
const char* const kServeUser = "rsmbuser";
const char* const kServePassword = "Rsmb-pw-7";
const char* const k2016 = "127.0.0.31";
const char* const kWin2000 = "127.0.0.32";
const char* const kRestricted = "127.0.0.33";

std::string capture(const std::string& name) { return std::string(PERFSIM_SOURCE_DIR) + "/captures/" + name; }

Credentials user() {
  Credentials c;
  c.user = kServeUser;
  c.password = kServePassword;
  c.kerberos = Credentials::Kerberos::kOff;
  return c;
}

Credentials anonymous() {
  Credentials c;
  c.anonymous = true;
  return c;
}

SmbTarget target(const testing::PerfsimSmbServe& s, const std::string& address) {
  SmbTarget t;
  t.host = address;
  t.port = s.port();
  return t;
}

// Reads each value with a growing buffer and compares it with what the host holds at kTick;
// Global must also be the capture's own recorded payload.
void check_reads_capture(WinregClient& w, const replayer::SimulatedHost& host) {
  winreg::PolicyHandle hkpd;
  REQUIRE(w.open_hive(winreg::kOpenHKPD, hkpd).ok());
  for (const char* name : {"Global", "Counter 009", "238"}) {
    INFO(name);
    ValueResult got;
    const Status s = w.query_value_growing(hkpd, name, Growth{}, got);
    INFO(s.ToString());
    REQUIRE(s.ok());
    const replayer::ValueContent want = host.content(replayer::PerfKey::kData, name, kTick);
    CHECK(got.status == want.status);
    CHECK(got.type == want.type);
    CHECK(got.data.size() > 0);
    CHECK(got.data == want.data);
    if (std::string(name) == "Global") {
      bool recorded = false;
      for (const captures::QueryRecord& q : host.capture().records)
        if (q.tick == kTick && q.value_name == "Global") recorded = got.data == q.payload;
      CHECK(recorded);
    }
  }
}

std::unique_ptr<WinregClient> connect(const SmbTarget& t, const Credentials& c, const testing::PerfsimSmbServe& s) {
  std::unique_ptr<Channel> ch;
  const Status st = connect_smb(t, c, 20s, ch);
  INFO(st.ToString() << "\nperfsim serve log: " << s.err_path());
  REQUIRE(st.ok());
  return std::make_unique<WinregClient>(std::move(ch));
}

TEST_CASE("connect_smb reads perfsim serve --smb: the served capture's bytes", "[recorder_smb][perfsim]") {
  REQUIRE(smb_supported());
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SESSIONS_DIR) + "/perfsim-serve";
  cfg.frozen_tick = kTick;
  cfg.hosts = {{k2016, capture("default-2016.perfcap"), {}},
               {kWin2000, capture("default-win2000.perfcap"), {}},
               {kRestricted, capture("default-2022.perfcap"), {"someone-else"}}};
  cfg.users = {{kServeUser, kServePassword}};
  testing::PerfsimSmbServe serve;
  {
    const Status st = serve.start(cfg);
    INFO(st.ToString());
    REQUIRE(st.ok());
  }
  std::shared_ptr<replayer::SimulatedHost> host2016, host2000;
  REQUIRE(testing::load_frozen_host(capture("default-2016.perfcap"), kTick, host2016).ok());
  REQUIRE(testing::load_frozen_host(capture("default-win2000.perfcap"), kTick, host2000).ok());

  SECTION("a user and anonymous, plain and with SMB3 encryption (a user only: anonymous has no session key)") {
    for (const Credentials& c : {user(), anonymous()}) {
      for (bool encrypt : {false, true}) {
        SmbTarget t = target(serve, k2016);
        t.require_encryption = encrypt;
        if (c.anonymous && encrypt) {
          std::unique_ptr<Channel> ch;
          const Status s = connect_smb(t, c, 20s, ch);
          INFO(s.ToString());
          CHECK(s.message().find("anonymous logon has none") != std::string::npos);
          continue;
        }
        auto w = connect(t, c, serve);
        const std::string described = w->channel().describe();
        INFO(described);
        CHECK(described.find("as " + c.describe() + ", SMB2/3") != std::string::npos);
        CHECK((described.find(", encrypted") != std::string::npos) == encrypt);
        CHECK(described.find(kServePassword) == std::string::npos);
        check_reads_capture(*w, *host2016);
      }
    }
  }

  // perfsim's per-address dialect limit binds only clients that open with an SMB1 negotiate (an
  // SMB2-first client gets SMB 3.1.1 from this host too), so SMB1 is asked for here; the fallback
  // from SMB2 to SMB1 is tested against Samba's own NT1-only smbd (samba_winreg_test.cpp).
  SECTION("the Windows 2000 host over SMB1") {
    SmbTarget t = target(serve, kWin2000);
    t.min_protocol = t.max_protocol = "NT1";
    auto w = connect(t, user(), serve);
    INFO(w->channel().describe());
    CHECK(w->channel().describe().find(", SMB1") != std::string::npos);
    check_reads_capture(*w, *host2000);
  }

  SECTION("a wrong password: check user, password and domain") {
    Credentials bad = user();
    bad.password = "wrong-pw-123";
    std::unique_ptr<Channel> ch;
    const Status s = connect_smb(target(serve, k2016), bad, 20s, ch);
    INFO(s.ToString());
    CHECK(s.message().find("check user, password and domain") != std::string::npos);
    CHECK(s.message().find("wrong-pw-123") == std::string::npos);
  }

  SECTION("an account the host refuses HKPD gets WERR_ACCESS_DENIED from OpenHKPD") {
    auto w = connect(target(serve, kRestricted), user(), serve);
    winreg::PolicyHandle hkpd;
    const Status s = w->open_hive(winreg::kOpenHKPD, hkpd);
    INFO(s.ToString());
    CHECK(s.message().find("WERR_ACCESS_DENIED (5)") != std::string::npos);
  }

  // recorder/README.md says the SMB client reads no Samba configuration or state: strace holds it to that.
  SECTION("perfsim query over SMB opens no file under /etc/samba, /var/lib/samba or /var/cache/samba") {
    const std::string log = serve.dir() + "/query.strace";
    // LeakSanitizer cannot run under ptrace: in the sanitizer build it would abort perfsim at exit.
    const std::string cmd = "ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=%file -o " + log + " " + PERFSIM_EXE +
                            " query smb:" + k2016 + ":" + std::to_string(serve.port()) + " -U " + kServeUser +
                            " --password " + kServePassword + " --kerberos off Global >/dev/null 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string trace = testing::read_text(log);
    REQUIRE(trace.find("libdcerpc") != std::string::npos);  // the trace saw Samba's libraries load
    CHECK(trace.find("\"/etc/samba") == std::string::npos);
    CHECK(trace.find("\"/var/lib/samba") == std::string::npos);
    CHECK(trace.find("\"/var/cache/samba") == std::string::npos);
  }

  // server/README.md says perfsim restarts a crashed smbd: kill it and read through it again.
  SECTION("an smbd killed with SIGKILL is restarted and serves again") {
    // smbd (and its children), not samba-dcerpcd, which reads the same smb.conf.
    const std::vector<std::string> smbds = testing::processes_mentioning(serve.smb_dir() + "/smb.conf", "dcerpcd");
    REQUIRE_FALSE(smbds.empty());
    for (const std::string& p : smbds) ::kill(pid_t(std::stol(p)), SIGKILL);
    bool restarted = false;
    for (int i = 0; i < 200 && !restarted; ++i) {
      std::this_thread::sleep_for(100ms);
      restarted = testing::read_text(serve.err_path()).find("smbd_restart") != std::string::npos;
    }
    REQUIRE(restarted);
    std::unique_ptr<Channel> ch;
    Status st;
    for (int i = 0; i < 150 && !(st = connect_smb(target(serve, k2016), user(), 20s, ch)).ok(); ++i)
      std::this_thread::sleep_for(100ms);
    INFO(st.ToString());
    REQUIRE(st.ok());
    WinregClient w(std::move(ch));
    check_reads_capture(w, *host2016);
  }

  CHECK(serve.stop() == 0);
}

}  // namespace
}  // namespace perfsim::recorder
