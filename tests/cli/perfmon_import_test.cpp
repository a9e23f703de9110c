// `perfsim import --perfmon`: a CSV that `perfsim series` wrote of a synthetic host, imported and
// served, read back by python3-samba (collector_formatted.py computes each value from two polls
// with its own formulas): every value within rounding of the CSV. A CSV as relog writes it by hand
// (local time, a blank value, counters the profile does not know), and bad inputs: exit 1 naming
// the line, nothing written; usage errors exit 2.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/perfsim_serve.h"
#include "tests/common/csv_cells.h"
#include "tests/common/run_command.h"
#include "tests/common/child_cpu.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using perfsim::testing::run_command;

namespace {

std::vector<std::vector<std::string>> rows_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(perfsim::testing::csv_cells(line));
  return rows;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Seconds between two "MM/DD/YYYY HH:MM:SS.mmm" of the same day.
double seconds_between(const std::string& a, const std::string& b) {
  const auto secs = [](const std::string& t) {
    return std::stoi(t.substr(11, 2)) * 3600.0 + std::stoi(t.substr(14, 2)) * 60.0 + std::stod(t.substr(17));
  };
  return secs(b) - secs(a);
}

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

TEST_CASE("perfsim import --perfmon: series' CSV of a synth capture, served, read by python3-samba as logged") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const std::string cap = (dir.path / "synth.perfcap").string();
  auto r = run_command(PERFSIM_EXE, "synth -p 2016 --seed 11 --duration 5m --interval 15 -o " + cap);
  INFO(r.err);
  REQUIRE(r.code == 0);
  // One counter of each formula the collector knows: 100 ns timers (and inverse), rates (32 and
  // 64 bit), raw counts, an average over a base and a 100 ns queue length. Each instance with the
  // same counters: one lacking a counter would not be served (the next test case).
  const std::vector<std::string> paths = {"Processor(_Total)\\% Processor Time",
                                          "Processor(_Total)\\% Idle Time",
                                          "Processor(1)\\% Processor Time",
                                          "Processor(1)\\% Idle Time",
                                          "Memory\\Page Faults/sec",
                                          "Memory\\Available Bytes",
                                          "System\\Processes",
                                          "PhysicalDisk(_Total)\\Disk Bytes/sec",
                                          "PhysicalDisk(_Total)\\Avg. Disk Bytes/Transfer",
                                          "PhysicalDisk(_Total)\\Avg. Disk sec/Transfer",
                                          "PhysicalDisk(_Total)\\Avg. Disk Queue Length"};
  std::string args;
  for (const std::string& p : paths) args += " -c " + quoted("\\" + p);
  r = run_command(PERFSIM_EXE, "series " + cap + args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const fs::path csv = dir.path / "log.csv";
  write_file(csv, r.out);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 21);  // header + 20 samples

  const std::string imported = (dir.path / "imported.perfcap").string();
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + imported + " --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json rep = json::parse(r.out);
  CHECK(rep["samples"] == 20);
  CHECK(rep["columns"] == paths.size());
  CHECK(rep["custom"].empty());  // every counter is the 2016 profile's
  CHECK(rep["host"] == "SYNTH-2016-11");
  CHECK(rep["unreproduced"] == 0);

  perfsim::testing::PerfsimServe serve;
  const perfsim::Status st = serve.start(PERFSIM_EXE, "--timeline step --listen 127.0.0.1:0 --capture " + imported);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const std::string out = (dir.path / "collected.json").string();
  std::string collector_paths;
  for (const std::string& p : paths) collector_paths += " " + quoted(p);
  r = run_command(PERFSIM_PYTHON,
                  "-B " + std::string(INTEROP_SCRIPTS_DIR) + "/collector_formatted.py --port " +
                      std::to_string(serve.port()) + " --out " + out + " --samples 20" + collector_paths,
                  120);
  CHECK(serve.stop() == 0);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  json got;
  std::ifstream(out) >> got;
  for (size_t c = 0; c < paths.size(); ++c) {
    const std::vector<double> series = got["series"][paths[c]];
    REQUIRE(series.size() == 19);
    CHECK(rows[0][c + 1].find(paths[c]) != std::string::npos);
    for (size_t k = 0; k < series.size(); ++k) {
      // The interval between polls k and k+1 is the CSV's row k+2 (row 1 is the first sample).
      const std::string& logged = rows[k + 2][c + 1];
      const double want = std::stod(logged);
      // Within rounding: the CSV's times have milliseconds (an interval may differ by 1 ms from
      // the one the value was computed over); a rate's count is whole (half a count over the
      // interval); an average timer counts PerfFreq ticks (1e-7 s at 10 MHz).
      const double dt = seconds_between(rows[k + 1][0], rows[k + 2][0]);
      const bool rate = paths[c].find("/sec") != std::string::npos;
      const double tol = std::abs(want) * 0.002 / dt + (rate ? 0.5 / dt : 1e-6);
      INFO(paths[c] << " interval " << k << ": logged " << logged << ", collected " << series[k]);
      CHECK(std::abs(series[k] - want) <= tol);
    }
  }
}

