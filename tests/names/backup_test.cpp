// names/: lodctr /s backups in every encoding people and Windows write, raw .dat tables, the
// export round trip, placement by English name, and diff.
#include <catch2/catch.hpp>

#include "core/text.h"
#include "core/utf16.h"
#include "names/backup.h"
#include "names/diff.h"
#include "names/place.h"
#include "perfdata/names.h"

namespace perfsim::names {
namespace {

// As BackupPerfRegistryToFile lays a file out (names/README.md), with German texts.
const char kBackup[] =
    "\r\n\r\n[Perflib]\r\nBase Index=1847\r\nLast Counter=5004\r\nLast Help=5005"
    "\r\n\r\n[PERF_WebService]\r\nFirst Counter=5000\r\nFirst Help=5001\r\nLast Counter=5004\r\nLast Help=5005"
    "\r\n\r\n[PerfStrings_009]\r\n1=5004\r\n2=System\r\n3=The System object.\r\n238=Processor"
    "\r\n5000=Web Service\r\n5002=Total Method Requests/sec\r\n5004=Current Connections"
    "\r\n\r\n[PerfStrings_007]\r\n1=5004\r\n2=System\r\n3=Das Objekt System, Größe egal.\r\n238=Prozessor"
    "\r\n5000=Webdienst\r\n5002=Methodenanforderungen gesamt/s\r\n";

Bytes utf16le(std::string_view utf8, bool bom) {
  Bytes b;
  if (bom) b = {0xFF, 0xFE};
  put_utf16le(b, utf8_to_utf16(utf8));
  return b;
}

Bytes latin1(std::string_view utf8) {
  Bytes b;
  for (char16_t c : utf8_to_utf16(utf8)) {
    REQUIRE(c < 0x100);
    b.push_back(uint8_t(c));
  }
  return b;
}

void check_german(const NameSet& s) {
  REQUIRE(s.languages.size() == 2);
  CHECK(s.perflib_value("Last Counter") == 5004u);
  CHECK(s.perflib_value("base index") == 1847u);
  REQUIRE(s.service("WEBSERVICE"));
  CHECK(value_of(s.service("WebService")->values, "First Counter") == 5000u);
  const Strings* de = s.find("007");
  REQUIRE(de);
  CHECK(de->text.at(3) == "Das Objekt System, Größe egal.");
  CHECK(de->text.at(238) == "Prozessor");
  CHECK(de->text.at(5002) == "Methodenanforderungen gesamt/s");
  CHECK(s.find("009")->text.at(1) == "5004");
}

TEST_CASE("a lodctr /s backup reads the same in every accepted encoding", "[names]") {
  const std::string text = kBackup;
  Bytes utf8_bom{0xEF, 0xBB, 0xBF};
  utf8_bom.insert(utf8_bom.end(), text.begin(), text.end());
  const std::vector<std::pair<std::string, Bytes>> files = {
      {"UTF-16LE with BOM", utf16le(text, true)},
      {"UTF-16LE without BOM (BackupPerfRegistryToFile)", utf16le(text, false)},
      {"UTF-8 with BOM", utf8_bom},
      {"UTF-8", Bytes(text.begin(), text.end())},
      {"Windows-1252 (re-saved in the ANSI code page; its letters are Latin-1's)", latin1(text)},
  };
  for (const auto& [what, bytes] : files) {
    INFO(what);
    NameSet s;
    std::vector<std::string> warnings;
    const Status st = parse_backup(bytes, s, &warnings);
    INFO(st.ToString());
    REQUIRE(st.ok());
    CHECK(warnings.empty());
    check_german(s);
  }
}

TEST_CASE("an ANSI backup reads as Windows-1252: curly quotes, dashes, the euro sign, undefined bytes", "[names]") {
  // A French help text as Notepad's "ANSI" writes it on a Western Windows: 0x92 is U+2019, 0x85
  // U+2026, 0x96 U+2013, 0x80 U+20AC, 0xE9 U+00E9; 0x81 is undefined in 1252 and stays U+0081.
  const std::string head = "[PerfStrings_00C]\r\n238=Processeur\r\n239=";
  Bytes b(head.begin(), head.end());
  for (uint8_t c : {0x4C, 0x92, 0x75, 0x74, 0x69, 0x6C, 0x69, 0x73, 0x61, 0x74, 0x69, 0x6F,
                    0x6E, 0x20, 0x96, 0x20, 0x80, 0x85, 0x20, 0xE9, 0x81, 0x0D, 0x0A})
    b.push_back(c);
  TextEncoding used{};
  decode_text(b, &used);
  CHECK(used == TextEncoding::kWindows1252);
  NameSet s;
  const Status st = parse_backup(b, s);
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(s.find("00C")->text.at(238) == "Processeur");
  CHECK(s.find("00C")->text.at(239) == "L\u2019utilisation \u2013 \u20AC\u2026 \u00E9\u0081");
}

TEST_CASE("Chinese and Arabic texts survive UTF-16 and UTF-8 backups", "[names]") {
  const std::string text = "[PerfStrings_804]\r\n238=处理器\r\n[PerfStrings_001]\r\n238=المعالج\r\n";
  for (const Bytes& b : {utf16le(text, true), utf16le(text, false), Bytes(text.begin(), text.end())}) {
    NameSet s;
    REQUIRE(parse_backup(b, s).ok());
    CHECK(s.find("804")->text.at(238) == "处理器");
    CHECK(s.find("001")->text.at(238) == "المعالج");
  }
}

TEST_CASE("write_backup is UTF-16LE with a BOM and round-trips through parse_backup", "[names]") {
  NameSet s;
  REQUIRE(parse_backup(Bytes(std::begin(kBackup), std::end(kBackup) - 1), s).ok());
  const Bytes out = write_backup(s);
  REQUIRE(out.size() > 2);
  CHECK(out[0] == 0xFF);
  CHECK(out[1] == 0xFE);
  const std::string text = utf16_to_utf8(load_utf16le(out.data() + 2, (out.size() - 2) / 2));
  CHECK(text.rfind("\r\n\r\n[Perflib]\r\nBase Index=1847\r\n", 0) == 0);
  CHECK(text.find("\r\n\r\n[PerfStrings_007]\r\n1=5004\r\n2=System\r\n") != std::string::npos);
  NameSet back;
  REQUIRE(parse_backup(out, back).ok());
  CHECK(back.perflib == s.perflib);
  REQUIRE(back.services.size() == 1);
  CHECK(back.services[0].values == s.services[0].values);
  REQUIRE(back.languages.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(back.languages[i].lang == s.languages[i].lang);
    CHECK(back.languages[i].text == s.languages[i].text);
  }
  CHECK(write_backup(back) == out);
}

TEST_CASE("bad backups are refused with the line and what to fix", "[names]") {
  NameSet s;
  Status st = parse_backup(Bytes{'[', 'P', 'e', 'r', 'f', 'l', 'i', 'b', ']', '\n'}, s);
  CHECK_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("no [PerfStrings_LLL]"));
  // A line that is no INDEX=TEXT is skipped and counted, as Windows' loader reads no string from it.
  const std::string bad_index = "[PerfStrings_009]\r\n2=System\r\nx4=Memory\r\n";
  std::vector<std::string> w;
  REQUIRE(parse_backup(Bytes(bad_index.begin(), bad_index.end()), s, &w).ok());
  CHECK(s.find("009")->text.size() == 1);
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("1 line skipped (first at line 3)") && Catch::Contains("not INDEX=TEXT"));
  const std::string bad_value = "[Perflib]\r\nLast Counter=lots\r\n[PerfStrings_009]\r\n2=System\r\n";
  st = parse_backup(Bytes(bad_value.begin(), bad_value.end()), s);
  CHECK_THAT(st.message(), Catch::Contains("line 2") && Catch::Contains("KEY=NUMBER"));
  const std::string twice = "[PerfStrings_009]\r\n2=System\r\n[perfstrings_009]\r\n";
  st = parse_backup(Bytes(twice.begin(), twice.end()), s);
  CHECK_THAT(st.message(), Catch::Contains("line 3") && Catch::Contains("twice"));
}

