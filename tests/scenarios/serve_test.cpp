// Each TCP scenario served by the real `perfsim serve --scenario NAME` on 127.0.0.61-70: a real
// client (impacket, python3-samba) or perfsim's own collector shows the symptom, and the journal
// file, read back by `perfsim journal FILE --scenario NAME`, shows the scenario's diagnosis.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/interop/support.h"

namespace {

namespace fs = std::filesystem;
namespace sp = perfsim::subprocess;
using nlohmann::json;
using perfsim::testing::CommandResult;

CommandResult perfsim_cmd(const std::string& args, int seconds = 120) {
  return perfsim::testing::run_command(PERFSIM_EXE, args, seconds);
}

// `perfsim serve --scenario NAME --listen ADDR:0 --journal FILE` in the background; the first
// stdout line (--json) gives the port.
struct Served {
  perfsim::testing::PerfsimServe serve;
  std::string address, journal;
  uint16_t port = 0;
  Served(const std::string& name, const std::string& addr, const std::string& extra = "") : address(addr) {
    fs::create_directories(SCENARIO_WORK_DIR);
    // Per process: ctest runs two tests of one scenario at once.
    const std::string stem = std::string(SCENARIO_WORK_DIR) + "/" + name + "-" + std::to_string(getpid());
    journal = stem + ".jsonl";
    fs::remove(journal);
    perfsim::testing::ServeStart how;
    how.err_path = stem + ".err";
    const perfsim::Status st = serve.start(
        PERFSIM_EXE,
        "--scenario " + name + " --listen " + addr + ":0 --journal " + journal + " --journal-size 200000 " + extra,
        how);
    INFO(st.ToString());
    REQUIRE(st.ok());
    port = serve.port();
    CHECK(serve.address() == addr);
  }
  int stop() { return serve.stop(std::chrono::seconds(20)); }
  std::string endpoint() const { return address + ":" + std::to_string(port); }
  // After stop(): `perfsim journal FILE --shows-diagnosis --scenario NAME --json` (exit 0: the diagnosis is shown).
  json diagnosis(const std::string& name) {
    REQUIRE(stop() == 0);
    const CommandResult r = perfsim_cmd("journal " + journal + " --json --shows-diagnosis --scenario " + name);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    return json::parse(r.out).at("sessions");
  }
};

CommandResult python(const std::string& script_and_args, int seconds) {
  return perfsim::testing::run_command(PERFSIM_PYTHON, "-B " + script_and_args, seconds);
}

// `perfsim query` exits 1 when an answer is an error (busy-exchange's ERROR_BUSY), else 0.
json query_json(const Served& s, const std::string& args, int code = 0) {
  const CommandResult r = perfsim_cmd("query " + s.endpoint() + " --json " + args);
  INFO(r.out << r.err);
  REQUIRE(r.code == code);
  return json::parse(r.out);
}

// Some session of a diagnosis (Served::diagnosis) asked `value` (QueryValue).
bool asked(const json& sessions, const std::string& value) {
  for (const json& d : sessions)
    if (d.at("values").contains(value)) return true;
  return false;
}

std::set<std::string> object_names(const json& answer) {
  std::set<std::string> names;
  for (const json& o : answer.at("objects")) names.insert(o.at("object").get<std::string>());
  return names;
}

}  // namespace

TEST_CASE("perfsim scenarios lists every built-in one, show cites its source, unknown names exit 2 listing them") {
  CommandResult r = perfsim_cmd("scenarios --json");
  REQUIRE(r.code == 0);
  const json list = json::parse(r.out);
  REQUIRE(list.size() >= 9);
  for (const json& s : list) {
    const std::string name = s.at("name");
    INFO(name);
    const CommandResult shown = perfsim_cmd("scenarios show " + name + " --json");
    REQUIRE(shown.code == 0);
    const json j = json::parse(shown.out);
    CHECK(j.at("source").get<std::string>().rfind("https://", 0) == 0);
    CHECK(j.at("source") == s.at("source"));
    const CommandResult text = perfsim_cmd("scenarios show " + name);
    CHECK(text.out.find("Source: " + j.at("source").get<std::string>()) != std::string::npos);
    CHECK(text.out.find("A correct collector: ") != std::string::npos);
  }
  r = perfsim_cmd("scenarios show win95-bluescreen");
  CHECK(r.code == 2);
  CHECK(r.err.find("win2000-more-data-loop") != std::string::npos);
  r = perfsim_cmd("serve --scenario win95-bluescreen");
  CHECK(r.code == 2);
  CHECK(r.err.find("busy-exchange") != std::string::npos);
}

