// Events on a host's timeline (issue 31, part 2), read by a real client across the event: a
// python3-samba collector (tests/interop/collector_events.py, its layouts and formulas written from
// Microsoft's documentation, not from perfsim) reads host A, which has the event, and host B,
// served from the same capture without it, in one `perfsim serve --fleet` run.
//  - reboot: A's connection is reset, the next one works; System Up Time is below the capture's
//    interval; no cumulative counter of A holds more than B grew since the first read (nothing
//    carried over from before the reboot); every process id but Idle's and System's differs.
//  - wrap: A's 32-bit cumulative counters wrap between two reads while B's delta equals A's
//    delta mod 2^32 for every one of them (the recorded rate).
//  - lodctr/unlodctr: A's Counter 009, Help 009 and HKLM Perflib values (Last Counter, Last Help,
//    009\Counter) read before and after each event gain and lose the provider's pairs at the
//    indices lodctr assigns, Global gains and loses its object (whose counters give the rates
//    the event names), B's objects stay A's others.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>
#include <vector>
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
count = 14  # 2016's boot tree to its fourth svchost (synth/process_tree.cpp)

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
  // The journal of the last collect() (perfsim serve --journal).
  fs::path journal() const { return dir / "journal.jsonl"; }

  nlohmann::json collect(const std::string& host_keys, const std::string& events, const std::string& how) {
    const std::string host = "[[host]]\nlisten = \"127.0.0.1:0\"\ncapture = \"host.perfcap\"\n" + host_keys;
    std::ofstream(dir / "fleet.toml") << host << events << "\n" << host;
    perfsim::testing::PerfsimServe serve;
    perfsim::testing::ServeStart start;
    start.ready = [](const std::vector<std::string>& lines) { return lines.size() >= 2; };
    const perfsim::Status st = serve.start(
        PERFSIM_EXE, "--fleet " + (dir / "fleet.toml").string() + " --journal " + journal().string(), start);
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
  CHECK(before > 15);   // the capture's host had been up a while
  CHECK(after >= 4.5);  // counted from the boot, the host down 5 s of it
  // Counted from a boot between the two reads, however long the reconnect took: less than the
  // host's wall clock moved between them (a carried uptime is `before` plus that).
  const double served = j.at("served_s").get<double>();
  CHECK(after < served);
  CHECK(j.at("perf_time_s").get<double>() < served);  // PerfTime restarted with the boot
  CHECK(j.at("checked").get<int>() > 200);
  CHECK(j.at("carried_count").get<int>() == 0);
  CHECK(j.at("pids_checked").get<int>() >= 10);
  CHECK(j.at("pids_same").empty());

  // The journal: the reboot is an entry of its own, placed where it happened (after A's first
  // calls, before the first call it closed), and the calls it closed read as closed, not WERR_OK.
  const auto r = perfsim::testing::run_command(PERFSIM_EXE, "journal --json " + run.journal().string());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json d = nlohmann::json::parse(r.out);
  REQUIRE(d.at("host_events").size() == 1);
  const nlohmann::json& ev = d.at("host_events").at(0);
  CHECK(ev.at("event").at("kind") == "reboot");
  CHECK(ev.at("event").at("at_s").get<double>() == Approx(30));
  int64_t first_a_us = INT64_MAX, first_closed_us = INT64_MAX;
  int closed = 0, closed_ok = 0;
  std::ifstream lines(run.journal());
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json c = nlohmann::json::parse(line);
    if (c.contains("entry") || c.at("host") != ev.at("host")) continue;
    first_a_us = std::min(first_a_us, c.at("time_us").get<int64_t>());
    if (!c.at("closed").get<bool>()) continue;
    ++closed;
    closed_ok += c.at("status_name") == "WERR_OK" ? 1 : 0;
    first_closed_us = std::min(first_closed_us, c.at("time_us").get<int64_t>());
  }
  CHECK(closed >= 1);
  CHECK(closed_ok == 0);
  CHECK(ev.at("time_us").get<int64_t>() > first_a_us);
  CHECK(ev.at("time_us").get<int64_t>() <= first_closed_us);
  uint64_t closed_in_sessions = 0;
  for (const nlohmann::json& s : d.at("sessions")) closed_in_sessions += s.at("closed").get<uint64_t>();
  CHECK(closed_in_sessions == uint64_t(closed));
  const auto text = perfsim::testing::run_command(PERFSIM_EXE, "journal " + run.journal().string());
  CHECK(text.out.find("host event: reboot on " + ev.at("host").get<std::string>()) != std::string::npos);
  CHECK(text.out.find("closed without an answer: ") != std::string::npos);
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

