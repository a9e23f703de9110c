// Live recording over ncacn_ip_tcp against perfsim's own server on loopback: what is recorded
// equals what was served, the fingerprint names each buffer policy, the recorded capture replays
// that policy with no profile named, and a recorder killed with SIGKILL leaves a readable capture.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "captures/reader.h"
#include "captures/registry_values.h"
#include "captures/system_values.h"
#include "core/utf16.h"
#include "core/subprocess.h"
#include "perfdata/model.h"
#include "recorder/record.h"
#include "recorder/tcp_channel.h"
#include "replayer/host.h"
#include "replayer/quirks.h"
#include "replayer/serve_hosts.h"
#include "server/server.h"
#include "server/winreg_handler.h"
#include "tests/common/small_synth.h"
#include "tests/common/served_host.h"
#include "tests/common/temp_file.h"

using namespace perfsim;
using namespace std::chrono_literals;

namespace {

using perfsim::testing::temp_file_path;

captures::Capture small_host() { return testing::small_synth_capture(); }

// A winreg server on 127.0.0.1 (free port) serving `host`, stopped when it goes out of scope.
struct LiveServer {
  explicit LiveServer(std::shared_ptr<replayer::SimulatedHost> h) : host(h), served(std::move(h)) {
    REQUIRE(served.start().ok());
    port = served.port();
  }
  std::shared_ptr<replayer::SimulatedHost> host;
  testing::ServedHost served;
  uint16_t port = 0;
};

std::shared_ptr<replayer::SimulatedHost> host_with(const captures::Capture& cap, replayer::Quirks q,
                                                   uint32_t tick = 1) {
  replayer::HostOptions opt{replayer::TimelineMode::kFrozen, tick};
  opt.quirks = q;
  std::shared_ptr<replayer::SimulatedHost> h;
  REQUIRE(replayer::SimulatedHost::load(cap, opt, h).ok());
  return h;
}

replayer::Quirks policy(const std::string& name) {
  replayer::Quirks q;
  REQUIRE(replayer::apply_setting(q, {name, true, {}}).ok());
  return q;
}

// Records `samples` samples of Global and "238" from 127.0.0.1:port into `path`.
recorder::RecordResult record_from(uint16_t port, const std::string& path, uint32_t samples = 3) {
  std::unique_ptr<recorder::Channel> ch;
  REQUIRE(recorder::connect_tcp("127.0.0.1", port, 10s, ch).ok());
  recorder::WinregClient client(std::move(ch));
  recorder::RecordOptions o;
  o.queries = {"Global", "238"};
  o.interval = 20ms;
  o.count = samples;
  o.host_name = "fallback";
  recorder::RecordResult r;
  const Status s = recorder::record(client, path, o, r);
  INFO(s.message());
  REQUIRE(s.ok());
  return r;
}

captures::Capture read_back(const std::string& path) {
  captures::Capture c;
  const Status s = captures::read_capture(path, c);
  INFO(s.message());
  REQUIRE(s.ok());
  return c;
}

}  // namespace

