// `perfsim diff`: two synth hosts of different profiles differ by the objects each one's name
// table names, a capture equals itself, an instance removed or a value changed in the synth spec
// is found and nothing else, --json parses, exit codes 0 / 1 / 2 as diff(1).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "captures/reader.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace {

using nlohmann::json;
using perfsim::testing::run_command;

// A one-minute host of `profile` with a custom object whose instances and first counter's value
// the caller picks: the route a changed host is made by, independent of diff.
std::string synth_host(const std::filesystem::path& dir, const std::string& name, const std::string& profile,
                       const std::string& instances, int queued) {
  const std::string spec = (dir / (name + ".toml")).string(), out = (dir / (name + ".perfcap")).string();
  std::ofstream(spec)
      << "[host]\nname = \"LAB01\"\nprofile = \"" << profile
      << "\"\nseed = 3\nstart = 2024-03-01T08:00:00Z\nduration = \"1m\"\ninterval = \"15s\"\n"
         "[processes]\ncount = 6\n"
         "[[objects]]\nname = \"Widget Service\"\nprovider = \"WIDGETS\"\n"
         "instances = { names = "
      << instances
      << ", total = false }\n"
         "[[objects.counters]]\nname = \"Widgets Queued\"\ntype = \"PERF_COUNTER_RAWCOUNT\"\nvalue = "
      << queued << "\n[[objects.counters]]\nname = \"Widgets/sec\"\ntype = \"PERF_COUNTER_COUNTER\"\nvalue = 40\n";
  const auto r = run_command(PERFSIM_EXE, "synth " + spec + " --out " + out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return out;
}

json diff_json(const std::string& a, const std::string& b, const std::string& extra, int expect_code) {
  const auto r = run_command(PERFSIM_EXE, "diff " + a + " " + b + " --json " + extra);
  INFO(r.err);
  REQUIRE(r.code == expect_code);
  return json::parse(r.out);
}

// The object names of tick 1 (Global and Costly), each named by the capture's own 009 table: read
// with the model, not with diff's code.
std::set<std::string> object_names(const std::string& path) {
  perfsim::captures::Capture cap;
  REQUIRE(perfsim::captures::read_capture(path, cap).ok());
  std::map<uint32_t, std::string> names;
  for (const auto& t : cap.names) {
    perfsim::perfdata::NameTable nt;
    if (t.lang == "009" && perfsim::perfdata::parse_names(t.counter, nt).ok()) names = nt.to_map();
  }
  REQUIRE(!names.empty());
  std::set<std::string> out;
  for (const auto& q : cap.records) {
    if (q.tick != 1 || (q.value_name != "Global" && q.value_name != "Costly")) continue;
    perfsim::perfdata::DataBlock b;
    REQUIRE(perfsim::perfdata::parse(q.payload, b).ok());
    for (const auto& o : b.objects) {
      REQUIRE(names.count(o.name_index));
      out.insert(names.at(o.name_index));
    }
  }
  return out;
}

std::set<std::string> minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  for (const auto& x : a)
    if (!b.count(x)) out.insert(x);
  return out;
}

std::set<std::string> as_set(const json& j) { return j.get<std::set<std::string>>(); }

}  // namespace

TEST_CASE("perfsim diff: 2016 against 2022 lists the objects each host's own name table names") {
  perfsim::testing::TempDir dir("perfsim-diff");
  const std::string a = synth_host(dir.path, "a", "2016", "[\"alpha\"]", 5);
  const std::string b = synth_host(dir.path, "b", "2022", "[\"alpha\"]", 5);
  const json j = diff_json(a, b, "", 1);
  CHECK(j["same"] == false);
  const std::set<std::string> in_a = object_names(a), in_b = object_names(b);
  const std::set<std::string> only_a = minus(in_a, in_b), only_b = minus(in_b, in_a);
  REQUIRE(!only_a.empty());
  REQUIRE(!only_b.empty());
  CHECK(as_set(j["objects"]["only_a"]) == only_a);
  CHECK(as_set(j["objects"]["only_b"]) == only_b);
  CHECK(only_a.count("Process"));  // 2022's process-v1-disabled drops PerfProc (synth/README.md)
  bool profile_seen = false;
  for (const json& c : j["host"])
    if (c["what"] == "profile") profile_seen = c["a"] == "2016" && c["b"] == "2022";
  CHECK(profile_seen);
  // The text report: counts first, the same names.
  const auto r = run_command(PERFSIM_EXE, "diff " + a + " " + b + " --limit 0");
  CHECK(r.code == 1);
  CHECK(r.out.find("objects only in A: " + std::to_string(only_a.size()) + "\n") != std::string::npos);
  for (const std::string& name : only_b) CHECK(r.out.find("\n  " + name + "\n") != std::string::npos);
}

