#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <set>
#include <vector>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "captures/reader.h"
#include "captures/writer.h"
#include "core/subprocess.h"
#include "lodctr/install.h"
#include "lodctr/providers.h"
#include "recorder/client.h"
#include "perfdata/names.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/test_capture.h"
#include "tests/common/temp_dir.h"
#include "captures/writer.h"
#include "perfdata/view.h"

namespace fs = std::filesystem;

namespace {

using Run = perfsim::testing::CommandResult;

namespace sp = perfsim::subprocess;

// Runs perfsim with `args` (a shell-quoted string), bounded by `timeout 60`.
Run run_perfsim(const std::string& args) { return perfsim::testing::run_command(PERFSIM_EXE, args); }

using perfsim::testing::TempDir;

// A background `perfsim serve`; the first stdout line (--json) tells the port.
struct Server {
  perfsim::testing::PerfsimServe serve;
  uint16_t port = 0;
  std::string host;
  // err_path: serve's stderr goes there (its SIGHUP lines), else it is discarded.
  explicit Server(const std::string& args, const std::string& err_path = "") {
    perfsim::testing::ServeStart how;
    how.err_path = err_path;
    const perfsim::Status st = serve.start(PERFSIM_EXE, args, how);
    INFO(st.ToString());
    REQUIRE(st.ok());
    port = serve.port();
    host = serve.host();
    REQUIRE(port != 0);
  }
  int stop() { return serve.stop(); }  // bounded: 10 s
};

size_t count_of(const std::string& text, const std::string& line) {
  size_t seen = 0;
  for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1)) ++seen;
  return seen;
}

// Serve's stderr at `path` once it holds `line` `times` times, or after 10 s (then the caller's
// check fails): a SIGHUP reload is judged after serve said how it went, not after a sleep.
std::string wait_for_log(const std::string& path, const std::string& line, size_t times) {
  std::string err;
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(path);
    err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (count_of(err, line) >= times) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return err;
}

// The status of one HKPD value read through `client` (the same connection every call).
uint32_t hkpd_status(perfsim::recorder::WinregClient& client, const perfsim::winreg::PolicyHandle& hkpd,
                     const std::string& value) {
  perfsim::recorder::ValueResult r;
  const perfsim::Status st = client.query_value_growing(hkpd, value, {}, r);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return r.status;
}

}  // namespace

TEST_CASE("usage errors exit 2 and say how to fix them") {
  Run r = run_perfsim("");
  CHECK(r.code == 2);
  r = run_perfsim("frobnicate");
  CHECK(r.code == 2);
  r = run_perfsim("synth --out /tmp/x.perfcap");
  CHECK(r.code == 2);
  CHECK(r.err.find("--profile") != std::string::npos);
  r = run_perfsim("synth --profile win95 --out /tmp/x.perfcap");
  CHECK(r.code == 2);
  CHECK(r.err.find("win2000") != std::string::npos);  // lists the valid profiles
  r = run_perfsim("synth --profile 2016 --role exchange --out /tmp/x.perfcap");
  CHECK(r.code == 2);
  CHECK(r.err.find("--role: unknown role \"exchange\" (known roles: iis, mssql, hyperv, dc, dotnet)") !=
        std::string::npos);
  r = run_perfsim("serve --listen 192.0.2.1:0");
  CHECK(r.code == 2);
  CHECK(r.err.find("loopback") != std::string::npos);
  CHECK(r.err.find("--allow-remote") != std::string::npos);  // the flag that allows it
  r = run_perfsim("serve --timeline sometimes");
  CHECK(r.code == 2);
  r = run_perfsim("query localhost");
  CHECK(r.code == 2);
  r = run_perfsim("dump /nonexistent.perfcap");  // a missing input is a failure, not usage
  CHECK(r.code == 1);
  CHECK(r.err.find("/nonexistent.perfcap: no such file") != std::string::npos);
}

TEST_CASE("every subcommand has --help") {
  for (const char* c : {"synth", "inspect", "dump", "validate", "serve", "query", "record", "import", "lodctr",
                        "unlodctr", "names", "names export", "names diff", "convert", "journal"}) {
    Run r = run_perfsim(std::string(c) + " --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("Usage") != std::string::npos);
  }
}

namespace {

// The --flags a help text lists.
std::set<std::string> flags_in(const std::string& text) {
  static const std::regex flag(R"((^|[^\w-])(--[a-z0-9][a-z0-9-]*))");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    out.insert((*it)[2].str());
  return out;
}

std::map<std::string, std::set<std::string>> perfsim_flags_by_subcommand() {
  const Run top = run_perfsim("--help");
  REQUIRE(top.code == 0);
  std::map<std::string, std::set<std::string>> out;
  const std::regex sub(R"(\n  ([a-z]+)  )");
  const std::string list = top.out.substr(top.out.find("Subcommands:"));
  for (auto it = std::sregex_iterator(list.begin(), list.end(), sub); it != std::sregex_iterator(); ++it) {
    const Run r = run_perfsim((*it)[1].str() + " --help");
    REQUIRE(r.code == 0);
    out[(*it)[1].str()] = flags_in(r.out);
  }
  out[""] = flags_in(top.out);
  return out;
}

bool skipped_dir(const fs::path& p) {
  const std::string n = p.filename().string();
  return n.rfind("build", 0) == 0 || n == ".git" || n == ".ci";
}

std::vector<fs::path> files_under(const fs::path& root, const std::vector<std::string>& extensions) {
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && skipped_dir(it->path()))
      it.disable_recursion_pending();
    else if (it->is_regular_file() &&
             std::find(extensions.begin(), extensions.end(), it->path().extension().string()) != extensions.end())
      out.push_back(it->path());
  }
  return out;
}

}  // namespace