TEST_CASE("a recording over TCP holds exactly what the host served", "[recorder]") {
  const captures::Capture cap = small_host();
  LiveServer srv(host_with(cap, {}));
  const std::string path = temp_file_path("rec_exact", ".perfcap");
  const recorder::RecordResult r = record_from(srv.port, path, 4);
  CHECK(r.samples == 4);
  CHECK(r.host.name == cap.host.name);
  CHECK(r.host.profile == "2016");
  CHECK(r.host.product_name == cap.host.product_name);

  const captures::Capture got = read_back(path);
  const Bytes global = srv.host->content(replayer::PerfKey::kData, "Global", 1).data.to_bytes();
  const Bytes one = srv.host->content(replayer::PerfKey::kData, "238", 1).data.to_bytes();
  size_t globals = 0, ones = 0;
  for (const captures::QueryRecord& rec : got.records) {
    CHECK(rec.status == 0);
    if (rec.value_name == "Global") {
      ++globals;
      CHECK(rec.payload == global);
    }
    if (rec.value_name == "238") {
      ++ones;
      CHECK(rec.payload == one);
    }
    CHECK(rec.latency_us > 0);
    CHECK(rec.time_100ns > cap.host.start_time_100ns);
  }
  CHECK(globals == 4);
  CHECK(ones == 4);
  // Issue 30: the processor count is the served Processor object's instances but _Total (it was
  // always 1), and the system keys came along where the host served them.
  perfdata::DataBlock block;
  REQUIRE(perfdata::parse(global, block).ok());
  const uint32_t processors = perfdata::processor_count(block);
  REQUIRE(processors > 1);
  CHECK(got.host.processors == processors);
  const captures::RegistryValue* n = captures::find_value(got, captures::kEnvironmentKey, "NUMBER_OF_PROCESSORS");
  REQUIRE(n);
  CHECK(captures::reg_sz_text(n->data) == std::to_string(processors));
  const captures::RegistryValue* cn = captures::find_value(got, captures::kComputerNameKey, "ComputerName");
  REQUIRE(cn);
  CHECK(captures::reg_sz_text(cn->data) == srv.host->netbios_name());
  REQUIRE(got.names.size() == 1);
  CHECK(got.names[0].lang == "009");
  CHECK(got.names[0].counter == cap.names[0].counter);
  CHECK(got.names[0].help == cap.names[0].help);
  bool last_counter = false;
  for (const captures::RegistryValue& v : got.registry)
    if (v.name == "Last Counter")
      for (const captures::RegistryValue& w : cap.registry)
        if (w.name == "Last Counter" && w.key == v.key) last_counter = v.data == w.data;
  CHECK(last_counter);
  // "238" brought its provider's other objects: the catalog groups them.
  const nlohmann::json fp = nlohmann::json::parse(got.fingerprint_json);
  CHECK(fp["more_data"] == "rrp-exact");
  CHECK(fp["queries"]["238"]["objects"].size() > 1);
  std::filesystem::remove(path);
}

// REG_MULTI_SZ bytes of `strings` (UTF-16LE, each NUL-terminated, one more NUL at the end).
Bytes multi_sz(std::initializer_list<const char*> strings) {
  Bytes out;
  for (const char* s : strings) {
    for (char16_t c : utf8_to_utf16(s)) out.insert(out.end(), {uint8_t(c & 0xFF), uint8_t(c >> 8)});
    out.insert(out.end(), {0, 0});
  }
  out.insert(out.end(), {0, 0});
  return out;
}

// One sample of the host on `port` recorded with `languages` (empty: what its Perflib lists): the
// languages asked for and the name tables the capture got.
std::pair<std::vector<std::string>, std::vector<captures::NameTable>> record_languages(
    uint16_t port, std::vector<std::string> languages) {
  const std::string path = temp_file_path("rec_langs", ".perfcap");
  std::unique_ptr<recorder::Channel> ch;
  REQUIRE(recorder::connect_tcp("127.0.0.1", port, 10s, ch).ok());
  recorder::WinregClient client(std::move(ch));
  recorder::RecordOptions o;
  o.languages = std::move(languages);
  o.count = 1;
  o.interval = 20ms;
  recorder::RecordResult r;
  const Status st = recorder::record(client, path, o, r);
  INFO(st.message());
  REQUIRE(st.ok());
  captures::Capture got = read_back(path);
  std::filesystem::remove(path);
  return {r.languages, got.names};
}

