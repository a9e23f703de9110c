// Acceptance of Processor Information through a real collector: python3-samba resolves
// "\Processor Information(_Total)\% Processor Time" through Counter 009 against `perfsim serve`
// (step timeline: one sample per Global answer) and formats it between samples, as PDH does.
// The same collector finds the .NET CLR objects a host's OS comes with by name (and not on XP),
// and reads two instances of a custom object apart (issue 30 item 10).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "synth/signal.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"

namespace fs = std::filesystem;
namespace sp = perfsim::subprocess;

namespace {

constexpr int kTicks = 60, kIntervalS = 15, kSeed = 5;

const char kSpec[] = R"([host]
profile = "2016"
seed = 5
duration = "15m"
interval = "15s"
processors = 16

[load]
cpu = { kind = "sine", mean = 50, amplitude = 30, period = "10m" }
)";

// What the spec's generator says the load was over the intervals between the first and last
// samples (synth's Model draws cpu at each tick's time, from seed mix_seed(seed, 1)).
double generator_mean() {
  perfsim::synth::GeneratorSpec g;
  g.kind = perfsim::synth::GeneratorSpec::Kind::kSine;
  g.mean = 50, g.amplitude = 30, g.period_s = 600;
  perfsim::synth::Signal sig(g, perfsim::synth::mix_seed(kSeed, 1));
  double sum = 0;
  for (int k = 0; k < kTicks; ++k) {
    const double v = std::clamp(sig.at(double(k * kIntervalS)), 0.0, 100.0);
    if (k > 0) sum += v;
  }
  return sum / (kTicks - 1);
}

struct Collected {
  int code = -1;
  std::string err;   // the collector's stderr (a path that did not resolve says so)
  nlohmann::json j;  // its output when code is 0
};

// Synthesizes SPEC, serves it with a step timeline (and `serve_args`) and runs the python3-samba
// collector on PATHS for `samples` Global reads.
Collected run_collector(const std::string& spec, const std::string& paths, int samples,
                        const std::string& serve_args = "") {
  const fs::path dir = fs::temp_directory_path() / ("perfsim-formatted-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "spec.toml") << spec; }
  const std::string cap = (dir / "host.perfcap").string();
  const auto synth = perfsim::testing::run_command(PERFSIM_EXE, "synth " + (dir / "spec.toml").string() + " -o " + cap);
  INFO(synth.err);
  REQUIRE(synth.code == 0);

  perfsim::testing::PerfsimServe serve;
  const perfsim::Status st =
      serve.start(PERFSIM_EXE, "--timeline step --listen 127.0.0.1:0 --capture " + cap + serve_args);
  INFO(st.ToString());
  REQUIRE(st.ok());
  const int port = serve.port();

  const std::string out = (dir / "result.json").string();
  const auto r = perfsim::testing::run_command(
      PERFSIM_PYTHON,
      "-B " + std::string(INTEROP_SCRIPTS_DIR) + "/collector_formatted.py --port " + std::to_string(port) + " --out " +
          out + " --samples " + std::to_string(samples) + " " + paths,
      120);
  CHECK(serve.stop() == 0);
  Collected c;
  c.code = r.code;
  c.err = r.out + r.err;
  if (r.code == 0) std::ifstream(out) >> c.j;
  fs::remove_all(dir);
  return c;
}

// The same, for paths that must all resolve: the collector's JSON output.
nlohmann::json collect(const std::string& spec, const std::string& paths, int samples) {
  const Collected c = run_collector(spec, paths, samples);
  INFO(c.err);
  REQUIRE(c.code == 0);
  return c.j;
}

}  // namespace

TEST_CASE("a python3-samba collector reads Processor Information(_Total) through 009 names within 1% of the spec") {
  const nlohmann::json j = collect(kSpec,
                                   "'Processor Information(_Total)\\% Processor Time' "
                                   "'Processor Information(0,_Total)\\% Processor Time' "
                                   "'Processor(_Total)\\% Processor Time'",
                                   kTicks);
  const auto& series = j.at("series");
  const std::vector<double> info = series.at("Processor Information(_Total)\\% Processor Time");
  const std::vector<double> node = series.at("Processor Information(0,_Total)\\% Processor Time");
  const std::vector<double> proc = series.at("Processor(_Total)\\% Processor Time");
  REQUIRE(info.size() == kTicks - 1);
  // The counter set's index is above Base Index, not Processor's 6: the name resolved through 009.
  CHECK(j.at("indices").at("Processor Information(_Total)\\% Processor Time")[1].get<int>() > 1847);
  for (size_t k = 0; k < info.size(); ++k) {
    INFO("interval " << k);
    CHECK(info[k] >= 0);
    CHECK(info[k] <= 100);
    CHECK(info[k] == Approx(proc[k]).margin(1e-9));  // _Total is Processor's
    CHECK(node[k] == Approx(info[k]).margin(1e-9));  // one NUMA node: its total is _Total
  }
  const double overall = j.at("overall").at("Processor Information(_Total)\\% Processor Time").get<double>();
  const double want = generator_mean();
  INFO("collector " << overall << ", generator " << want);
  CHECK(std::abs(overall - want) <= 0.01 * want);
}