TEST_CASE("every --flag perfsim names in its READMEs and messages is a real option") {
  const auto flags = perfsim_flags_by_subcommand();
  REQUIRE(flags.size() > 10);
  REQUIRE(flags.at("serve").count("--allow-remote") == 1);
  std::set<std::string> any;
  for (const auto& [sub, f] : flags) any.insert(f.begin(), f.end());
  const fs::path root(PERFSIM_SOURCE_DIR);

  // READMEs: "perfsim SUB ... --flag" up to the next "perfsim", a comment or the end of a code span.
  size_t mentions = 0;
  const std::regex command(R"(perfsim ([a-z]+)([^`|#]*?)(?=perfsim |[`|#]|$))");
  for (const fs::path& md : files_under(root, {".md"})) {
    std::ifstream in(md);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (auto it = std::sregex_iterator(line.begin(), line.end(), command); it != std::sregex_iterator(); ++it) {
        const auto sub = flags.find((*it)[1].str());
        if (sub == flags.end()) continue;
        for (const std::string& f : flags_in((*it)[2].str())) {
          ++mentions;
          CAPTURE(md.string(), n, line);
          CHECK(sub->second.count(f) == 1);
        }
      }
  }
  CHECK(mentions > 20);

  // Messages: string literals with words around a --flag (a lone "--x" is another program's argument).
  size_t messages = 0;
  const std::regex literal(R"re("((?:[^"\\]|\\.)*)")re");
  for (const fs::path& src : files_under(root, {".cpp", ".h"})) {
    const std::string rel = fs::relative(src, root).string();
    // windows_recorder/ is perfsim-record.exe, whose options are its own (tests/windows_recorder
    // reads its --help under Wine).
    if (rel.rfind("tests/", 0) == 0 || rel.rfind("bench/", 0) == 0 || rel.rfind("windows_recorder/", 0) == 0) continue;
    std::ifstream in(src);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (auto it = std::sregex_iterator(line.begin(), line.end(), literal); it != std::sregex_iterator(); ++it) {
        const std::string text = (*it)[1].str();
        if (text.find(' ') == std::string::npos) continue;
        for (const std::string& f : flags_in(text)) {
          ++messages;
          CAPTURE(rel, n, text);
          CHECK(any.count(f) == 1);
        }
      }
  }
  CHECK(messages > 10);
}

TEST_CASE("every subcommand perfsim --help lists has its row in cli/README.md's reference") {
  const auto flags = perfsim_flags_by_subcommand();
  std::ifstream in(fs::path(PERFSIM_SOURCE_DIR) / "cli" / "README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t table = readme.find("## Subcommands");
  REQUIRE(table != std::string::npos);
  for (const auto& [sub, unused] : flags) {
    if (sub.empty()) continue;
    INFO(sub);
    CHECK(readme.find("| `perfsim " + sub, table) != std::string::npos);
  }
}

TEST_CASE("serve --faults is re-read on SIGHUP while a collector's connection stays open") {
  TempDir d;
  const fs::path plan = d.path / "faults.toml";
  const auto write_plan = [&](const std::string& text) {
    const fs::path tmp = d.path / "faults.tmp";
    std::ofstream(tmp) << text;
    fs::rename(tmp, plan);  // whole, as an editor saves it
  };
  write_plan("[[fault]]\nhost = \"NO-SUCH-HOST\"\nkind = \"busy\"\n");
  const std::string err_path = (d.path / "serve.err").string();
  Server srv("--timeline frozen:0 --faults " + plan.string(), err_path);
  std::unique_ptr<perfsim::recorder::WinregClient> client;
  REQUIRE(perfsim::recorder::WinregClient::connect("127.0.0.1", srv.port, std::chrono::seconds(10), client).ok());
  perfsim::winreg::PolicyHandle hkpd;
  REQUIRE(client->open_hive(perfsim::winreg::kOpenHKPD, hkpd).ok());
  const auto status_of = [&](const std::string& value) { return hkpd_status(*client, hkpd, value); };
  CHECK(status_of("Global") == 0);

  write_plan("[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n");
  REQUIRE(kill(srv.serve.pid(), SIGHUP) == 0);
  uint32_t global = 0;
  for (int i = 0; i < 50 && (global = status_of("Global")) == 0; ++i)  // bounded: 5 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(global == 170);          // ERROR_BUSY: the new plan is in force
  CHECK(status_of("238") == 0);  // and only for the value it names

  // A broken plan is refused and the one in force stays; the connection is still served.
  write_plan("[[fault]]\nkind = \"explode\"\n");
  REQUIRE(kill(srv.serve.pid(), SIGHUP) == 0);
  const std::string err = wait_for_log(err_path, "(previous faults kept)", 1);
  INFO(err);
  CHECK(count_of(err, "(previous faults kept)") == 1);  // the reload ran and refused the plan
  CHECK(err.find("explode") != std::string::npos);
  CHECK(status_of("Global") == 170);
  CHECK(status_of("238") == 0);
  client.reset();
  CHECK(srv.stop() == 0);
}

TEST_CASE("synth, inspect, dump and validate agree on one capture") {
  TempDir d;
  const std::string cap = (d.path / "h.perfcap").string();
  Run s = run_perfsim("synth --profile 2008r2 --host-name TESTBOX --duration 60 --interval 15 --seed 7 --json --out " +
                      cap);
  REQUIRE(s.code == 0);
  auto sj = nlohmann::json::parse(s.out);
  CHECK(sj["ticks"] == 4);
  CHECK(sj["host"] == "TESTBOX");

  Run i = run_perfsim("inspect --json " + cap);
  REQUIRE(i.code == 0);
  auto ij = nlohmann::json::parse(i.out);
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(perfsim::captures::Reader::open(cap, reader).ok());
  CHECK(ij.at("host").at("name") == "TESTBOX");
  CHECK(ij.at("host").at("profile") == "2008r2");
  CHECK(ij.at("records").get<size_t>() == reader->records().size());
  CHECK(ij.at("ticks") == 4);
  size_t per_query = 0;
  for (const auto& q : ij.at("queries")) per_query += q.at("records").get<size_t>();
  CHECK(per_query == reader->records().size());

  Run dmp = run_perfsim("dump --json --sample 2 --object Processor " + cap);
  REQUIRE(dmp.code == 0);
  auto dj = nlohmann::json::parse(dmp.out);
  REQUIRE(dj["objects"].size() == 1);
  int checked = 0;
  for (auto& inst : dj["objects"][0]["instances"])
    for (auto& c : inst["counters"])
      if (c["counter"] == "% Processor Time") {
        REQUIRE(c.contains("value"));
        CHECK(c["value"].get<double>() >= 0.0);
        CHECK(c["value"].get<double>() <= 100.0);
        ++checked;
      }
  CHECK(checked >= 2);  // each CPU and _Total
  CHECK(run_perfsim("dump --object NoSuchObject " + cap).code == 1);
  CHECK(run_perfsim("dump --sample 99 " + cap).code == 1);

  Run v = run_perfsim("validate --json " + cap);
  CHECK(v.code == 0);
  CHECK(nlohmann::json::parse(v.out)["errors"] == 0);
}

TEST_CASE("synth names a host after its profile and seed unless the spec or --host-name names it") {
  TempDir d;
  const auto host_of = [&](const std::string& args) {
    const std::string cap = (d.path / "n.perfcap").string();
    const Run r = run_perfsim("synth --duration 30 --json -o " + cap + " " + args);
    INFO(args << "\n" << r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out).at("host").get<std::string>();
  };
  CHECK(host_of("--profile 2022 --seed 7") == "SYNTH-2022-7");
  CHECK(host_of("--profile win2000") == "SYNTH-WIN2000-1");
  CHECK(host_of("--profile 2022 --seed 7 --host-name DB01") == "DB01");
  const fs::path unnamed = d.path / "unnamed.toml", named = d.path / "named.toml";
  std::ofstream(unnamed) << "[host]\nprofile = \"2019\"\nseed = 3\n";
  std::ofstream(named) << "[host]\nname = \"CUST01\"\nprofile = \"2019\"\nseed = 3\n";
  CHECK(host_of(unnamed.string()) == "SYNTH-2019-3");
  CHECK(host_of(named.string()) == "CUST01");

  // Two default synth hosts of one profile, served together, differ by name: no "@N" needed.
  const std::string a = (d.path / "a.perfcap").string(), b = (d.path / "b.perfcap").string();
  REQUIRE(run_perfsim("synth --profile 2016 --seed 1 --duration 30 -o " + a).code == 0);
  REQUIRE(run_perfsim("synth --profile 2016 --seed 2 --duration 30 -o " + b).code == 0);
  const Run l = run_perfsim("serve --list-hosts -l 127.0.0.1:0=" + a + " -l 127.0.0.1:0=" + b);
  REQUIRE(l.code == 0);
  CHECK(l.out.find("SYNTH-2016-1 ") != std::string::npos);
  CHECK(l.out.find("SYNTH-2016-2 ") != std::string::npos);
}

TEST_CASE("validate warns of a gap in the tick numbers that serve closes, and --strict fails on it") {
  TempDir d;
  const std::string cap = (d.path / "h.perfcap").string(), huge = (d.path / "huge.perfcap").string();
  REQUIRE(run_perfsim("synth --profile 2016 --duration 45 --interval 15 --out " + cap).code == 0);
  perfsim::captures::Capture c;
  REQUIRE(perfsim::captures::read_capture(cap, c).ok());
  const uint32_t last = c.records.back().tick;
  for (auto& r : c.records)
    if (r.tick == last) r.tick = 1000000000;  // a damaged or crafted huge last tick (issue 18)
  REQUIRE(perfsim::captures::write_capture(huge, c).ok());
  CHECK(run_perfsim("validate " + cap).out.find("tick-gap") == std::string::npos);
  const Run r = run_perfsim("validate " + huge);
  CHECK(r.code == 0);  // serve can use it: a warning
  CHECK(r.out.find("plays tick 1000000000 right after tick " + std::to_string(last - 1)) != std::string::npos);
  CHECK(run_perfsim("validate --strict " + huge).code == 1);
}

TEST_CASE("validate fails on a damaged PERF_DATA_BLOCK and names the offset") {
  TempDir d;
  const std::string cap = (d.path / "h.perfcap").string();
  REQUIRE(run_perfsim("synth --profile 2016 --duration 15 --interval 15 --out " + cap).code == 0);
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(perfsim::captures::Reader::open(cap, reader).ok());
  perfsim::captures::QueryRecord rec;
  REQUIRE(reader->read_record(0, rec).ok());
  perfsim::Bytes blob = rec.payload;
  const std::string good = (d.path / "good.blob").string(), bad = (d.path / "bad.blob").string();
  std::ofstream(good, std::ios::binary).write(reinterpret_cast<const char*>(blob.data()), std::streamsize(blob.size()));
  CHECK(run_perfsim("validate " + good).code == 0);
  const uint32_t hdr = perfsim::perfdata::block_field32(blob, perfsim::winperf::data_block::kHeaderLength);
  perfsim::store_le32(&blob[hdr + perfsim::winperf::object_type::kTotalByteLength],
                      0xFFFFFF00);  // first object's TotalByteLength far past the end
  std::ofstream(bad, std::ios::binary).write(reinterpret_cast<const char*>(blob.data()), std::streamsize(blob.size()));
  Run r = run_perfsim("validate --json " + bad);
  CHECK(r.code == 1);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["errors"].get<int>() >= 1);
  bool at_offset = false;
  for (auto& f : j["findings"]) at_offset |= f["offset"] == hdr;
  CHECK(at_offset);
}

TEST_CASE("serve with no capture serves the bundled default host, query reads it, SIGTERM stops cleanly") {
  Server srv("--timeline frozen:0");
  CHECK(srv.host == "PERFSIM-2016");
  const std::string ep = "127.0.0.1:" + std::to_string(srv.port);
  Run q = run_perfsim("query --json --initial 1024 " + ep + " Global \"238\" \"Counter 009\" NoSuchValue");
  REQUIRE(q.code == 0);
  auto j = nlohmann::json::parse(q.out);
  REQUIRE(j.size() == 4);
  // The Global answer is the capture's first Global record, byte count for byte count, after growing.
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(
      perfsim::captures::Reader::open(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", reader).ok());
  perfsim::captures::QueryRecord rec;
  REQUIRE(reader->read_record(0, rec).ok());
  REQUIRE(rec.value_name == "Global");
  CHECK(j[0]["bytes"] == rec.payload.size());
  CHECK(j[0]["tries"].get<int>() >= 2);             // 1 KiB first, then the size the host said
  CHECK(j[1]["objects"][0]["object"] == "System");  // 238 comes with the rest of PerfOS
  CHECK(j[2]["entries"].get<int>() > 100);
  CHECK(j[3]["objects"].empty());  // unknown name: an empty block
  CHECK(srv.stop() == 0);
}

TEST_CASE("lodctr and unlodctr change a capture, refuse what LodCtr refuses and leave it untouched then") {
  TempDir d;
  const std::string cap = (d.path / "h.perfcap").string();
  fs::copy_file(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", cap);
  const std::string ini = std::string(PERFSIM_SOURCE_DIR) + "/tests/lodctr/data/wavegen.ini";
  Run r = run_perfsim("lodctr --json " + cap + " " + ini);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const int first = j.at("first_counter").get<int>();
  CHECK(first % 2 == 0);
  CHECK(j.at("last_help").get<int>() > first);
  CHECK(j.at("perflib_last_counter") == j.at("last_counter"));

  // The installed names are in the capture's Counter table at the indices lodctr printed.
  perfsim::captures::Capture c;
  REQUIRE(perfsim::captures::read_capture(cap, c).ok());
  REQUIRE_FALSE(c.names.empty());
  perfsim::perfdata::NameTable t;
  REQUIRE(perfsim::perfdata::parse_names(c.names[0].counter, t).ok());
  CHECK(t.to_map().count(uint32_t(first)) == 1);

  // Loading it again is refused with the reason, and the file is not touched.
  const auto before = fs::last_write_time(cap);
  const auto size = fs::file_size(cap);
  r = run_perfsim("lodctr " + cap + " " + ini);
  CHECK(r.code == 1);
  CHECK(r.err.find("already loaded") != std::string::npos);
  CHECK(fs::last_write_time(cap) == before);
  CHECK(fs::file_size(cap) == size);

  r = run_perfsim("unlodctr --json " + cap + " WaveGen");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("perflib_last_counter").get<int>() < first);
  r = run_perfsim("unlodctr " + cap + " WaveGen");
  CHECK(r.code == 1);
  CHECK(r.err.find("not loaded") != std::string::npos);
  r = run_perfsim("lodctr " + cap + " /nonexistent.ini");
  CHECK(r.code == 1);  // a missing input is a failure, not usage
}

TEST_CASE("names export and synth --names round-trip a backup byte for byte and names diff tells equal from not") {
  TempDir d;
  const std::string a = (d.path / "a.perfcap").string(), b = (d.path / "b.perfcap").string();
  const std::string a_ini = (d.path / "a.ini").string(), b_ini = (d.path / "b.ini").string();
  Run r = run_perfsim("synth --profile 2016 --duration 30 -o " + a);
  REQUIRE(r.code == 0);
  r = run_perfsim("names export " + a + " -o " + a_ini);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("1 languages (009)") != std::string::npos);
  r = run_perfsim("synth --profile 2016 --duration 30 --names " + a_ini + " -o " + b);
  REQUIRE(r.code == 0);
  REQUIRE(run_perfsim("names export " + b + " -o " + b_ini).code == 0);
  std::ifstream fa(a_ini, std::ios::binary), fb(b_ini, std::ios::binary);
  const std::string ba((std::istreambuf_iterator<char>(fa)), {}), bb((std::istreambuf_iterator<char>(fb)), {});
  CHECK(ba.size() > 1000);
  CHECK(ba == bb);
  r = run_perfsim("names diff " + a_ini + " " + b);
  CHECK(r.code == 0);
  CHECK(r.out.find("0 difference(s)") != std::string::npos);
  r = run_perfsim("names diff --json " + a + " " + std::string(PERFSIM_SOURCE_DIR) +
                  "/captures/default-win2000.perfcap");
  CHECK(r.code == 1);
  const auto j = nlohmann::json::parse(r.out);
  CHECK_FALSE(j.at("differences").empty());
  // A capture without tables has nothing to export: refused, with how to get them.
  perfsim::captures::Capture bare;
  REQUIRE(perfsim::captures::read_capture(a, bare).ok());
  bare.names.clear();
  const std::string bare_path = (d.path / "bare.perfcap").string();
  REQUIRE(perfsim::captures::write_capture(bare_path, bare).ok());
  r = run_perfsim("names export " + bare_path + " -o " + (d.path / "bare.ini").string());
  CHECK(r.code == 1);
  CHECK(r.err.find("no name tables") != std::string::npos);
  CHECK_FALSE(fs::exists(d.path / "bare.ini"));
  r = run_perfsim("names diff " + a_ini + " /nonexistent.ini");
  CHECK(r.code == 1);                                                 // a missing input is a failure, not usage
  r = run_perfsim("synth --profile 2016 --names " + a + " -o " + b);  // a capture is not a names file
  CHECK(r.code == 2);
  CHECK(r.err.find("PerfStrings") != std::string::npos);
}

TEST_CASE("synth --names leaves out what the backup does not name, in one line, and --strict-names refuses it") {
  TempDir d;
  const std::string old_host = (d.path / "w2k.perfcap").string(), ini = (d.path / "w2k.ini").string();
  REQUIRE(run_perfsim("synth --profile win2000 --duration 30 -o " + old_host).code == 0);
  REQUIRE(run_perfsim("names export " + old_host + " -o " + ini).code == 0);
  // A 2016 host named by a Windows 2000 backup: no TCPv4, no .NET CLR objects registered.
  const std::string out = (d.path / "2016.perfcap").string();
  Run r = run_perfsim("synth --profile 2016 --duration 30 --names " + ini + " -o " + out);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.err.find("left out: ") != std::string::npos);
  CHECK(r.err.find(".NET CLR Memory") != std::string::npos);
  CHECK(r.err.find("left out: ", r.err.find("left out: ") + 1) == std::string::npos);  // one line
  r = run_perfsim("synth --profile 2016 --duration 30 --strict-names --names " + ini + " -o " + out + ".strict");
  CHECK(r.code == 2);
  CHECK(r.err.find("object \"TCPv4\"") != std::string::npos);
  CHECK(r.err.find("--strict-names") != std::string::npos);
  CHECK_FALSE(fs::exists(out + ".strict"));
}

TEST_CASE("record captures a served host, serve --profile changes what the fingerprint finds") {
  TempDir d;
  const std::string out = (d.path / "rec.perfcap").string();
  {
    Server srv("--timeline frozen:0");
    Run r = run_perfsim("record --json -n 2 --interval 0.05 -o " + out + " 127.0.0.1:" + std::to_string(srv.port));
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("samples") == 2);
    CHECK(j.at("host") == "PERFSIM-2016");
    CHECK(j.at("fingerprint").at("more_data") == "echo-offered");  // a 2016 host (windows/README.md)
    CHECK(srv.stop() == 0);
  }
  Run i = run_perfsim("inspect --json " + out);
  REQUIRE(i.code == 0);
  {
    Server srv("--timeline frozen:0 --profile win2000");
    Run r = run_perfsim("record --json -n 1 -o " + out + " 127.0.0.1:" + std::to_string(srv.port));
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out).at("fingerprint").at("more_data") == "win2000-echo-oversize");
    CHECK(srv.stop() == 0);
  }
  // The recording of the win2000 host replays its behaviour with no profile given.
  {
    Server srv("--timeline frozen:0 --capture " + out);
    Run r = run_perfsim("record --json -n 1 -o " + (d.path / "again.perfcap").string() +
                        " 127.0.0.1:" + std::to_string(srv.port));
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out).at("fingerprint").at("more_data") == "win2000-echo-oversize");
    CHECK(srv.stop() == 0);
  }
  Run bad = run_perfsim("record -o " + out + " localhost");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("port") != std::string::npos);
  bad = run_perfsim("record -o " + out + " 127.0.0.1:1");
  CHECK(bad.code == 1);
  CHECK(bad.err.find("cannot reach") != std::string::npos);
}