TEST_CASE("a recording takes every name table the host's Perflib lists, or only those asked for", "[recorder]") {
  captures::Capture cap = small_host();
  // A German host: Perflib\\007 and Perflib\\CurrentLanguage beside 009 (the replayer makes the keys).
  cap.names.push_back({"007", multi_sz({"1", "238", "238", "Prozessor"}), multi_sz({"239", "Prozessorhilfe"})});
  cap.names.push_back({"CurrentLanguage", cap.names.back().counter, cap.names.back().help});
  LiveServer srv(host_with(cap, {}));
  const auto [listed, tables] = record_languages(srv.port, {});
  CHECK(listed == std::vector<std::string>{"009", "007", "CurrentLanguage"});
  REQUIRE(tables.size() == 3);
  for (const captures::NameTable& t : tables) {
    INFO(t.lang);
    const auto c = srv.host->content(replayer::PerfKey::kData, "Counter " + t.lang, 1);
    const auto h = srv.host->content(replayer::PerfKey::kData, "Help " + t.lang, 1);
    CHECK(t.counter == c.data.to_bytes());
    CHECK(t.help == h.data.to_bytes());
  }
  const auto [asked, only] = record_languages(srv.port, {"007"});
  CHECK(asked == std::vector<std::string>{"007"});
  REQUIRE(only.size() == 1);
  CHECK(only[0].counter == multi_sz({"1", "238", "238", "Prozessor"}));
}

// Microsoft, "Retrieving Counter Names and Help Text": Chinese tables keep their sublanguage
// (Perflib\\804, Counter 804); a backup spells the same LANGID 0804.
TEST_CASE("a recording takes a Chinese host's 804 and 404 tables, asked for as 804 or as 0804", "[recorder]") {
  captures::Capture cap = small_host();
  cap.names.push_back({"804", multi_sz({"1", "238", "238", "处理器"}), multi_sz({"239", "处理器帮助"})});
  cap.names.push_back({"404", multi_sz({"1", "238", "238", "處理器"}), multi_sz({"239", "處理器說明"})});
  LiveServer srv(host_with(cap, {}));
  const auto [listed, tables] = record_languages(srv.port, {});
  CHECK(listed == std::vector<std::string>{"009", "804", "404"});
  REQUIRE(tables.size() == 3);
  CHECK(tables[1].lang == "804");
  CHECK(tables[1].counter == multi_sz({"1", "238", "238", "处理器"}));
  CHECK(tables[2].help == multi_sz({"239", "處理器說明"}));
  const auto [asked, only] = record_languages(srv.port, {"0804"});
  REQUIRE(only.size() == 1);
  CHECK(only[0].lang == "804");  // the table's name, whatever the spelling asked
  CHECK(only[0].counter == multi_sz({"1", "238", "238", "处理器"}));
}

TEST_CASE("the fingerprint names each buffer policy and the recorded capture replays it", "[recorder]") {
  const captures::Capture cap = small_host();
  for (const std::string name :
       {"rrp-exact", "echo-offered", "win2000-echo-oversize", "win32-undefined", "samba-truncate"}) {
    DYNAMIC_SECTION(name) {
      LiveServer srv(host_with(cap, policy(name)));
      const std::string path = temp_file_path("rec_fp", ".perfcap");
      const recorder::RecordResult r = record_from(srv.port, path, 2);
      CHECK(r.fingerprint.more_data == name);
      const Bytes global = srv.host->content(replayer::PerfKey::kData, "Global", 1).data.to_bytes();
      const captures::Capture got = read_back(path);
      size_t globals = 0;
      for (const captures::QueryRecord& rec : got.records)
        if (rec.value_name == "Global") {
          ++globals;
          CHECK(rec.payload == global);  // full answers, whatever the policy
        }
      CHECK(globals == 2);

      // Replay with only the capture's own fingerprint, and record that.
      replayer::Quirks q;
      REQUIRE(replayer::fingerprint_quirks(got.fingerprint_json, q).ok());
      CHECK(q.buffer == policy(name).buffer);
      if (name == "win2000-echo-oversize") {
        CHECK(q.win2000_overhead <= policy(name).win2000_overhead);  // a lower bound, within the search's 1 KiB step
        CHECK(q.win2000_overhead + 2048 >= policy(name).win2000_overhead);
      }
      LiveServer replay(host_with(got, q, 0));
      const std::string again = temp_file_path("rec_fp2", ".perfcap");
      const recorder::RecordResult r2 = record_from(replay.port, again, 1);
      CHECK(r2.fingerprint.more_data == name);
      const captures::Capture got2 = read_back(again);
      globals = 0;
      for (const captures::QueryRecord& rec : got2.records)
        if (rec.value_name == "Global") {
          ++globals;
          CHECK(rec.payload == global);
        }
      CHECK(globals == 1);
      std::filesystem::remove(path);
      std::filesystem::remove(again);
    }
  }
}