TEST_CASE("perfsim import --perfmon: a hand-written relog CSV in local time, a blank value, a custom counter") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  // As relog -f csv writes a Pacific log: the bias (480 minutes) turns 10:00 local into 18:00 UTC.
  const std::string log =
      "\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\WEB01\\Processor(_Total)\\% Processor Time\","
      "\"\\\\WEB01\\Memory\\Available MBytes\",\"\\\\WEB01\\MyApp(worker \"\"a\"\")\\Queue Depth\","
      "\"\\\\WEB01\\MyApp(worker \"\"a\"\")\\Items\"\r\n"
      "\"03/14/2026 10:00:00.000\",\" \",\"2048\",\"1.5\",\"7\"\r\n"
      "\"03/14/2026 10:00:15.000\",\"12.5\",\"2040\",\" \",\"9\"\r\n"
      "\"03/14/2026 10:00:30.000\",\"99.25\",\"2001\",\"0.125\",\"12\"\r\n"
      "\"03/14/2026 10:00:45.500\",\"0\",\"1999\",\"3\",\"12\"\r\n";
  const fs::path csv = dir.path / "relog.csv";
  write_file(csv, log);
  const std::string cap = (dir.path / "web01.perfcap").string();
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap + " --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json rep = json::parse(r.out);
  CHECK(rep["host"] == "WEB01");
  CHECK(rep["custom"] == json({"\\MyApp\\Queue Depth", "\\MyApp\\Items"}));

  r = run_command(PERFSIM_EXE, "series " + cap +
                                   " -c '\\Processor(_Total)\\% Processor Time' -c '\\Memory\\Available MBytes'"
                                   " -c '\\MyApp(*)\\Queue Depth' -c '\\MyApp(*)\\Items'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0][1] == "\\\\WEB01\\Processor(_Total)\\% Processor Time");
  CHECK(rows[0][3] == "\\\\WEB01\\MyApp(worker \"a\")\\Queue Depth");
  CHECK(rows[1][0] == "03/14/2026 18:00:00.000");
  CHECK(rows[4][0] == "03/14/2026 18:00:45.500");
  const auto in = rows_of(log);
  for (size_t k = 1; k < rows.size(); ++k)
    for (size_t c = 1; c < 5; ++c) {
      INFO("row " << k << " column " << c << ": logged '" << in[k][c] << "', served '" << rows[k][c] << "'");
      // Row 2's blank Queue Depth (a raw fraction: held, it would show 1.5, a value the log does not
      // have) takes its instance out of that sample, Items too (issue 46: never invent a value).
      if (in[k][c] == " " || (k == 2 && c >= 3)) {
        CHECK(rows[k][c] == " ");
      } else {
        REQUIRE(rows[k][c] != " ");
        CHECK(std::stod(rows[k][c]) == Approx(std::stod(in[k][c])).margin(1e-6));
      }
    }
}