TEST_CASE("serve --faults: a fault plan's busy answers reach the collector") {
  TempDir d;
  const std::string plan = (d.path / "faults.toml").string();
  {
    std::ofstream f(plan);
    f << "[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n";
  }
  Server srv("--timeline frozen:0 --faults " + plan);
  Run q = run_perfsim("query --json 127.0.0.1:" + std::to_string(srv.port) + " Global \"238\"");
  CHECK(q.code == 1);  // a collector that got an error answer has failed, --json or not
  const auto j = nlohmann::json::parse(q.out);
  CHECK(j[0]["status"] == 170);  // WERR_BUSY, every time
  CHECK(j[1]["status"] == 0);    // the plan names Global only
  q = run_perfsim("query 127.0.0.1:" + std::to_string(srv.port) + " Global");
  CHECK(q.code == 1);
  CHECK(q.out.find("Global: WERR_BUSY") != std::string::npos);
  q = run_perfsim("query 127.0.0.1:" + std::to_string(srv.port) + " \"238\"");
  CHECK(q.code == 0);  // the same host, a value the plan leaves alone
  CHECK(srv.stop() == 0);
}

TEST_CASE("serve --quirk switches one quirk with its parameters, a bad one is a usage error") {
  {
    Server srv("--timeline frozen:0 --quirk localized-partial:lang=019,share=0.5 -Q extra-objects=off");
    Run q = run_perfsim("query --json 127.0.0.1:" + std::to_string(srv.port) + " \"Counter 019\" \"238\"");
    REQUIRE(q.code == 0);
    const auto j = nlohmann::json::parse(q.out);
    CHECK(j[0]["status"] == 0);
    CHECK(j[0]["entries"].get<int>() > 50);
    REQUIRE(j[1]["objects"].size() == 1);  // only the object asked for
    CHECK(srv.stop() == 0);
  }
  {
    Server srv("--timeline frozen:0");
    Run q = run_perfsim("query --json 127.0.0.1:" + std::to_string(srv.port) + " \"Counter 019\" \"238\"");
    REQUIRE(q.code == 1);  // Counter 019 answers an error: a failed query
    const auto j = nlohmann::json::parse(q.out);
    CHECK(j[0]["status"] == 2);  // the bundled host has no 019 table of its own
    CHECK(j[1]["objects"].size() > 1);
    CHECK(srv.stop() == 0);
  }
  Run r = run_perfsim("serve --quirk perffreq:hz=fast");
  CHECK(r.code == 2);
  CHECK(r.err.find("hz") != std::string::npos);
  r = run_perfsim("serve --quirk no-such-quirk");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown quirk") != std::string::npos);
}