// A read of Counter 009 is no collector tripping on the scenario: its journal must not show the
// diagnosis (the check can fail), except where any call shows it (ERROR_BUSY answers every value).
TEST_CASE(
    "every TCP scenario starts and answers perfsim query on its address and one Counter 009 read does not show its "
    "diagnosis") {
  const json list = json::parse(perfsim_cmd("scenarios --json").out);
  size_t served_count = 0;
  for (const json& s : list) {
    if (s.at("smb")) continue;  // tests/scenarios smb_test.cpp, as root with smbd
    const std::string name = s.at("name");
    INFO(name);
    Served served(name, "127.0.0.69");
    const json shown = json::parse(perfsim_cmd("scenarios show " + name + " --json").out);
    const bool any_call_shows = shown.at("diagnosis").value("busy", false);  // ERROR_BUSY answers every call
    const CommandResult r = perfsim_cmd("query " + served.endpoint() + " \"Counter 009\" --json");
    INFO(r.out << r.err);
    CHECK(r.code == (any_call_shows ? 1 : 0));  // query exits 1 after an error answer
    REQUIRE(served.stop() == 0);
    ++served_count;
    const CommandResult j = perfsim_cmd("journal " + served.journal + " --shows-diagnosis --scenario " + name);
    INFO(j.out << j.err);
    CHECK(j.code == (any_call_shows ? 0 : 1));
    if (!any_call_shows) CHECK(j.err.find("scenario " + name + ": ") != std::string::npos);
  }
  REQUIRE(served_count > 0);
}

TEST_CASE("win2000-more-data-loop: impacket's hBaseRegQueryValue loops, the journal shows the loop") {
  Served s("win2000-more-data-loop", "127.0.0.61");
  // The loop never ends by itself: `timeout` ends it (124) after 4 s.
  const CommandResult r = python(std::string(PERFSIM_SOURCE_DIR) + "/tests/interop/quirk_client.py --address " +
                                     s.address + " --port " + std::to_string(s.port) + " --op hquery --name Global",
                                 4);
  INFO(r.out << r.err);
  REQUIRE(r.code == 124);
  const json d = s.diagnosis("win2000-more-data-loop");
  REQUIRE(d.size() == 1);
  CHECK(d[0].at("growth") == "fixed");
  REQUIRE(d[0].at("loops").size() == 1);
  CHECK(d[0]["loops"][0].at("value") == "Global");
  CHECK(d[0]["loops"][0].at("offers").get<int>() >= 10);
}

TEST_CASE("win2000-more-data-loop: a collector that doubles its buffer gets the data") {
  Served s("win2000-more-data-loop", "127.0.0.61");
  const json a = query_json(s, "Global --growth double --initial 4096");
  REQUIRE(a.size() == 1);
  CHECK(a[0].at("status") == 0);
  CHECK(a[0].at("tries").get<int>() <= 10);
}

TEST_CASE("global-slow-growing: a +16 KB collector needs over a hundred slow calls for a Global past 2 MB") {
  // --quirk comes after the scenario's own: 5 ms instead of 100 keeps the test short.
  Served s("global-slow-growing", "127.0.0.62", "--quirk slow-global:ms=5");
  // --object System: the whole Global is fetched, only one object is printed (the JSON of all of
  // them takes 20 s under ASan).
  const json fixed = query_json(s, "Global --object System --initial 153600 --growth add:16384 --max-tries 400");
  REQUIRE(fixed.size() == 1);
  CHECK(fixed[0].at("status") == 0);
  CHECK(fixed[0].at("bytes").get<uint64_t>() > 2000000);
  CHECK(fixed[0].at("tries").get<int>() > 100);
  const json doubling = query_json(s, "Global --object System --initial 153600 --growth double");
  CHECK(doubling[0].at("status") == 0);
  CHECK(doubling[0].at("tries").get<int>() <= 8);
  const json d = s.diagnosis("global-slow-growing");
  REQUIRE(d.size() == 2);
  CHECK(d[0].at("growth") == "plus-n");
  CHECK(d[0].at("growth_n") == 16384);
  CHECK(d[1].at("growth") == "doubling");
}

