// perfsim-record.exe under Wine (windows_recorder/README.md): the .exe records a fresh Wine
// prefix in which our provider DLL (windows_recorder/provider/) is registered as lodctr leaves a
// provider, and the capture is read back on Linux with perfsim inspect, validate, convert and
// serve, and with python3-samba and impacket against the served capture.
//
// Wine's HKEY_PERFORMANCE_DATA (dlls/kernelbase/registry.c, query_perf_data) loads every service's
// Performance\Library and calls its Open, Collect and Close around each query, so what the
// recorder sees is the provider's objects behind Wine's PERF_DATA_BLOCK. Wine answers every
// "Counter"/"Help" query (and Perflib\009, which it opens as HKEY_PERFORMANCE_TEXT) with a fixed
// four-string table (its FIXME: no perfc009.dat), so the provider's objects arrive by title index.
//
// One TEST_CASE, so one process and one Wine prefix (about 700 MB, 10 s to make) serve every
// section; the prefix lives in the test's temporary directory and its wineserver is stopped at exit.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "captures/reader.h"
#include "core/bytes.h"
#include "perfdata/winperf.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using perfsim::testing::CommandResult;
using perfsim::testing::run_command;

constexpr uint32_t kFirstCounter = 3000;     // the provider's object; its counters are 3002 and 3004
constexpr uint32_t kRawCount = 0x00010000;   // PERF_COUNTER_RAWCOUNT
constexpr uint32_t kBulkCount = 0x10410500;  // PERF_COUNTER_BULK_COUNT

std::string quote(const std::string& s) { return "'" + s + "'"; }

// The path Wine shows a Linux path as (drive Z: is /).
std::string win_path(const fs::path& p) {
  std::string s = "Z:" + p.string();
  for (char& c : s)
    if (c == '/') c = '\\';
  return s;
}

struct WinePrefix {
  perfsim::testing::TempDir dir{"perfsim-wine"};
  std::string env;

  WinePrefix() {
    // Headless and quiet: no Mono or Gecko installer prompts, no debug channels.
    env = "WINEPREFIX=" + quote((dir.path / "prefix").string()) +
          " WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' DISPLAY=";
    // The provider's registration, as lodctr leaves one: Library/Open/Collect/Close and the
    // title-index range under Services\NAME\Performance, Perflib's Last Counter/Help past it.
    const fs::path reg = dir.path / "provider.reg";
    std::string dll = win_path(PERFSIM_TEST_PROVIDER_DLL), escaped;
    for (char c : dll) escaped += c == '\\' ? std::string("\\\\") : std::string(1, c);
    std::ofstream(reg) << "Windows Registry Editor Version 5.00\r\n\r\n"
                       << "[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\PerfsimTest\\Performance]\r\n"
                       << "\"Library\"=\"" << escaped << "\"\r\n"
                       << "\"Open\"=\"OpenPerfsimTest\"\r\n\"Collect\"=\"CollectPerfsimTest\"\r\n"
                       << "\"Close\"=\"ClosePerfsimTest\"\r\n"
                       << "\"First Counter\"=dword:00000bb8\r\n\"First Help\"=dword:00000bb9\r\n"
                       << "\"Last Counter\"=dword:00000bbc\r\n\"Last Help\"=dword:00000bbd\r\n\r\n"
                       << "[HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib]\r\n"
                       << "\"Last Counter\"=dword:00000bbc\r\n\"Last Help\"=dword:00000bbd\r\n";
    const CommandResult r = run_command("env", env + " " PERFSIM_WINE " reg import " + quote(win_path(reg)), 180);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
  }
  ~WinePrefix() { run_command("env", env + " " PERFSIM_WINESERVER " -k", 30); }

  // perfsim-record.exe ARGS with the provider in `mode` (provider.cpp).
  CommandResult record(const std::string& mode, const std::string& args, int seconds = 120) const {
    return run_command(
        "env", env + " PERFSIM_PROVIDER_MODE=" + mode + " " PERFSIM_WINE " " + quote(PERFSIM_RECORDER_EXE) + " " + args,
        seconds);
  }
};

WinePrefix& wine() {
  static WinePrefix w;
  return w;
}

nlohmann::json inspect(const fs::path& capture) {
  const CommandResult r = run_command(PERFSIM_EXE, "inspect --json " + quote(capture.string()));
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

// Records `count` samples 200 ms apart in `mode` into a fresh file; the capture's path.
fs::path record(const std::string& mode, int count) {
  const fs::path out = wine().dir.path / (mode + ".perfcap");
  const CommandResult r =
      wine().record(mode, "-o " + quote(win_path(out)) + " --count " + std::to_string(count) + " --interval 200ms");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("wrote") != std::string::npos);
  return out;
}

nlohmann::json fingerprint(const fs::path& capture) {
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(perfsim::captures::Reader::open(capture.string(), reader).ok());
  const std::string& fp = reader->metadata().fingerprint_json;
  REQUIRE_FALSE(fp.empty());
  return nlohmann::json::parse(fp);
}

