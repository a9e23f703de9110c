#include <catch2/catch.hpp>

#include "core/utf16.h"
#include "perfdata/names.h"

using namespace perfsim;
using namespace perfsim::perfdata;

namespace {
Bytes utf16z(std::initializer_list<const char*> strings) {
  Bytes b;
  for (const char* s : strings) {
    put_utf16le(b, utf8_to_utf16(s));
    put_le16(b, 0);
  }
  return b;
}
}  // namespace

TEST_CASE("name table keeps duplicates, gaps and a Last Counter that disagrees") {
  // XP x64-like: declared last 2702, highest present 2720, index 6 twice, nothing at 8.
  Bytes raw = utf16z({"1", "2702", "2", "System", "4", "Memory", "6", "% Processor Time", "6", "% Processor Time", "10",
                      "File Read Operations/sec", "2720", "Late Counter", ""});
  NameTable t;
  REQUIRE(parse_names(raw, t).ok());
  REQUIRE(t.entries.size() == 7);
  CHECK(t.declared_last() == 2702);
  CHECK(t.highest_index() == 2720);
  CHECK(t.find(8) == nullptr);
  CHECK(utf16_to_utf8(*t.find(6)) == "% Processor Time");
  CHECK(build_names(t) == raw);
}

TEST_CASE("name table round trip keeps a missing final terminator and odd index text") {
  Bytes raw = utf16z({"1", "10", "2", "System", "010", "Leading zero"});  // no empty string at the end
  NameTable t;
  REQUIRE(parse_names(raw, t).ok());
  CHECK(t.entries.size() == 3);
  CHECK(t.entries[2].index == 10);
  CHECK(build_names(t) == raw);
}

TEST_CASE("name table rejects odd sizes and non-numeric indices with an offset") {
  NameTable t;
  Bytes odd = utf16z({"1", "2"});
  odd.push_back(0x41);
  Status s = parse_names(odd, t);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("offset") != std::string::npos);
  Bytes bad = utf16z({"1", "4", "x2", "System", ""});
  s = parse_names(bad, t);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("at offset 8") != std::string::npos);
}

TEST_CASE("make_names writes Windows' layout") {
  NameTable t = make_names({{1, "4"}, {2, "System"}, {4, "Memory"}});
  Bytes expect = utf16z({"1", "4", "2", "System", "4", "Memory", ""});
  CHECK(build_names(t) == expect);
}

TEST_CASE("multi_sz round trip") {
  std::vector<std::string> v = {"a", "Grüße", "c d"};
  Bytes b = build_multisz(v);
  CHECK(b.size() == (2 + 6 + 4 + 1) * 2);
  CHECK(parse_multisz(b) == v);
}