TEST_CASE("serve refuses a wrongly typed fleet or fault plan key, naming file, line and key") {
  TempDir d;
  const std::string fleet = (d.path / "fleet.toml").string();
  const std::string plan = (d.path / "faults.toml").string();
  {
    std::ofstream f(fleet);
    f << "[[host]]\nlisten = \"127.0.0.1:0\"\ncount = \"3\"\n";
    std::ofstream p(plan);
    p << "[[fault]]\nkind = \"busy\"\nevery = \"5\"\n";
  }
  Run r = run_perfsim("serve --fleet " + fleet);
  CHECK(r.code == 2);
  CHECK(r.err.find(fleet + ":3: host[0].count: expected an integer, got string \"3\"") != std::string::npos);
  {
    std::ofstream f(fleet);
    f << "[[host]]\nlisten = \"127.0.0.1:0\"\nspeeed = 2\n";
  }
  r = run_perfsim("serve --fleet " + fleet);
  CHECK(r.code == 2);
  CHECK(r.err.find(fleet + ":3: host[0].speeed: unknown key") != std::string::npos);
  r = run_perfsim("serve --timeline frozen:0 --faults " + plan);
  CHECK(r.code == 2);
  CHECK(r.err.find(plan + ":3: fault[0].every: expected an integer, got string \"5\"") != std::string::npos);
}

