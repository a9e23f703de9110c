// Issue 46: `perfsim import --perfmon` of logs as customers send them: typeperf's stdout (a blank
// first line, its closing messages), CRLF, a W. Europe time-zone header, six decimals, blank cells
// (PDH had no value), a SQL Server named instance, a torn last row, German names in CP1252 and
// UTF-16; and `perfsim series -o`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/csv_cells.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using perfsim::testing::run_command;

namespace {

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t files_besides(const fs::path& dir, const fs::path& keep) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path() != keep;
  return n;
}

const std::string kHead =
    "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\",\"\\\\SQL01\\Processor(_Total)\\% Processor Time\","
    "\"\\\\SQL01\\Memory\\Available MBytes\",\"\\\\SQL01\\Process(sqlservr)\\% Processor Time\","
    "\"\\\\SQL01\\Process(sqlservr)\\Working Set\",\"\\\\SQL01\\MSSQL$FIBU:Buffer Manager\\Page life expectancy\"\r\n";

// What `typeperf -cf c.txt -si 15 > log.csv` leaves: an empty first line, the header, rows (line 5
// blank for the CPU and for sqlservr: PDH could not collect them), typeperf's closing messages.
const std::string kRows =
    "\"11/28/2026 10:00:00.000\",\" \",\"2048.000000\",\" \",\"123456789.000000\",\"300.000000\"\r\n"
    "\"11/28/2026 10:00:15.000\",\"12.500000\",\"2040.000000\",\"3.125000\",\"123456789.000000\",\"315.000000\"\r\n"
    "\"11/28/2026 10:00:30.000\",\" \",\"2001.000000\",\" \",\"\",\"330.000000\"\r\n"
    "\"11/28/2026 10:00:45.000\",\"50.000000\",\"1999.000000\",\"6.250000\",\"123000000.000000\",\"345.000000\"\r\n"
    "\"11/28/2026 10:01:00.000\",\"25.000000\",\"1998.000000\",\"1.500000\",\"124000000.000000\",\"360.000000\"\r\n"
    "\"11/28/2026 10:01:15.000\",\"30.000000\",\"1997.000000\",\"2.500000\",\"125000000.000000\",\"375.000000\"\r\n";
const std::string kTypeperf =
    "\r\n" + kHead + kRows + "Exiting, please wait...\r\nThe command completed successfully.\r\n";

// kTypeperf imported into DIR/sql01.perfcap.
fs::path imported_typeperf(const fs::path& dir) {
  const fs::path csv = dir / "typeperf.csv";
  write_file(csv, kTypeperf);
  const fs::path cap = dir / "sql01.perfcap";
  const auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  return cap;
}

// `cap` served on `address`, read `samples` times by perfmon_blank_client.py (python3-samba).
json collect(const fs::path& cap, const std::string& address, int samples, const std::vector<std::string>& paths) {
  perfsim::testing::PerfsimServe serve;
  const perfsim::Status st =
      serve.start(PERFSIM_EXE, "--timeline step --listen " + address + ":0 --capture " + cap.string());
  INFO(st.ToString());
  REQUIRE(st.ok());
  const std::string out = (cap.parent_path() / "collected.json").string();
  std::string args;
  for (const std::string& p : paths) args += " '" + p + "'";
  const auto r =
      run_command(PERFSIM_PYTHON,
                  "-B " + std::string(CLI_SCRIPTS_DIR) + "/perfmon_blank_client.py --interop " + INTEROP_SCRIPTS_DIR +
                      " --address " + address + " --port " + std::to_string(serve.port()) + " --out " + out +
                      " --samples " + std::to_string(samples) + args,
                  120);
  CHECK(serve.stop() == 0);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  json got;
  std::ifstream(out) >> got;
  return got;
}

}  // namespace

