// captures/redact.h's instance-name parsing (issue 54): split_instance_name and
// structural_instance_name answer what the regular expressions they replace answered, for the
// ordinary names and for every short name of a small alphabet, and take names of any length
// (std::regex_match recursed once a character: 50,000 characters overflowed the stack).
#include <catch2/catch.hpp>

#include <random>
#include <regex>
#include <string>

#include "captures/redact.h"
#include "core/utf16.h"

namespace instance_names {

using perfsim::captures::NameParts;
using perfsim::captures::split_instance_name;
using perfsim::captures::structural_instance_name;

// The code that was in captures/redact.cpp before issue 54, kept here as the reference: safe on
// the short names it is given below.
NameParts regex_split(const std::string& name) {
  static const std::regex kDup(R"(^(.*\S)(#[0-9]+)$)");
  static const std::regex kIndex(R"(^(.*\S)([/:][0-9]+)$)");
  static const std::regex kPidPrefix(R"(^([0-9]+_)(.*\S.*)$)");
  NameParts p;
  p.core = name;
  for (bool changed = true; changed;) {
    changed = false;
    std::smatch m;
    for (const std::regex* re : {&kDup, &kIndex}) {
      if (std::regex_match(p.core, m, *re)) {
        p.suffix = m[2].str() + p.suffix;
        p.core = m[1].str();
        changed = true;
      }
    }
    if (std::regex_match(p.core, m, kPidPrefix)) {
      p.prefix += m[1].str();
      p.core = m[2].str();
      changed = true;
    }
  }
  return p;
}

bool regex_structural(const std::string& core) {
  static const char* const kNames[] = {"",     "_Total", "<Total>",  "Total",   "_Global_",
                                       "Idle", "System", "Services", "Console", "RDP-Tcp"};
  for (const char* n : kNames)
    if (perfsim::iequals(core, n)) return true;
  static const std::regex kStructural(R"(^([0-9]+(,([0-9]+|_Total))*)"
                                      R"(|[0-9]+( [A-Za-z]:)*)"
                                      R"(|[A-Za-z]:)"
                                      R"(|HarddiskVolume[0-9]+)"
                                      R"(|\\\?\?\\[A-Za-z]:\\pagefile\.sys)$)");
  return std::regex_match(core, kStructural);
}

std::string parts(const NameParts& p) { return "[" + p.prefix + "|" + p.core + "|" + p.suffix + "]"; }

}  // namespace instance_names

using namespace instance_names;

TEST_CASE("split_instance_name: the ordinary names split as before") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"svchost", "[|svchost|]"},
      {"svchost#3", "[|svchost|#3]"},
      {"svchost#1/3", "[|svchost|#1/3]"},
      {"svchost/12", "[|svchost|/12]"},
      {"sqlservr:4242", "[|sqlservr|:4242]"},
      {"4242_DefaultAppPool", "[4242_|DefaultAppPool|]"},
      {"4242_w3wp#2", "[4242_|w3wp|#2]"},
      {"0_1234", "[0_|1234|]"},
      {"1_2_foo", "[1_2_|foo|]"},
      {"#3", "[|#3|]"},
      {"a #3", "[|a #3|]"},  // the core must end in a non-blank
      {"1_ ", "[|1_ |]"},    // and hold one after a PID prefix
      {"12", "[|12|]"},
      {"a\n#3", "[|a\n#3|]"},  // '.' stopped at line ends: never split
  };
  for (const auto& [name, want] : cases) {
    INFO(name);
    CHECK(parts(split_instance_name(name)) == want);
    CHECK(parts(regex_split(name)) == want);
  }
  for (const char* s : {"_Total", "0", "0,3", "0,_Total", "1 C: D:", "C:", "HarddiskVolume3", "\\??\\C:\\pagefile.sys",
                        "idle", "RDP-Tcp"})
    CHECK(structural_instance_name(s));
  for (const char* s :
       {"0,", ",3", "_Total,0", "1 C:D:", "C", "harddiskvolume3", "HarddiskVolume", "\\??\\C:\\swap.sys", "svchost"})
    CHECK_FALSE(structural_instance_name(s));
}

TEST_CASE("split_instance_name and structural_instance_name agree with the regular expressions on random names") {
  // Every affix character, blanks, a line end, digits and letters: the shapes the patterns tell apart.
  const std::string alphabet = "ab C#/:_,09 \t\n\v?\\.";
  std::mt19937 rng(54);
  for (int n = 0; n < 20000; ++n) {
    std::string name(std::uniform_int_distribution<size_t>(0, 10)(rng), ' ');
    for (char& c : name) c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    INFO('"' << name << '"');
    REQUIRE(parts(split_instance_name(name)) == parts(regex_split(name)));
    REQUIRE(structural_instance_name(name) == regex_structural(name));
  }
}

TEST_CASE("split_instance_name takes names of any length") {
  for (size_t length : {size_t(50000), size_t(200000)}) {
    INFO(length);
    const std::string a(length, 'a');
    CHECK(parts(split_instance_name(a + "#3")) == "[|" + a + "|#3]");
    CHECK(parts(split_instance_name("4242_" + a + "/7")) == "[4242_|" + a + "|/7]");
    // Many affixes, and long digit runs on both sides.
    std::string pids, dups;
    for (size_t i = 0; i < length / 4; ++i) pids += "1_", dups += "#1";
    CHECK(split_instance_name(pids + "x" + dups).core == "x");
    const std::string digits(length, '7');
    CHECK(parts(split_instance_name(digits + "_" + digits + "x" + digits)) ==
          "[" + digits + "_|" + digits + "x" + digits + "|]");
    CHECK_FALSE(structural_instance_name(a));
    CHECK(structural_instance_name(digits));
  }
}
