// `perfsim series`: relog's CSV layout over a capture, each value the one `perfsim dump` formats
// between the same two samples, wildcard instances expanded, bad paths a usage error.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/csv_cells.h"
#include "tests/common/child_cpu.h"
#include "tests/common/run_command.h"
#include "tests/common/scale_inputs.h"
#include "tests/common/temp_dir.h"

namespace {

using nlohmann::json;
const std::string kCapture = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";

// dump's formatted value of OBJECT(INSTANCE)\COUNTER between samples k-1 and k.
double dumped(int k, const std::string& object, const std::string& instance, const std::string& counter) {
  const auto r = perfsim::testing::run_command(
      PERFSIM_EXE, "dump " + kCapture + " --json -k " + std::to_string(k) + " --object '" + object + "'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json dump = json::parse(r.out);  // kept: a range over a temporary's member would dangle
  for (const json& o : dump["objects"])
    for (const json& i : o["instances"])
      if (i.value("instance", "") == instance)
        for (const json& c : i["counters"])
          if (c["counter"] == counter) return c["value"].get<double>();
  FAIL("dump has no " << object << "(" << instance << ")\\" << counter);
  return 0;
}

}  // namespace

TEST_CASE("perfsim series: relog's CSV, one row per sample, values as dump formats them, (*) expanded") {
  const auto r = perfsim::testing::run_command(
      PERFSIM_EXE, "series " + kCapture +
                       " -c '\\Processor(_Total)\\% Processor Time' -c '\\\\ANY\\Memory\\Page Faults/sec'"
                       " -c '\\Processor(*)\\% User Time'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(perfsim::testing::csv_cells(line));
  REQUIRE(rows.size() == 21);  // the header and the capture's 20 samples (perfsim inspect: ticks 0-19)
  const auto& head = rows[0];
  CHECK(head[0] == "(PDH-CSV 4.0) (Coordinated Universal Time)(0)");
  CHECK(head[1] == "\\\\PERFSIM-2016\\Processor(_Total)\\% Processor Time");
  CHECK(head[2] == "\\\\PERFSIM-2016\\Memory\\Page Faults/sec");  // the host's own name, not the path's
  REQUIRE(head.size() == 3 + 5);                                  // 4 processors and _Total
  CHECK(head[7] == "\\\\PERFSIM-2016\\Processor(_Total)\\% User Time");
  for (const auto& row : rows) CHECK(row.size() == head.size());
  CHECK(rows[1][0].size() == 23);  // MM/DD/YYYY HH:MM:SS.mmm
  CHECK(rows[1][1] == " ");        // a rate has no value at the first sample
  for (const int k : {1, 7, 19}) {
    INFO("sample " << k);
    CHECK(std::stod(rows[k + 1][1]) == Approx(dumped(k, "Processor", "_Total", "% Processor Time")).epsilon(1e-12));
    CHECK(std::stod(rows[k + 1][2]) == Approx(dumped(k, "Memory", "", "Page Faults/sec")).epsilon(1e-12));
    CHECK(std::stod(rows[k + 1][3]) == Approx(dumped(k, "Processor", "0", "% User Time")).epsilon(1e-12));
  }
  CHECK(rows[2][0] > rows[1][0]);  // later samples, later times
}

TEST_CASE("perfsim series --json parses, a bad path is a usage error, a missing counter names itself") {
  auto r = perfsim::testing::run_command(PERFSIM_EXE,
                                         "series " + kCapture + " --json -c '\\System\\Processor Queue Length'");
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  REQUIRE(j["columns"].size() == 1);
  REQUIRE(j["rows"].size() == 20);
  CHECK(j["rows"][0]["values"][0].is_number());  // an instantaneous count has a value from the first sample
  r = perfsim::testing::run_command(PERFSIM_EXE, "series " + kCapture + " -c 'Processor\\% Processor Time'");
  CHECK(r.code == 2);
  CHECK(r.err.find("write it as perfmon does") != std::string::npos);
  r = perfsim::testing::run_command(PERFSIM_EXE, "series " + kCapture + " -c '\\Processor(_Total)\\% Nap Time'");
  CHECK(r.code == 1);
  CHECK(r.err.find("has no counter '% Nap Time'") != std::string::npos);
  r = perfsim::testing::run_command(PERFSIM_EXE, "series " + kCapture + " -c '\\Processor\\% Processor Time'");
  CHECK(r.code == 1);
  CHECK(r.err.find("(*) for all") != std::string::npos);
}

// Issue 44 (C2): each column scanned every instance of its object, quadratic in instances
// (60,000 instances: 15.1 s).
TEST_CASE("perfsim series: (*) over n instances is linear in n") {
  perfsim::testing::TempDir dir("perfsim-series-scale");
  const auto series_cpu = [&](int n) {
    const std::string in = (dir.path / ("many-" + std::to_string(n) + ".perfcap")).string();
    perfsim::testing::write_many_instances(in, n);
    perfsim::testing::CommandResult r;
    const double cpu = perfsim::testing::child_cpu_seconds(
        [&] { r = perfsim::testing::run_command(PERFSIM_EXE, "series " + in + " -c '\\230(*)\\330'", 120); });
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto header = perfsim::testing::csv_cells(r.out.substr(0, r.out.find('\n')));
    CHECK(header.size() == size_t(n) + 1);
    return cpu;
  };
  const double small = series_cpu(5000), large = series_cpu(20000);
  INFO(small << " s, " << large << " s");
  CHECK(large / small < 8);  // ~4 when linear, ~16 when quadratic
}
