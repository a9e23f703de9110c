// Recording over SMB (\PIPE\winreg through Samba's libdcerpc), against two real smbds on loopback:
// perfsim serve --smb (the recorded samples equal the served ones) and Samba's own rpcd_winreg, a
// winreg server nobody here wrote, whose odd HKPD answers must be recorded, named, and replayed
// exactly. Needs root and samba (CI installs them).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "captures/reader.h"
#include "recorder/record.h"
#include "recorder/smb_channel.h"
#include "recorder/tcp_channel.h"
#include "replayer/host.h"
#include "replayer/quirks.h"
#include "server/server.h"
#include "server/winreg_handler.h"
#include "tests/common/perfsim_smb_serve.h"
#include "tests/common/samba_winreg.h"
#include "tests/interop/support.h"
#include "tests/common/served_host.h"

using namespace perfsim;
using namespace std::chrono_literals;

namespace {

const char* const kSmbPassword = "Record-Test-pw1";

recorder::Credentials root() {
  recorder::Credentials c;
  c.user = "root";
  c.password = kSmbPassword;
  c.kerberos = recorder::Credentials::Kerberos::kOff;
  return c;
}

recorder::RecordResult record_smb(const std::string& address, uint16_t port, const recorder::Credentials& creds,
                                  const std::string& path, std::vector<std::string> queries) {
  recorder::SmbTarget t;
  t.host = address;
  t.port = port;
  std::unique_ptr<recorder::Channel> ch;
  const Status cs = recorder::connect_smb(t, creds, 20s, ch);
  INFO(cs.ToString());
  REQUIRE(cs.ok());
  recorder::WinregClient client(std::move(ch));
  recorder::RecordOptions o;
  o.queries = std::move(queries);
  o.interval = 50ms;
  o.count = 2;
  o.host_name = address;
  recorder::RecordResult r;
  const Status s = recorder::record(client, path, o, r);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return r;
}

// What a collector gets for `name` under HKPD with a NULL buffer and with a 64 KiB one.
struct Answer {
  uint32_t status, type, size;
  Bytes data;
};
std::vector<Answer> answers(recorder::WinregClient& c, const std::vector<std::string>& names) {
  winreg::PolicyHandle hkpd;
  REQUIRE(c.open_hive(winreg::kOpenHKPD, hkpd).ok());
  std::vector<Answer> out;
  for (const std::string& n : names)
    for (std::optional<uint32_t> buffer : {std::optional<uint32_t>(), std::optional<uint32_t>(65536)}) {
      winreg::QueryValueResponse r;
      REQUIRE(c.query_value(hkpd, n, buffer, r).ok());
      out.push_back({r.result, r.type.value_or(0), r.data_size.value_or(0), r.data ? r.data->to_bytes() : Bytes()});
    }
  return out;
}

bool mentions(const std::vector<std::string>& findings, const std::string& what) {
  for (const std::string& f : findings)
    if (f.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("record over SMB through perfsim serve --smb: the samples are the served ones", "[recorder][smb]") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("perfsim_rec_smb_" + std::to_string(::getpid()))).string();
  const std::string capture = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  testing::PerfsimSmbServe serve;
  testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = dir;
  cfg.hosts = {{"127.0.0.117", capture, {}}};
  cfg.users = {{"recorder", kSmbPassword}};
  const Status s = serve.start(cfg);
  INFO(s.ToString());
  REQUIRE(s.ok());

  recorder::Credentials creds;
  creds.user = "recorder";
  creds.password = kSmbPassword;
  creds.kerberos = recorder::Credentials::Kerberos::kOff;
  const std::string path = dir + "/recorded.perfcap";
  const recorder::RecordResult r = record_smb("127.0.0.117", serve.port(), creds, path, {"Global", "238"});
  CHECK(r.samples == 2);
  CHECK(r.host.name == "PERFSIM-2016");
  CHECK(r.fingerprint.more_data == "echo-offered");  // a 2016 host (windows/README.md)

  std::shared_ptr<replayer::SimulatedHost> served;
  REQUIRE(testing::load_frozen_host(capture, cfg.frozen_tick, served).ok());
  captures::Capture got;
  REQUIRE(captures::read_capture(path, got).ok());
  size_t compared = 0;
  for (const captures::QueryRecord& rec : got.records) {
    CHECK(rec.payload == served->content(replayer::PerfKey::kData, rec.value_name, cfg.frozen_tick).data);
    ++compared;
  }
  CHECK(compared == 4);
  REQUIRE(got.names.size() == 1);
  CHECK(got.names[0].counter == served->capture().names[0].counter);

  // perfsim query reaches the same host over SMB with the same options.
  const interop::CommandResult q = interop::run_command(
      "timeout 60 " + std::string(PERFSIM_EXE) + " query --json smb:127.0.0.117:" + std::to_string(serve.port()) +
      " -U recorder --password " + kSmbPassword + " --kerberos off Global 2>&1");
  INFO(q.output);
  REQUIRE(q.exit_status == 0);
  const nlohmann::json j = nlohmann::json::parse(q.output.substr(q.output.find('[')));
  CHECK(j[0]["status"] == 0);
  CHECK(j[0]["bytes"] == served->content(replayer::PerfKey::kData, "Global", cfg.frozen_tick).data.size());
  serve.stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("record Samba's own rpcd_winreg: no error, its oddities named, its answers replayed exactly",
          "[recorder][smb]") {
  {
    const Status s = testing::samba_server_available();
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  testing::SambaWinregServer samba;
  testing::SambaWinregConfig cfg;
  cfg.dir = (std::filesystem::temp_directory_path() / ("perfsim_rec_samba_" + std::to_string(::getpid()))).string();
  cfg.address = "127.0.0.118";
  cfg.users = {{"root", kSmbPassword}};
  {
    const Status s = samba.start(cfg);
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  const std::string path = cfg.dir + "-recorded.perfcap";
  const recorder::RecordResult r = record_smb(samba.address(), samba.port(), root(), path, {"Global", "238", "Costly"});
  CHECK(r.samples == 2);
  const std::vector<std::string> f = r.fingerprint.findings.value_or(std::vector<std::string>{});
  INFO(captures::to_json(r.fingerprint));
  CHECK(mentions(f, "'Global' answered WERR_OK with 0 bytes"));
  CHECK(mentions(f, "'Help 009' answered WERR_FILE_NOT_FOUND"));
  CHECK(mentions(f, "'Counter 009' answered type 3 with 0 bytes"));
  CHECK(mentions(f, "'Last Counter' is 0"));

  // What Samba answers, next to what the recorded capture answers when served.
  const std::vector<std::string> names = {"Global", "238", "Costly", "Counter 009", "Help 009"};
  std::vector<Answer> original;
  {
    recorder::SmbTarget t;
    t.host = samba.address();
    t.port = samba.port();
    std::unique_ptr<recorder::Channel> ch;
    REQUIRE(recorder::connect_smb(t, root(), 20s, ch).ok());
    recorder::WinregClient c(std::move(ch));
    original = answers(c, names);
  }
  samba.stop();

  captures::Capture got;
  REQUIRE(captures::read_capture(path, got).ok());
  replayer::HostOptions opt{replayer::TimelineMode::kRealtime, 0};
  REQUIRE(replayer::fingerprint_quirks(got.fingerprint_json, opt.quirks).ok());
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(got, opt, host).ok());
  testing::ServedHost srv(host);
  REQUIRE(srv.start().ok());
  std::unique_ptr<recorder::Channel> ch;
  REQUIRE(recorder::connect_tcp("127.0.0.1", srv.port(), 10s, ch).ok());
  recorder::WinregClient c(std::move(ch));
  const std::vector<Answer> replayed = answers(c, names);
  REQUIRE(replayed.size() == original.size());
  for (size_t i = 0; i < original.size(); ++i) {
    INFO(names[i / 2] << (i % 2 ? " with a 64 KiB buffer" : " with a NULL buffer"));
    CHECK(replayed[i].status == original[i].status);
    CHECK(replayed[i].data == original[i].data);
    if (original[i].status == 0) {
      CHECK(replayed[i].type == original[i].type);
      CHECK(replayed[i].size == original[i].size);
    }
  }
  // The HKLM side: Perflib's Last Counter of 0 is served as recorded.
  winreg::PolicyHandle hklm, perflib;
  REQUIRE(c.open_hive(winreg::kOpenHKLM, hklm).ok());
  uint32_t werr = 1;
  REQUIRE(c.open_key(hklm, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", perflib, werr).ok());
  REQUIRE(werr == 0);
  winreg::QueryValueResponse lc;
  REQUIRE(c.query_value(perflib, "Last Counter", 4, lc).ok());
  CHECK(lc.result == 0);
  CHECK(lc.data == std::optional<Bytes>(Bytes(4, 0)));
  srv.stop();
  std::filesystem::remove(path);
}