TEST_CASE("perfsim import --perfmon: a blank CPU cell is served as no value, never 100 or 0 (python3-samba)") {
  perfsim::testing::TempDir dir("perfsim-perfmon46");
  const fs::path csv = dir.path / "typeperf.csv";
  write_file(csv, kTypeperf);
  const std::string cap = (dir.path / "sql01.perfcap").string();
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap + " --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json rep = json::parse(r.out);
  CHECK(rep["samples"] == 6);
  // Line 5's three blanks (line 3's, the first row's, are the rates relog leaves empty there).
  CHECK(rep["blank_cells"] == 3);
  REQUIRE(rep["blanks"].size() == 3);
  CHECK(rep["blanks"][0]["counter"] == "\\\\SQL01\\Processor(_Total)\\% Processor Time");
  CHECK(rep["blanks"][0]["count"] == 1);
  CHECK(rep["blanks"][0]["lines"] == json({"5"}));
  CHECK(rep["blanks"][2]["counter"] == "\\\\SQL01\\Process(sqlservr)\\Working Set");
  // Line 6's rates cannot be served: their instance was absent the sample before.
  CHECK(rep["unserved"] == 2);

  const std::vector<std::string> paths = {"Processor(_Total)\\% Processor Time", "Process(sqlservr)\\% Processor Time",
                                          "Process(sqlservr)\\Working Set", "Memory\\Available MBytes"};
  const json got = collect(cap, "127.0.0.211", 6, paths);
  // The rule (synth/README.md, Blank cells): an instance all of whose cells are blank is absent
  // from that sample, so the intervals on either side of it have no value, as PDH shows them.
  const json cpu = got["values"][paths[0]];
  INFO(cpu.dump());
  CHECK(got["present"][paths[0]] == json({true, true, false, true, true, true}));
  REQUIRE(cpu.size() == 5);
  CHECK(cpu[0].get<double>() == Approx(12.5).margin(0.01));
  CHECK(cpu[1].is_null());
  CHECK(cpu[2].is_null());
  CHECK(cpu[3].get<double>() == Approx(25).margin(0.01));
  CHECK(cpu[4].get<double>() == Approx(30).margin(0.01));
  CHECK(got["present"][paths[1]] == json({true, true, false, true, true, true}));
  CHECK(got["values"][paths[1]][1].is_null());
  CHECK(got["values"][paths[1]][2].is_null());
  CHECK(got["values"][paths[1]][3].get<double>() == Approx(1.5).margin(0.01));
  // A raw count needs one sample: served again as soon as it is logged.
  CHECK(got["values"][paths[2]][2].get<double>() == Approx(123000000));
  CHECK(got["values"][paths[3]] == json({2040, 2001, 1999, 1998, 1997}));

  // The capture's times are UTC: 10:00 in W. Europe (bias -60) is 09:00.
  r = run_command(PERFSIM_EXE, "series " + cap + " -c '\\Processor(_Total)\\% Processor Time'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"11/28/2026 09:00:30.000\",\" \"") != std::string::npos);

  // --blank fail refuses the log at the first blank, writing nothing.
  const fs::path other = dir.path / "fail.perfcap";
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + other.string() + " --blank fail");
  CHECK(r.code == 1);
  CHECK(r.err.find("typeperf.csv:5: column 2 ('\\\\SQL01\\Processor(_Total)\\% Processor Time') is blank") !=
        std::string::npos);
  CHECK(!fs::exists(other));
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + other.string() + " --blank zero");
  CHECK(r.code == 2);
  CHECK(r.err.find("--blank serve") != std::string::npos);
}