TEST_CASE("perfsim import --perfmon: an instance lacking a logged counter is left out and named, never served as 0") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  // sqlservr's Working Set is never logged (a raw count: held at 0 it would show 0, a value the host
  // never gave); _Total's LogicalDisk Avg. Disk sec/Read is never logged either, but an average
  // held at 0 over a base held at 0 has no value, so _Total is served and shows nothing there.
  const std::string log =
      "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\SQL01\\Process(sqlservr)\\% Processor Time\","
      "\"\\\\SQL01\\Process(_Total)\\% Processor Time\",\"\\\\SQL01\\Process(_Total)\\Working Set\","
      "\"\\\\SQL01\\LogicalDisk(C:)\\Avg. Disk sec/Read\",\"\\\\SQL01\\LogicalDisk(C:)\\Free Megabytes\","
      "\"\\\\SQL01\\LogicalDisk(_Total)\\Free Megabytes\"\r\n"
      "\"03/14/2026 10:00:00.000\",\" \",\" \",\"1048576000\",\" \",\"51200\",\"51200\"\r\n"
      "\"03/14/2026 10:00:15.000\",\"12.5\",\"40\",\"1048600000\",\"0.004\",\"51100\",\"51100\"\r\n"
      "\"03/14/2026 10:00:30.000\",\"20\",\"55\",\"1048700000\",\"0.002\",\"51000\",\"51000\"\r\n";
  const fs::path csv = dir.path / "sql01.csv";
  write_file(csv, log);
  const std::string cap = (dir.path / "sql01.perfcap").string();
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap + " --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json rep = json::parse(r.out);
  std::string warnings;
  for (const json& w : rep["warnings"]) warnings += w.get<std::string>() + "\n";
  INFO(warnings);
  CHECK(warnings.find("\\Process(sqlservr): not served: the log has no \\Process(sqlservr)\\Working Set") !=
        std::string::npos);
  CHECK(warnings.find("_Total") == std::string::npos);  // neither _Total lacks a counter that would show
  CHECK(rep["unserved"].get<uint64_t>() >= 2);          // sqlservr's two logged % Processor Time values

  r = run_command(PERFSIM_EXE, "series " + cap +
                                   " -c '\\Process(*)\\% Processor Time' -c '\\Process(*)\\Working Set'"
                                   " -c '\\LogicalDisk(*)\\Avg. Disk sec/Read' -c '\\LogicalDisk(*)\\Free Megabytes'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 4);
  const std::vector<std::string>& head = rows[0];
  const auto column = [&](const std::string& path) {
    return size_t(std::find(head.begin(), head.end(), "\\\\SQL01" + path) - head.begin());
  };
  CHECK(column("\\Process(sqlservr)\\% Processor Time") == head.size());  // not served at all
  CHECK(column("\\Process(sqlservr)\\Working Set") == head.size());
  const size_t ws = column("\\Process(_Total)\\Working Set");
  const size_t avg = column("\\LogicalDisk(_Total)\\Avg. Disk sec/Read");
  const size_t free_mb = column("\\LogicalDisk(_Total)\\Free Megabytes");
  REQUIRE(ws < head.size());
  REQUIRE(avg < head.size());
  REQUIRE(free_mb < head.size());
  const auto in = rows_of(log);
  for (size_t k = 1; k < rows.size(); ++k) {
    INFO("row " << k);
    CHECK(std::stod(rows[k][ws]) == Approx(std::stod(in[k][3])));
    CHECK(rows[k][avg] == " ");  // never logged for _Total: no value, not 0
    CHECK(std::stod(rows[k][free_mb]) == Approx(std::stod(in[k][6])));
  }
}

TEST_CASE("perfsim import --perfmon: bad input exits 1 naming the line and leaves nothing, usage errors exit 2") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const std::string head = "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\H\\Memory\\Available Bytes\"\n";
  const std::string good = "\"01/02/2026 00:00:00.000\",\"5\"\n";
  struct Bad {
    const char* what;
    std::string text;
    const char* message;
  };
  const std::vector<Bad> bad = {
      {"torn row", head + good + "\"01/02/2026 00:00:15.000\"\n" + "\"01/02/2026 00:00:30.000\",\"5\"\n",
       "relog.csv:3: 1 cells where the header has 2"},
      {"path", "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"Memory Available Bytes\"\n" + good,
       "relog.csv:1: column 2: counter path 'Memory Available Bytes'"},
      {"time order", head + good + good, "relog.csv:3: time 01/02/2026 00:00:00.000 does not come after"},
      {"value", head + good + "\"01/02/2026 00:00:15.000\",\"12,5\"\n", "relog.csv:3: column 2"},
      {"header", "\"Time\",\"\\\\H\\Memory\\Available Bytes\"\n" + good, "relog.csv:1: first cell 'Time'"},
  };
  const fs::path csv = dir.path / "relog.csv";
  const fs::path out = dir.path / "out.perfcap";
  for (const Bad& b : bad) {
    INFO(b.what);
    write_file(csv, b.text);
    const auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find(b.message) != std::string::npos);
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir.path)) files += e.path() != csv;
    CHECK(files == 0);  // neither the capture nor a partial file
  }
  write_file(csv, head + good);
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string());
  CHECK(r.code == 2);
  CHECK(r.err.find("-o F.perfcap") != std::string::npos);
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string() + " --profile 1999");
  CHECK(r.code == 2);
  r = run_command(PERFSIM_EXE, "import " + csv.string() + " --perfmon " + csv.string() + " -o " + out.string());
  CHECK(r.code == 2);
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  CHECK(r.code == 0);  // the same file, good: the checks above are on the errors, not the setup
  CHECK(fs::exists(out));
}