// Each Global record's NumObjectTypes.
std::vector<uint32_t> object_counts(const fs::path& capture) {
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(perfsim::captures::Reader::open(capture.string(), reader).ok());
  std::vector<uint32_t> out;
  perfsim::captures::QueryRecord rec;
  for (size_t i = 0; i < reader->records().size(); ++i) {
    REQUIRE(reader->read_record(i, rec).ok());
    if (rec.value_name != "Global") continue;
    REQUIRE(rec.payload.size() >= perfsim::winperf::kDataBlockSize);
    out.push_back(perfsim::load_le32(&rec.payload[perfsim::winperf::data_block::kNumObjectTypes]));
  }
  return out;
}

uint64_t le64(const std::string& hex, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= uint64_t(std::stoul(hex.substr(2 * (at + i), 2), nullptr, 16)) << (8 * i);
  return v;
}

// The served capture read by one real client: our object, its counters, instances and values.
void check_client(uint16_t port, const std::string& client) {
  const CommandResult r =
      run_command(PERFSIM_PYTHON, quote(PERFSIM_SOURCE_DIR "/tests/windows_recorder/read_provider.py") + " --port " +
                                      std::to_string(port) + " --client " + client);
  INFO(client << ": " << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const nlohmann::json& sample : j["samples"]) {
    REQUIRE(sample["objects"].contains(std::to_string(kFirstCounter)));
    const nlohmann::json& obj = sample["objects"][std::to_string(kFirstCounter)];
    REQUIRE(obj["counters"].size() == 2);
    // PERF_COUNTER_BLOCK is one DWORD: Items right after it, Items/sec 8-aligned at 16.
    CHECK(obj["counters"][0] == nlohmann::json::array({kFirstCounter + 2, kRawCount, 4, 4}));
    CHECK(obj["counters"][1] == nlohmann::json::array({kFirstCounter + 4, kBulkCount, 8, 16}));
    const nlohmann::json& inst = obj["instances"];
    REQUIRE(inst.size() == 3);
    int n = 1;
    for (const char* name : {"alpha", "beta", "gamma"}) {
      REQUIRE(inst.contains(name));
      const std::string hex = inst[name].get<std::string>();
      CHECK(le64(hex, 4) % (uint64_t(1) << 32) == uint64_t(10 * n));  // Items: 10 x (n + 1)
      CHECK(le64(hex, 16) > 0);                                       // Items/sec's running count
      ++n;
    }
  }
}

}  // namespace