// Issue 54: names without a bound went into every table a host serves (a 50 MB counter name came
// back as a 100 MB Counter table). A name past PDH_MAX_COUNTER_NAME, a help text past
// perfsim's 16,384 characters (perfdata/limits.h), is refused naming its line.
TEST_CASE("a backup's name past 1,024 characters or help text past 16,384 is refused naming its line", "[names]") {
  const auto backup = [](const std::string& name, const std::string& help) {
    const std::string text = "[PerfStrings_009]\r\n1=4\r\n2=" + name + "\r\n3=" + help + "\r\n4=Other\r\n";
    return utf16le(text, true);
  };
  NameSet s;
  REQUIRE(parse_backup(backup(std::string(1024, 'n'), std::string(16384, 'h')), s).ok());
  CHECK(s.find("009")->text.at(2).size() == 1024);
  Status st = parse_backup(backup(std::string(50'000'000, 'n'), "help"), s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().size() < 400);
  CHECK_THAT(st.message(), Catch::StartsWith("line 3: the text of index 2, 'nnn") &&
                               Catch::Contains("(50000000 characters) is longer than the 1024 characters of "
                                               "PDH_MAX_COUNTER_NAME"));
  st = parse_backup(backup("System", std::string(16385, 'h')), s);
  CHECK_THAT(st.message(), Catch::StartsWith("line 4: the text of index 3, 'hhh") &&
                               Catch::Contains("(16385 characters) is longer than the 16384 characters"));
  // Characters as Windows counts them: 1,024 of U+1F600 are 2,048 UTF-16 code units.
  std::string smiles;
  for (int i = 0; i < 1024; ++i) smiles += "\xF0\x9F\x98\x80";
  CHECK_THAT(parse_backup(backup(smiles, "help"), s).message(), Catch::Contains("(2048 characters)"));
  // Raw tables too, naming the entry's offset in the file.
  const Bytes c = perfdata::build_names(perfdata::make_names({{1, "4"}, {2, "System"}, {4, std::string(1025, 'n')}}));
  const Bytes h = perfdata::build_names(perfdata::make_names({{3, "Help"}}));
  Strings raw;
  st = parse_dat(c, h, "009", raw);
  CHECK_THAT(st.message(), Catch::StartsWith("perfc009.dat: at offset 30: the text of index 4, 'nnn") &&
                               Catch::Contains("(1025 characters)"));
}

