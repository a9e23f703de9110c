// Events on a host's timeline (issue 31, part 2), read by a real client across the event: a
// python3-samba collector (tests/interop/collector_events.py, its layouts and formulas written from
// Microsoft's documentation, not from perfsim) reads host A, which has the event, and host B,
// served from the same capture without it, in one `perfsim serve --fleet` run.
//  - reboot: A's connection is reset, the next one works; System Up Time is below the capture's
//    interval; no cumulative counter of A holds more than B grew since the first read (nothing
//    carried over from before the reboot); every process id but Idle's and System's differs.
//  - wrap: A's 32-bit cumulative counters wrap between two reads while B's delta equals A's
//    delta mod 2^32 for every one of them (the recorded rate).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

struct Run {
  fs::path dir = fs::temp_directory_path() / ("perfsim-events-" + std::to_string(getpid()));
  Run() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "spec.toml") << kSpec;
    const auto synth = perfsim::testing::run_command(
        PERFSIM_EXE, "synth " + (dir / "spec.toml").string() + " -o " + (dir / "host.perfcap").string());
    INFO(synth.err);
    REQUIRE(synth.code == 0);
  }
  ~Run() { fs::remove_all(dir); }

  // Serves hosts A (with `events`, TOML [[host.event]] tables) and B on `timeline`, runs the
  // collector with `how`, returns its JSON.
  nlohmann::json collect(const std::string& host_keys, const std::string& events, const std::string& how) {
    const std::string host = "[[host]]\nlisten = \"127.0.0.1:0\"\ncapture = \"host.perfcap\"\n" + host_keys;
    std::ofstream(dir / "fleet.toml") << host << events << "\n" << host;
    perfsim::testing::PerfsimServe serve;
    perfsim::testing::ServeStart start;
    start.ready = [](const std::vector<std::string>& lines) { return lines.size() >= 2; };
    const perfsim::Status st = serve.start(PERFSIM_EXE, "--fleet " + (dir / "fleet.toml").string(), start);
    INFO(st.ToString());
    REQUIRE(st.ok());
    const auto a = nlohmann::json::parse(serve.lines().at(0)), b = nlohmann::json::parse(serve.lines().at(1));
    const std::string out = (dir / "out.json").string();
    const auto r =
        perfsim::testing::run_command(PERFSIM_PYTHON,
                                      "-B " + std::string(INTEROP_SCRIPTS_DIR) + "/collector_events.py --a " +
                                          std::to_string(a.at("port").get<int>()) + " --b " +
                                          std::to_string(b.at("port").get<int>()) + " --out " + out + " " + how,
                                      120);
    CHECK(serve.stop() == 0);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    nlohmann::json j;
    std::ifstream(out) >> j;
    return j;
  }
};

}  // namespace

TEST_CASE("reboot: the client's connection is reset and the next one sees a new boot") {
  Run run;
  // At speed 10 the reboot comes 3 real seconds in, the host down for half a second.
  const nlohmann::json j = run.collect("speed = 10\n", "[[host.event]]\nkind = \"reboot\"\nat_s = 30\ndown_s = 5\n",
                                       "reboot --poll 0.2 --tries 100");
  INFO(j.dump(1).substr(0, 4000));
  REQUIRE(j.at("reset_after").is_number());    // a poll on the old connection failed
  REQUIRE(j.at("reconnects").is_number());     // and a new connection answered
  CHECK(j.at("reset_after").get<int>() >= 2);  // not before the reboot (30 s at speed 10 = 3 s)
  const double before = j.at("uptime").at(0).get<double>(), after = j.at("uptime").at(1).get<double>();
  CHECK(before > 15);                             // the capture's host had been up a while
  CHECK(after >= 4.5);                            // counted from the boot, the host down 5 s of it
  CHECK(after < 15);                              // below the capture's interval
  CHECK(j.at("perf_time_s").get<double>() < 15);  // PerfTime restarted with the boot
  CHECK(j.at("checked").get<int>() > 200);
  CHECK(j.at("carried_count").get<int>() == 0);
  CHECK(j.at("pids_checked").get<int>() >= 10);
  CHECK(j.at("pids_same").empty());
}

TEST_CASE("wrap: 32-bit counters wrap and their delta mod 2^32 is the recorded one") {
  Run run;
  const nlohmann::json j =
      run.collect("timeline = \"step\"\n", "[[host.event]]\nkind = \"wrap\"\nsample = 1\n", "wrap --reads 4");
  INFO(j.dump(1).substr(0, 4000));
  const nlohmann::json& pairs = j.at("pairs");
  REQUIRE(pairs.size() == 3);
  for (const nlohmann::json& p : pairs) {
    CHECK(p.at("checked").get<int>() > 50);
    CHECK(p.at("unequal").empty());
  }
  // Between samples 1 and 2 every 32-bit counter that grew wrapped; before, they stood near 2^32.
  CHECK(pairs.at(1).at("grew").get<int>() > 10);
  CHECK(pairs.at(1).at("wrapped") == pairs.at(1).at("grew"));
  CHECK(pairs.at(0).at("wrapped").get<int>() == 0);
  CHECK(pairs.at(0).at("near_top").get<int>() > 10);
}
