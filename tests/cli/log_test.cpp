// `perfsim serve --log-level/--log-format` on a 1,000-host fleet (127.148.0.0/16): at the default
// level a start and clean stop print a handful of lines, not one per host; debug gives each
// listener's line, all of them written by the clean stop (the log is buffered); every logfmt line
// is key=value tokens and every JSON line one object.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;

namespace {

constexpr int kHosts = 1000;

struct Output {
  std::vector<std::string> out, err;
};

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> v;
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// Starts serve on the fleet, waits for its listening line, stops it with SIGTERM (a clean stop).
Output serve_and_stop(const fs::path& dir, const std::string& args) {
  const fs::path fleet = dir / "fleet.toml";
  std::ofstream(fleet) << fmt::format(
      "[[host]]\naddresses = \"127.148.0.0/16\"\ncount = {}\nname = \"LOG-{{n}}\"\ntimeline = \"frozen:0\"\n", kHosts);
  const std::string script = fmt::format(
      "'{0}' serve --fleet '{1}' {2} >'{3}/out' 2>'{3}/err' & pid=$!; "
      "until grep -q 'hosts listening' '{3}/out' 2>/dev/null; do kill -0 $pid || exit 3; sleep 0.05; done; "
      "kill -TERM $pid; wait $pid",
      PERFSIM_EXE, fleet.string(), args, dir.string());
  std::ofstream(dir / "serve.sh") << script << "\n";
  const auto r = perfsim::testing::run_command("/bin/sh", (dir / "serve.sh").string(), 120);
  Output o{lines_of(dir / "out"), lines_of(dir / "err")};
  INFO(r.err << "\n" << (o.err.empty() ? "" : o.err.front()));
  REQUIRE(r.code == 0);
  return o;
}

size_t count_with(const std::vector<std::string>& lines, const std::string& needle) {
  size_t n = 0;
  for (const std::string& l : lines) n += l.find(needle) != std::string::npos;
  return n;
}

// logfmt: KEY=VALUE tokens, VALUE bare or "quoted with \" and \\"; the keys named.
bool logfmt_parses(const std::string& line, std::vector<std::string>& keys) {
  size_t i = 0;
  while (i < line.size()) {
    const size_t eq = line.find('=', i);
    if (eq == std::string::npos || eq == i) return false;
    const std::string key = line.substr(i, eq - i);
    if (key.find_first_of(" \"") != std::string::npos) return false;
    keys.push_back(key);
    i = eq + 1;
    if (i < line.size() && line[i] == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i)
        if (line[i] == '\\') ++i;
      if (i >= line.size()) return false;
      ++i;
    } else {
      while (i < line.size() && line[i] != ' ') {
        if (line[i] == '"' || line[i] == '=') return false;
        ++i;
      }
    }
    if (i < line.size() && line[i++] != ' ') return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a 1,000-host fleet at the default log level prints at most 5 lines from start to a clean stop") {
  perfsim::testing::TempDir dir("perfsim-log");
  const Output o = serve_and_stop(dir.path, "");
  INFO("stdout:\n"
       << fmt::format("{}", fmt::join(o.out, "\n")) << "\nstderr:\n"
       << fmt::format("{}", fmt::join(o.err, "\n")));
  CHECK(o.out.size() + o.err.size() <= 5);
  CHECK(count_with(o.err, "event=listen") == 0);
  CHECK(count_with(o.err, "event=server_stop") == 1);  // info still written, and flushed at the stop
}

TEST_CASE("serve --log-level debug prints each listener's line, all written by a clean stop, in logfmt that parses") {
  perfsim::testing::TempDir dir("perfsim-log");
  const Output o = serve_and_stop(dir.path, "--log-level debug");
  CHECK(count_with(o.err, " level=debug event=listen ") == size_t(kHosts));
  CHECK(count_with(o.err, "event=server_stop") == 1);
  for (const std::string& l : o.err) {
    std::vector<std::string> keys;
    INFO(l);
    REQUIRE(logfmt_parses(l, keys));
    REQUIRE(keys.size() >= 3);
    CHECK(keys[0] == "ts");
    CHECK(keys[1] == "level");
    CHECK(keys[2] == "event");
  }
}

TEST_CASE("serve --log-format json: every line is one JSON object with ts, level and event") {
  perfsim::testing::TempDir dir("perfsim-log");
  const Output o = serve_and_stop(dir.path, "--log-level debug --log-format json");
  size_t listens = 0;
  for (const std::string& l : o.err) {
    INFO(l);
    const auto j = nlohmann::json::parse(l);  // throws (fails) on anything but one JSON value
    REQUIRE(j.is_object());
    CHECK(j.at("ts").is_string());
    CHECK(j.at("level").is_string());
    listens += j.at("event") == "listen";
  }
  CHECK(listens == size_t(kHosts));
}

TEST_CASE("serve --log-level and --log-format refuse other words and say which to write") {
  const auto r = perfsim::testing::run_command(PERFSIM_EXE, "serve --log-level verbose");
  CHECK(r.code == 2);
  CHECK(r.err.find("debug") != std::string::npos);
  const auto f = perfsim::testing::run_command(PERFSIM_EXE, "serve --log-format xml");
  CHECK(f.code == 2);
  CHECK(f.err.find("logfmt") != std::string::npos);
}
