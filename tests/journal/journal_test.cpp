// The journal's ring, file and filters, the diagnosis on hand-made call sequences, and the metrics'
// exposition format checked by Prometheus' own promtool.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "journal/answers.h"
#include "journal/diagnosis.h"
#include "journal/journal.h"
#include "journal/metrics.h"
#include "journal/recorder.h"
#include "tests/common/run_command.h"
#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::journal {
namespace {

constexpr uint32_t kMore = windows::kErrorMoreData, kOk = windows::kErrorSuccess, kBusy = windows::kErrorBusy;

SharedText txt(const std::string& s) { return std::make_shared<const std::string>(s); }

// A QueryValue of `value` at `ms` offering `offered` bytes, answered `status` with size `said`.
CallEvent qv(uint64_t session, int64_t ms, const std::string& value, uint32_t offered, uint32_t status,
             uint32_t said = 0, uint32_t bytes = 0) {
  CallEvent e;
  e.time_us = ms * 1000;
  e.host = txt("HOST-A");
  e.peer = txt("127.0.0.1:5000");
  e.session = session;
  e.opnum = winreg::kQueryValue;
  e.value_name = value;
  e.key_path = txt("HKEY_PERFORMANCE_DATA");
  e.has_buffer = true;
  e.offered = offered;
  e.status = status;
  e.size = said;
  e.bytes = bytes;
  return e;
}

CallEvent op(uint64_t session, uint16_t opnum, uint32_t status = kOk) {
  CallEvent e;
  e.host = txt("HOST-A");
  e.session = session;
  e.opnum = opnum;
  e.status = status;
  return e;
}

std::string temp_path(const std::string& name) {
  return "/tmp/perfsim-journal-test-" + std::to_string(getpid()) + "-" + name;
}

}  // namespace

TEST_CASE("growth classifier: exact, doubling, +N, fixed and mixed retry sequences", "[journal]") {
  int64_t n = -1;
  CHECK(classify_growth({}, n) == Growth::kNone);
  CHECK(classify_growth({{"Global", 512, 180000, 180000}}, n) == Growth::kExact);
  CHECK(classify_growth({{"Global", 64, 0, 128}, {"Global", 128, 0, 256}, {"Global", 256, 0, 512}}, n) ==
        Growth::kDoubling);
  // 64K -> 128K is also a doubling; the whole run is +64K.
  CHECK(classify_growth({{"238", 65536, 65536, 131072}, {"238", 131072, 131072, 196608}}, n) == Growth::kPlusN);
  CHECK(n == 65536);
  CHECK(classify_growth({{"238", 1000, 0, 5096}, {"238", 5096, 0, 9192}, {"238", 9192, 0, 13288}}, n) ==
        Growth::kPlusN);
  CHECK(n == 4096);
  // An echoing host says the offered size: offering it again is "fixed", not "exact".
  CHECK(classify_growth({{"Global", 512, 512, 512}, {"Global", 512, 512, 512}}, n) == Growth::kFixed);
  CHECK(classify_growth({{"Global", 64, 0, 128}, {"Global", 128, 200000, 200000}}, n) == Growth::kMixed);
  CHECK(classify_growth({{"Global", 128, 0, 100}}, n) == Growth::kMixed);
}

TEST_CASE("diagnosis: a loop, busy retries with back-off, values, handles and poll intervals", "[journal]") {
  std::vector<CallEvent> ev;
  ev.push_back(op(7, winreg::kOpenHKPD));
  for (int i = 0; i < 5; ++i) ev.push_back(qv(7, 10 + i, "Global", 512, kMore, 512));
  ev.push_back(qv(7, 100, "Costly", 999999, kBusy));
  ev.push_back(qv(7, 150, "Costly", 999999, kOk, 50000, 50000));
  ev.push_back(qv(7, 1150, "Costly", 999999, kOk, 50000, 50000));
  ev.push_back(qv(7, 2150, "Costly", 999999, kOk, 50000, 50000));
  ev.push_back(qv(7, 2200, "238 230", 999999, kOk, 1000, 1000));
  ev.push_back(op(7, winreg::kCloseKey));
  ev.push_back(op(8, winreg::kOpenHKLM));  // another session, handle left open
  const std::vector<SessionDiagnosis> d = diagnose(ev);
  REQUIRE(d.size() == 2);
  const SessionDiagnosis& s = d[0];
  CHECK(s.session == 7);
  CHECK(s.calls == 12);
  REQUIRE(s.loops.size() == 1);
  CHECK(s.loops[0].value == "Global");
  CHECK(s.loops[0].size == 512);
  CHECK(s.loops[0].offers == 5);
  CHECK(s.growth == Growth::kFixed);
  CHECK(s.busy_answers == 1);
  CHECK(s.busy_retries == 1);
  REQUIRE(s.busy_backoff_ms.size() == 1);
  CHECK(s.busy_backoff_ms[0] == Approx(50));
  CHECK(s.values.at("Costly") == 4);
  CHECK(s.kinds.at("global") == 5);
  CHECK(s.kinds.at("index-list") == 1);
  CHECK(s.handles_opened == 1);
  CHECK(s.handles_closed == 1);
  CHECK(summarize(s.poll_interval_ms).median == Approx(1000));
  CHECK(d[1].handles_opened == 1);
  CHECK(d[1].handles_closed == 0);
  const nlohmann::json j = to_json(s);
  CHECK(j["loops"][0]["offers"] == 5);
  CHECK(j["handles"]["all_closed"] == true);
  CHECK(to_json(d[1])["handles"]["all_closed"] == false);
  CHECK(render_text(d).find("LOOP: Global offered 512 bytes 5 times") != std::string::npos);
  CHECK(value_kind("Counter 009") == std::string("counter"));
  CHECK(value_kind("Help") == std::string("help"));
  CHECK(value_kind("Global") == std::string("global"));
  CHECK(value_kind("Globalx") == std::string("other"));
}