TEST_CASE("numbers on the command line are whole numbers: -1 and junk are usage errors") {
  Run r = run_perfsim("serve --timeline frozen:-1");
  CHECK(r.code == 2);
  CHECK(r.err.find("frozen:K") != std::string::npos);
  r = run_perfsim("query --growth add:-1 127.0.0.1:1 Global");
  CHECK(r.code == 2);
  CHECK(r.err.find("add:N") != std::string::npos);
  r = run_perfsim("query 127.0.0.1:-1 Global");
  CHECK(r.code == 2);
  CHECK(r.err.find("1..65535") != std::string::npos);
}

// Before core/json.h, nlohmann's dump() threw type_error 316 on these bytes and the commands
// aborted (exit 134): every --json output must parse whatever bytes a capture holds.
TEST_CASE("JSON output of inspect, validate and serve survives a capture whose host and value names are not UTF-8") {
  TempDir d;
  const std::string cap = (d.path / "ff.perfcap").string();
  perfsim::captures::Capture c = perfsim::testing::test_capture();
  c.host.name = "BAD\xff\xfeHOST";
  perfsim::Bytes cut = c.records[0].payload;  // a truncated PERF_DATA_BLOCK: findings under the bad name
  cut.resize(64);
  c.records.insert(c.records.begin() + 2, {0, 0, 0, "\xff\xff value", 0, perfsim::windows::kRegBinary, 64, cut});
  REQUIRE(perfsim::captures::write_capture(cap, c).ok());

  Run i = run_perfsim("inspect --json " + cap);
  INFO(i.err);
  CHECK(i.code == 0);
  CHECK(nlohmann::json::parse(i.out).at("host").at("name") == "BAD\xef\xbf\xbd\xef\xbf\xbdHOST");  // U+FFFD each

  Run v = run_perfsim("validate --json " + cap);
  INFO(v.err);
  CHECK(v.code == 1);
  const auto vj = nlohmann::json::parse(v.out);
  REQUIRE(vj.at("errors").get<int>() > 0);
  CHECK(vj.at("findings").at(0).at("where").get<std::string>().find("\xef\xbf\xbd\xef\xbf\xbd value") !=
        std::string::npos);

  Server srv("--timeline frozen:0 --capture " + cap);
  CHECK(srv.host == "BAD\xef\xbf\xbd\xef\xbf\xbdHOST");
  CHECK(srv.stop() == 0);
}