namespace {

// "svchost#2" -> {"svchost", 2}: the PDH numbering the collector applied.
std::pair<std::string, int> pdh_name(const std::string& n) {
  const size_t hash = n.rfind('#');
  if (hash == std::string::npos) return {n, 0};
  return {n.substr(0, hash), std::stoi(n.substr(hash + 1))};
}

}  // namespace

TEST_CASE("churn: processes exit and start and duplicate names shift while ids stay") {
  Run run;
  // Two of the four svchost processes exit at sample 1 and three start. B, without the event, is
  // the same host at the same samples: what A would list without the churn.
  const nlohmann::json j = run.collect(
      "timeline = \"step\"\n",
      "[[host.event]]\nkind = \"churn\"\nsample = 1\nstart = 3\nexit = 2\nname = \"svchost\"\n", "reads --reads 3");
  INFO(j.dump(1).substr(0, 6000));
  const nlohmann::json &a = j.at("a"), &b = j.at("b");
  REQUIRE(a.size() == 3);
  CHECK(a.at(0).at("process") == b.at(0).at("process"));  // before the event
  for (size_t k = 1; k < 3; ++k) {
    INFO("read " << k);
    std::vector<uint64_t> b_svchost, b_pids, a_pids;
    std::map<uint64_t, int> b_number, a_number;  // pid -> its #N among svchost
    std::map<uint64_t, double> a_elapsed;
    for (const nlohmann::json& p : b.at(k).at("process")) {
      const auto [base, n] = pdh_name(p.at(0).get<std::string>());
      b_pids.push_back(p.at(1).get<uint64_t>());
      if (base == "svchost") b_svchost.push_back(b_pids.back()), b_number[b_pids.back()] = n;
    }
    REQUIRE(b_svchost.size() == 4);
    size_t total_at = 0;
    for (const nlohmann::json& p : a.at(k).at("process")) {
      const auto [base, n] = pdh_name(p.at(0).get<std::string>());
      if (base == "_Total") total_at = a_pids.size();
      a_pids.push_back(p.at(1).get<uint64_t>());
      if (base == "svchost") a_number[a_pids.back()] = n;
      if (!p.at(2).is_null()) a_elapsed[a_pids.back()] = p.at(2).get<double>();
    }
    // A lists B's processes but the first two svchost, in B's order, plus three new ones before _Total.
    std::vector<uint64_t> survivors, fresh;
    for (uint64_t pid : b_pids)
      if (pid != b_svchost[0] && pid != b_svchost[1]) survivors.push_back(pid);
    std::vector<uint64_t> a_old;
    for (uint64_t pid : a_pids)
      (std::find(b_pids.begin(), b_pids.end(), pid) == b_pids.end() ? fresh : a_old).push_back(pid);
    CHECK(a_old == survivors);
    REQUIRE(fresh.size() == 3);
    REQUIRE(total_at >= 3);
    CHECK(std::vector<uint64_t>(a_pids.begin() + long(total_at) - 3, a_pids.begin() + long(total_at)) == fresh);
    // Each surviving svchost keeps its id and its number moves down by the two that exited
    // (Microsoft's example: PID 100 exits, PID 200's svchost#1 becomes svchost).
    for (size_t i = 2; i < b_svchost.size(); ++i) {
      REQUIRE(a_number.count(b_svchost[i]));
      CHECK(a_number[b_svchost[i]] == b_number[b_svchost[i]] - 2);
    }
    // The new ones are the last svchost numbers, started at the event: elapsed below one interval.
    for (size_t i = 0; i < fresh.size(); ++i) {
      CHECK(a_number[fresh[i]] == int(b_svchost.size() - 2 + i));
      CHECK(a_elapsed[fresh[i]] < 15.0 * double(k) + 0.5);
      CHECK(a_elapsed[fresh[i]] >= 15.0 * double(k - 1) - 0.5);
    }
    CHECK(a.at(k).at("bad_parents").get<int>() == 0);
    CHECK(a.at(k).at("threads").get<int>() < b.at(k).at("threads").get<int>());  // the exited ones' threads
  }
}