TEST_CASE("journal ring: N+k calls keep the newest N with the oldest dropped, then clear and filters", "[journal]") {
  Journal j(100);
  for (int i = 0; i < 130; ++i) j.record(qv(1 + i % 2, i, "Global", uint32_t(i), kOk));
  std::vector<CallEvent> all = j.query({});
  REQUIRE(all.size() == 100);
  CHECK(all.front().seq == 31);
  CHECK(all.front().offered == 30);  // the 30 oldest are gone
  CHECK(all.back().seq == 130);
  CHECK(j.recorded() == 130);
  JournalFilter f;
  f.session = 2;
  f.limit = 10;
  const std::vector<CallEvent> two = j.query(f);
  REQUIRE(two.size() == 10);
  CHECK(two.back().seq == 130);
  for (const CallEvent& e : two) CHECK(e.session == 2);
  f = {};
  f.set_since(120);
  CHECK(j.query(f).size() == 10);
  CHECK(j.query_json(f)["next_since"] == 130);
  CHECK(j.query_json(f)["entries"].size() == 10);
  CHECK(j.query_json(f)["entries"][0]["seq"] == 121);
  f = {};
  f.host = "HOST-B";
  CHECK(j.query(f).empty());
  j.clear();
  CHECK(j.query({}).empty());
  j.record(qv(3, 1, "Costly", 1, kOk));
  REQUIRE(j.query({}).size() == 1);
  CHECK(j.sessions_json()[0]["session"] == 3);
}