namespace {

// /dev/zero, a FIFO and a 17 MiB file (sparse) in `dir`: inputs every text reader must refuse.
struct HostileInputs {
  std::string fifo, big;
  explicit HostileInputs(const fs::path& dir) : fifo((dir / "fifo.toml").string()), big((dir / "big.toml").string()) {
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    std::ofstream(big).put('#');
    fs::resize_file(big, (17u << 20));
  }
};

// The error names the file and says what is wrong with it, and the command fails at once (exit 1,
// or 2 where the command treats a bad input file as a usage error, as synth and serve do).
void require_refused(const Run& r, const std::string& path, const std::string& why) {
  INFO(r.err);
  CHECK((r.code == 1 || r.code == 2));
  CHECK(r.err.find(path) != std::string::npos);
  CHECK(r.err.find(why) != std::string::npos);
}

}  // namespace

// Before core/file.h these read /dev/zero until the machine ran out of memory (4-7 GB) and a FIFO
// with no writer hung forever.
TEST_CASE("text inputs of synth lodctr and serve --faults refuse /dev/zero a FIFO and a file over 16 MiB") {
  TempDir d;
  HostileInputs in(d.path);
  const std::string out = (d.path / "o.perfcap").string();
  // Named, not a temporary: GCC 12 -O2 warns a false -Warray-bounds on the temporary's copy.
  const fs::path bundled = fs::path(PERFSIM_SOURCE_DIR) / "captures" / "default-2016.perfcap";
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/zero", "a character device"}, {in.fifo, "a FIFO"}, {in.big, "larger than 16 MiB"}}) {
    INFO(path);
    require_refused(run_perfsim("synth --out " + out + " " + path), path, why);
    const std::string cap = (d.path / "h.perfcap").string();
    fs::copy_file(bundled, cap, fs::copy_options::overwrite_existing);
    require_refused(run_perfsim("lodctr " + cap + " " + path), path, why);
    require_refused(run_perfsim("serve --faults " + path), path, why);
  }
  require_refused(run_perfsim("synth --out " + out + " " + d.path.string()), d.path.string(), "a directory");

  // The symbol file an INI names is read the same way.
  const fs::path ini_dir = d.path / "ini";
  fs::create_directories(ini_dir);
  fs::copy_file(std::string(PERFSIM_SOURCE_DIR) + "/tests/lodctr/data/wavegen.ini", ini_dir / "wavegen.ini");
  const std::string symbol_file = "wavectrs.h";  // wavegen.ini's symbolfile=
  fs::create_symlink("/dev/zero", ini_dir / symbol_file);
  const std::string cap = (d.path / "h.perfcap").string();
  Run sym = run_perfsim("lodctr " + cap + " " + (ini_dir / "wavegen.ini").string());
  require_refused(sym, symbol_file, "a character device");
}

