#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "helpers.h"
#include "synth/synth.h"

using namespace perfsim;
using namespace perfsim::synth;

namespace {
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("an empty spec is a valid 2016 host") {
  Spec s;
  REQUIRE(parse_spec_toml("", s).ok());
  CHECK(s.profile == "2016");
  CHECK(s.interval_ms == 15000);
}

TEST_CASE("TOML errors name the key and its line") {
  Spec s;
  Status st = parse_spec_toml("[host]\nname = \"X\"\n\n[processes]\ncount = \"many\"\n", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("processes.count") && Catch::Contains("spec:5:"));

  st = parse_spec_toml("[host]\nprofil = \"2016\"\n", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(),
             Catch::Contains("host.profil") && Catch::Contains("spec:2:") && Catch::Contains("unknown key"));

  st = parse_spec_toml("[host]\nprofile = \"win95\"\n", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("host.profile") && Catch::Contains("spec:2:") && Catch::Contains("2016"));

  st = parse_spec_toml("[[objects]]\nname = \"A\"\n[[objects.counters]]\nname = \"c\"\ntype = \"PERF_BOGUS\"\n", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("objects[0].counters[0].type") && Catch::Contains("spec:5:"));

  st = parse_spec_toml("[load]\ncpu = { kind = \"square\" }\n", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("load.cpu.kind") && Catch::Contains("spec:2:"));

  st = parse_spec_toml("[host\nname = 1\n", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("spec:1:"));
}

TEST_CASE("JSON errors name the key, syntax errors the line") {
  Spec s;
  Status st = parse_spec_json(R"({"host": {"interval": "fast"}})", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("host.interval"));
  st = parse_spec_json("{\n\"host\": {\n\"name\": \"A\",,\n}}", s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("spec:3:"));
}

TEST_CASE("a wrongly typed or negative count is refused with its key and line") {
  Spec s;
  Status st = parse_spec_toml("[processes]\ncount = \"5\"\n", s);
  CHECK(st.message() == "spec:2: processes.count: expected an integer, got string \"5\"");
  st = parse_spec_toml("[processes]\n\ncount = -1\n", s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:3: processes.count: must be between 0 and 100000, got -1"));
  st = parse_spec_toml("[host]\nduration = \"1.2.3s\"\n", s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:2: host.duration: bad duration"));
}

TEST_CASE("a duration or start time beyond what its field holds is an error, never a wrapped value") {
  // UBSan (the ASan build) reported the out-of-range float-to-integer casts these used to reach.
  Spec s;
  Status st = parse_spec_toml("[host]\ninterval = \"143336m\"\n", s);
  CHECK_THAT(st.message(), Catch::Contains("host.interval: must be between 100 ms and 1 day"));
  st = parse_spec_toml("[host]\nduration = \"2000000000h\"\n", s);
  CHECK_THAT(st.message(), Catch::Contains("host.duration: duration out of range"));
  st = parse_spec_toml("[host]\nuptime = 1e12\n", s);
  CHECK_THAT(st.message(), Catch::Contains("host.uptime: duration out of range"));
  REQUIRE(parse_spec_toml("[host]\nduration = \"1193046h\"\n", s).ok());  // 4,294,965,600 s fits
  CHECK(s.duration_s == 4294965600u);
  // FILETIME ends in year 30827; a later start overflowed int64 (fuzz_config), a negative hour passed.
  st = parse_spec_toml("[host]\nstart = \"42020-03-01T08:00:00Z\"\n", s);
  CHECK_THAT(st.message(), Catch::Contains("host.start: expected a UTC time"));
  st = parse_spec_toml("[host]\nstart = \"2024-03-01T-8:00:00Z\"\n", s);
  CHECK_THAT(st.message(), Catch::Contains("host.start: expected a UTC time"));
}

TEST_CASE("durations, times and generators are read") {
  Spec s;
  REQUIRE(parse_spec_toml("[host]\nduration = \"1h30m\"\ninterval = \"500ms\"\nstart = 2024-01-02T03:04:05Z\n"
                          "[load]\ncpu = 12.5\n",
                          s)
              .ok());
  CHECK(s.duration_s == 5400);
  CHECK(s.interval_ms == 500);
  // 2024-01-02T03:04:05Z = 2024-01-01 (133485408000000000) + 1 day 3h 4m 5s.
  CHECK(s.start_100ns == 133485408000000000 + (86400 + 3 * 3600 + 4 * 60 + 5) * 10000000LL);
  CHECK(s.cpu.kind == GeneratorSpec::Kind::kConstant);
  CHECK(s.cpu.value == 12.5);
}

TEST_CASE("TOML and JSON forms of the same spec give identical captures") {
  Spec a, b;
  Status sa = parse_spec_toml(read_text(test::example("web-2016.toml")), a);
  Status sb = parse_spec_json(read_text(test::example("web-2016.json")), b);
  REQUIRE(sa.ok());
  REQUIRE(sb.ok());
  a.duration_s = b.duration_s = 120;  // 8 ticks are enough to compare
  captures::Capture ca, cb;
  REQUIRE(synthesize(a, ca).ok());
  REQUIRE(synthesize(b, cb).ok());
  REQUIRE(ca.records.size() == cb.records.size());
  for (size_t i = 0; i < ca.records.size(); ++i) CHECK(ca.records[i].payload == cb.records[i].payload);
  CHECK(ca.fingerprint_json == cb.fingerprint_json);
  REQUIRE(ca.registry.size() == cb.registry.size());
  for (size_t i = 0; i < ca.registry.size(); ++i) CHECK(ca.registry[i].data == cb.registry[i].data);
}

TEST_CASE("every example spec loads and synthesizes") {
  for (const char* name : {"web-2016.toml", "web-2016.json", "win2000-small.toml", "custom-app.toml"}) {
    INFO(name);
    Spec s;
    Status st = load_spec(test::example(name), s);
    REQUIRE(st.ok());
    s.duration_s = std::min<uint32_t>(s.duration_s, 3 * s.interval_ms / 1000);
    captures::Capture c;
    REQUIRE(synthesize(s, c).ok());
    CHECK(c.records.size() >= 2);
  }
}

// Issue 54: a spec's names go into the host's name tables and every sample, and had no bound.
// PDH's (perfdata/limits.h): object and counter names 1,024 characters, instance names 1,024;
// help texts 16,384 (perfsim's).
TEST_CASE("a spec's object, counter or instance name past PDH's bounds is refused with its key and line") {
  const auto object = [](const std::string& name, const std::string& counter, const std::string& instance,
                         const std::string& help) {
    return "[[objects]]\nname = \"" + name + "\"\nhelp = \"" + help + "\"\ninstances = { names = [\"a\", \"" +
           instance + "\"] }\n\n[[objects.counters]]\nname = \"" + counter + "\"\ntype = \"PERF_COUNTER_RAWCOUNT\"\n";
  };
  const std::string ok(1024, 'x');
  Spec s;
  REQUIRE(parse_spec_toml(object(ok, ok, ok, std::string(16384, 'h')), s).ok());
  REQUIRE(s.objects.size() == 1);
  CHECK(s.objects[0].instances.names[1] == ok);
  const std::string over(1025, 'x');
  Status st = parse_spec_toml(object(over, "c", "i", "h"), s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:2: objects[0].name: 'xxx") &&
                               Catch::EndsWith("(1025 characters) is longer than the 1024 characters of "
                                               "PDH_MAX_COUNTER_NAME"));
  st = parse_spec_toml(object("o", over, "i", "h"), s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:7: objects[0].counters[0].name: 'xxx"));
  st = parse_spec_toml(object("o", "c", over, "h"), s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:4: objects[0].instances.names[1]: 'xxx") &&
                               Catch::Contains("PDH_MAX_INSTANCE_NAME"));
  st = parse_spec_toml(object("o", "c", "i", std::string(16385, 'h')), s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:3: objects[0].help: 'hhh") && Catch::Contains("(16385 characters)"));
  st = parse_spec_toml("[processes]\nnames = [\"svchost\", \"" + std::string(5'000'000, 'p') + "\"]\n", s);
  CHECK_THAT(st.message(),
             Catch::StartsWith("spec:2: processes.names[1]: 'ppp") && Catch::Contains("(5000000 characters)"));
  CHECK(st.message().size() < 400);
  st = parse_spec_toml("[disks]\nvolumes = [\"" + over + "\"]\n", s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:2: disks.volumes[0]: "));
  st = parse_spec_toml("[network]\nadapters = [\"" + over + "\"]\n", s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:2: network.adapters[0]: "));
  st = parse_spec_toml("[[objects]]\nname = \"o\"\ninstances = { prefix = \"" + std::string(1015, 'p') +
                           "\" }\n\n[[objects.counters]]\nname = \"c\"\ntype = \"PERF_COUNTER_RAWCOUNT\"\n",
                       s);
  CHECK_THAT(st.message(), Catch::StartsWith("spec:3: objects[0].instances.prefix: "));
}
