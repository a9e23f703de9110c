// The command line as a user mistypes it: every subcommand with a misspelt option (exit 2, naming
// the option meant), every input file missing (exit 1, naming the path), durations as "15s" on
// every time option, and validate --min-severity.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;

namespace {

using Run = perfsim::testing::CommandResult;
Run run_perfsim(const std::string& args) { return perfsim::testing::run_command(PERFSIM_EXE, args); }

// The subcommands a help text lists under "Subcommands:".
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> out;
  const size_t at = help.find("Subcommands:");
  if (at == std::string::npos) return out;
  const std::string list = help.substr(at);
  static const std::regex sub(R"(\n  ([a-z]+)  )");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), sub); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1].str());
  return out;
}

// Every command line `perfsim --help` leads to: "synth", ..., "names export", "scenarios show".
std::vector<std::string> every_command() {
  std::vector<std::string> out, todo{""};
  while (!todo.empty()) {
    const std::string cmd = todo.back();
    todo.pop_back();
    const Run h = run_perfsim(cmd + " --help");
    REQUIRE(h.code == 0);
    for (const std::string& s : subcommands_in(h.out)) {
      const std::string full = cmd.empty() ? s : cmd + " " + s;
      out.push_back(full);
      todo.push_back(full);
    }
  }
  return out;
}

// The longest --flag a subcommand's help lists (longer names leave fewer near neighbours).
std::string longest_flag(const std::string& cmd) {
  const Run h = run_perfsim(cmd + " --help");
  REQUIRE(h.code == 0);
  const std::string options = h.out.substr(0, h.out.find("Subcommands:"));
  static const std::regex flag(R"((^|[^\w-])(--[a-z0-9][a-z0-9-]*))");
  std::string best = "--help";
  for (auto it = std::sregex_iterator(options.begin(), options.end(), flag); it != std::sregex_iterator(); ++it)
    if ((*it)[2].length() > long(best.size())) best = (*it)[2].str();
  return best;
}

}  // namespace

TEST_CASE("every subcommand refuses a misspelt option with exit 2, naming the option meant") {
  const std::vector<std::string> commands = every_command();
  REQUIRE(commands.size() >= 15);  // 14 top-level subcommands, names export/diff, scenarios show
  for (const std::string& cmd : commands) {
    const std::string flag = longest_flag(cmd);
    std::string typo = flag;
    typo.erase(typo.size() / 2 + 1, 1);  // "--profile" -> "--profle"
    const Run r = run_perfsim(cmd + " " + typo);
    INFO(cmd << " " << typo << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("unknown option " + typo + "; did you mean " + flag + "?") != std::string::npos);
  }
  // A misspelt option whose value would fill the input positional is named first, not the value.
  Run r = run_perfsim("synth --profle 2016 -o /nonexistent/x.perfcap");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown option --profle; did you mean --profile?") != std::string::npos);
  r = run_perfsim("synth --profile 2016 --seed=3 --out=/nonexistent/x.perfcap --jsn");
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean --json?") != std::string::npos);
}

TEST_CASE("an unknown subcommand is a usage error naming the nearest one") {
  for (const auto& [line, meant] : std::vector<std::pair<std::string, std::string>>{{"dmup x.perfcap", "dump"},
                                                                                    {"sreve", "serve"},
                                                                                    {"names exprot a", "export"},
                                                                                    {"scenarios shwo x", "show"}}) {
    const Run r = run_perfsim(line);
    INFO(line << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("did you mean " + meant + "?") != std::string::npos);
  }
  const Run far = run_perfsim("frobnicate");
  CHECK(far.code == 2);
  CHECK(far.err.find("unknown command frobnicate") != std::string::npos);
  CHECK(far.err.find("did you mean") == std::string::npos);  // nothing near: no guess
}

TEST_CASE("a missing input file is exit 1 for every command that reads one") {
  perfsim::testing::TempDir d;
  const std::string missing = (d.path / "missing").string();
  const std::string out = (d.path / "out.perfcap").string();
  const std::string cap = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  const std::string ini = std::string(PERFSIM_SOURCE_DIR) + "/tests/lodctr/data/wavegen.ini";
  // {command line with M for the missing path, subcommand it covers}
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"synth M -o " + out, "synth"},
      {"synth --profile 2016 --names M -o " + out, "synth"},
      {"convert M -o " + out, "convert"},
      {"inspect M", "inspect"},
      {"dump M", "dump"},
      {"validate M", "validate"},
      {"serve --capture M", "serve"},
      {"serve --fleet M", "serve"},
      {"serve --faults M", "serve"},
      {"serve --scenario-dir M", "serve"},
      {"serve --listen 127.0.0.1:0=M", "serve"},
      {"scenarios --scenario-dir M", "scenarios"},
      {"scenarios show --scenario-dir M x", "scenarios show"},
      {"journal M", "journal"},
      {"journal --scenario-dir M " + cap, "journal"},
      {"query 127.0.0.1:1 --auth-file M", "query"},
      {"load M", "load"},
      {"load 127.0.0.1:1 --auth-file M", "load"},
      {"record 127.0.0.1:1 -o " + out + " --auth-file M", "record"},
      {"import M -o " + d.path.string(), "import"},
      {"import --perfmon M -o " + out, "import"},
      {"lodctr M " + ini, "lodctr"},
      {"lodctr " + cap + " M", "lodctr"},
      {"unlodctr M wavegen", "unlodctr"},
      {"names export M -o " + out, "names export"},
      {"names diff M " + cap, "names diff"},
      {"series M -c '\\Processor(_Total)\\% Processor Time'", "series"},
      {"diff M " + cap, "diff"},
      {"diff " + cap + " M", "diff"},
      {"redact M -o " + out, "redact"},
      {"check --capture M -- true", "check"},
      {"check --scenario-dir M --scenario x -- true", "check"},
      {"check --fleet M -- true", "check"},
      {"check --scenario x --faults M -- true", "check"},
  };
  std::set<std::string> covered;
  for (const auto& [line, cmd] : lines) {
    const std::string args = std::regex_replace(line, std::regex(R"((^|[ =])M( |$))"), "$1" + missing + "$2");
    const Run r = run_perfsim(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find(missing) != std::string::npos);
    covered.insert(cmd);
  }
  // A new subcommand that reads a file gets a line above; one that reads none is named here.
  const std::set<std::string> no_input = {"names"};
  for (const std::string& cmd : every_command()) {
    INFO(cmd);
    CHECK((covered.count(cmd) == 1 || no_input.count(cmd) == 1));
  }
}

