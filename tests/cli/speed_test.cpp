// `perfsim serve --speed`: a 15 s-interval capture played ten times faster, observed by a
// python3-samba collector (tests/interop/collector_poll.py) polling one counter's object: the
// counters step to the next sample every 15 recorded seconds, the served clock runs at ten recorded seconds
// per second, and a rate formatted between two sample changes equals the recorded one (what
// --speed 1 gives) within 1%. The recorded rate is read from the same capture through
// --timeline step (one recorded sample per answer, clocks as recorded). Counters step here
// (--between step), so each change marks a sample; between_test.cpp covers interpolation.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"

namespace fs = std::filesystem;
namespace sp = perfsim::subprocess;

namespace {

const char kSpec[] = R"([host]
profile = "2016"
seed = 9
duration = "15m"
interval = "15s"
processors = 2

[load]
cpu = { kind = "sine", mean = 50, amplitude = 30, period = "5m" }
)";

const char kPath[] = "'Processor(_Total)\\% Processor Time'";

struct Poll {
  double wall;   // monotonic seconds when the answer arrived
  double t100;   // PerfTime100nSec
  double value;  // the counter's raw value
};

// Serves `cap` with `args`, runs the poller against it and returns its polls.
std::vector<Poll> poll(const fs::path& dir, const std::string& cap, const std::string& args, const std::string& how) {
  perfsim::testing::PerfsimServe serve;
  const perfsim::Status st = serve.start(PERFSIM_EXE, "--listen 127.0.0.1:0 --capture " + cap + " " + args);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const int port = serve.port();
  const std::string out = (dir / "polls.json").string();
  const auto r = perfsim::testing::run_command(PERFSIM_PYTHON,
                                               "-B " + std::string(INTEROP_SCRIPTS_DIR) + "/collector_poll.py --port " +
                                                   std::to_string(port) + " --out " + out + " " + how + " " + kPath,
                                               60);
  CHECK(serve.stop() == 0);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  nlohmann::json j;
  std::ifstream(out) >> j;
  std::vector<Poll> polls;
  for (const auto& p : j.at("polls")) polls.push_back({p[0].get<double>(), p[1].get<double>(), p[2].get<double>()});
  return polls;
}

// % Processor Time is PERF_100NSEC_TIMER_INV: 100 * (1 - idle time / elapsed time).
double formatted(double t0, double v0, double t1, double v1) { return 100.0 * (1.0 - (v1 - v0) / (t1 - t0)); }

}  // namespace

TEST_CASE("serve --speed 10 plays a 15 s capture a sample every 1.5 s with its formatted rates") {
  const fs::path dir = fs::temp_directory_path() / ("perfsim-speed-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "spec.toml") << kSpec; }
  const std::string cap = (dir / "host.perfcap").string();
  const auto synth = perfsim::testing::run_command(PERFSIM_EXE, "synth " + (dir / "spec.toml").string() + " -o " + cap);
  INFO(synth.err);
  REQUIRE(synth.code == 0);

  // The recorded samples: the step timeline answers sample k to the k-th poll, clocks as recorded.
  const std::vector<Poll> recorded = poll(dir, cap, "--timeline step", "--count 40");
  // 7.5 s at speed 10: 75 recorded seconds, five sample changes.
  const std::vector<Poll> fast = poll(dir, cap, "--speed 10 --between step", "--seconds 7.5");
  REQUIRE(fast.size() > 100);  // a few ms apart, so a change is seen within ~0.1 recorded s

  // Where the counters changed: halfway between the last poll of one sample and the first of the next.
  struct Change {
    double t100;
    size_t sample;  // which recorded sample the counters became
  };
  std::vector<Change> changes;
  for (size_t i = 1; i < fast.size(); ++i) {
    if (fast[i].value == fast[i - 1].value) continue;
    size_t k = 0;
    while (k < recorded.size() && recorded[k].value != fast[i].value) ++k;
    INFO("poll " << i << " value " << fast[i].value);
    REQUIRE(k < recorded.size());  // every served value is a recorded one (first loop: no growth added)
    changes.push_back({(fast[i - 1].t100 + fast[i].t100) / 2, k});
  }
  REQUIRE(changes.size() >= 3);
  for (size_t i = 1; i < changes.size(); ++i) {
    INFO("change " << i);
    CHECK(changes[i].sample == changes[i - 1].sample + 1);  // one sample at a time, none skipped
    // 15 recorded seconds between changes, measured on the served clock (recorded ticks). Real
    // time per step is not judged here: a loaded machine delays single polls by tenths of a
    // second; the pace of real time is judged once, over the whole run, below.
    CHECK(std::abs(changes[i].t100 - changes[i - 1].t100 - 15e7) < 0.5e7);
  }
  const double served_s = (fast.back().t100 - fast.front().t100) / 1e7;
  const double real_s = fast.back().wall - fast.front().wall;
  INFO("served clock " << served_s << " s over " << real_s << " s");
  CHECK(std::abs(served_s / real_s - 10) < 1.0);  // ten recorded seconds per real one: 1.5 s per 15 s sample

  // The rate between the first and last change against the recorded one between those samples.
  const Change& a = changes.front();
  const Change& b = changes.back();
  const double got = formatted(a.t100, recorded[a.sample].value, b.t100, recorded[b.sample].value);
  const double want =
      formatted(recorded[a.sample].t100, recorded[a.sample].value, recorded[b.sample].t100, recorded[b.sample].value);
  WARN("speed 10: " << changes.size() << " sample changes, served clock " << served_s / real_s
                    << "x real time; % Processor Time " << got << " served, " << want << " recorded");
  CHECK(std::abs(got - want) <= 0.01 * std::abs(want));
  fs::remove_all(dir);
}

TEST_CASE("serve --speed refuses a pace outside 0.001 to 10000 with usage status 2, naming the range") {
  for (const char* bad : {"0", "-2", "nan", "4.9e-324", "0.0009", "10001", "1e9"}) {
    const auto r = perfsim::testing::run_command(PERFSIM_EXE, std::string("serve --list-hosts --speed ") + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("--speed") != std::string::npos);
    if (std::string(bad) != "nan") CHECK(r.err.find("must be between 0.001 and 10000") != std::string::npos);
  }
  for (const char* ok_speed : {"0.001", "10", "10000"}) {
    const auto ok = perfsim::testing::run_command(PERFSIM_EXE, std::string("serve --list-hosts --speed ") + ok_speed);
    INFO(ok_speed << ": " << ok.err);
    CHECK(ok.code == 0);
  }
  // A fleet file's speed is checked the same way, with its file, line and key.
  const fs::path dir = fs::temp_directory_path() / ("perfsim-speed-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path fleet = dir / "fleet.toml";
  std::ofstream(fleet) << "[[host]]\nlisten = \"127.0.0.1:0\"\nspeed = 4.9e-324\n";
  const auto r = perfsim::testing::run_command(PERFSIM_EXE, "serve --list-hosts --fleet " + fleet.string());
  CHECK(r.code == 2);
  CHECK(r.err.find(fleet.string() + ":3: host[0].speed: must be between 0.001 and 10000") != std::string::npos);
  fs::remove_all(dir);
}