TEST_CASE("provider-fail: a provider's objects vanish and come back or stay gone") {
  Run run;
  // PhysicalDisk (234) and LogicalDisk (236), perfdisk.dll's objects, fail at sample 1.
  for (const bool disabled : {false, true}) {
    INFO((disabled ? "disabled for good" : "back after 15 s"));
    const std::string for_s = disabled ? "" : "for_s = 15\n";
    const nlohmann::json j = run.collect(
        "timeline = \"step\"\n", "[[host.event]]\nkind = \"provider-fail\"\nsample = 1\nobjects = [234, 236]\n" + for_s,
        "reads --reads 4");
    INFO(j.dump(1).substr(0, 3000));
    const nlohmann::json &a = j.at("a"), &b = j.at("b");
    REQUIRE(a.size() == 4);
    for (size_t k = 0; k < 4; ++k) {
      INFO("read " << k);
      std::vector<std::string> expected;  // B's objects, less the provider's while it is failed
      const bool failed = k == 1 || (disabled && k > 1);
      for (const nlohmann::json& o : b.at(k).at("objects"))
        if (!failed || (o != "PhysicalDisk" && o != "LogicalDisk")) expected.push_back(o.get<std::string>());
      CHECK(a.at(k).at("objects").get<std::vector<std::string>>() == expected);
      CHECK(a.at(k).at("process") == b.at(k).at("process"));  // everything else as it was
    }
    const auto names = b.at(0).at("objects").get<std::vector<std::string>>();
    CHECK(std::find(names.begin(), names.end(), "PhysicalDisk") != names.end());
    CHECK(std::find(names.begin(), names.end(), "LogicalDisk") != names.end());
  }
}