TEST_CASE("busy-exchange: every poll of the first minute gets ERROR_BUSY, the journal counts the busy answers") {
  Served s("busy-exchange", "127.0.0.63");
  const json a = query_json(s, "Global --count 3 --interval 0.2", 1);
  REQUIRE(a.size() == 3);
  for (const json& poll : a) CHECK(poll.at("status") == 170);
  const json d = s.diagnosis("busy-exchange");
  REQUIRE(d.size() == 1);
  CHECK(d[0].at("busy").at("answers").get<int>() >= 3);
}

TEST_CASE("server2022-process-v2: Global has Process V2 and no Process or Thread") {
  Served s("server2022-process-v2", "127.0.0.64");
  const std::set<std::string> names = object_names(query_json(s, "Global").at(0));
  CHECK(names.count("Process V2") == 1);
  CHECK(names.count("Process") == 0);
  CHECK(names.count("Thread") == 0);
  CHECK(names.count("Processor") == 1);
  // A collector asking for Process by index gets no such object.
  CHECK(query_json(s, "230").at(0).at("objects").empty());
  // The journal shows 230 answered WERR_OK with no object (the scenario's [[diagnosis.call]]).
  const json d = s.diagnosis("server2022-process-v2");
  CHECK(asked(d, "230"));
}

TEST_CASE("perfproc-disabled: Disable Performance Counters = 1 under PerfProc, its objects in no answer") {
  Served s("perfproc-disabled", "127.0.0.65");
  const std::set<std::string> names = object_names(query_json(s, "Global").at(0));
  CHECK(names.count("Process") == 0);
  CHECK(names.count("Thread") == 0);
  CHECK(names.count("Processor") == 1);
  CHECK(query_json(s, "Costly").at(0).at("objects").empty());
  CHECK(query_json(s, "230").at(0).at("objects").empty());
  const CommandResult r = python(std::string(PERFSIM_SOURCE_DIR) + "/tests/scenarios/samba_reads.py --address " +
                                     s.address + " --port " + std::to_string(s.port) +
                                     " value --key 'SYSTEM\\CurrentControlSet\\Services\\PerfProc\\Performance'"
                                     " --value 'Disable Performance Counters'",
                                 60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out).at("dword") == 1);
  // 230 with no object, then the Services value that exists only where the provider is disabled.
  const json d = s.diagnosis("perfproc-disabled");
  CHECK(asked(d, "230"));
  CHECK(asked(d, "Disable Performance Counters"));
}

TEST_CASE("no-instances: Network Interface is multi-instance with no instances, the objects after it read") {
  Served s("no-instances", "127.0.0.66");
  const json global = query_json(s, "Global").at(0);
  bool found = false, after = false;
  for (const json& o : global.at("objects")) {
    if (found && !o.at("instances").empty()) after = true;  // a later object still parses with its instances
    if (o.at("object") == "Network Interface") {
      found = true;
      CHECK(o.at("instances").empty());  // NumInstances 0: no instance, not one unnamed
    }
  }
  CHECK(found);
  CHECK(after);
  // Asked by index, as a collector of Network Interface does.
  const json by_index = query_json(s, "510").at(0);
  size_t empty_510 = 0;
  for (const json& o : by_index.at("objects")) empty_510 += o.at("index") == 510 && o.at("instances").empty();
  CHECK(empty_510 == 1);
  const json d = s.diagnosis("no-instances");
  CHECK(asked(d, "510"));
}