TEST_CASE("journal file: every event as a JSON line, read back with the same diagnosis", "[journal]") {
  const std::string path = temp_path("file.jsonl");
  std::vector<SessionDiagnosis> live;
  {
    Journal j(1000);
    REQUIRE(j.open_file(path).ok());
    for (int i = 0; i < 4; ++i) j.record(qv(5, i, "Global", 512, kMore, 512));
    j.record(qv(5, 10, "Global", 1 << 20, kOk, 180000, 180000));
    j.flush();
    live = j.sessions();
    CHECK(j.drops() == 0);
  }
  std::vector<CallEvent> back;
  REQUIRE(read_journal_file(path, back).ok());
  REQUIRE(back.size() == 5);
  CHECK(back[4].bytes == 180000);
  CHECK(text(back[0].key_path) == "HKEY_PERFORMANCE_DATA");
  const std::vector<SessionDiagnosis> offline = diagnose(back);
  REQUIRE(offline.size() == 1);
  CHECK(to_json(offline[0]) == to_json(live[0]));
  // A damaged line is refused with its line number.
  { std::ofstream(path, std::ios::app) << "{\"seq\": 6}\n"; }
  back.clear();
  const Status s = read_journal_file(path, back);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find(":6:") != std::string::npos);
  CHECK(s.message().find("time_us") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("journal file lines: the writer's fast JSON is the same object as to_json, escapes included", "[journal]") {
  CallEvent e = qv(9, 1795498086173, "we\"ird\\name\x01\xc3\xa9", 12, kMore, 34, 0);
  e.seq = 77;
  e.applied = "busy,fault:latency";
  e.rpc_fault = 5;
  std::string line;
  append_json_line(e, line);
  const nlohmann::json j = nlohmann::json::parse(line);
  CHECK(j == to_json(e));
  e.key_path = nullptr;
  e.applied.clear();
  line.clear();
  append_json_line(e, line);
  CHECK(nlohmann::json::parse(line) == to_json(e));
  CHECK(line == to_json(e).dump());  // byte for byte where nothing needs escaping differently
}

TEST_CASE("journal file: events the ring overwrote before the writer got them are counted as drops", "[journal]") {
  const std::string path = temp_path("drops.jsonl");
  {
    Journal j(10);
    REQUIRE(j.open_file(path).ok());
    // The writer follows every 50 ms: 5,000 events at once outrun a 10-slot ring.
    for (int i = 0; i < 5000; ++i) j.record(qv(1, i, "Global", 1, kOk));
    j.flush();
    CHECK(j.drops() > 0);
    std::vector<CallEvent> back;
    REQUIRE(read_journal_file(path, back).ok());
    CHECK(back.size() + j.drops() == 5000);
    CHECK(back.back().seq == 5000);
    // The file says how many it lacks, in marker lines a reader counts (perfsim journal's summary).
    back.clear();
    JournalRead read;
    REQUIRE(read_journal({path}, /*strict=*/true, back, read).ok());
    CHECK(read.dropped == j.drops());
    CHECK(read.skipped == 0);
  }
  std::remove(path.c_str());
}

TEST_CASE("journal file rotation: FILE, FILE.1 .. FILE.K-1 each within the cap, whole lines, the oldest gone",
          "[journal]") {
  const std::string path = temp_path("rot.jsonl");
  { std::ofstream(path + ".3") << "an earlier run's\n"; }  // a longer set from before: not this run's
  { std::ofstream(path + ".4") << "an earlier run's\n"; }
  const uint64_t cap = 8192;
  {
    Journal j(100000);
    REQUIRE(j.open_file(path, FileLimits{cap, 3}).ok());
    CHECK_FALSE(std::ifstream(path + ".3").good());
    for (int i = 0; i < 500; ++i) {  // about 150 KB of lines: many rotations
      j.record(qv(1, i, std::string(200, 'v'), 512, kMore, 1024));
      if (i % 50 == 0) j.flush();
    }
    j.flush();
    CHECK(j.rotations() > 10);
    CHECK(j.drops() == 0);
  }
  const std::vector<std::string> set = journal_set(path);
  REQUIRE(set == std::vector<std::string>{path + ".2", path + ".1", path});
  CHECK_FALSE(std::ifstream(path + ".3").good());
  uint64_t expected_seq = 0;
  for (const std::string& f : set) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(f);
    CHECK(bytes.size() <= cap);
    REQUIRE(!bytes.empty());
    CHECK(bytes.back() == '\n');  // whole lines only: rotation happens between two
    std::vector<CallEvent> part;
    REQUIRE(read_journal_file(f, part).ok());  // strict: not one cut line
    REQUIRE(!part.empty());
    if (expected_seq) CHECK(part.front().seq == expected_seq);  // each file goes on where the older stopped
    expected_seq = part.back().seq + 1;
  }
  CHECK(expected_seq == 501);  // the newest calls are kept, the oldest went with the dropped files
  for (const std::string& f : set) std::remove(f.c_str());
}