namespace {

// A two-row log of `n` columns: `path(i)` names column i.
template <class Path>
std::string wide_log(size_t n, Path path) {
  std::string text = "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\"";
  for (size_t i = 0; i < n; ++i) text += ",\"" + path(i) + "\"";
  text += "\n";
  for (int row = 0; row < 2; ++row) {
    text += row ? "\"01/02/2026 00:00:15.000\"" : "\"01/02/2026 00:00:00.000\"";
    for (size_t i = 0; i < n; ++i) text += ",\"" + std::to_string((i + size_t(row)) % 100) + "\"";
    text += "\n";
  }
  return text;
}

}  // namespace

// Issue 44: each column was looked up by a scan of the columns before it (objects, instances,
// counters, and PDH's #N names), quadratic in columns: 100,000 columns took 12.9 s.
TEST_CASE("perfsim import --perfmon: reading the header is linear in columns") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const fs::path csv = dir.path / "wide.csv";
  const fs::path out = dir.path / "wide.perfcap";
  const auto import_cpu = [&](size_t n, auto path) {
    write_file(csv, wide_log(n, path));
    perfsim::testing::CommandResult r;
    const double cpu = perfsim::testing::child_cpu_seconds(
        [&] { r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string()); });
    INFO(r.err);
    REQUIRE(r.code == 0);
    return cpu;
  };
  const auto instances = [](size_t i) { return "\\\\H\\Process(app" + std::to_string(i) + ")\\% Processor Time"; };
  const auto objects = [](size_t i) { return "\\\\H\\Bench Object " + std::to_string(i) + "\\Count"; };
  const auto counters = [](size_t i) { return "\\\\H\\Bench Counters\\Count " + std::to_string(i); };
  const size_t n = 6000;
  // 4x the columns: ~4x the work when linear, ~16x when quadratic; 8 leaves room for a busy machine.
  const double inst = import_cpu(4 * n, instances) / import_cpu(n, instances);
  const double objs = import_cpu(4 * n, objects) / import_cpu(n, objects);
  const double ctrs = import_cpu(4 * n, counters) / import_cpu(n, counters);
  CHECK(inst < 8);
  CHECK(objs < 8);
  CHECK(ctrs < 8);
}

// Issue 44: columns that each add an instance and a counter served instances x counters cells
// (3,000 columns: 1.28 GB; 10,000: bad_alloc, abort, and OUT.perfcap.tmp.PID left behind).
TEST_CASE("perfsim import --perfmon: a log whose served cells would be columns squared is refused") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const fs::path csv = dir.path / "sparse.csv";
  const fs::path out = dir.path / "sparse.perfcap";
  write_file(
      csv, wide_log(3000, [](size_t i) { return "\\\\H\\Bench(i" + std::to_string(i) + ")\\c" + std::to_string(i); }));
  const auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string(), 30);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("sparse.csv:1: its 3000 columns name instances and counters that make 9000000 served cells") !=
        std::string::npos);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.path() != csv;
  CHECK(files == 0);
}

// Issue 44: no line-length cap (/dev/zero grew until bad_alloc); a Windows-1252 host name imported
// and then aborted redact; the first two samples 60 days apart truncated interval_ms to 32 bits.
TEST_CASE("perfsim import --perfmon: endless lines, non-UTF-8 names and a >32-bit interval are errors") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const fs::path out = dir.path / "out.perfcap";
  // 4 GB of address space at most: unfixed, the line grows until bad_alloc there, not the machine's.
  // ASan reserves its shadow memory at start and cannot run under `ulimit -v`: there the fixed
  // cap (128 MiB) is what stops it, and the 30 s limit what stops the unfixed code.
#if defined(PERFSIM_SANITIZED)
  const std::string limit = "";
#else
  const std::string limit = "ulimit -v 4000000; ";
