// connect_smb + WinregClient against a winreg server nobody here wrote: Samba's own smbd on
// loopback, whose rpcd_winreg samba-dcerpcd starts on demand. What it answers is written down in
// recorder/README.md ("Samba's rpcd_winreg"); these tests keep that description true. The error
// cases (wrong password, no winreg pipe, closed port, silent port) check the message tells a person
// what to look at.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "core/utf16.h"
#include "recorder/client.h"
#include "recorder/smb_channel.h"
#include "tests/common/host_tools.h"
#include "tests/common/samba_winreg.h"
#include "windows/constants.h"

namespace perfsim::recorder {
namespace {

using namespace std::chrono_literals;
using testing::SambaWinregConfig;
using testing::SambaWinregServer;

const char* const kPassword = "Samba-Test-pw1";
constexpr auto kTimeout = 15s;

void require_environment() {
  const Status s = testing::samba_server_available();
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(smb_supported());
}

SambaWinregConfig config(const std::string& tag, const std::string& address) {
  SambaWinregConfig c;
  c.dir = std::string(SESSIONS_DIR) + "/" + tag;
  c.address = address;
  c.users = {{"root", kPassword}};
  return c;
}

void start(SambaWinregServer& server, const SambaWinregConfig& c) {
  const Status s = server.start(c);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

SmbTarget target_of(const SambaWinregServer& server) {
  SmbTarget t;
  t.host = server.address();
  t.port = server.port();
  return t;
}

Credentials root() {
  Credentials c;
  c.user = "root";
  c.password = kPassword;
  c.kerberos = Credentials::Kerberos::kOff;
  return c;
}

std::unique_ptr<WinregClient> connect(const SambaWinregServer& server, const SmbTarget& t, const Credentials& c) {
  std::unique_ptr<Channel> ch;
  const Status s = connect_smb(t, c, kTimeout, ch);
  INFO(s.ToString() << server.log_tail());
  REQUIRE(s.ok());
  return std::make_unique<WinregClient>(std::move(ch));
}

// The status and message of a connect that must fail.
Status failed_connect(const SmbTarget& t, const Credentials& c, std::chrono::milliseconds timeout = kTimeout) {
  std::unique_ptr<Channel> ch;
  const Status s = connect_smb(t, c, timeout, ch);
  INFO(s.ToString());
  CHECK_FALSE(s.ok());
  CHECK(ch == nullptr);
  CHECK(s.message().find(kPassword) == std::string::npos);
  return s;
}

winreg::PolicyHandle open_key(WinregClient& w, const winreg::PolicyHandle& hive, const std::string& path) {
  winreg::PolicyHandle h;
  uint32_t werr = 1;
  REQUIRE(w.open_key(hive, path, h, werr).ok());
  INFO(path << ": " << windows::werror_name(werr));
  REQUIRE(werr == 0);
  return h;
}

winreg::QueryValueResponse query(WinregClient& w, const winreg::PolicyHandle& h, const std::string& name,
                                 std::optional<uint32_t> buffer) {
  winreg::QueryValueResponse r;
  const Status s = w.query_value(h, name, buffer, r);
  INFO(name << ": " << s.ToString());
  REQUIRE(s.ok());
  return r;
}

TEST_CASE("Samba's rpcd_winreg over connect_smb: HKLM values and its HKPD", "[recorder_smb][samba]") {
  require_environment();
  SambaWinregServer server;
  start(server, config("samba-hklm", "127.0.0.21"));
  auto w = connect(server, target_of(server), root());
  INFO(w->channel().describe());
  CHECK(w->channel().describe().find("SMB2/3") != std::string::npos);

  SECTION("HKLM: CurrentVersion is a REG_SZ, ProductName is absent, Perflib's Last Counter is 0") {
    winreg::PolicyHandle hklm;
    REQUIRE(w->open_hive(winreg::kOpenHKLM, hklm).ok());
    const winreg::PolicyHandle cv = open_key(*w, hklm, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion");
    const auto version = query(*w, cv, "CurrentVersion", 512);
    CHECK(version.result == 0);
    CHECK(version.type == windows::kRegSz);
    REQUIRE(version.data);
    CHECK(version.data->size() == version.data_length.value_or(0));
    CHECK(version.data->size() >= 4);  // at least one UTF-16 character and the terminator
    CHECK(query(*w, cv, "ProductName", 512).result == windows::kErrorFileNotFound);

    const winreg::PolicyHandle perflib = open_key(*w, hklm, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib");
    for (const char* name : {"Last Counter", "Last Help"}) {
      const auto r = query(*w, perflib, name, 64);
      INFO(name);
      CHECK(r.result == 0);
      CHECK(r.type == windows::kRegDword);
      CHECK(r.data == Bytes{0, 0, 0, 0});
    }
    uint32_t werr = 1;
    CHECK(w->close_key(perflib, werr).ok());
    CHECK(werr == 0);
  }

  SECTION(
      "HKPD: Global, Counter 009, Explain 009 and index lists are empty REG_BINARY; Help 009 and Costly are absent") {
    winreg::PolicyHandle hkpd;
    REQUIRE(w->open_hive(winreg::kOpenHKPD, hkpd).ok());
    for (const char* name : {"Global", "Counter 009", "Explain 009", "238", "2 4 238"}) {
      INFO(name);
      const auto probe = query(*w, hkpd, name, std::nullopt);  // a size probe, as collectors start
      CHECK(probe.result == 0);
      CHECK(probe.type == windows::kRegBinary);
      CHECK(probe.data_size == 0u);
      const auto full = query(*w, hkpd, name, 65536);
      CHECK(full.result == 0);
      CHECK(full.type == windows::kRegBinary);
      CHECK(full.data_size == 0u);
      CHECK(full.data_length == 0u);
      CHECK((full.data && full.data->empty()));
      ValueResult grown;
      REQUIRE(w->query_value_growing(hkpd, name, Growth{}, grown).ok());
      CHECK(grown.tries == 1);
      CHECK(grown.data.empty());
    }
    for (const char* name : {"Help 009", "Costly"}) {
      INFO(name);
      CHECK(query(*w, hkpd, name, std::nullopt).result == windows::kErrorFileNotFound);
      CHECK(query(*w, hkpd, name, 65536).result == windows::kErrorFileNotFound);
    }
  }

  SECTION("an opnum winreg does not have is a DCE/RPC fault, named as the TCP channel names it") {
    Bytes out;
    const Status s = w->call(200, {}, out);
    INFO(s.ToString());
    CHECK(s.message().find("the server answered with DCE/RPC fault 0x1c010002") != std::string::npos);
    winreg::PolicyHandle hkpd;
    CHECK(w->open_hive(winreg::kOpenHKPD, hkpd).ok());  // the pipe stays usable after a fault
  }
}

TEST_CASE("Samba's rpcd_winreg: anonymous, SMB1, signing and SMB3 encryption", "[recorder_smb][samba]") {
  require_environment();
  SambaWinregServer server;
  start(server, config("samba-modes", "127.0.0.22"));
  SmbTarget t = target_of(server);
  Credentials cred = root();
  std::string want;
  SECTION("anonymous") {
    cred = Credentials{};
    cred.anonymous = true;
    want = "as anonymous, SMB2/3";
  }
  SECTION("SMB1 only") {
    t.min_protocol = t.max_protocol = "NT1";
    want = ", SMB1";
  }
  SECTION("signing required") {
    t.require_signing = true;
    want = ", signed";
  }
  SECTION("SMB3 encryption required") {
    t.require_encryption = true;
    want = ", encrypted";
  }
  auto w = connect(server, t, cred);
  const std::string described = w->channel().describe();
  INFO(described);
  CHECK(described.find(want) != std::string::npos);
  CHECK(described.find(kPassword) == std::string::npos);
  winreg::PolicyHandle hkpd;
  REQUIRE(w->open_hive(winreg::kOpenHKPD, hkpd).ok());
  CHECK(query(*w, hkpd, "Global", 65536).type == windows::kRegBinary);
  if (t.require_encryption) {  // smbd itself says the session is encrypted
    const std::string sessions = server.sessions();
    INFO(sessions);
    CHECK(sessions.find("AES-") != std::string::npos);
  }
}

TEST_CASE("an NT1-only server: SMB2/3 alone is refused with a dialect hint, a range with NT1 falls back to SMB1",
          "[recorder_smb][samba]") {
  require_environment();
  SambaWinregServer server;
  SambaWinregConfig c = config("samba-nt1", "127.0.0.24");
  c.extra_global = "\tserver max protocol = NT1\n";
  start(server, c);
  SmbTarget t = target_of(server);
  const Status refused = failed_connect(t, root());
  CHECK(refused.message().find("share no SMB dialect") != std::string::npos);
  CHECK(refused.message().find("allow NT1 as the lowest dialect") != std::string::npos);

  t.min_protocol = "NT1";
  auto w = connect(server, t, root());
  INFO(w->channel().describe());
  CHECK(w->channel().describe().find(", SMB1") != std::string::npos);
  winreg::PolicyHandle hkpd;
  CHECK(w->open_hive(winreg::kOpenHKPD, hkpd).ok());
}

TEST_CASE("connect_smb errors tell what to check", "[recorder_smb][samba][errors]") {
  require_environment();

  SECTION("wrong password: check user, password and domain") {
    SambaWinregServer server;
    start(server, config("samba-password", "127.0.0.23"));
    Credentials bad = root();
    bad.password = "not-the-password";
    const Status s = failed_connect(target_of(server), bad);
    CHECK(s.message().find("NT_STATUS_LOGON_FAILURE") != std::string::npos);
    CHECK(s.message().find("check user, password and domain") != std::string::npos);
    CHECK(s.message().find("not-the-password") == std::string::npos);
  }

  SECTION("an smbd without \\PIPE\\winreg: RemoteRegistry is not running") {
    SambaWinregServer server;
    SambaWinregConfig c = config("samba-nopipe", "127.0.0.23");
    c.winreg = false;
    start(server, c);
    const Status s = failed_connect(target_of(server), root());
    CHECK(s.message().find("NT_STATUS_OBJECT_NAME_NOT_FOUND") != std::string::npos);
    CHECK(s.message().find("RemoteRegistry service is not running") != std::string::npos);
    CHECK(s.message().find("sc start RemoteRegistry") != std::string::npos);
  }

  SECTION("a closed port: is the host up, is the port open") {
    SmbTarget t;
    t.host = "127.0.0.1";
    t.port = testing::free_port();  // nothing listens there
    const Status s = failed_connect(t, root());
    CHECK(s.message().find("Connection refused") != std::string::npos);
    CHECK(s.message().find("is the host up") != std::string::npos);
    CHECK(s.message().find("is TCP port " + std::to_string(t.port) + " open") != std::string::npos);
  }

  SECTION("a port that accepts and never answers: the connect ends at the time-out") {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    SmbTarget t;
    t.host = "127.0.0.1";
    t.port = ntohs(a.sin_port);
    const Status s = failed_connect(t, root(), 1500ms);
    ::close(fd);
    CHECK(s.message().find("timed out after 1500 ms") != std::string::npos);
    CHECK(s.message().find("is the host up") != std::string::npos);
  }

  SECTION("a name that does not resolve") {
    SmbTarget t;
    t.host = "no-such-host.invalid";
    const Status s = failed_connect(t, root());
    CHECK(s.message().find("cannot resolve 'no-such-host.invalid'") != std::string::npos);
  }
}

}  // namespace
}  // namespace perfsim::recorder
