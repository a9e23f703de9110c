// Real collectors against the in-process server with a journal: what the diagnosis says of them,
// live and from the journal file read back offline.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "captures/reader.h"
#include "journal/diagnosis.h"
#include "journal/recorder.h"
#include "replayer/faults.h"
#include "replayer/host.h"
#include "server/winreg_handler.h"
#include "tests/common/run_command.h"
#include "tests/common/served_host.h"

namespace perfsim::journal {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const captures::Capture& win2000() {
  static captures::Capture cap;
  static bool loaded = false;
  if (!loaded) {
    REQUIRE(captures::read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-win2000.perfcap", cap).ok());
    loaded = true;
  }
  return cap;
}

replayer::Quirks profile(const std::string& name) {
  replayer::Quirks q;
  REQUIRE(replayer::profile_quirks(name, q).ok());
  return q;
}

// The Windows 2000 host with `quirks` (frozen at tick 10, sizes fixed), served with the journal
// and metrics perfsim serve makes, the journal also written to `file`.
struct Served {
  std::shared_ptr<replayer::SimulatedHost> host;
  std::shared_ptr<Recorder> rec;
  std::unique_ptr<testing::ServedHost> srv;
  std::string file;

  Served(const std::string& name, const replayer::Quirks& quirks) {
    fs::create_directories(JOURNAL_WORK_DIR);
    file = std::string(JOURNAL_WORK_DIR) + "/" + name + ".jsonl";
    replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 10};
    opt.quirks = quirks;
    REQUIRE(replayer::SimulatedHost::load(win2000(), opt, host).ok());
    // 100,000 events hold a whole run, so live and offline see the same events.
    REQUIRE(server::make_recorder(100000, file, rec).ok());
    testing::ServeOptions so;
    so.recorder = rec;
    srv = std::make_unique<testing::ServedHost>(host, so);
    REQUIRE(srv->start().ok());
  }
  testing::CommandResult run(const std::string& script, const std::string& args, int seconds) {
    return testing::run_command(std::string(PERFSIM_PYTHON),
                                "-B " + std::string(PERFSIM_SOURCE_DIR) + "/tests/" + script + " --port " +
                                    std::to_string(srv->port()) + " " + args,
                                seconds);
  }
  // The live diagnosis after the server stopped (every handler done), checked against the file's.
  std::vector<SessionDiagnosis> sessions() {
    srv->stop();
    rec->journal()->flush();
    std::vector<SessionDiagnosis> live = rec->journal()->sessions();
    std::vector<CallEvent> back;
    const Status s = read_journal_file(file, back);
    INFO(s.ToString());
    REQUIRE(s.ok());
    const std::vector<SessionDiagnosis> offline = diagnose(back);
    REQUIRE(offline.size() == live.size());
    for (size_t i = 0; i < live.size(); ++i) CHECK(to_json(offline[i]) == to_json(live[i]));
    CHECK(rec->journal()->drops() == 0);
    return live;
  }
};

}  // namespace

TEST_CASE("impacket's hBaseRegQueryValue against a Windows 2000 host: the diagnosis reports its loop",
          "[journal][impacket]") {
  Served s("impacket-win2000", profile("win2000"));
  // The loop never ends by itself: `timeout` ends it (124).
  const testing::CommandResult r = s.run("interop/quirk_client.py", "--op hquery --name Global", 3);
  INFO(r.out << r.err);
  REQUIRE(r.code == 124);
  const std::vector<SessionDiagnosis> d = s.sessions();
  REQUIRE(d.size() == 1);
  REQUIRE(d[0].loops.size() == 1);
  CHECK(d[0].loops[0].value == "Global");
  CHECK(d[0].loops[0].offers >= 10);
  CHECK(d[0].growth == Growth::kFixed);
  CHECK(d[0].handles_opened == 1);
  CHECK(d[0].handles_closed == 0);  // killed mid-loop: its handle was never closed
  CHECK(to_json(d[0])["value_growth"]["Global"]["growth"] == "fixed");
  // Each MORE_DATA answer names the quirk that made it, in the journal and the metrics.
  const std::vector<CallEvent> ev = s.rec->journal()->query({});
  size_t echoed = 0;
  for (const CallEvent& e : ev) echoed += e.status == 234 && e.applied == "win2000-echo-oversize";
  CHECK(echoed == d[0].loops[0].offers);
  CHECK(s.rec->metrics()->render_prometheus().find("name=\"win2000-echo-oversize\"} " + std::to_string(echoed)) !=
        std::string::npos);
}