TEST_CASE("perfsim diff: a capture against itself is the same, in sample and summary mode") {
  perfsim::testing::TempDir dir("perfsim-diff");
  const std::string a = synth_host(dir.path, "a", "2016", "[\"alpha\", \"beta\"]", 5);
  for (const std::string mode : {"", "--summary", "-k 3"}) {
    INFO(mode);
    const json j = diff_json(a, a, mode, 0);
    CHECK(j["same"] == true);
    CHECK(j["values"]["compared"].get<int>() > 1000);
    for (const char* k : {"host", "quirks", "fingerprint", "registry", "definitions"}) CHECK(j[k].empty());
    for (const char* k : {"objects", "counters", "instances"}) {
      CHECK(j[k]["only_a"].empty());
      CHECK(j[k]["only_b"].empty());
    }
    CHECK(j["values"]["different"].empty());
  }
  const auto r = run_command(PERFSIM_EXE, "diff " + a + " " + a);
  CHECK(r.code == 0);
  CHECK(r.out.find("same (") != std::string::npos);
}

TEST_CASE("perfsim diff: an instance removed or a value changed in the spec is what differs") {
  perfsim::testing::TempDir dir("perfsim-diff");
  const std::string a = synth_host(dir.path, "a", "2016", "[\"alpha\", \"beta\"]", 500);
  const std::string fewer = synth_host(dir.path, "fewer", "2016", "[\"alpha\"]", 500);
  const std::string more = synth_host(dir.path, "more", "2016", "[\"alpha\", \"beta\"]", 600);
  json j = diff_json(a, fewer, "", 1);
  CHECK(as_set(j["instances"]["only_a"]) == std::set<std::string>{"Widget Service(beta)"});
  CHECK(j["instances"]["only_b"].empty());
  CHECK(j["objects"]["only_a"].empty());

  // Each of several instances reads the constant scaled by its own factor in 0.6-1.4 (synth
  // README, [[objects]]), the same in both captures: B's values are A's times 600/500.
  j = diff_json(a, more, "", 1);
  std::set<std::string> changed;
  for (const json& v : j["values"]["different"]) {
    changed.insert(v["path"]);
    INFO(v.dump());
    CHECK(v["a"].get<double>() >= 300);
    CHECK(v["a"].get<double>() <= 700);
    CHECK(v["b"].get<double>() / v["a"].get<double>() == Approx(1.2).epsilon(0.01));
  }
  CHECK(changed ==
        std::set<std::string>{"Widget Service(alpha)\\Widgets Queued", "Widget Service(beta)\\Widgets Queued"});
  CHECK(j["instances"]["only_a"].empty());

  j = diff_json(a, more, "--summary", 1);
  REQUIRE(j["mode"] == "summary");
  REQUIRE(j["values"]["different"].size() == 2);
  const json& s = j["values"]["different"][0];
  CHECK(s["a"]["min"] == s["a"]["max"]);  // a constant, scaled
  CHECK(s["b"]["mean"].get<double>() / s["a"]["mean"].get<double>() == Approx(1.2).epsilon(0.01));
  CHECK(s["b"]["samples"].get<int>() == s["a"]["samples"].get<int>());
  CHECK(s["a"]["samples"].get<int>() >= 4);  // every tick of a one-minute, 15 s capture
}

TEST_CASE("perfsim diff: exit 2 for a bad command line and 1 for a missing input or sample") {
  const std::string cap = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  auto r = run_command(PERFSIM_EXE, "diff " + cap + " " + cap + " --sumary");
  CHECK(r.code == 2);
  CHECK(r.err.find("--summary") != std::string::npos);
  r = run_command(PERFSIM_EXE, "diff " + cap + " " + cap + " --summary --sample 2");
  CHECK(r.code == 2);
  r = run_command(PERFSIM_EXE, "diff " + cap);
  CHECK(r.code == 2);
  r = run_command(PERFSIM_EXE, "diff " + cap + " /nonexistent/b.perfcap");
  CHECK(r.code == 1);
  CHECK(r.err.find("/nonexistent/b.perfcap") != std::string::npos);
  r = run_command(PERFSIM_EXE, "diff " + cap + " " + cap + " --sample 999");
  CHECK(r.code == 1);
  CHECK(r.err.find("tick 999") != std::string::npos);
}

// Microsoft's AppMem sample counters installed with `perfsim lodctr` (fixtures/lodctr): the
// registry values LodCtr writes are what differs.
TEST_CASE("perfsim diff: a capture before and after lodctr of the real AppMem.Ini", "[fixtures]") {
  perfsim::testing::TempDir dir("perfsim-diff");
  const std::string before = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  const std::string after = (dir.path / "after.perfcap").string();
  std::filesystem::copy_file(before, after);
  const auto r = run_command(
      PERFSIM_EXE, "lodctr " + after + " " + std::string(PERFSIM_SOURCE_DIR) + "/../shared/fixtures/lodctr/AppMem.Ini");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json j = diff_json(before, after, "", 1);
  bool last_counter = false, service = false;
  for (const json& c : j["registry"]) {
    const std::string what = c["what"];
    if (what == "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib\\Last Counter")
      last_counter = c["a"] != c["b"] && c["a"].is_string() && c["b"].is_string();
    if (perfsim::iequals(what.substr(0, 37), "SYSTEM\\CurrentControlSet\\Services\\APP"))
      service = c["a"].is_null() && c["b"].is_string();
  }
  CHECK(last_counter);
  CHECK(service);
  CHECK(j["objects"]["only_a"].empty());  // names installed, no provider collecting: no new object
  CHECK(j["objects"]["only_b"].empty());
  CHECK(j["values"]["different"].empty());
}