TEST_CASE("perfsim import --perfmon: typeperf's stdout and a torn last row import, --strict refuses the torn row") {
  perfsim::testing::TempDir dir("perfsim-perfmon46");
  const fs::path csv = dir.path / "cut.csv";
  const fs::path cap = dir.path / "cut.perfcap";
  // Stopped while writing line 9: the row ends inside a quoted number.
  write_file(csv, "\r\n" + kHead + kRows + "\"11/28/2026 10:01:30.000\",\"31.0");
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + " --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json rep = json::parse(r.out);
  CHECK(rep["samples"] == 6);
  REQUIRE(rep["warnings"].size() == 1);
  CHECK(rep["warnings"][0].get<std::string>().find("cut.csv:9: a torn last row dropped") != std::string::npos);
  CHECK(r.err.find("warning: " + csv.string() + ":9: a torn last row dropped") != std::string::npos);

  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + ".2 --strict");
  CHECK(r.code == 1);
  CHECK(r.err.find("cut.csv:9: cell 2 has no closing quote; a torn last row") != std::string::npos);
  CHECK(!fs::exists(cap.string() + ".2"));

  // A torn row with rows after it is not a cut log: refused, naming it.
  write_file(csv, kHead + "\"11/28/2026 10:01:30.000\",\"31.0\r\n" + kRows);
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + ".3");
  CHECK(r.code == 1);
  CHECK(r.err.find("cut.csv:2: cell 2 has no closing quote") != std::string::npos);
  // Text between rows is not typeperf's closing messages.
  write_file(csv, kHead + kRows.substr(0, kRows.find("\r\n") + 2) + "Exiting, please wait...\r\n" +
                      kRows.substr(kRows.find("\r\n") + 2));
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + ".4");
  CHECK(r.code == 1);
  CHECK(r.err.find("cut.csv:3: text where a sample row belongs") != std::string::npos);
}

namespace {

// UTF-8 text as UTF-16 code units, little or big endian, with a BOM.
std::string utf16(const std::string& utf8, bool big) {
  std::u16string u;
  for (size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      u += char16_t(c), i += 1;
    } else {  // two-byte sequences are all this test writes (ä, ö, ü, ß)
      u += char16_t(((c & 0x1F) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3F)), i += 2;
    }
  }
  std::string out = big ? "\xFE\xFF" : "\xFF\xFE";
  for (char16_t ch : u) {
    const char hi = char(ch >> 8), lo = char(ch & 0xFF);
    out += big ? std::string{hi, lo} : std::string{lo, hi};
  }
  return out;
}

// The German log as UTF-8 with `a` for ä (0xE4 in CP1252, U+00E4).
std::string german_log(const std::string& a) {
  return "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\",\"\\\\DE01\\Prozessor(_Total)\\Prozessorzeit (%)\","
         "\"\\\\DE01\\System\\Prozessor-Warteschlangenl" +
         a +
         "nge\"\r\n"
         "\"11/28/2026 10:00:00.000\",\" \",\"1.000000\"\r\n"
         "\"11/28/2026 10:00:15.000\",\"12.500000\",\"2.000000\"\r\n";
}

}  // namespace

TEST_CASE("perfsim import --perfmon: UTF-16LE/BE and UTF-8 with a BOM, CP1252 with a warning, --encoding") {
  perfsim::testing::TempDir dir("perfsim-perfmon46");
  const fs::path csv = dir.path / "de.csv";
  const fs::path cap = dir.path / "de.perfcap";
  const std::string utf8 = german_log("\xC3\xA4");
  const std::string want = "\\System\\Prozessor-Warteschlangenl\xC3\xA4nge";
  struct Case {
    const char* what;
    std::string bytes;
    const char* encoding;
    bool warns;
  };
  const std::vector<Case> cases = {
      {"UTF-16LE with BOM", utf16(utf8, false), "UTF-16LE (BOM)", false},
      {"UTF-16BE with BOM", utf16(utf8, true), "UTF-16BE (BOM)", false},
      {"UTF-8 with BOM", "\xEF\xBB\xBF" + utf8, "UTF-8 (BOM)", false},
      {"UTF-8", utf8, "UTF-8", false},
      {"CP1252", german_log("\xE4"), "CP1252", true},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    write_file(csv, c.bytes);
    const auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + " --json");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const json rep = json::parse(r.out);
    CHECK(rep["encoding"] == c.encoding);
    CHECK(rep["samples"] == 2);
    CHECK(std::find(rep["custom"].begin(), rep["custom"].end(), json(want)) != rep["custom"].end());
    CHECK((r.err.find("read as CP1252, 1 byte(s) above 0x7F") != std::string::npos) == c.warns);
  }
  // The same bytes in the code page given: 0xE4 is "ä" in CP1250 too, and CP1251's "д".
  write_file(csv, german_log("\xE4"));
  auto r = run_command(PERFSIM_EXE,
                       "import --perfmon " + csv.string() + " -o " + cap.string() + " --json --encoding CP1251");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json rep = json::parse(r.out);
  CHECK(rep["encoding"] == "CP1251");
  CHECK(std::find(rep["custom"].begin(), rep["custom"].end(), json("\\System\\Prozessor-Warteschlangenl\xD0\xB4nge")) !=
        rep["custom"].end());
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + " --encoding NOPAGE");
  CHECK(r.code == 2);  // a usage error saying what to write
  CHECK(r.err.find("--encoding: encoding 'NOPAGE' is not one iconv knows: write a code page such as CP1252") !=
        std::string::npos);
}