TEST_CASE("journal reader: unreadable lines are skipped and counted, strict refuses them, files read in order",
          "[journal]") {
  const std::string a = temp_path("read-a.jsonl"), b = temp_path("read-b.jsonl");
  const auto line = [](uint64_t seq) {
    CallEvent e = qv(1, int64_t(seq), "Global", 512, kOk, 100, 100);
    e.seq = seq;
    std::string out;
    append_json_line(e, out);
    return out + "\n";
  };
  {
    std::ofstream(a) << line(1) << line(2) << "{\"events\":7,\"journal\":\"dropped\",\"time_us\":1}\n" << line(10);
    std::string cut = line(12);
    cut.resize(cut.size() / 2);  // what a killed server leaves: its last line cut
    std::ofstream(b) << line(11) << "garbage in the middle\n" << line(12) << "{\"seq\": 13}\n" << cut;
  }
  std::vector<CallEvent> ev;
  JournalRead read;
  REQUIRE(read_journal({a, b}, /*strict=*/false, ev, read).ok());
  REQUIRE(ev.size() == 5);
  CHECK(ev.front().seq == 1);
  CHECK(ev.back().seq == 12);
  CHECK(read.dropped == 7);
  CHECK(read.skipped == 3);
  REQUIRE(read.first_skipped.size() == 3);
  CHECK(read.first_skipped[0] == b + ":2: not JSON (expected one event object per line)");
  CHECK_THAT(read.first_skipped[1], Catch::StartsWith(b + ":4: field"));
  CHECK_THAT(read.first_skipped[2], Catch::StartsWith(b + ":5: not JSON"));
  CHECK(read.files == std::vector<std::string>{a, b});
  ev.clear();
  JournalRead strict;
  const Status s = read_journal({a, b}, /*strict=*/true, ev, strict);
  CHECK(s.message() == b + ":2: not JSON (expected one event object per line)");
  // A mistyped optional field is a line skipped too (it once aborted perfsim journal).
  std::string mistyped = line(20);
  const size_t at = mistyped.find("\"buffer\":true");
  REQUIRE(at != std::string::npos);
  mistyped.replace(at, 13, "\"buffer\":\"yes\"");
  { std::ofstream(a) << mistyped << line(21); }
  ev.clear();
  JournalRead typed;
  REQUIRE(read_journal({a}, /*strict=*/false, ev, typed).ok());
  CHECK(ev.size() == 1);
  REQUIRE(typed.skipped == 1);
  CHECK(typed.first_skipped[0] == a + ":1: field \"buffer\" not true or false");
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST_CASE("metrics: Prometheus text format accepted by promtool check metrics", "[journal][promtool]") {
  std::shared_ptr<Recorder> rec;
  RecorderOptions o;
  o.applied_names = {"buffer-quirk", "busy"};
  REQUIRE(Recorder::create(o, rec).ok());
  {
    auto tap = rec->open_session("HOST-\"A\"", "127.0.0.1:1", Transport::kTcp);
    CallEvent busy = qv(0, 1, "Global", 10, kBusy);
    tap->record(std::move(busy), 2);
    for (int i = 0; i < 3; ++i) {
      CallEvent e = qv(0, 2, "Global", 10, kOk, 100, 100);
      e.latency_us = 3000;
      tap->record(std::move(e), 0);
    }
    auto smb = rec->open_session("HOST-B", "127.0.0.1:2", Transport::kSmb);
    CallEvent f = op(0, winreg::kOpenHKPD);
    f.rpc_fault = 0x1c010002;
    smb->record(std::move(f), 0);
    const std::string text = rec->metrics()->render_prometheus();
    CHECK(text.find("perfsim_winreg_calls_total{host=\"HOST-\\\"A\\\"\",opnum=\"QueryValue\",status=\"WERR_OK\"} 3") !=
          std::string::npos);
    CHECK(text.find("status=\"WERR_BUSY\"} 1") != std::string::npos);
    CHECK(text.find("status=\"rpc_fault\"} 1") != std::string::npos);
    CHECK(text.find("perfsim_sessions_open{host=\"HOST-B\",transport=\"smb\"} 1") != std::string::npos);
    CHECK(text.find("perfsim_applied_total{host=\"HOST-\\\"A\\\"\",name=\"busy\"} 1") != std::string::npos);
    CHECK(text.find("perfsim_winreg_reply_data_bytes_total{host=\"HOST-\\\"A\\\"\"} 300") != std::string::npos);
    CHECK(text.find("perfsim_journal_events_total 5") != std::string::npos);
    CHECK(text.find("le=\"0.0025\"} 1\n") != std::string::npos);  // the busy call (0 us) only
    CHECK(text.find("le=\"0.005\"} 4\n") != std::string::npos);
    CHECK(rec->metrics()->calls("HOST-\"A\"") == 4);
    CHECK(rec->metrics()->calls_json()["HOST-B"] == 1);
    const std::string path = temp_path("metrics.prom");
    { std::ofstream(path) << text; }
    const testing::CommandResult r = testing::run_command("promtool", "check metrics < " + path, 60);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    std::remove(path.c_str());
  }
  // Sessions closed: open gauges back to 0.
  CHECK(rec->metrics()->render_prometheus().find("perfsim_sessions_open{host=\"HOST-B\",transport=\"smb\"} 0") !=
        std::string::npos);
}

TEST_CASE("metrics: fleet-wide sums have no host label, add up every host and pass promtool", "[journal][promtool]") {
  std::shared_ptr<Recorder> rec;
  RecorderOptions o;
  o.applied_names = {"buffer-quirk", "busy"};
  REQUIRE(Recorder::create(o, rec).ok());
  rec->metrics()->set_per_host(false);
  // 60 hosts (above kPerHostMetricsUpTo), host k answering k + 1 calls of 100 bytes each.
  uint64_t calls = 0;
  for (int k = 0; k < 60; ++k) {
    auto tap = rec->open_session("HOST-" + std::to_string(k), "127.0.0.1:1", Transport::kTcp);
    for (int i = 0; i <= k; ++i, ++calls) tap->record(qv(0, 1, "Global", 10, kOk, 100, 100), i == 0 ? 2 : 0);
  }
  const std::string text = rec->metrics()->render_prometheus();
  CHECK(text.find("host=") == std::string::npos);
  CHECK(text.find("perfsim_winreg_calls_total{opnum=\"QueryValue\",status=\"WERR_OK\"} " + std::to_string(calls) +
                  "\n") != std::string::npos);
  CHECK(text.find("perfsim_winreg_reply_data_bytes_total " + std::to_string(calls * 100) + "\n") != std::string::npos);
  CHECK(text.find("perfsim_winreg_call_duration_seconds_count " + std::to_string(calls) + "\n") != std::string::npos);
  CHECK(text.find("perfsim_sessions_total{transport=\"tcp\"} 60\n") != std::string::npos);
  CHECK(text.find("perfsim_applied_total{name=\"busy\"} 60\n") != std::string::npos);
  size_t samples = 0;
  for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; ++at) samples += text[at + 1] != '#';
  CHECK(samples < 40);  // the same few series whatever the fleet's size
  rec->metrics()->set_per_host(true);
  const std::string per_host = rec->metrics()->render_prometheus();
  CHECK(per_host.find("perfsim_winreg_calls_total{host=\"HOST-59\",opnum=\"QueryValue\",status=\"WERR_OK\"} 60\n") !=
        std::string::npos);
  const std::string path = temp_path("fleet.prom");
  { std::ofstream(path) << text; }
  const testing::CommandResult r = testing::run_command("promtool", "check metrics < " + path, 60);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  std::remove(path.c_str());
}