TEST_CASE("every time option takes 15s, 2m, 1h, 500ms or plain seconds") {
  perfsim::testing::TempDir d;
  const std::string out = (d.path / "s.perfcap").string();
  const auto ticks = [&](const std::string& times) {
    const Run r = run_perfsim("synth --profile 2016 --json -o " + out + " " + times);
    INFO(times << "\n" << r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out).at("ticks").get<int>();
  };
  CHECK(ticks("--duration 2m --interval 15s") == 8);
  CHECK(ticks("--duration 120 --interval 15") == 8);
  CHECK(ticks("--duration 1h --interval 10m") == 6);
  CHECK(ticks("--duration 1m30s --interval 500ms") == 180);

  for (const char* bad : {"5x", "1h30", "-5s", "s", "1.2.3s"}) {
    const Run r = run_perfsim("synth --profile 2016 -o " + out + " --interval=" + bad);
    INFO(bad << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("bad duration") != std::string::npos);
  }
  // serve --idle-timeout keeps its range in seconds: 7 days pass, 8 do not.
  CHECK(run_perfsim("serve --list-hosts --idle-timeout 7d").code == 0);
  CHECK(run_perfsim("serve --list-hosts --idle-timeout 8d").code == 2);

  // query and record against a served host, every time option written with a unit.
  perfsim::testing::PerfsimServe srv;
  REQUIRE(srv.start(PERFSIM_EXE, "--timeline step").ok());
  const std::string ep = "127.0.0.1:" + std::to_string(srv.port());
  Run q = run_perfsim("query " + ep + " --count 2 --interval 100ms --timeout 5s");
  INFO(q.err);
  CHECK(q.code == 0);
  const std::string rec = (d.path / "r.perfcap").string();
  Run r = run_perfsim("record " + ep + " -o " + rec + " --json --interval 200ms --duration 1m --count 2 --timeout 10s");
  INFO(r.err);
  CHECK(r.code == 0);
  if (r.code == 0) CHECK(nlohmann::json::parse(r.out).at("samples") == 2);
  CHECK(srv.stop() == 0);
}

TEST_CASE("validate lists warnings and errors by default and counts the infos it leaves out") {
  perfsim::testing::TempDir d;
  const std::string cap = (d.path / "v.perfcap").string();
  REQUIRE(run_perfsim("synth --profile 2016 --duration 1m -o " + cap).code == 0);
  const auto validate = [&](const std::string& args) {
    const Run r = run_perfsim("validate --json " + cap + " " + args);
    INFO(args << "\n" << r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto severities = [](const nlohmann::json& j) {
    std::map<std::string, size_t> n;
    for (const auto& f : j.at("findings")) ++n[f.at("severity").get<std::string>()];
    return n;
  };
  const nlohmann::json all = validate("--min-severity info");
  const size_t infos = all.at("infos");
  REQUIRE(infos > 0);  // duplicate process names (svchost) are normal on Windows, and infos
  CHECK(severities(all)["info"] == infos);
  CHECK(all.at("not_shown") == 0);

  const nlohmann::json def = validate("");
  CHECK(def.at("min_severity") == "warning");
  CHECK(severities(def).count("info") == 0);
  CHECK(def.at("infos") == infos);  // still counted
  CHECK(def.at("not_shown") == infos);
  CHECK(def.at("findings").size() == all.at("findings").size() - infos);

  const nlohmann::json errors = validate("--min-severity error");
  CHECK(severities(errors).count("warning") == 0);
  CHECK(errors.at("not_shown") == infos + all.at("warnings").get<size_t>());

  // The text form: no info line, and one summary line at the end saying what was left out.
  const Run text = run_perfsim("validate " + cap);
  CHECK(text.code == 0);
  CHECK(text.out.find(": info ") == std::string::npos);
  const std::string last = text.out.substr(text.out.rfind('\n', text.out.size() - 2) + 1);
  CHECK(last.find(std::to_string(infos) + " below warning not shown") != std::string::npos);

  CHECK(run_perfsim("validate " + cap + " --min-severity loud").code == 2);
}