TEST_CASE("serve --faults: a SIGHUP re-read of /dev/zero or a FIFO is refused and the next good plan loads") {
  TempDir d;
  const fs::path plan = d.path / "faults.toml";
  std::ofstream(plan) << "[[fault]]\nhost = \"NO-SUCH-HOST\"\nkind = \"busy\"\n";
  const std::string err_path = (d.path / "serve.err").string();
  Server srv("--timeline frozen:0 --faults " + plan.string(), err_path);
  std::unique_ptr<perfsim::recorder::WinregClient> client;
  REQUIRE(perfsim::recorder::WinregClient::connect("127.0.0.1", srv.port, std::chrono::seconds(10), client).ok());
  perfsim::winreg::PolicyHandle hkpd;
  REQUIRE(client->open_hive(perfsim::winreg::kOpenHKPD, hkpd).ok());
  const auto status_of = [&](const std::string& value) { return hkpd_status(*client, hkpd, value); };
  CHECK(status_of("Global") == 0);
  fs::remove(plan);
  fs::create_symlink("/dev/zero", plan);
  REQUIRE(kill(srv.serve.pid(), SIGHUP) == 0);
  std::string err = wait_for_log(err_path, "(previous faults kept)", 1);
  CHECK(count_of(err, "(previous faults kept)") == 1);  // /dev/zero refused
  fs::remove(plan);
  REQUIRE(mkfifo(plan.c_str(), 0600) == 0);
  REQUIRE(kill(srv.serve.pid(), SIGHUP) == 0);
  err = wait_for_log(err_path, "(previous faults kept)", 2);
  INFO(err);
  CHECK(count_of(err, "(previous faults kept)") == 2);  // the FIFO refused, not waited on
  CHECK(status_of("Global") == 0);                      // refused: the plan in force stays

  fs::remove(plan);
  std::ofstream(plan) << "[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n";
  uint32_t global = 0;
  for (int i = 0; i < 50 && (global = status_of("Global")) == 0; ++i) {  // bounded: 5 s
    REQUIRE(kill(srv.serve.pid(), SIGHUP) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(global == 170);  // the reloader was not stuck on /dev/zero or the FIFO
  client.reset();
  CHECK(srv.stop() == 0);
}

TEST_CASE("serve --faults: numbers outside their range are a usage error at start and keep the old plan on SIGHUP") {
  TempDir d;
  const fs::path plan = d.path / "faults.toml";
  const auto write_plan = [&](const std::string& text) {
    const fs::path tmp = d.path / "faults.tmp";
    std::ofstream(tmp) << text;
    fs::rename(tmp, plan);
  };
  write_plan("[[fault]]\nkind = \"busy\"\nevery = 0\n");
  Run r = run_perfsim("serve --timeline frozen:0 --faults " + plan.string());
  CHECK(r.code == 2);
  CHECK(r.err.find(plan.string() + ":3: fault[0].every: must be between 1 and 4294967295, got 0") != std::string::npos);
  // Under --idle-timeout 10 a latency of 20 s would close the connection instead: refused, saying so.
  write_plan("[[fault]]\nkind = \"latency\"\nms = 20000\n");
  r = run_perfsim("serve --timeline frozen:0 --idle-timeout 10 --faults " + plan.string());
  CHECK(r.code == 2);
  CHECK(r.err.find("fault[0].ms: must be between 0 and 10000, got 20000") != std::string::npos);
  CHECK(r.err.find("--idle-timeout of 10 s") != std::string::npos);

  write_plan("[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n");
  perfsim::testing::PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.err_path = (d.path / "serve.err").string();
  REQUIRE(serve.start(PERFSIM_EXE, "--timeline frozen:0 --faults " + plan.string(), how).ok());
  std::unique_ptr<perfsim::recorder::WinregClient> client;
  REQUIRE(perfsim::recorder::WinregClient::connect("127.0.0.1", serve.port(), std::chrono::seconds(10), client).ok());
  perfsim::winreg::PolicyHandle hkpd;
  REQUIRE(client->open_hive(perfsim::winreg::kOpenHKPD, hkpd).ok());
  CHECK(hkpd_status(*client, hkpd, "Global") == 170);
  // 1e15 ms once passed and held every later QueryValue for good.
  write_plan("[[fault]]\nkind = \"latency\"\nms = 1e15\n");
  REQUIRE(kill(serve.pid(), SIGHUP) == 0);
  const std::string err = wait_for_log(how.err_path, "previous faults kept", 1);
  CHECK(err.find("fault[0].ms: must be between 0 and 300000, got 1000000000000000") != std::string::npos);
  CHECK(err.find("previous faults kept") != std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  CHECK(hkpd_status(*client, hkpd, "Global") == 170);  // the busy plan, at once
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  client.reset();
  CHECK(serve.stop() == 0);
}

TEST_CASE("synth --format-version 1 writes v1 and convert makes it a smaller v2 with the same records") {
  TempDir d;
  const std::string v1 = (d.path / "v1.perfcap").string(), v2 = (d.path / "v2.perfcap").string();
  REQUIRE(run_perfsim("synth --profile 2016 --duration 300 --interval 15 --format-version 1 --out " + v1).code == 0);
  auto version = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    char h[12] = {};
    f.read(h, 12);
    return uint8_t(h[8]);
  };
  CHECK(version(v1) == 1);
  Run c = run_perfsim("convert --json " + v1 + " --out " + v2);
  REQUIRE(c.code == 0);
  CHECK(version(v2) == 2);
  auto cj = nlohmann::json::parse(c.out);
  CHECK(cj["out_bytes"].get<uint64_t>() * 2 < cj["in_bytes"].get<uint64_t>());
  perfsim::captures::Capture a, b;
  REQUIRE(perfsim::captures::read_capture(v1, a).ok());
  REQUIRE(perfsim::captures::read_capture(v2, b).ok());
  REQUIRE(a.records.size() == b.records.size());
  CHECK(cj["records"] == a.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) CHECK(a.records[i].payload == b.records[i].payload);
  CHECK(a.fingerprint_json == b.fingerprint_json);
  CHECK(run_perfsim("convert " + v1 + " --out " + v1).code == 1);  // would destroy its input
  CHECK(run_perfsim("convert --format-version 3 " + v1 + " --out " + v2).code == 2);
  // A cut-off input is refused and leaves no output behind.
  const std::string cut = (d.path / "cut.perfcap").string(), out = (d.path / "out.perfcap").string();
  fs::copy_file(v1, cut);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  CHECK(run_perfsim("convert " + cut + " --out " + out).code == 1);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("serve --journal FILE and perfsim journal FILE diagnose the collector offline") {
  TempDir d;
  const std::string file = (d.path / "calls.jsonl").string();
  {
    Server srv("--timeline frozen:0 --profile win2000 --journal " + file);
    // A collector growing its buffer by 64 KB from 64 KB until the Windows 2000 host is satisfied.
    Run q = run_perfsim("query --json --initial 65536 --growth add:65536 --max-tries 40 127.0.0.1:" +
                        std::to_string(srv.port) + " \"238\"");
    INFO(q.out << q.err);
    REQUIRE(q.code == 0);
    CHECK(srv.stop() == 0);  // SIGTERM: the journal file gets every call before the exit
  }
  Run r = run_perfsim("journal " + file);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("1 sessions") != std::string::npos);
  CHECK(r.out.find("buffer growth: +65536 bytes") != std::string::npos);
  CHECK(r.out.find("values asked: 238") != std::string::npos);
  r = run_perfsim("journal --json " + file);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["skipped_lines"] == 0);
  CHECK(j["dropped_events"] == 0);
  const nlohmann::json& sessions = j["sessions"];
  REQUIRE(sessions.size() == 1);
  CHECK(sessions[0]["growth"] == "plus-n");
  CHECK(sessions[0]["growth_n"] == 65536);
  CHECK(sessions[0]["host"] == "PERFSIM-2016");  // the bundled default host under the win2000 profile
  // A line that is not a journal event: --strict refuses the file naming the line (exit 1).
  { std::ofstream(file, std::ios::app) << "not json\n"; }
  r = run_perfsim("journal --strict " + file);
  CHECK(r.code == 1);
  CHECK(r.err.find("calls.jsonl:") != std::string::npos);
  CHECK(r.err.find("not JSON") != std::string::npos);
  r = run_perfsim("journal " + (d.path / "missing.jsonl").string());
  CHECK(r.code == 1);
  CHECK(r.err.find("cannot open") != std::string::npos);
  CHECK(run_perfsim("journal").code == 2);
  // serve refuses a journal file it cannot have before listening.
  r = run_perfsim("serve --journal-size 0 --journal " + file);
  CHECK(r.code == 2);
  CHECK(r.err.find("--journal-size must be at least 1") != std::string::npos);
  r = run_perfsim("serve --journal " + (d.path / "no" / "such" / "dir.jsonl").string());
  CHECK(r.code == 1);
  CHECK(r.err.find("cannot create the journal file") != std::string::npos);
}

#if defined(PERFSIM_SANITIZED)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

TEST_CASE("lodctr --collect and unlodctr stream a capture: the in-memory result, in a fraction of its size") {
  TempDir d;
  const std::string cap = (d.path / "big.perfcap").string(), spec = (d.path / "big.toml").string();
  // An hour of a 2016 host with 200 processes: about 150 MB of samples raw. Under ASan, whose
  // peaks are not judged (below), 10 minutes check the same bytes at a sixth of the time (the
  // hour took 135 s there, 2026-11-29).
  const int minutes = kSanitized ? 10 : 60;
  std::ofstream(spec) << "[host]\nprofile = \"2016\"\nduration = \"" << minutes
                      << "m\"\ninterval = \"15s\"\n[processes]\ncount = 200\n";
  Run r = run_perfsim("synth " + spec + " -o " + cap);
  REQUIRE(r.code == 0);
  perfsim::captures::Capture original;
  REQUIRE(perfsim::captures::read_capture(cap, original).ok());
  size_t raw = 0;
  for (const auto& q : original.records) raw += q.payload.size();
  REQUIRE(raw > size_t(minutes) * 1000 * 1000 * 10 / 6);

  // The same change in memory, through the library.
  const std::string examples = std::string(PERFSIM_SOURCE_DIR) + "/lodctr/examples/";
  perfsim::lodctr::CounterIni ini;
  perfsim::lodctr::Symbols symbols;
  REQUIRE(perfsim::lodctr::load_ini(examples + "transfer.ini", ini, symbols).ok());
  perfsim::lodctr::CollectSpec cs;
  REQUIRE(perfsim::lodctr::load_collect_spec(examples + "transfer.collect.toml", cs).ok());
  perfsim::captures::Capture want = original;
  REQUIRE(perfsim::lodctr::install(want, ini, symbols).ok());
  perfsim::lodctr::ProviderReport rep;
  REQUIRE(perfsim::lodctr::add_provider(want, ini.driver, symbols, cs, &rep).ok());
  REQUIRE(rep.records_changed >= size_t(minutes) * 4);  // every Global: one each 15 s

  // perfsim lodctr, its peak resident memory measured by the python that runs it.
  auto peak_kb = [&](const std::string& args) {
    const Run m = perfsim::testing::run_command(
        "/usr/bin/python3",
        "-c 'import resource, subprocess, sys; c = subprocess.run(sys.argv[1:]).returncode; "
        "print(c, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' " +
            std::string(PERFSIM_EXE) + " " + args);
    INFO(m.out << m.err);
    REQUIRE(m.code == 0);
    int code = -1;
    size_t kb = 0;
    std::istringstream(m.out.substr(m.out.rfind('\n', m.out.size() - 2) + 1)) >> code >> kb;
    CHECK(code == 0);
    return kb;
  };
  const size_t lodctr_kb =
      peak_kb("lodctr --collect " + examples + "transfer.collect.toml " + cap + " " + examples + "transfer.ini");
  perfsim::captures::Capture got;
  REQUIRE(perfsim::captures::read_capture(cap, got).ok());
  REQUIRE(got.records.size() == want.records.size());
  size_t differ = 0;
  for (size_t i = 0; i < got.records.size(); ++i) differ += got.records[i].payload != want.records[i].payload;
  CHECK(differ == 0);
  CHECK(got.catalog.size() == want.catalog.size());
  CHECK(got.registry.size() == want.registry.size());
  // Held whole, the samples alone would be `raw` bytes; streamed, a few samples and the metadata.
  // What perfsim holds is its peak above the same executable doing nothing (its shared libraries,
  // ~20 MB, measured in this run).
  const size_t idle_kb = peak_kb("--help");
  INFO("lodctr peak " << lodctr_kb << " KB, idle " << idle_kb << " KB, for " << raw / 1024 << " KB of samples");
  // Under ASan the allocator's quarantine keeps freed blocks resident (560 MB seen), so the peak
  // says nothing about what perfsim holds: the bound is the normal build's.
  if (!kSanitized) CHECK((lodctr_kb - std::min(idle_kb, lodctr_kb)) * 1024 < raw / 4);

  const size_t unlodctr_kb = peak_kb("unlodctr " + cap + " Transfer");
  REQUIRE(perfsim::captures::read_capture(cap, got).ok());
  REQUIRE(got.records.size() == original.records.size());
  differ = 0;
  for (size_t i = 0; i < got.records.size(); ++i) differ += got.records[i].payload != original.records[i].payload;
  CHECK(differ == 0);  // the provider's objects are gone from every answer, nothing else changed
  CHECK(got.catalog.size() == original.catalog.size());
  if (!kSanitized) CHECK((unlodctr_kb - std::min(idle_kb, unlodctr_kb)) * 1024 < raw / 4);
}
