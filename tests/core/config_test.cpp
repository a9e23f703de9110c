// core/config.h: the one checked reader every loader uses, and text-to-number parsing.
#include <catch2/catch.hpp>

#include <limits>

#include "core/config.h"

namespace perfsim::config {
namespace {

Doc toml(const std::string& text) {
  Doc d;
  REQUIRE(parse_toml(text, "t.toml", d).ok());
  return d;
}

TEST_CASE("a wrongly typed value names file, line, key, what was expected and what was found") {
  const Doc d = toml("[a]\nx = 1\n\n[b]\nevery = \"5\"\n");
  const Reader r(d);
  uint32_t every = 0;
  const Status s = r.integer(d.root["b"], "b", "every", every);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message() == "t.toml:5: b.every: expected an integer, got string \"5\"");
  CHECK(every == 0);
}

TEST_CASE("integers are range-checked and -1 never wraps into an unsigned") {
  const Doc d = toml("count = -1\nbig = 4294967296\nok = 7\nf = 1.5\n");
  const Reader r(d);
  uint32_t v = 3;
  Status s = r.integer(d.root, "", "count", v);
  CHECK_THAT(s.message(), Catch::Contains("t.toml:1: count: must be between 0 and 4294967295, got -1"));
  CHECK_THAT(r.integer(d.root, "", "big", v).message(), Catch::Contains("t.toml:2: big"));
  CHECK_THAT(r.integer(d.root, "", "f", v).message(), Catch::Contains("expected an integer, got number 1.5"));
  CHECK(r.integer(d.root, "", "ok", v, 1, 10).ok());
  CHECK(v == 7);
  CHECK_FALSE(r.integer(d.root, "", "ok", v, 8, 10).ok());
  CHECK(r.integer(d.root, "", "absent", v).ok());  // optional: left alone
  CHECK(v == 7);
  CHECK_THAT(r.require(d.root, "", "absent").message(), Catch::Contains("absent: missing"));
}

TEST_CASE("unknown keys are errors listing the allowed ones, at the key's line") {
  const Doc d = toml("[[fault]]\nkind = \"busy\"\nevry = 2\n");
  const Reader r(d);
  const Status s = r.keys(d.root["fault"][0], "fault[0]", {"kind", "every"});
  CHECK(s.message() == "t.toml:3: fault[0].evry: unknown key (allowed: kind, every)");
}

TEST_CASE("strings, booleans, numbers and string arrays are typed too") {
  const Doc d = toml("s = 1\nb = \"yes\"\nn = \"2\"\na = [\"x\", 3]\ni = 4\nl = [1, -2]\n");
  const Reader r(d);
  std::string s;
  bool b = false;
  double n = 0;
  std::vector<std::string> a;
  std::vector<uint32_t> l;
  CHECK_THAT(r.string(d.root, "", "s", s).message(), Catch::Contains("expected a string, got integer 1"));
  CHECK_THAT(r.boolean(d.root, "", "b", b).message(), Catch::Contains("expected true or false, got string \"yes\""));
  CHECK_THAT(r.number(d.root, "", "n", n).message(), Catch::Contains("expected a number, got string \"2\""));
  CHECK_THAT(r.strings(d.root, "", "a", a).message(),
             Catch::Contains("t.toml:4: a[1]: expected a string, got integer 3"));
  CHECK_THAT(r.integers(d.root, "", "l", l).message(), Catch::Contains("l[1]: must be between"));
  CHECK(r.number(d.root, "", "i", n).ok());  // an integer is a number
  CHECK(n == 4);
}

TEST_CASE("JSON reads into the same tree, its errors name the key, syntax errors the line") {
  Doc d;
  REQUIRE(parse_json(R"({"host": {"count": "5"}})", "f.json", d).ok());
  uint32_t c = 0;
  CHECK(Reader(d).integer(d.root["host"], "host", "count", c).message() ==
        "f.json: host.count: expected an integer, got string \"5\"");
  CHECK_THAT(parse_json("{\n\"a\": 1,,\n}", "f.json", d).message(), Catch::StartsWith("f.json:2: JSON syntax error"));
  CHECK_THAT(parse_toml("[a\nb = 1\n", "t.toml", d).message(), Catch::StartsWith("t.toml:1: TOML syntax error"));
}

// Found by fuzz/fuzz_config: the second parse (the one that finds the error's line) threw
// out_of_range, which was not caught, and aborted `perfsim synth spec.json`.
TEST_CASE("a JSON number beyond a double's range is an error naming the file and the number") {
  Doc d;
  const Status s = parse_json("{\n\"a\": 1e400\n}", "f.json", d);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::StartsWith("f.json:2: JSON number out of range") && Catch::Contains("1e400"));
}

