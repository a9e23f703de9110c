// `perfsim serve --between` (issue 31, part 1): a collector polling faster than a capture's
// interval sees the recorded rates. A python3-samba collector (tests/interop/collector_between.py,
// PDH's formulas written there from the counter types) polls Global of a 15 s-interval capture
// played at --speed 10 every 1, 5 and 15 recorded seconds and checks every two-sample counter of
// Processor, Process, PhysicalDisk and Network Interface against the recorded samples (read
// through --timeline step). With interpolation every value is within 1 % (or one count) of the
// recorded interval's; with --between step the 1 s and 5 s polls inside one recorded interval show
// the 100 %/0 artifacts (% Processor Time exactly 100, % User Time and Interrupts/sec exactly 0).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"

namespace fs = std::filesystem;

namespace {

const char kSpec[] = R"([host]
profile = "2016"
seed = 31
duration = "10m"
interval = "15s"
processors = 2

[processes]
count = 12

[load]
cpu = { kind = "sine", mean = 50, amplitude = 30, period = "2m" }
)";

// Runs the collector against `perfsim serve ARGS` and returns its JSON output.
nlohmann::json collect(const fs::path& dir, const std::string& args, const std::string& how) {
  perfsim::testing::PerfsimServe serve;
  const perfsim::Status st = serve.start(PERFSIM_EXE, "--listen 127.0.0.1:0 " + args);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const std::string out = (dir / "out.json").string();
  const auto r =
      perfsim::testing::run_command(PERFSIM_PYTHON,
                                    "-B " + std::string(INTEROP_SCRIPTS_DIR) + "/collector_between.py --port " +
                                        std::to_string(serve.port()) + " --out " + out + " " + how,
                                    120);
  CHECK(serve.stop() == 0);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  nlohmann::json j;
  std::ifstream(out) >> j;
  return j;
}

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("perfsim-between-" + std::to_string(getpid()));
  std::string cap = (dir / "host.perfcap").string();
  std::string recorded = (dir / "recorded.json").string();
  Fixture() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "spec.toml") << kSpec;
    const auto synth =
        perfsim::testing::run_command(PERFSIM_EXE, "synth " + (dir / "spec.toml").string() + " -o " + cap);
    INFO(synth.err);
    REQUIRE(synth.code == 0);
    // The recorded samples: a step timeline answers sample k to the k-th read, clocks as recorded.
    const nlohmann::json rec = collect(dir, "--capture " + cap + " --timeline step", "record 40");
    std::ofstream(recorded) << rec.dump();
  }
  ~Fixture() { fs::remove_all(dir); }
};

}  // namespace

TEST_CASE("interpolated counters give the recorded interval's rates at 1 s and 5 s and 15 s polls") {
  Fixture f;
  const nlohmann::json j =
      collect(f.dir, "--capture " + f.cap + " --speed 10", "--recorded " + f.recorded + " --speed 10 live 1 5 15");
  INFO(j.dump(1).substr(0, 4000));
  CHECK(j.at("failures").empty());
  for (const char* interval : {"1.0", "5.0", "15.0"}) {
    INFO("poll every " << interval << " s");
    for (const char* object : {"Processor", "Process", "PhysicalDisk", "Network Interface"})
      CHECK(j.at("checked").at(interval).at(object).get<int>() >= 5);  // every pair checked some of each
  }
  // Polls inside one recorded interval: the case stepping got wrong.
  CHECK(j.at("pairs").at("1.0").at(0).get<int>() >= 3);
  CHECK(j.at("pairs").at("5.0").at(0).get<int>() >= 1);
}

TEST_CASE("serve --between step keeps today's stepping and polls inside one interval see 100 percent or 0 artifacts") {
  Fixture f;
  const nlohmann::json j = collect(f.dir, "--capture " + f.cap + " --speed 10 --between step",
                                   "--recorded " + f.recorded + " --speed 10 live 1 5");
  // A pair of polls inside one recorded interval reads one sample twice: no idle time passed
  // (% Processor Time, an inverse timer, exactly 100) and no count moved (% User Time and
  // Interrupts/sec exactly 0), where the recorded rates are neither. Any other deviation (a
  // stepped host serving something else off the rates) is not the artifact.
  const std::string total = "Processor(_Total)\\";
  std::map<std::string, std::map<std::string, double>> got;  // pair (interval and recorded span) -> counter -> value
  for (const auto& x : j.at("failures")) {
    const std::string c = x.at("counter").get<std::string>();
    if (c.rfind(total, 0) == 0)
      got[x.at("interval").dump() + x.at("recorded_s").dump()][c.substr(total.size())] = x.at("got");
  }
  std::map<std::string, int> artifacts;  // poll interval -> pairs showing 100 % and 0
  for (const auto& [pair, v] : got) {
    const bool hundred = v.count("% Processor Time") && v.at("% Processor Time") == 100.0;
    const bool zero = v.count("% User Time") && v.at("% User Time") == 0.0 && v.count("Interrupts/sec") &&
                      v.at("Interrupts/sec") == 0.0;
    if (hundred && zero) ++artifacts[pair.substr(0, pair.find('['))];
  }
  INFO(j.dump(1).substr(0, 4000));
  CHECK(artifacts["1.0"] >= 1);
  CHECK(artifacts["5.0"] >= 1);
  WARN("stepped: " << j.at("failures").size() << " values off the recorded rates; pairs with the 100 %/0 artifact: "
                   << artifacts["1.0"] << " of the 1 s polls, " << artifacts["5.0"] << " of the 5 s polls");
}

TEST_CASE("serve --between takes step or interpolate and says which in its listening line") {
  const auto bad = perfsim::testing::run_command(PERFSIM_EXE, "serve --list-hosts --between linear");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--between") != std::string::npos);
  for (const char* b : {"step", "interpolate"}) {
    perfsim::testing::PerfsimServe serve;
    REQUIRE(serve.start(PERFSIM_EXE, std::string("--listen 127.0.0.1:0 --between ") + b).ok());
    const nlohmann::json line = nlohmann::json::parse(serve.lines().at(0));
    CHECK(line.at("between") == b);
    CHECK(serve.stop() == 0);
  }
}