TEST_CASE("a collector growing by 64 KB against the Windows 2000 host is reported as +65536 bytes, no loop",
          "[journal][impacket]") {
  Served s("grow-win2000", profile("win2000"));
  const testing::CommandResult r =
      s.run("interop/quirk_client.py", "--op grow --name 238 --start 65536 --step 65536", 60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::vector<SessionDiagnosis> d = s.sessions();
  REQUIRE(d.size() == 1);
  CHECK(d[0].growth == Growth::kPlusN);
  CHECK(d[0].growth_n == 65536);
  CHECK(d[0].steps.size() >= 2);
  CHECK(d[0].loops.empty());
}

TEST_CASE("python3-samba's collector (probe, then doubling) against win32-undefined sizes is reported as doubling",
          "[journal][samba]") {
  // win32-undefined never says the size, so the collector can only double from its 64 bytes.
  replayer::Quirks q;
  REQUIRE(replayer::apply_setting(q, {"win32-undefined", true, {}}).ok());
  Served s("samba-win32-undefined", q);
  const std::string out = std::string(JOURNAL_WORK_DIR) + "/samba-out";
  fs::create_directories(out);
  const testing::CommandResult r = s.run("interop/collector_samba.py", "--out " + out, 120);
  INFO(r.out << r.err);
  const std::vector<SessionDiagnosis> d = s.sessions();
  REQUIRE(d.size() == 1);
  const json j = to_json(d[0]);
  INFO(j.dump(2));
  CHECK(j["value_growth"]["Global"]["growth"] == "doubling");
  CHECK(d[0].loops.empty());
  CHECK(d[0].handles_opened >= 3);
  CHECK(d[0].handles_opened == d[0].handles_closed);  // it closes what it opened
  CHECK(d[0].kinds.count("global") == 1);
}

TEST_CASE("ERROR_BUSY from a fault plan: the diagnosis counts the retries and their back-off", "[journal][impacket]") {
  Served s("busy", profile("rrp-exact"));
  std::shared_ptr<const replayer::FaultPlan> plan;
  REQUIRE(replayer::parse_fault_plan("[[fault]]\nkind = \"busy\"\nvalue = \"Global\"\nevery = 2\n", "plan", plan).ok());
  s.host->set_faults(plan);
  const testing::CommandResult r = s.run("journal/busy_client.py", "--polls 3 --backoff-ms 60", 60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json out = json::parse(r.out);
  size_t busy = 0;
  for (const json& st : out["statuses"]) busy += st == 170;
  REQUIRE(busy >= 2);
  const std::vector<SessionDiagnosis> d = s.sessions();
  REQUIRE(d.size() == 1);
  CHECK(d[0].busy_answers == busy);
  CHECK(d[0].busy_retries == busy);
  REQUIRE(d[0].busy_backoff_ms.size() == busy);
  for (double ms : d[0].busy_backoff_ms) CHECK(ms >= 55);  // the client sleeps 60 ms after each
  CHECK(d[0].handles_opened == d[0].handles_closed);
  std::vector<CallEvent> ev = s.rec->journal()->query({});
  size_t marked = 0;
  for (const CallEvent& e : ev) marked += e.applied == "fault:busy";
  CHECK(marked == busy);
  CHECK(s.rec->metrics()->render_prometheus().find("name=\"fault:busy\"} " + std::to_string(busy)) !=
        std::string::npos);
}

}  // namespace perfsim::journal
