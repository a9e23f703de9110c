// lodctr/unlodctr on a capture: indices, every language's tables, Services and Perflib values,
// and errors that change nothing.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "helpers.h"
#include "captures/reader.h"
#include "lodctr/install.h"
#include "tests/common/test_capture.h"

namespace perfsim::lodctr {
namespace {

using namespace test;

struct Loaded {
  CounterIni ini;
  Symbols symbols;
};

Loaded load(const std::string& path) {
  Loaded l;
  const Status s = load_ini(path, l.ini, l.symbols);
  INFO(path << ": " << s.ToString());
  REQUIRE(s.ok());
  return l;
}

const std::string kDevKey = "SYSTEM\\CurrentControlSet\\Services\\DevDriver\\Performance";

TEST_CASE("seed example: names at even indices after Last Counter, help at odd, in 009 and 00C") {
  captures::Capture cap = host();
  const uint32_t last = dword(cap, kPerflibKey, "Last Counter");
  const uint32_t last_help = dword(cap, kPerflibKey, "Last Help");
  const Loaded l = load(data("devdef.ini"));
  InstallReport rep;
  REQUIRE(install(cap, l.ini, l.symbols, &rep).ok());
  const uint32_t fc = last + 2, fh = last_help + 2;
  CHECK(rep.range.first_counter == fc);
  CHECK(rep.languages == std::vector<std::string>{"009", "00C"});
  CHECK(rep.entries == 12);

  for (auto get : {served, registry_table}) {
    const perfdata::NameTable c9 = get(cap, "009", false), h9 = get(cap, "009", true);
    const perfdata::NameTable cf = get(cap, "00C", false), hf = get(cap, "00C", true);
    CHECK(text_at(c9, fc) == "Device");
    CHECK(text_at(c9, fc + 2) == "Counter A");
    CHECK(text_at(c9, fc + 4) == "Counter B");
    CHECK(text_at(h9, fh) == "Device statistics");
    CHECK(text_at(h9, fh + 4) == "Rate of device B");
    CHECK(text_at(cf, fc) == "Periphérique");
    CHECK(text_at(cf, fc + 2) == "Compteur A");
    CHECK(text_at(hf, fh + 4) == "Débit du périphérique B");
    CHECK(c9.declared_last() == fc + 4);
    CHECK(cf.declared_last() == fc + 4);
    CHECK(c9.highest_index() == fc + 4);
  }
  CHECK(dword(cap, kDevKey, "First Counter") == fc);
  CHECK(dword(cap, kDevKey, "Last Counter") == fc + 4);
  CHECK(dword(cap, kDevKey, "First Help") == fh);
  CHECK(dword(cap, kDevKey, "Last Help") == fh + 4);
  CHECK(dword(cap, kPerflibKey, "Last Counter") == fc + 4);
  CHECK(dword(cap, kPerflibKey, "Last Help") == fh + 4);
  CHECK(find_value(cap, kDevKey, "Object List") == nullptr);  // no [objects] section
}

TEST_CASE("the messy twin installs exactly what the clean file does (symbol file DEVDEF.H on disk as devdef.h)") {
  captures::Capture a = host(), b = host();
  const Loaded clean = load(data("devdef.ini")), messy = load(data("messy.ini"));
  REQUIRE(install(a, clean.ini, clean.symbols).ok());
  InstallReport rep;
  REQUIRE(install(b, messy.ini, messy.symbols, &rep).ok());
  CHECK(rep.skipped_languages == std::vector<std::string>{"000"});  // the host has no neutral table
  CHECK(same_names_and_registry(a, b));
}

TEST_CASE("unlodctr removes the texts and values and lowers Perflib's Last Counter/Help") {
  const captures::Capture before = host();
  captures::Capture cap = before;
  const Loaded l = load(data("devdef.ini"));
  REQUIRE(install(cap, l.ini, l.symbols).ok());
  InstallReport rep;
  REQUIRE(uninstall(cap, "devdriver", &rep).ok());  // driver names are case-insensitive
  CHECK(rep.entries == 12);
  CHECK(rep.perflib_last_counter == dword(before, kPerflibKey, "Last Counter"));
  CHECK(find_value(cap, kDevKey, "First Counter") == nullptr);
  CHECK(find_value(cap, kDevKey, "Last Help") == nullptr);
  CHECK(dword(cap, kPerflibKey, "Last Counter") == dword(before, kPerflibKey, "Last Counter"));
  CHECK(dword(cap, kPerflibKey, "Last Help") == dword(before, kPerflibKey, "Last Help"));
  for (size_t i = 0; i < before.names.size(); ++i) {
    CHECK(cap.names[i].counter == before.names[i].counter);  // byte for byte, "1" entry included
    CHECK(cap.names[i].help == before.names[i].help);
  }
}

void check_below_another_keeps_last_counter(const Loaded& dev, const Loaded& top, const std::string& top_driver,
                                            const std::string& top_object) {
  captures::Capture cap = host();
  REQUIRE(install(cap, dev.ini, dev.symbols).ok());
  InstallReport g;
  REQUIRE(install(cap, top.ini, top.symbols, &g).ok());
  REQUIRE(uninstall(cap, "DevDriver").ok());
  CHECK(dword(cap, kPerflibKey, "Last Counter") == g.range.last_counter);
  CHECK(dword(cap, kPerflibKey, "Last Help") == g.range.last_help);
  CHECK(text_at(served(cap, "009", false), g.range.first_counter) == top_object);
  // And removing the top one now lowers past the gap DevDriver left.
  REQUIRE(uninstall(cap, top_driver).ok());
  CHECK(dword(cap, kPerflibKey, "Last Counter") == dword(host(), kPerflibKey, "Last Counter"));
}

TEST_CASE("unlodctr of a driver below another keeps Perflib's Last Counter") {
  check_below_another_keeps_last_counter(load(data("devdef.ini")), load(data("wavegen.ini")), "WAVEGEN", "Wave Source");
}

TEST_CASE("unlodctr of a driver below the real PerfGen keeps Perflib's Last Counter", "[fixtures]") {
  check_below_another_keeps_last_counter(load(data("devdef.ini")), load(fixture("Perfgen.Ini")), "PERFGEN",
                                         "Signal Generator");
}

// Two providers installed one after the other: ranges adjacent, texts at their symbols' offsets,
// [objects] as the Performance key's Object List (none for the second).
struct TwoProviders {
  Loaded first, second;
  std::string first_driver;
  std::vector<std::pair<uint32_t, std::string>> first_counters, second_counters;  // offset, name
  std::pair<uint32_t, std::string> first_help;
  uint32_t second_last_offset;
};

void check_two_providers(const TwoProviders& t) {
  captures::Capture cap = host();
  InstallReport g, m;
  REQUIRE(install(cap, t.first.ini, t.first.symbols, &g).ok());
  REQUIRE(install(cap, t.second.ini, t.second.symbols, &m).ok());
  CHECK(m.range.first_counter == g.range.last_counter + 2);
  CHECK(m.range.first_help == g.range.last_help + 2);
  const perfdata::NameTable c = served(cap, "009", false), h = served(cap, "009", true);
  for (const auto& [off, name] : t.first_counters) CHECK(text_at(c, g.range.first_counter + off) == name);
  CHECK(text_at(h, g.range.first_help + t.first_help.first) == t.first_help.second);
  for (const auto& [off, name] : t.second_counters) CHECK(text_at(c, m.range.first_counter + off) == name);
  CHECK(m.range.last_counter == m.range.first_counter + t.second_last_offset);
  const captures::RegistryValue* list = find_value(cap, performance_key(t.first_driver), "Object List");
  REQUIRE(list != nullptr);
  CHECK(utf16_to_utf8(load_utf16le(list->data.data(), list->data.size() / 2 - 1)) ==
        std::to_string(g.range.first_counter));
  CHECK(g.languages == std::vector<std::string>{"009"});
}

TEST_CASE("the project's WaveGen and AppStat INIs install with their texts") {
  check_two_providers({load(data("wavegen.ini")),
                       load(data("appstat.ini")),
                       "WAVEGEN",
                       {{0, "Wave Source"}, {8, "Fixed Level"}},
                       {{0, "Application Stats"}, {4, "Requests/Sec"}, {10, "Queue Length"}},
                       {2, "Rises linearly with the system time and starts again at zero."},
                       10});
}

TEST_CASE("the real PerfGen and AppMem INIs install with their texts", "[fixtures]") {
  check_two_providers({load(fixture("Perfgen.Ini")),
                       load(fixture("AppMem.Ini")),
                       "PERFGEN",
                       {{0, "Signal Generator"}, {8, "Constant Value"}},
                       {{0, "Application Memory"}, {6, "Memory Allocs/Sec"}, {14, "Memory Frees/Sec"}},
                       {2, "Value varies as a sine function of the system time."},
                       14});
}

Loaded parsed(const std::string& ini, const std::string& symbols) {
  Loaded l;
  REQUIRE(parse_ini(Bytes(ini.begin(), ini.end()), l.ini).ok());
  REQUIRE(parse_symbols(Bytes(symbols.begin(), symbols.end()), l.symbols).ok());
  return l;
}

const char* const kHead = "[info]\ndrivername=Bad\nsymbolfile=bad.h\n[languages]\n009=English\n[text]\n";

void check_refused(const captures::Capture& before, captures::Capture& cap, const Status& s, const std::string& says) {
  INFO(s.ToString());
  CHECK(!s.ok());
  CHECK(s.message().find(says) != std::string::npos);
  CHECK(same_names_and_registry(before, cap));
}

// Microsoft, "Adding Counter Names and Descriptions to the Registry": "If you specify the primary
// identifier only, lodctr uses 804 (simplified Chinese) and 416 (Portuguese)" (Vista on).
TEST_CASE("an INI's Chinese primary id installs into Perflib key 804, a 4-digit 0416 into 416") {
  captures::Capture cap = host();
  const uint32_t fc = dword(cap, kPerflibKey, "Last Counter") + 2;
  for (const char* lang : {"804", "416"}) {
    captures::NameTable t = cap.names.at(0);
    t.lang = lang;
    cap.names.push_back(t);
    cap.registry.push_back({std::string(kPerflibKey) + "\\" + lang, "Counter", 7, t.counter});
    cap.registry.push_back({std::string(kPerflibKey) + "\\" + lang, "Help", 7, t.help});
  }
  const Loaded l = parsed(
      "[info]\ndrivername=Dev\nsymbolfile=dev.h\n[languages]\n009=English\n004=Chinese\n0416=Portuguese\n[text]\n"
      "OBJ_009_NAME=Device\nOBJ_004_NAME=设备\nOBJ_0416_NAME=Dispositivo\n",
      "#define OBJ 0\n");
  InstallReport rep;
  REQUIRE(install(cap, l.ini, l.symbols, &rep).ok());
  CHECK(rep.languages == std::vector<std::string>{"009", "804", "416"});
  CHECK(rep.skipped_languages.empty());
  for (auto get : {served, registry_table}) {
    CHECK(text_at(get(cap, "804", false), fc) == "设备");
    CHECK(text_at(get(cap, "416", false), fc) == "Dispositivo");
    CHECK(text_at(get(cap, "009", false), fc) == "Device");
  }
}

TEST_CASE("lodctr errors change nothing: odd offset, undefined symbol, unlisted language, loaded twice") {
  const captures::Capture before = host();
  captures::Capture cap = before;
  const std::string syms = "#define OBJ 0\n#define ODD 3\n#define CTR 2\n";
  Loaded l = parsed(std::string(kHead) + "OBJ_009_NAME=Obj\nODD_009_NAME=Odd\n", syms);
  check_refused(before, cap, install(cap, l.ini, l.symbols), "odd offset 3");
  l = parsed(std::string(kHead) + "OBJ_009_NAME=Obj\nNOPE_009_NAME=Nope\n", syms);
  check_refused(before, cap, install(cap, l.ini, l.symbols), "NOPE is not defined");
  l = parsed(std::string(kHead) + "OBJ_009_NAME=Obj\nCTR_007_NAME=Ctr\n", syms);
  check_refused(before, cap, install(cap, l.ini, l.symbols), "language 007 is not in [languages]");
  // [objects] symbols are checked too.
  l = parsed("[objects]\nGONE_009_NAME=x\n" + std::string(kHead) + "OBJ_009_NAME=Obj\n", syms);
  check_refused(before, cap, install(cap, l.ini, l.symbols), "GONE is not defined");

  l = parsed(std::string(kHead) + "OBJ_009_NAME=Obj\nCTR_009_NAME=Ctr\n", syms);
  REQUIRE(install(cap, l.ini, l.symbols).ok());
  const captures::Capture installed = cap;
  check_refused(installed, cap, install(cap, l.ini, l.symbols), "already loaded");
}

TEST_CASE("unlodctr of a driver that is not loaded changes nothing") {
  const captures::Capture before = host();
  captures::Capture cap = before;
  const Status s = uninstall(cap, "NotThere");
  CHECK(s.code() == Status::Code::kNotFound);
  check_refused(before, cap, s, "not loaded");
}

TEST_CASE("save_capture replaces the file atomically and the result reads back") {
  const std::string dir = scratch("save");
  captures::Capture cap = host();
  const Loaded l = load(data("devdef.ini"));
  REQUIRE(install(cap, l.ini, l.symbols).ok());
  REQUIRE(save_capture(dir + "/h.perfcap", cap).ok());
  captures::Capture back;
  REQUIRE(captures::read_capture(dir + "/h.perfcap", back).ok());
  CHECK(same_names_and_registry(cap, back));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 1);  // no temporary left behind
}

// Before, a lodctr killed mid-write left CAPTURE.tmp.PID next to the intact capture for good.
TEST_CASE("saving a capture removes temporaries of killed runs, not those of live ones") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("perfsim-lodctr-tmp-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string cap = (dir / "c.perfcap").string();
  const pid_t dead = fork();  // a PID that was a process and is no longer one
  if (dead == 0) _exit(0);
  REQUIRE(dead > 0);
  REQUIRE(waitpid(dead, nullptr, 0) == dead);
  const std::string stale = cap + ".tmp." + std::to_string(dead);
  const std::string live = cap + ".tmp." + std::to_string(getppid());                      // our parent: alive
  const std::string other = (dir / "other.perfcap.tmp.").string() + std::to_string(dead);  // another capture's
  for (const std::string& p : {stale, live, other}) std::ofstream(p) << "half-written";
  REQUIRE(save_capture(cap, perfsim::testing::test_capture()).ok());
  CHECK(fs::exists(cap));
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace perfsim::lodctr