TEST_CASE("metrics: health_json counts failed calls (not the growth handshake) and sessions per host", "[journal]") {
  std::shared_ptr<Recorder> rec;
  REQUIRE(Recorder::create(RecorderOptions{}, rec).ok());
  auto a = rec->open_session("HOST-A", "127.0.0.1:1", Transport::kTcp);
  a->record(qv(0, 1, "Global", 10, kMore), 0);  // too small: grow, not an error
  a->record(qv(0, 2, "Global", 100, kOk, 100, 100), 0);
  a->record(op(0, winreg::kEnumValue, windows::kErrorNoMoreItems), 0);  // the end of an enumeration
  a->record(qv(0, 3, "Global", 100, kBusy), 0);
  auto b = rec->open_session("HOST-B", "127.0.0.1:2", Transport::kSmb);
  CallEvent f = op(0, winreg::kOpenHKPD);
  f.rpc_fault = 0x1c010002;
  b->record(std::move(f), 0);
  rec->open_session("HOST-B", "127.0.0.1:3", Transport::kTcp);  // opened and closed at once
  const nlohmann::json h = rec->metrics()->health_json();
  CHECK(h["HOST-A"] == nlohmann::json{{"calls", 4}, {"errors", 1}, {"sessions_open", 1}, {"sessions_opened", 1}});
  CHECK(h["HOST-B"] == nlohmann::json{{"calls", 1}, {"errors", 1}, {"sessions_open", 1}, {"sessions_opened", 2}});
  a.reset();  // closing the session: open again 0, opened stays
  CHECK(rec->metrics()->health_json()["HOST-A"]["sessions_open"] == 0);
  CHECK(rec->metrics()->health_json()["HOST-A"]["sessions_opened"] == 1);
}

}  // namespace perfsim::journal

TEST_CASE("AnswerStore stays within its bytes when one session asks for many values") {
  perfsim::journal::AnswerStore store(10000);
  for (uint64_t i = 0; i < 100; ++i)  // 100 distinct values of 1,000 bytes: 100 KB asked, 10 KB kept
    store.keep(1, "HOST", {i, 0, "238 " + std::to_string(i), perfsim::SharedBytes(perfsim::Bytes(1000, 7))});
  const auto sessions = store.sessions();
  REQUIRE(sessions.size() == 1);
  size_t bytes = 0;
  for (const auto& a : sessions[0].answers) bytes += a.data.size();
  CHECK(bytes <= 10000);
  REQUIRE(!sessions[0].answers.empty());
  CHECK(sessions[0].answers.back().value == "238 99");  // the newest is kept
  // A second session: the first one's answers go before the newcomer's.
  store.keep(2, "HOST", {100, 0, "Global", perfsim::SharedBytes(perfsim::Bytes(1000, 7))});
  CHECK(store.sessions().size() == 1);
  CHECK(store.sessions()[0].session == 2);
  CHECK(store.dropped_sessions() == 1);
}