TEST_CASE("TOML dates become UTC time strings") {
  const Doc d = toml("t = 2024-01-02T03:04:05Z\nd = 2024-01-02\n");
  CHECK(d.root["t"] == "2024-01-02T03:04:05Z");
  CHECK(d.root["d"] == "2024-01-02T00:00:00Z");
}

TEST_CASE("parse_uint takes whole decimal or 0x numbers and nothing else") {
  uint64_t v = 0;
  CHECK(parse_uint("42", "n", v).ok());
  CHECK(v == 42);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1x", "0x", "18446744073709551616", "1.0"})
    CHECK_FALSE(parse_uint(bad, "n", v).ok());
  CHECK_FALSE(parse_uint("256", "n", v, 255).ok());
  CHECK(parse_uint("0x1F", "n", v, UINT64_MAX, 0).ok());
  CHECK(v == 31);
  CHECK(parse_uint("10", "n", v, UINT64_MAX, 0).ok());
  CHECK(v == 10);
  uint16_t port = 0;
  CHECK_FALSE(parse_uint_as(std::string_view("65536"), "port", port).ok());
  CHECK(parse_uint_as(std::string_view("65535"), "port", port).ok());
  CHECK(port == 65535);
  CHECK(parse_uint("-1", "every", v).message() ==
        "every: expected a whole number from 0 to 18446744073709551615, got \"-1\"");
}

TEST_CASE("parse_int and parse_double reject junk and out-of-range values") {
  int64_t i = 0;
  CHECK(parse_int("-12", "n", i).ok());
  CHECK(i == -12);
  CHECK_FALSE(parse_int("-12", "n", i, 0, 10).ok());
  CHECK_FALSE(parse_int("9223372036854775808", "n", i).ok());
  CHECK_FALSE(parse_int("", "n", i).ok());
  double d = 0;
  CHECK(parse_double("0.25", "p", d).ok());
  CHECK(d == 0.25);
  for (const char* bad : {"", "x", "1e999", "inf", "nan", "0.5s"}) CHECK_FALSE(parse_double(bad, "p", d).ok());
}

TEST_CASE("one range check for numbers from files, flags and the API: it names the key and the range") {
  const Bounds hour{0, 3600000};
  CHECK(within(0, hour));
  CHECK(within(3600000, hour));
  CHECK_FALSE(within(3600000.5, hour));
  CHECK_FALSE(within(-1e-300, hour));
  CHECK_FALSE(within(std::numeric_limits<double>::quiet_NaN(), hour));
  CHECK(check_bounds("ms", 1e15, hour, " (milliseconds)").message() ==
        "ms: must be between 0 and 3600000, got 1000000000000000 (milliseconds)");
  CHECK(check_bounds("speed", 4.9e-324, {1e-3, 1e4}).message() == "speed: must be between 0.001 and 10000, got 5e-324");
  CHECK(check_bounds("ms", 12, hour).ok());
  double d = 7;
  CHECK(parse_double("1.8e19", "ms", d, hour).message() == "ms: must be between 0 and 3600000, got 1.8e+19");
  CHECK(d == 7);  // left alone when refused
  CHECK(parse_double("250", "ms", d, hour).ok());
  CHECK(d == 250);
  // In a file, the message has the file, line and key path.
  Doc doc;
  REQUIRE(parse_toml("[t]\nms = 9.2e18\nok = 5\n", "plan.toml", doc).ok());
  const Reader r(doc);
  double ms = 1;
  CHECK(r.number(doc.root["t"], "t", "ms", ms, hour, " (milliseconds)").message() ==
        "plan.toml:2: t.ms: must be between 0 and 3600000, got 9.2e+18 (milliseconds)");
  CHECK(ms == 1);
  CHECK(r.number(doc.root["t"], "t", "ok", ms, hour).ok());
  CHECK(ms == 5);
  CHECK(r.number(doc.root["t"], "t", "absent", ms, hour).ok());  // the default stands
  CHECK(ms == 5);
}

}  // namespace
}  // namespace perfsim::config