// Issue 30 item 9: a 2022 host's Costly holds no objects (PerfProc is off there), so its whole
// answer is a bare PERF_DATA_BLOCK header; that was taken for Samba's truncation of a short buffer
// because another value (Global) brought back more, and the recording replayed samba-truncate.
TEST_CASE("recording a 2022 host with Global and Costly fingerprints echo-offered and replays it byte for byte",
          "[recorder]") {
  captures::Capture cap;
  REQUIRE(captures::read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2022.perfcap", cap).ok());
  // The host as perfsim serve makes it: its capture's fingerprint and profile (2022: process-v1-disabled).
  replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 1};
  REQUIRE(replayer::host_options(replayer::HostReplay{}, "", cap, opt).ok());
  REQUIRE(opt.quirks.process_v1_disabled);
  std::shared_ptr<replayer::SimulatedHost> original;
  REQUIRE(replayer::SimulatedHost::load(cap, opt, original).ok());
  LiveServer srv(original);

  std::unique_ptr<recorder::Channel> ch;
  REQUIRE(recorder::connect_tcp("127.0.0.1", srv.port, 10s, ch).ok());
  recorder::WinregClient client(std::move(ch));
  recorder::RecordOptions o;
  o.queries = {"Global", "Costly"};
  o.interval = 20ms;
  o.count = 2;
  recorder::RecordResult r;
  const std::string path = temp_file_path("rec_2022_costly", ".perfcap");
  REQUIRE(recorder::record(client, path, o, r).ok());
  CHECK(r.fingerprint.more_data == "echo-offered");  // windows/README.md, "A buffer too small"
  CHECK(r.host.profile == "2022");
  CHECK(r.host.build_number == "20348");

  const captures::Capture got = read_back(path);
  replayer::HostOptions ropt{replayer::TimelineMode::kFrozen, 0};
  REQUIRE(replayer::host_options(replayer::HostReplay{}, "", got, ropt).ok());
  CHECK(ropt.quirks.buffer == replayer::BufferPolicy::kEchoOffered);
  std::shared_ptr<replayer::SimulatedHost> replay;
  REQUIRE(replayer::SimulatedHost::load(got, ropt, replay).ok());
  for (const char* value : {"Global", "Costly"})
    for (uint32_t buffer = 4096; buffer <= 4u << 20; buffer *= 4) {
      INFO(value << " with a " << buffer << "-byte buffer");
      const replayer::ValueAnswer want = original->query(replayer::PerfKey::kData, value, {true, buffer});
      const replayer::ValueAnswer have = replay->query(replayer::PerfKey::kData, value, {true, buffer});
      CHECK(have.status == want.status);
      CHECK(have.size == want.size);
      CHECK(have.type == want.type);
      CHECK(have.data.to_bytes() == want.data.to_bytes());
    }
  // The exact size and one byte less, where the two policies part (samba-truncate: a bare header).
  // (The size from the content: a 2022 host's NULL-buffer probe says 0.)
  const auto size_of = [&](const char* v) {
    return uint32_t(original->content(replayer::PerfKey::kData, v, 1).data.size());
  };
  const uint32_t costly = size_of("Costly"), global = size_of("Global");
  for (const auto& [value, size] : {std::pair{"Costly", costly}, std::pair{"Global", global}})
    for (uint32_t buffer : {size, size - 1}) {
      INFO(value << " with a " << buffer << "-byte buffer");
      const replayer::ValueAnswer want = original->query(replayer::PerfKey::kData, value, {true, buffer});
      const replayer::ValueAnswer have = replay->query(replayer::PerfKey::kData, value, {true, buffer});
      CHECK(have.status == want.status);
      CHECK(have.size == want.size);
      CHECK(have.data.to_bytes() == want.data.to_bytes());
    }
  std::filesystem::remove(path);
}