TEST_CASE("perfsim series -o: the file written whole, or not at all") {
  perfsim::testing::TempDir dir("perfsim-perfmon46");
  const fs::path cap = imported_typeperf(dir.path);
  perfsim::testing::CommandResult r;
  const std::string counter = " -c '\\Processor(_Total)\\% Processor Time' -c '\\Memory\\Available MBytes'";
  const auto to_stdout = run_command(PERFSIM_EXE, "series " + cap.string() + counter);
  REQUIRE(to_stdout.code == 0);
  const fs::path out = dir.path / "series.csv";
  r = run_command(PERFSIM_EXE, "series " + cap.string() + counter + " -o " + out.string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  CHECK(read_file(out) == to_stdout.out);
  r = run_command(PERFSIM_EXE, "series " + cap.string() + counter + " --json -o " + out.string());
  REQUIRE(r.code == 0);
  CHECK(json::parse(read_file(out))["rows"].size() == 6);
  // A counter the capture lacks: an error, and the file from before is left as it was.
  const std::string before = read_file(out);
  r = run_command(PERFSIM_EXE, "series " + cap.string() + " -c '\\Nope\\Nothing' -o " + out.string());
  CHECK(r.code == 1);
  CHECK(read_file(out) == before);
  CHECK(files_besides(dir.path, out) == 2);  // the log and the capture: no temporary file left
  r = run_command(PERFSIM_EXE, "series " + cap.string() + counter + " -o " + dir.path.string());
  CHECK(r.code == 2);
}

TEST_CASE("perfsim series --local-time: an imported log's times in its own zone, stored as UTC") {
  perfsim::testing::TempDir dir("perfsim-perfmon46");
  const fs::path cap = imported_typeperf(dir.path);
  perfsim::testing::CommandResult r;
  const std::string counter = " -c '\\Memory\\Available MBytes'";
  r = run_command(PERFSIM_EXE, "series " + cap.string() + counter);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"(PDH-CSV 4.0) (Coordinated Universal Time)(0)\"") == 0);
  CHECK(r.out.find("\"11/28/2026 09:00:00.000\",\"2048\"") != std::string::npos);
  r = run_command(PERFSIM_EXE, "series " + cap.string() + counter + " --local-time");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\"") == 0);
  CHECK(r.out.find("\"11/28/2026 10:00:00.000\",\"2048\"") != std::string::npos);
  r = run_command(PERFSIM_EXE, "series " + cap.string() + counter + " --local-time --json");
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)["rows"][0]["time"] == "2026-11-28T10:00:00.000+01:00");
  // A capture that holds no zone: said, not guessed.
  const fs::path synth = dir.path / "synth.perfcap";
  REQUIRE(run_command(PERFSIM_EXE, "synth -p 2016 --duration 1m --interval 15 -o " + synth.string()).code == 0);
  r = run_command(PERFSIM_EXE, "series " + synth.string() + counter + " --local-time");
  CHECK(r.code == 1);
  CHECK(r.err.find("holds no time zone") != std::string::npos);
}