TEST_CASE("corrupt-name-table: python3-samba reads a duplicate name and Last Counter below the highest index") {
  Served s("corrupt-name-table", "127.0.0.67");
  const CommandResult r = python(std::string(PERFSIM_SOURCE_DIR) + "/tests/scenarios/samba_reads.py --address " +
                                     s.address + " --port " + std::to_string(s.port) + " names --lang 009",
                                 60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const json t = json::parse(r.out);
  CHECK(t.at("last_counter").get<int>() < t.at("highest").get<int>());
  CHECK(t.at("highest").get<int>() - t.at("last_counter").get<int>() >= 20);
  CHECK(t.at("duplicates").size() >= 1);
  // Counter 009, then Perflib's Last Counter, in that order.
  const json d = s.diagnosis("corrupt-name-table");
  CHECK(asked(d, "Counter 009"));
  CHECK(asked(d, "Last Counter"));
}

TEST_CASE(
    "german-host: python3-samba reads Prozessor in Counter 007, CurrentLanguage and HKPN, Processor in 009 and "
    "HKPT, at one index") {
  Served s("german-host", "127.0.0.68");
  const auto table = [&s](const std::string& lang, const std::string& hive) {
    const CommandResult r = python(std::string(PERFSIM_SOURCE_DIR) + "/tests/scenarios/samba_reads.py --address " +
                                       s.address + " --port " + std::to_string(s.port) + " names --hive " + hive +
                                       (lang.empty() ? "" : " --lang " + lang) + " --index 238 --index 6 --index 230",
                                   60);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    return json::parse(r.out).at("names");
  };
  for (const auto& [lang, hive] : {std::pair{"007", "data"}, {"CurrentLanguage", "data"}, {"", "nls"}}) {
    INFO(lang << " over " << hive);
    const json de = table(lang, hive);
    CHECK(de.at("238") == "Prozessor");
    CHECK(de.at("6") == "Prozessorzeit (%)");
    CHECK(de.at("230") == "Prozess");
  }
  for (const auto& [lang, hive] : {std::pair{"009", "data"}, {"", "text"}}) {
    INFO(lang << " over " << hive);
    const json en = table(lang, hive);
    CHECK(en.at("238") == "Processor");
    CHECK(en.at("6") == "% Processor Time");
    CHECK(en.at("230") == "Process");
  }
  // The data is the same whichever table names it: object 238 is in Global once.
  size_t processors = 0;
  const json global = query_json(s, "Global").at(0);
  for (const json& o : global.at("objects")) processors += o.at("index") == 238;
  CHECK(processors == 1);
  // Counter 007 and the NLSTEXT Counter answered with the small German table, then the TEXT one.
  const json d = s.diagnosis("german-host");
  CHECK(asked(d, "Counter 007"));
  CHECK(asked(d, "Counter CurrentLanguage"));
  CHECK(asked(d, "Counter"));
}

// A collector that connects again after the reboot's reset reads the new boot: its journal shows
// the diagnosis; one that gives up at the reset (one try to reconnect, while the host is down)
// does not (tests/interop/collector_events.py, python3-samba; A and B the same host here).
TEST_CASE(
    "reset-after-reboot: a collector that reconnects shows the diagnosis and one that gives up at the reset does not") {
  for (const int reconnects : {30, 1}) {
    INFO("reconnects " << reconnects);
    Served s("reset-after-reboot", "127.0.0.70");
    const std::string port = std::to_string(s.port);
    const CommandResult r = python(std::string(INTEROP_SCRIPTS_DIR) + "/collector_events.py --address 127.0.0.70 --a " +
                                       port + " --b " + port + " --out " + s.journal +
                                       ".out reboot --poll 1 --tries 30 --reconnects " + std::to_string(reconnects),
                                   120);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    REQUIRE(s.stop() == 0);
    const CommandResult j = perfsim_cmd("journal " + s.journal + " --shows-diagnosis --scenario reset-after-reboot");
    INFO(j.out << j.err);
    CHECK(j.code == (reconnects > 1 ? 0 : 1));
  }
}

// Issue 56: the old connection's next call after the reboot got an orderly close (FIN, recv()
// returning b""), and impacket's rrp.hBaseRegQueryValue spun on it. A rebooted host has no state
// for the connection, so it answers the client's next segment with a RST (RFC 9293, 3.10.7.1):
// impacket itself raises ConnectionResetError at that call, python3-samba NT_STATUS_CONNECTION_RESET,
// and tshark sees the server's RST on impacket's connection and no FIN from the server.
TEST_CASE("reset-after-reboot: the old connection is reset and the clients' own calls raise at once") {
  for (const std::string client : {"impacket", "samba"}) {
    INFO(client);
    Served s("reset-after-reboot", client == "impacket" ? "127.0.0.71" : "127.0.0.72");
    const std::string pcap = s.journal + ".pcapng";
    perfsim::interop::PacketRecorder rec;
    const perfsim::Status st = rec.start(s.port, pcap);
    INFO(st.ToString() << rec.log());
    REQUIRE(st.ok());
    const CommandResult r =
        python(std::string(INTEROP_SCRIPTS_DIR) + "/reboot_reset.py --client " + client + " --address " + s.address +
                   " --port " + std::to_string(s.port) + " --seconds 40 --interval 0.5",
               90);
    rec.stop();
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const json got = json::parse(r.out);
    CHECK(got.at("polls").get<int>() >= 2);  // it read the first boot before the reboot
    // At the first call after the reboot, not after a client timeout: the polls are 0.5 s apart.
    CHECK(got.at("since_last_answer_s").get<double>() < 3);
    CHECK(s.stop() == 0);
    if (client == "samba") {
      CHECK(got.at("error") == "NTSTATUSError");
      CHECK(got.at("status") == 0xC000020D);  // NT_STATUS_CONNECTION_RESET ([MS-ERREF] 2.3.1)
      continue;
    }
    CHECK(got.at("error") == "ConnectionResetError");
    CHECK(got.at("errno") == 104);  // ECONNRESET
    const std::string conn =
        "tcp.port==" + std::to_string(got.at("local_port").get<int>()) + " && tcp.srcport==" + std::to_string(s.port);
    const auto frames = [&](const std::string& filter) {
      const CommandResult t = perfsim::testing::run_command(
          "tshark", "-n -r " + pcap + " -Y '" + filter + "' -T fields -e frame.number", 60);
      INFO(t.err);
      REQUIRE(t.code == 0);
      return std::count(t.out.begin(), t.out.end(), '\n');
    };
    CHECK(frames(conn + " && tcp.flags.reset==1") >= 1);
    CHECK(frames(conn + " && tcp.flags.fin==1") == 0);
  }
}

namespace {

// The instance names of `object` in a `perfsim query --json` answer of one value.
std::vector<std::string> instance_names(const json& answer, const std::string& object) {
  std::vector<std::string> out;
  for (const json& v : answer)
    for (const json& o : v.at("objects"))
      if (o.at("object") == object)
        for (const json& i : o.at("instances")) out.push_back(i.at("instance").get<std::string>());
  return out;
}

}  // namespace

// 128 processors: Processor Information in two groups of 64, Processor in one. A collector that
// reads Processor (238) shows the diagnosis; one that reads Processor Information (1848) does not.
TEST_CASE("processor-groups: Processor Information lists two groups and the legacy Processor one") {
  for (const std::string value : {"238", "1848"}) {
    INFO("value " << value);
    Served s("processor-groups", "127.0.0.71");
    const json a = query_json(s, value);
    const std::vector<std::string> names = instance_names(a, value == "238" ? "Processor" : "Processor Information");
    std::vector<std::string> expected;
    if (value == "238") {
      for (int i = 0; i < 64; ++i) expected.push_back(std::to_string(i));
    } else {
      for (int g = 0; g < 2; ++g)
        for (int i = 0; i < 64; ++i) expected.push_back(std::to_string(g) + "," + std::to_string(i));
      expected.insert(expected.end(), {"0,_Total", "1,_Total"});
    }
    expected.push_back("_Total");
    CHECK(names == expected);
    REQUIRE(s.stop() == 0);
    const CommandResult j = perfsim_cmd("journal " + s.journal + " --shows-diagnosis --scenario processor-groups");
    INFO(j.out << j.err);
    CHECK(j.code == (value == "238" ? 0 : 1));
  }
}