#endif
  auto r = run_command("/bin/sh -c '" + limit + "exec \"$0\" \"$@\"' " PERFSIM_EXE,
                       "import --perfmon /dev/zero -o " + out.string(), 30);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("/dev/zero:1: a line longer than 128 MiB") != std::string::npos);

  const fs::path csv = dir.path / "log.csv";
  const std::string head =
      "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\ACM\xC9WEB\\Memory\\Available Bytes\"\n";
  write_file(csv, head + "\"01/02/2026 00:00:00.000\",\"5\"\n\"01/02/2026 00:00:15.000\",\"6\"\n");
  // Said to be UTF-8, it is not; left to detection, it is read as CP1252 (issue 46), with a warning.
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string() + " --encoding UTF-8");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("log.csv:1: byte 55 (0xC9) is not UTF-8") != std::string::npos);
  CHECK(!fs::exists(out));
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string() + " --json");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.err.find("read as CP1252, 1 byte(s) above 0x7F") != std::string::npos);
  CHECK(json::parse(r.out)["host"] == "ACM\xC3\x89WEB");
  fs::remove(out);

  const std::string utf8 =
      "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\ACMEWEB\\Memory\\Available Bytes\"\n";
  write_file(csv, utf8 + "\"01/02/2026 00:00:00.000\",\"5\"\n\"03/03/2026 00:00:00.000\",\"6\"\n");
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("its first two samples are 5184000000 ms apart") != std::string::npos);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.path() != csv;
  CHECK(files == 0);
}

// Issue 54: a value cell that is no number was echoed whole into the error (100 MB of it).
TEST_CASE("perfsim import --perfmon: a 50 MB value that is no number is refused in a message of bounded length") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const fs::path csv = dir.path / "bad-value.csv", out = dir.path / "bad-value.perfcap";
  write_file(csv,
             "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"\\\\H\\Memory\\Available Bytes\"\n"
             "\"01/02/2026 00:00:00.000\",\"1\"\n\"01/02/2026 00:00:15.000\",\"" +
                 std::string(50'000'000, '7') + "x\"\n");
  const auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  INFO(r.err.substr(0, 2000));
  CHECK(r.code == 1);
  CHECK(r.err.find(":3: column 2 ('\\\\H\\Memory\\Available Bytes'): value '777") != std::string::npos);
  CHECK(r.err.find("(50000001 characters) is not a number") != std::string::npos);
  CHECK(r.err.size() < 1000);
  CHECK(r.out.size() < 1000);
  CHECK_FALSE(fs::exists(out));
}

// Issue 54: a 50 MB counter name imported (8 s, 789 MB, the name echoed to stdout) into a
// capture whose Counter table serve answered with 100 MB. PDH's own bounds (perfdata/limits.h):
// paths 2,048 characters, counter and instance names 1,024.
TEST_CASE("perfsim import --perfmon: names past PDH's bounds are refused naming the line and column, briefly") {
  perfsim::testing::TempDir dir("perfsim-perfmon");
  const fs::path csv = dir.path / "long.csv", out = dir.path / "long.perfcap";
  const auto log = [](const std::string& path) {
    return "\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\",\"" + path +
           "\"\n\"01/02/2026 00:00:00.000\",\"1\"\n\"01/02/2026 00:00:15.000\",\"2\"\n";
  };
  write_file(csv, log("\\\\H\\Memory\\" + std::string(50'000'000, 'a')));
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  INFO(r.err.substr(0, 2000));
  CHECK(r.code == 1);
  CHECK(r.err.find(csv.string() + ":1: column 2: counter path '\\\\H\\Memory\\aaa") != std::string::npos);
  CHECK(r.err.find("(50000011 characters) is longer than the 2048 characters of PDH_MAX_COUNTER_PATH") !=
        std::string::npos);
  CHECK(r.err.size() < 1000);
  CHECK(r.out.size() < 1000);
  CHECK_FALSE(fs::exists(out));

  // At the bounds: a counter name of 1,024 characters is imported, 1,025 is not; a path of 2,049
  // whose names are each within theirs is not either.
  write_file(csv, log("\\\\H\\Memory\\" + std::string(1024, 'c')));
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  CHECK(r.code == 0);
  CHECK(fs::exists(out));
  fs::remove(out);
  write_file(csv, log("\\\\H\\Memory\\" + std::string(1025, 'c')));
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  CHECK(r.code == 1);
  CHECK(r.err.find(":1: column 2: counter name 'ccc") != std::string::npos);
  CHECK(r.err.find("(1025 characters) is longer than the 1024 characters of PDH_MAX_COUNTER_NAME") !=
        std::string::npos);
  const std::string wide = "\\\\H\\" + std::string(1017, 'o') + "(" + std::string(1024, 'i') + ")\\c";
  REQUIRE(wide.size() == 2049);
  write_file(csv, log(wide));
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + out.string());
  CHECK(r.code == 1);
  CHECK(r.err.find("(2049 characters) is longer than the 2048 characters of PDH_MAX_COUNTER_PATH") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
}