TEST_CASE("lodctr and unlodctr: the name tables, Last Counter and Global change under a running collector") {
  Run run;
  // MyApp loads at sample 1 and Other at 2; MyApp leaves at 3 (below Other: Last Counter stays),
  // Other at 4 (the top: Last Counter goes back down). One Global per sample on a step timeline.
  const std::string events =
      "[[host.event]]\nkind = \"lodctr\"\nsample = 1\nobject = \"MyApp\"\n"
      "counters = [\"Requests/sec\", \"Errors/sec\", \"Bytes/sec\"]\n"
      "[[host.event]]\nkind = \"lodctr\"\nsample = 2\nobject = \"Other\"\ncounters = [\"Items/sec\"]\n"
      "[[host.event]]\nkind = \"unlodctr\"\nsample = 3\nobject = \"MyApp\"\n"
      "[[host.event]]\nkind = \"unlodctr\"\nsample = 4\nobject = \"Other\"\n";
  const nlohmann::json j = run.collect("timeline = \"step\"\n", events, "names --reads 6");
  const nlohmann::json &a = j.at("a"), &b = j.at("b");
  REQUIRE(a.size() == 6);
  auto name = [&](size_t k, uint64_t index) {
    const nlohmann::json& t = a.at(k).at("counter");
    const auto it = t.find(std::to_string(index));
    return it == t.end() ? std::string() : it->get<std::string>();
  };
  auto objects = [&](size_t k) { return a.at(k).at("objects").get<std::vector<std::string>>(); };
  auto has = [](const std::vector<std::string>& v, const char* x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  const uint64_t l0 = a.at(0).at("last_counter"), h0 = a.at(0).at("last_help");
  INFO("Last Counter " << l0 << ", Last Help " << h0);
  REQUIRE(l0 > 1000);  // a 2016 host's tables
  CHECK(name(0, l0 + 2).empty());
  CHECK_FALSE(has(objects(0), "MyApp"));

  // lodctr MyApp: object at Last Counter + 2, its counters at the next even indices, help at odd.
  const uint64_t l1 = l0 + 2 + 2 * 3, h1 = h0 + 2 + 2 * 3;
  CHECK(a.at(1).at("last_counter") == l1);
  CHECK(a.at(1).at("last_help") == h1);
  CHECK(a.at(1).at("declared_last").at(1) == std::to_string(l1));  // the Counter table's "1" entry
  CHECK(name(1, l0 + 2) == "MyApp");
  CHECK(name(1, l0 + 4) == "Requests/sec");
  CHECK(name(1, l0 + 6) == "Errors/sec");
  CHECK(name(1, l0 + 8) == "Bytes/sec");
  CHECK(a.at(1).at("help").contains(std::to_string(h0 + 2)));
  CHECK(a.at(1).at("help").contains(std::to_string(h1)));
  CHECK(a.at(1).at("reg_counter").value(std::to_string(l0 + 4), "") == "Requests/sec");  // HKLM Perflib\009 too
  CHECK(objects(1).back() == "MyApp");  // after the recorded objects, as a provider's
  for (size_t k = 0; k < 6; ++k) {      // every other object as B has it
    std::vector<std::string> rest = objects(k);
    std::erase_if(rest, [](const std::string& o) { return o == "MyApp" || o == "Other"; });
    CHECK(rest == b.at(k).at("objects").get<std::vector<std::string>>());
  }

  // lodctr Other: above MyApp; MyApp's counters moved at 10, 20, 30 a second meanwhile.
  const uint64_t l2 = l1 + 2 + 2, h2 = h1 + 2 + 2;
  CHECK(a.at(2).at("last_counter") == l2);
  CHECK(name(2, l1 + 2) == "Other");
  CHECK(name(2, l1 + 4) == "Items/sec");
  CHECK(has(objects(2), "MyApp"));
  CHECK(objects(2).back() == "Other");
  const double seconds = double(a.at(2).at("perf_time").get<int64_t>() - a.at(1).at("perf_time").get<int64_t>()) /
                         a.at(1).at("freq").get<double>();
  REQUIRE(seconds > 1);
  int rate = 10;
  for (const char* c : {"MyApp()\\Requests/sec", "MyApp()\\Errors/sec", "MyApp()\\Bytes/sec"}) {
    INFO(c);
    REQUIRE(a.at(2).at("values").contains(c));
    const double per_s =
        double(a.at(2).at("values").at(c).get<uint64_t>() - a.at(1).at("values").at(c).get<uint64_t>()) / seconds;
    CHECK(per_s == Approx(rate).epsilon(0.01));
    rate += 10;
  }

  // unlodctr MyApp: its names and object are gone; Other's range is above, so Last Counter stays.
  CHECK(name(3, l0 + 2).empty());
  CHECK(name(3, l0 + 4).empty());
  CHECK_FALSE(a.at(3).at("help").contains(std::to_string(h0 + 2)));
  CHECK_FALSE(a.at(3).at("reg_counter").contains(std::to_string(l0 + 4)));
  CHECK(name(3, l1 + 2) == "Other");
  CHECK(a.at(3).at("last_counter") == l2);
  CHECK(a.at(3).at("last_help") == h2);
  CHECK_FALSE(has(objects(3), "MyApp"));
  CHECK(has(objects(3), "Other"));

  // unlodctr Other, the top: Last Counter/Help go back to what the host had, the tables too.
  CHECK(a.at(4).at("last_counter") == l0);
  CHECK(a.at(4).at("last_help") == h0);
  CHECK(a.at(4).at("counter") == a.at(0).at("counter"));
  CHECK(a.at(4).at("help") == a.at(0).at("help"));
  CHECK(a.at(4).at("reg_counter") == a.at(0).at("reg_counter"));
  CHECK_FALSE(has(objects(4), "Other"));
  CHECK(a.at(5).at("last_counter") == l0);

  // The journal: each event an entry of its own, with its object.
  const auto r = perfsim::testing::run_command(PERFSIM_EXE, "journal --json " + run.journal().string());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json d = nlohmann::json::parse(r.out);
  std::vector<std::string> kinds;
  for (const nlohmann::json& e : d.at("host_events"))
    kinds.push_back(e.at("event").at("kind").get<std::string>() + " " + e.at("event").at("object").get<std::string>());
  CHECK(kinds == std::vector<std::string>{"lodctr MyApp", "lodctr Other", "unlodctr MyApp", "unlodctr Other"});
}
