// INI and symbol file parsing with LodCtr's tolerance (fixtures/lodctr/README.md).
#include <catch2/catch.hpp>

#include "helpers.h"
#include "lodctr/ini.h"

namespace perfsim::lodctr {
namespace {

using namespace test;

Bytes ascii(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes utf16_with_bom(const Bytes& utf8) {
  Bytes out{0xFF, 0xFE};
  put_utf16le(out, utf8_to_utf16(std::string(utf8.begin(), utf8.end())));
  return out;
}

TEST_CASE("the seed INI parses: driver, symbol file, languages, texts") {
  CounterIni ini;
  REQUIRE(parse_ini(read_file(data("devdef.ini")), ini).ok());
  CHECK(ini.driver == "DevDriver");
  CHECK(ini.symbol_file == "devdef.h");
  CHECK(ini.languages == std::vector<std::string>{"009", "00C"});
  REQUIRE(ini.texts.size() == 12);
  CHECK(ini.texts[0].symbol == "OBJECT_1");
  CHECK(ini.texts[0].lang == "009");
  CHECK(!ini.texts[0].help);
  CHECK(ini.texts[0].text == "Device");
  CHECK(ini.texts[2].text == "Periphérique");  // UTF-8 kept
}

TEST_CASE("symbol files: #define NAME offset, other lines ignored, names case-insensitive") {
  Symbols s;
  REQUIRE(parse_symbols(read_file(data("devdef.h")), s).ok());
  uint32_t off = 99;
  CHECK((find_symbol(s, "OBJECT_1", off) && off == 0));
  CHECK((find_symbol(s, "device_counter_1", off) && off == 2));
  CHECK((find_symbol(s, "DEVICE_COUNTER_2", off) && off == 4));
  CHECK(!find_symbol(s, "DEVICE_COUNTER_3", off));
  REQUIRE(
      parse_symbols(
          ascii("#  define A 0x10 // hex\n#define B (6)\n#define STR \"x\"\nint x;\n#define\tC\t8\x1a#define D 10\n"),
          s)
          .ok());
  CHECK((find_symbol(s, "A", off) && off == 16));
  CHECK((find_symbol(s, "B", off) && off == 6));
  CHECK((find_symbol(s, "C", off) && off == 8));
  CHECK(!find_symbol(s, "STR", off));
  CHECK(!find_symbol(s, "D", off));  // after the DOS end-of-file byte
}

TEST_CASE("a symbol value that is not a 32-bit offset is not a symbol, never a truncated one") {
  Symbols s;
  REQUIRE(
      parse_symbols(ascii("#define BIG 0x1FFFFFFFF\n#define NEG -1\n#define JUNK 12abc\n#define OK 0X1e\n"), s).ok());
  uint32_t off = 99;
  CHECK(!find_symbol(s, "BIG", off));  // stoul kept its low 32 bits: 0xFFFFFFFF
  CHECK(!find_symbol(s, "NEG", off));
  CHECK(!find_symbol(s, "JUNK", off));
  CHECK((find_symbol(s, "OK", off) && off == 30));
}

TEST_CASE("a messy INI reads like the clean one: comments, case, blanks, quotes, order, 000, EOF byte, CRLF") {
  CounterIni clean, messy;
  REQUIRE(parse_ini(read_file(data("devdef.ini")), clean).ok());
  const Status s = parse_ini(read_file(data("messy.ini")), messy);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(messy.driver == "DevDriver");
  CHECK(messy.symbol_file == "DEVDEF.H");
  CHECK(messy.languages == std::vector<std::string>{"000", "009", "00c"});
  REQUIRE(messy.texts.size() == clean.texts.size());  // the line after 0x1A is not read
  for (const IniText& t : messy.texts) {
    INFO(t.symbol << "_" << t.lang);
    bool found = false;
    for (const IniText& c : clean.texts)
      if (iequals(c.symbol, t.symbol) && iequals(c.lang, t.lang) && c.help == t.help) found = c.text == t.text;
    CHECK(found);
  }
}

TEST_CASE("UTF-16 files with a BOM read like their UTF-8 text") {
  const Bytes utf8 = read_file(data("messy.ini"));
  CounterIni a, b;
  REQUIRE(parse_ini(utf8, a).ok());
  REQUIRE(parse_ini(utf16_with_bom(utf8), b).ok());
  REQUIRE(a.texts.size() == b.texts.size());
  for (size_t i = 0; i < a.texts.size(); ++i) CHECK(a.texts[i].text == b.texts[i].text);
  CHECK(b.texts[1].text == "Débit du périphérique B");
  Symbols s;
  REQUIRE(parse_symbols(utf16_with_bom(read_file(data("devdef.h"))), s).ok());
  CHECK(s.size() == 3);
}

TEST_CASE("UTF-16LE files without a BOM (as Windows tools write them) read like their UTF-8 text") {
  const Bytes utf8 = read_file(data("messy.ini"));
  const Bytes with_bom = utf16_with_bom(utf8);
  const Bytes no_bom(with_bom.begin() + 2, with_bom.end());
  CounterIni a, b;
  REQUIRE(parse_ini(utf8, a).ok());
  const Status s = parse_ini(no_bom, b);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(a.texts.size() == b.texts.size());
  CHECK(b.texts[1].text == "Débit du périphérique B");
}

// Issue 54: LodCtr puts these texts into the host's name tables; past PDH_MAX_COUNTER_NAME (a name)
// or 16,384 characters (a help text: perfdata/limits.h) the INI is refused naming the line.
TEST_CASE("an INI name past 1,024 characters or help past 16,384 is refused naming its line") {
  const auto ini_text = [](const std::string& name, const std::string& help) {
    return ascii("[info]\ndrivername=D\nsymbolfile=a.h\n[languages]\n009=x\n[text]\nA_009_NAME=" + name +
                 "\nA_009_HELP=" + help + "\n");
  };
  CounterIni ini;
  REQUIRE(parse_ini(ini_text(std::string(1024, 'n'), std::string(16384, 'h')), ini).ok());
  Status st = parse_ini(ini_text(std::string(1025, 'n'), "help"), ini);
  CHECK_THAT(st.message(), Catch::StartsWith("ini line 7: the text of 'A_009_NAME', 'nnn") &&
                               Catch::Contains("(1025 characters) is longer than the 1024 characters of "
                                               "PDH_MAX_COUNTER_NAME"));
  CHECK(st.message().size() < 400);
  st = parse_ini(ini_text("Name", std::string(16385, 'h')), ini);
  CHECK_THAT(st.message(),
             Catch::StartsWith("ini line 8: the text of 'A_009_HELP', 'hhh") && Catch::Contains("(16385 characters)"));
}

TEST_CASE("INI errors say what is missing or malformed") {
  CounterIni ini;
  CHECK(parse_ini(ascii("[languages]\n009=English\n[text]\nA_009_NAME=x\n[info]\nsymbolfile=a.h\n"), ini)
            .message()
            .find("drivername") != std::string::npos);
  CHECK(parse_ini(ascii("[info]\ndrivername=D\n[languages]\n009=x\n[text]\nA_009_NAME=x\n"), ini)
            .message()
            .find("symbolfile") != std::string::npos);
  CHECK(parse_ini(ascii("[info]\ndrivername=D\nsymbolfile=a.h\n[text]\nA_009_NAME=x\n"), ini)
            .message()
            .find("[languages]") != std::string::npos);
  // A key that is no SYMBOL_LANGID_NAME/HELP is skipped, as the lines a help text spills onto are:
  // counted in one warning naming the first, the other keys read.
  REQUIRE(parse_ini(ascii("[info]\ndrivername=D\nsymbolfile=a.h\n[languages]\n009=x\n[text]\nA_009_TITLE=x\n"
                          "A_009_NAME=Name\nA_009_HELP=Help that goes\n   on over a line\n, and another\n"),
                    ini)
              .ok());
  REQUIRE(ini.texts.size() == 2);
  CHECK(ini.texts[1].text == "Help that goes");
  REQUIRE(ini.warnings.size() == 1);
  CHECK_THAT(ini.warnings[0], Catch::Contains("3 lines skipped (first at line 7)"));
  CHECK(parse_ini(ascii("[info]\ndrivername=D\nsymbolfile=a.h\n[languages]\n009=x\n[text]\nA_009_TITLE=x\n"), ini)
            .message()
            .find("[text] holds no names") != std::string::npos);
}

TEST_CASE(
    "the project's WaveGen and AppStat files load: DOS EOF byte, symbol file named in another case, no [objects]") {
  CounterIni ini;
  Symbols syms;
  Status s = load_ini(data("wavegen.ini"), ini, syms);  // names "wavectrs.h"; the file is WaveCtrs.h
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(ini.driver == "WAVEGEN");
  CHECK(ini.objects.size() == 1);
  CHECK(ini.texts.size() == 10);
  uint32_t off = 0;
  CHECK((find_symbol(syms, "FIXED", off) && off == 8));
  s = load_ini(data("appstat.ini"), ini, syms);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(ini.driver == "APPSTAT");
  CHECK(ini.objects.empty());
  REQUIRE(ini.texts.size() == 12);
  CHECK(ini.texts[4].text == "Requests/Sec");  // trailing blanks trimmed
  CHECK(ini.texts[10].text == "Queue Length");
  CHECK((find_symbol(syms, "QUEUE", off) && off == 10));
}

// Microsoft's SDK samples, present only where ../shared/fixtures is (tests/CMakeLists.txt).
TEST_CASE("the real PerfGen and AppMem files load, symbol file found whatever its case", "[fixtures]") {
  CounterIni ini;
  Symbols syms;
  Status s = load_ini(fixture("Perfgen.Ini"), ini, syms);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(ini.driver == "PERFGEN");
  CHECK(ini.objects.size() == 1);
  CHECK(ini.texts.size() == 10);
  uint32_t off = 0;
  CHECK((find_symbol(syms, "CONSTANT_VALUE", off) && off == 8));
  s = load_ini(fixture("AppMem.Ini"), ini, syms);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(ini.driver == "APPMEM");
  CHECK(ini.objects.empty());
  REQUIRE(ini.texts.size() == 16);
  CHECK(ini.texts[6].text == "Memory Allocs/Sec");  // trailing blanks trimmed
  CHECK((find_symbol(syms, "APPFREESSEC", off) && off == 14));
}

TEST_CASE("load_ini says where it looked for a missing symbol file") {
  const std::string dir = scratch("nosym");
  write_file(dir + "/a.ini", read_file(data("devdef.ini")));
  CounterIni ini;
  Symbols syms;
  const Status s = load_ini(dir + "/a.ini", ini, syms);
  CHECK(s.code() == Status::Code::kNotFound);
  CHECK(s.message().find("devdef.h") != std::string::npos);
}

}  // namespace
}  // namespace perfsim::lodctr