namespace {

// A `lodctr /s` backup as Windows writes it: UTF-16LE without a BOM, CR LF, English and German.
std::string german_backup() {
  const std::string text =
      "\r\n[Perflib]\r\nBase Index=1847\r\nLast Counter=1846\r\nLast Help=1847\r\n"
      "\r\n[PerfStrings_009]\r\n1=1847\r\n2=System\r\n4=Memory\r\n6=% Processor Time\r\n"
      "44=Processor Queue Length\r\n238=Processor\r\n1382=Available MBytes\r\n"
      "\r\n[PerfStrings_007]\r\n1=1847\r\n2=System\r\n4=Speicher\r\n6=Prozessorzeit (%)\r\n"
      "44=Prozessor-Warteschlangenl\xC3\xA4nge\r\n238=Prozessor\r\n1382=Verf\xC3\xBCgbare MB\r\n";
  return utf16(text, false).substr(2);  // no BOM
}

}  // namespace

TEST_CASE("perfsim import --perfmon --names: a German log maps to the profile's objects (Processor 238)") {
  perfsim::testing::TempDir dir("perfsim-perfmon46");
  const fs::path csv = dir.path / "de.csv";
  const std::string log =
      "\"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)\",\"\\\\DE01\\Prozessor(_Total)\\Prozessorzeit (%)\","
      "\"\\\\DE01\\System\\Prozessor-Warteschlangenl\xC3\xA4nge\",\"\\\\DE01\\Speicher\\Verf\xC3\xBCgbare MB\","
      "\"\\\\DE01\\MeineApp\\Z\xC3\xA4hler\"\r\n"
      "\"11/28/2026 10:00:00.000\",\" \",\"1.000000\",\"2048.000000\",\"7.000000\"\r\n"
      "\"11/28/2026 10:00:15.000\",\"12.500000\",\"2.000000\",\"2040.000000\",\"8.000000\"\r\n"
      "\"11/28/2026 10:00:30.000\",\"37.750000\",\"0.000000\",\"2001.000000\",\"9.000000\"\r\n"
      "\"11/28/2026 10:00:45.000\",\"99.000000\",\"5.000000\",\"1999.000000\",\"10.000000\"\r\n";
  write_file(csv, utf16(log, false));
  const fs::path backup = dir.path / "names.ini";
  write_file(backup, german_backup());
  const fs::path cap = dir.path / "de01.perfcap";
  // Without the backup every counter is a custom one, as before.
  auto r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + " --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)["custom"].size() == 4);
  r = run_command(PERFSIM_EXE, "import --perfmon " + csv.string() + " -o " + cap.string() + " --names " +
                                   backup.string() + " --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)["custom"] == json({"\\MeineApp\\Z\xC3\xA4hler"}));

  const json got =
      collect(cap, "127.0.0.212", 4,
              {"Processor(_Total)\\% Processor Time", "System\\Processor Queue Length", "Memory\\Available MBytes"});
  CHECK(got["indices"]["Processor(_Total)\\% Processor Time"][0] == 238);
  const json cpu = got["values"]["Processor(_Total)\\% Processor Time"];
  REQUIRE(cpu.size() == 3);
  CHECK(cpu[0].get<double>() == Approx(12.5).margin(0.01));
  CHECK(cpu[1].get<double>() == Approx(37.75).margin(0.01));
  CHECK(cpu[2].get<double>() == Approx(99).margin(0.01));
  CHECK(got["values"]["System\\Processor Queue Length"] == json({2, 0, 5}));
  CHECK(got["values"]["Memory\\Available MBytes"] == json({2040, 2001, 1999}));
}