TEST_CASE("recording a host that refuses HKPD says which rights are missing", "[recorder]") {
  const captures::Capture cap = small_host();
  replayer::Quirks q;
  REQUIRE(replayer::apply_setting(q, {"access-denied", true, {{"on", "open"}}}).ok());
  LiveServer srv(host_with(cap, q));
  std::unique_ptr<recorder::Channel> ch;
  REQUIRE(recorder::connect_tcp("127.0.0.1", srv.port, 10s, ch).ok());
  recorder::WinregClient client(std::move(ch));
  recorder::RecordOptions o;
  o.count = 1;
  recorder::RecordResult r;
  const std::string path = temp_file_path("rec_denied", ".perfcap");
  const Status s = recorder::record(client, path, o, r);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("Performance Monitor Users") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("perfsim record killed with SIGKILL mid-sample leaves a capture readable to the last whole sample",
          "[recorder]") {
  const captures::Capture cap = small_host();
  replayer::Quirks q;
  // Each sample asks 238 first, then a Global that takes 300 ms: while the file ends in a 238
  // record, the recorder is inside that sample's Global call, so a kill then lands mid-sample.
  q.slow_global_ms = 300;
  LiveServer srv(host_with(cap, q));
  const std::string path = temp_file_path("rec_killed", ".perfcap");
  const auto last_record = [&](captures::RecordInfo& out) {
    std::unique_ptr<captures::Reader> rd;
    if (!std::filesystem::exists(path) || !captures::Reader::open(path, rd).ok() || rd->records().size() < 3)
      return false;
    out = rd->records().back();
    return rd->queries()[out.query] == "238";
  };
  for (int round = 0; round < 3; ++round) {
    std::filesystem::remove(path);
    subprocess::Child child;
    REQUIRE(subprocess::start({PERFSIM_EXE, "record", "127.0.0.1:" + std::to_string(srv.port), "-o", path, "--interval",
                               "0.01", "-q", "238", "-q", "Global"},
                              subprocess::Options{}, child)
                .ok());
    // Wait (bounded) until a sample is half on disk, then kill, a little later each round.
    captures::RecordInfo seen;
    bool mid_sample = false;
    for (int i = 0; i < 2000 && !(mid_sample = last_record(seen)); ++i) std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * round));
    REQUIRE(subprocess::stop(child, std::chrono::milliseconds(0), false, SIGKILL).signal != 0);
    REQUIRE(mid_sample);

    std::unique_ptr<captures::Reader> rd;
    const Status s = captures::Reader::open(path, rd);
    INFO(s.message());
    REQUIRE(s.ok());
    REQUIRE(rd->records().size() >= 3);
    CHECK(rd->metadata().names.size() == 1);
    CHECK_FALSE(rd->metadata().fingerprint_json.empty());
    // The sample the kill interrupted kept its 238 answer and has no Global.
    const captures::RecordInfo& last = rd->records().back();
    CHECK(rd->queries()[last.query] == "238");
    CHECK(last.tick == seen.tick);
    // Every record the reader kept decodes to a complete answer, and ticks run without gaps.
    uint32_t last_tick = 0;
    for (size_t i = 0; i < rd->records().size(); ++i) {
      captures::QueryRecord rec;
      REQUIRE(rd->read_record(i, rec).ok());
      CHECK(rec.payload == srv.host->content(replayer::PerfKey::kData, rec.value_name, 1).data);
      CHECK(rec.tick <= last_tick + 1);
      last_tick = rec.tick;
    }
  }
  std::filesystem::remove(path);
}