TEST_CASE("perfsim-record.exe records a Wine prefix's provider and the capture round-trips on Linux", "[wine]") {
  SECTION("--help prints the usage, bad arguments exit 2 and an unreachable --host exits 1 with Windows' text") {
    CommandResult r = wine().record("normal", "--help");
    CHECK(r.code == 0);
    CHECK(r.out.find("Usage: perfsim-record.exe") != std::string::npos);
    CHECK(r.out.find("--interval") != std::string::npos);
    r = wine().record("normal", "--intervl 1s");
    CHECK(r.code == 2);
    CHECK(r.err.find("unknown option --intervl") != std::string::npos);
    r = wine().record("normal", "--count none");
    CHECK(r.code == 2);
    CHECK(r.err.find("--count wants a number") != std::string::npos);
    const fs::path out = wine().dir.path / "unreachable.perfcap";
    r = wine().record("normal", "--host no-such-host.invalid -o " + quote(win_path(out)));
    INFO(r.err);
    CHECK(r.code == 1);
    // RegConnectRegistryW's ERROR_BAD_NETPATH with FormatMessageW's text for it.
    CHECK(r.err.find("\\\\no-such-host.invalid: error 53: ") != std::string::npos);
    CHECK(r.err.find("etwork path") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }

  SECTION("a normal provider: inspect, validate, convert and serve; python3-samba and impacket read its objects") {
    const fs::path cap = record("normal", 5);
    const nlohmann::json summary = inspect(cap);
    CHECK(summary["records"].get<int>() >= 5);
    CHECK(summary["ticks"] == 5);
    CHECK(summary["has_fingerprint"] == true);
    CHECK(summary["indexed"] == true);
    CHECK(object_counts(cap) == std::vector<uint32_t>(5, 1));
    const nlohmann::json fp = fingerprint(cap);
    CHECK(fp.contains("queries"));
    CHECK(fp["queries"]["Global"]["objects"] == nlohmann::json::array({kFirstCounter}));

    CommandResult r = run_command(PERFSIM_EXE, "validate " + quote(cap.string()));
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("0 error(s)") != std::string::npos);

    // perfsim dump formats Items/sec between two samples: 100, 200, 300 per second. Wine stamps
    // the block's PerfTime before it loads the provider, a varying while before Collect reads the
    // clock (up to 15 % of a 200 ms interval seen), so the rates are checked loosely and their
    // ratios, which that skew does not change, closely.
    r = run_command(PERFSIM_EXE, "dump --json --sample 2 " + quote(cap.string()));
    REQUIRE(r.code == 0);
    std::map<std::string, double> rate;
    const nlohmann::json dump = nlohmann::json::parse(r.out);
    for (const nlohmann::json& o : dump["objects"])
      for (const nlohmann::json& i : o["instances"])
        for (const nlohmann::json& c : i["counters"])
          if (c["index"] == kFirstCounter + 4) rate[i["instance"].get<std::string>()] = c["value"].get<double>();
    INFO(r.out);
    REQUIRE(rate.size() == 3);
    CHECK(rate["alpha"] == Approx(100).epsilon(0.35));
    CHECK(rate["beta"] / rate["alpha"] == Approx(2).epsilon(0.1));
    CHECK(rate["gamma"] / rate["alpha"] == Approx(3).epsilon(0.1));
    const fs::path v2 = wine().dir.path / "normal-v2.perfcap";
    r = run_command(PERFSIM_EXE, "convert " + quote(cap.string()) + " -o " + quote(v2.string()));
    REQUIRE(r.code == 0);
    CHECK(inspect(v2)["ticks"] == 5);
    CHECK(fs::file_size(v2) < fs::file_size(cap));  // compressed on Linux

    perfsim::testing::PerfsimServe serve;
    const perfsim::Status st = serve.start(PERFSIM_EXE, "-l 127.0.0.1:0 --capture " + quote(v2.string()));
    INFO(st.ToString());
    REQUIRE(st.ok());
    check_client(serve.port(), "samba");
    check_client(serve.port(), "impacket");
  }

  SECTION("a provider answering ERROR_MORE_DATA below 256 KiB: the recorder grows and the fingerprint says so") {
    const fs::path cap = record("more-data", 3);
    CHECK(object_counts(cap) == std::vector<uint32_t>(3, 1));
    const nlohmann::json q = fingerprint(cap)["queries"]["Global"];
    INFO(q.dump());
    CHECK(q["max_failed_buffer"].get<uint64_t>() >= 128 * 1024);
    CHECK(q["min_buffer"].get<uint64_t>() >= 256 * 1024);
  }

  SECTION("a provider whose Open fails: its objects are absent from every sample") {
    const fs::path cap = record("fail-open", 2);
    CHECK(object_counts(cap) == std::vector<uint32_t>(2, 0));
    // Every Global was the header alone: the fingerprint keeps that as the answer, with no objects.
    const nlohmann::json g = fingerprint(cap)["queries"]["Global"];
    INFO(g.dump());
    CHECK(g.value("objects", nlohmann::json::array()).empty());
    CHECK(g["returned"].get<uint64_t>() > 0);
    CHECK(run_command(PERFSIM_EXE, "validate " + quote(cap.string())).code == 0);
  }

  SECTION("Wine's own placement of a provider's object is recorded as answered and validate finds it") {
    // provider.cpp wine_offset(): Wine hands Collect a pointer 88 bytes past HeaderLength.
    const fs::path cap = record("no-wine-fix", 2);
    const CommandResult r = run_command(PERFSIM_EXE, "validate " + quote(cap.string()));
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(r.out.find("object.total-length @96") != std::string::npos);
  }

  SECTION("a slow Collect: recorded, and its latency is in the fingerprint") {
    const fs::path cap = record("slow", 2);
    CHECK(object_counts(cap) == std::vector<uint32_t>(2, 1));
    const nlohmann::json fp = fingerprint(cap);
    INFO(fp.dump());
    CHECK(fp["latency_us"]["p50"].get<uint64_t>() >= 250000);
  }

  SECTION("a recorder killed mid-recording leaves a capture that reads to its last whole record") {
    const fs::path out = wine().dir.path / "killed.perfcap", err = wine().dir.path / "killed.err";
    // No --count: it would record until Ctrl-C. SIGKILL once its progress says sample 2 was
    // written, however long Wine took to get there (a fixed 8 s was too short on a slow machine);
    // the loader is the Windows process (wine execs it), so the signal reaches it alone. The sh
    // prints the recorder's exit status as wait(1) says it; 120 s of polling only ends a hang.
    const fs::path script = wine().dir.path / "kill.sh";
    std::ofstream(script) << "env " << wine().env << " " PERFSIM_WINE " " << quote(PERFSIM_RECORDER_EXE) << " -o "
                          << quote(win_path(out)) << " --interval 200ms >/dev/null 2>" << quote(err.string()) << " &\n"
                          << "p=$!; i=0\nuntil grep -q 'sample 2,' " << quote(err.string())
                          << " || [ $i -ge 1200 ]; do sleep 0.1; i=$((i+1)); done\n"
                          << "kill -KILL $p; wait $p; echo $?\n";
    const CommandResult r = run_command("sh", quote(script.string()), 180);
    INFO(r.out << r.err);
    CHECK(r.out == "137\n");
    std::ifstream in(err);
    const std::string progress{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    INFO(progress);
    CHECK(progress.find("sample 2,") != std::string::npos);              // progress as it happened
    CHECK(perfsim::testing::pids_mentioning("killed.perfcap").empty());  // the recorder itself died
    REQUIRE(fs::exists(out));
    const nlohmann::json summary = inspect(out);
    CHECK(summary["ticks"].get<int>() >= 2);
    CHECK(summary["indexed"] == false);
  }
}