TEST_CASE("a repeated index keeps its first text and is warned about and comments are skipped", "[names]") {
  const std::string text = "; saved by hand\r\n[PerfStrings_009]\r\n2=System\r\n2=Other\r\n[Extra]\r\nx=1\r\n";
  NameSet s;
  std::vector<std::string> w;
  REQUIRE(parse_backup(Bytes(text.begin(), text.end()), s, &w).ok());
  CHECK(s.find("009")->text.at(2) == "System");
  REQUIRE(w.size() == 2);
  CHECK_THAT(w[0], Catch::Contains("line 4") && Catch::Contains("repeated"));
  CHECK_THAT(w[1], Catch::Contains("[Extra]"));
}

TEST_CASE("raw perfc/perfh .dat tables make one language", "[names]") {
  const Bytes c = perfdata::build_names(perfdata::make_names({{1, "238"}, {2, "System"}, {238, "Prozessor"}}));
  const Bytes h = perfdata::build_names(perfdata::make_names({{3, "Hilfe System"}, {239, "Hilfe Prozessor"}}));
  Strings s;
  REQUIRE(parse_dat(c, h, "007", s).ok());
  CHECK(s.text.size() == 5);
  CHECK(s.text.at(239) == "Hilfe Prozessor");
  CHECK(counter_table(s) == c);
  CHECK(help_table(s) == h);
  CHECK_FALSE(parse_dat(Bytes{1, 0, 0}, h, "007", s).ok());
}

TEST_CASE("place keeps an index that already has the name, prefers the provider's range, reports the missing",
          "[names]") {
  NameSet s;
  s.languages.push_back({"009",
                         {{2, "System"},
                          {238, "Processor"},
                          {5000, "Web Service"},
                          {6000, "Web Service"},
                          {7000, "Requests"},
                          {7100, "requests"}}});
  s.services.push_back({"Web", {{"First Counter", 6000}, {"Last Counter", 6100}}});
  std::map<uint32_t, uint32_t> m;
  REQUIRE(place(s,
                {{238, "Processor", "PerfOS", ""},
                 {1848, "Web Service", "Web", ""},
                 {1850, "Requests", "Other", "Web Service"}},
                m)
              .ok());
  CHECK(m.at(238) == 238u);
  CHECK(m.at(1848) == 6000u);  // inside [PERF_Web]
  CHECK(m.at(1850) == 7000u);  // the lowest of the two (case ignored)
  const Status st = place(s, {{4, "Memory", "PerfOS", ""}, {1852, "Bytes/sec", "Web", "Web Service"}}, m);
  CHECK_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("lacks 2") && Catch::Contains("object \"Memory\"") &&
                               Catch::Contains("counter \"Bytes/sec\" of \"Web Service\""));
  const Status twice = place(s, {{238, "Processor", "PerfOS", ""}, {1848, "processor", "Custom", ""}}, m);
  CHECK_THAT(twice.message(), Catch::Contains("both take index 238"));
  NameSet no_english;
  no_english.languages.push_back({"007", {{2, "System"}}});
  CHECK_THAT(place(no_english, {{2, "System", "PerfOS", ""}}, m).message(), Catch::Contains("[PerfStrings_009]"));
}

TEST_CASE("diff lists value, service, language and string differences in order", "[names]") {
  NameSet a, b;
  a.perflib = {{"Last Counter", 10}};
  b.perflib = {{"Last Counter", 12}, {"Base Index", 1847}};
  a.services.push_back({"Svc", {{"First Counter", 8}}});
  a.languages.push_back({"009", {{2, "System"}, {4, "Memory"}, {6, "% Processor Time"}}});
  b.languages.push_back({"009", {{2, "System"}, {4, "Speicher"}, {8, "Extra"}}});
  b.languages.push_back({"007", {{2, "System"}}});
  std::vector<std::string> lines;
  for (const Difference& d : diff(a, b)) lines.push_back(to_line(d));
  CHECK(lines == std::vector<std::string>{
                     "[Perflib] Last Counter: \"10\" -> \"12\"",
                     "[Perflib] Base Index: only in B: \"1847\"",
                     "[PERF_Svc]: only in A: \"present\"",
                     "[PerfStrings_009] 4: \"Memory\" -> \"Speicher\"",
                     "[PerfStrings_009] 6: only in A: \"% Processor Time\"",
                     "[PerfStrings_009] 8: only in B: \"Extra\"",
                     "[PerfStrings_007]: only in B: \"1 strings\"",
                 });
  CHECK(diff(a, a).empty());
}

}  // namespace
}  // namespace perfsim::names