TEST_CASE("a python3-samba collector reads an IIS role object through 009 names as the role's generators say") {
  // The iis role's Web Service counters (synth/roles/iis.toml): Get Requests/sec a sine of mean
  // 45, amplitude 25, period 1 h, 20% noise; Maximum Connections a constant 310.
  const char spec[] = R"([host]
profile = "2016"
seed = 9
duration = "15m"
interval = "15s"
roles = ["iis", "mssql"]
)";
  const nlohmann::json j = collect(spec,
                                   "'Web Service(_Total)\\Get Requests/sec' "
                                   "'Web Service(Default Web Site)\\Get Requests/sec' "
                                   "'Web Service(Default Web Site)\\Maximum Connections' "
                                   "'Processor Information(_Total)\\% Processor Time'",
                                   kTicks);
  const auto& series = j.at("series");
  const std::vector<double> total = series.at("Web Service(_Total)\\Get Requests/sec");
  const std::vector<double> site = series.at("Web Service(Default Web Site)\\Get Requests/sec");
  const std::vector<double> max_conn = series.at("Web Service(Default Web Site)\\Maximum Connections");
  REQUIRE(total.size() == kTicks - 1);
  // Roles register after the OS's objects: the role object's index lies above the counter sets'.
  const int web = j.at("indices").at("Web Service(_Total)\\Get Requests/sec")[0].get<int>();
  CHECK(web > j.at("indices").at("Processor Information(_Total)\\% Processor Time")[0].get<int>());
  for (size_t k = 0; k < total.size(); ++k) {
    INFO("interval " << k);
    CHECK(site[k] >= 0);
    CHECK(site[k] <= (45 + 25) * 2.0);                // the sine's peak with five standard deviations of noise
    CHECK(total[k] == Approx(site[k]).margin(1e-9));  // one site: _Total is its value
    CHECK(max_conn[k] == 310);
  }
  // The noiseless sine's mean over the sampled ticks; 20% noise per tick averages to ~2.6% over
  // 59 intervals, so 10% is four standard deviations.
  double want = 0;
  for (int k = 1; k < kTicks; ++k)
    want += std::max(0.0, 45 + 25 * std::sin(2 * 3.141592653589793 * k * kIntervalS / 3600.0));
  want /= kTicks - 1;
  const double overall = j.at("overall").at("Web Service(_Total)\\Get Requests/sec").get<double>();
  INFO("collector " << overall << ", generator without noise " << want);
  CHECK(std::abs(overall - want) <= 0.10 * want);
}

TEST_CASE(
    "a python3-samba collector finds the OS's .NET CLR objects by name where its Windows includes the framework") {
  // windows/os.cpp: the framework (and its CLR counters) is part of Server 2003 on; XP has none.
  const std::string paths =
      "'.NET CLR Memory(w3wp)\\# Gen 0 Collections' '.NET CLR Exceptions(_Global_)\\# of Exceps Thrown' "
      "'.NET CLR LocksAndThreads(powershell)\\Total # of Contentions' '.NET CLR Loading(w3wp)\\Total Assemblies'";
  for (const char* profile : {"2016", "2008", "2003"}) {
    INFO(profile);
    const std::string spec = std::string("[host]\nprofile = \"") + profile + "\"\nduration = \"1m\"\n";
    const Collected c = run_collector(spec, paths, 2);
    INFO(c.err);
    REQUIRE(c.code == 0);
    // Each name resolved through the host's Counter 009 to an object of its Global answer, at
    // indices registered after the OS's (above Base Index), with a count a client can read.
    for (const auto& [path, where] : c.j.at("indices").items()) {
      INFO(path);
      CHECK(where[0].get<int>() > 1847);
      CHECK(c.j.at("overall").at(path).get<double>() > 0);
    }
  }
  // XP refuses anonymous RPC over TCP by default (restrict-remote-clients): turned off to read it.
  for (const auto& [profile, args] :
       {std::pair{"win2000", ""}, std::pair{"xp", " --quirk restrict-remote-clients=off"}}) {
    INFO(profile);
    const std::string spec = std::string("[host]\nprofile = \"") + profile + "\"\nduration = \"1m\"\n";
    const Collected none = run_collector(spec, paths, 2, args);
    INFO(none.err);
    CHECK(none.code == 1);
    CHECK(none.err.find("no object '.NET CLR Memory'") != std::string::npos);
  }
}

TEST_CASE("a python3-samba collector reads different values from two instances of a custom object") {
  const char spec[] = R"([host]
profile = "2016"
seed = 4
duration = "1m"
[[objects]]
name = "Widgets"
instances = { names = ["a", "b"] }
counters = [
  { name = "Queue", type = "PERF_COUNTER_RAWCOUNT", value = { kind = "constant", value = 500 } },
  { name = "Widgets Made/sec", type = "PERF_COUNTER_COUNTER", value = { kind = "constant", value = 50 } },
]
[[objects]]
name = "Gadget"
counters = [
  { name = "Gadgets", type = "PERF_COUNTER_RAWCOUNT", value = { kind = "constant", value = 500 } },
]
)";
  const nlohmann::json j = collect(spec,
                                   "'Widgets(a)\\Queue' 'Widgets(b)\\Queue' 'Widgets(a)\\Widgets Made/sec' "
                                   "'Widgets(b)\\Widgets Made/sec' 'Gadget\\Gadgets'",
                                   3);
  const auto& overall = j.at("overall");
  const double qa = overall.at("Widgets(a)\\Queue").get<double>(), qb = overall.at("Widgets(b)\\Queue").get<double>();
  const double ra = overall.at("Widgets(a)\\Widgets Made/sec").get<double>();
  const double rb = overall.at("Widgets(b)\\Widgets Made/sec").get<double>();
  INFO(qa << " " << qb << " " << ra << " " << rb);
  CHECK(qa != qb);
  CHECK(ra != Approx(rb).epsilon(0.01));
  for (double q : {qa, qb}) {
    CHECK(q >= 300);  // 500 scaled by the instance's factor in 0.6-1.4
    CHECK(q <= 700);
  }
  for (double r : {ra, rb}) {
    CHECK(r >= 30 * 0.99);
    CHECK(r <= 70 * 1.01);
  }
  CHECK(overall.at("Gadget\\Gadgets").get<double>() == 500);  // a single instance reads its generator
}
