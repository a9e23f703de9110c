// Acceptance: python3-samba and impacket collectors (tests/interop's scripts, unchanged) read a
// host with the Transfer/Peer provider installed, over ncacn_ip_tcp from the in-process server,
// and get the provider's objects with the names the host's own tables give.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "../interop/support.h"
#include "helpers.h"
#include "lodctr/providers.h"
#include "perfdata/model.h"
#include "perfdata/validate.h"
#include "replayer/host.h"
#include "server/server.h"
#include "server/winreg_handler.h"
#include "tests/common/served_host.h"

namespace perfsim::lodctr {
namespace {

using namespace test;
using nlohmann::json;
namespace fs = std::filesystem;

struct Env {
  captures::Capture cap;
  DriverRange range;
  std::shared_ptr<replayer::SimulatedHost> host;
  uint32_t tick = 1;
};

const Env& env() {
  static Env e = [] {
    Env x;
    x.cap = host();
    CounterIni ini;
    Symbols syms;
    REQUIRE(load_ini(example("transfer.ini"), ini, syms).ok());
    InstallReport rep;
    REQUIRE(install(x.cap, ini, syms, &rep).ok());
    x.range = rep.range;
    CollectSpec cs;
    REQUIRE(load_collect_spec(example("transfer.collect.toml"), cs).ok());
    REQUIRE(add_provider(x.cap, ini.driver, syms, cs).ok());
    REQUIRE(replayer::SimulatedHost::load(x.cap, {replayer::TimelineMode::kFrozen, x.tick}, x.host).ok());
    return x;
  }();
  return e;
}

json run_collector(const std::string& script) {
  const std::string dir = std::string(LODCTR_INTEROP_WORK_DIR) + "/" + fs::path(script).stem().string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  testing::ServedHost srv(env().host);
  REQUIRE(srv.start().ok());
  const uint16_t port = srv.port();
  const interop::CommandResult r =
      interop::run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " +
                           interop::shell_quote(std::string(INTEROP_SCRIPTS_DIR) + "/" + script) + " --port " +
                           std::to_string(port) + " --out " + interop::shell_quote(dir));
  srv.stop();
  INFO(script << " exited " << r.exit_status << ":\n" << r.output);
  REQUIRE(r.exit_status == 0);
  std::ifstream f(dir + "/result.json");
  json result = json::parse(f, nullptr, false);
  REQUIRE(!result.is_discarded());
  CHECK(result["failures"].empty());
  result["dir"] = dir;
  return result;
}

void check_client(const std::string& script) {
  const Env& e = env();
  const json result = run_collector(script);
  const uint32_t fc = e.range.first_counter;
  // The names as the client decoded "Counter 009".
  std::map<uint32_t, std::string> names;
  for (const json& pair : result["names"]["Counter 009"])
    names[std::stoul(pair[0].get<std::string>())] = pair[1].get<std::string>();
  CHECK(names[fc] == "Transfer");
  CHECK(names[fc + 2] == "Bytes Sent");
  CHECK(names[fc + 4] == "Available Bandwidth");
  CHECK(names[fc + 6] == "Peer");
  CHECK(names[fc + 8] == "Bytes Served");
  // Global as the client received it: the host's bytes, valid, with the provider's objects.
  const json* global = nullptr;
  for (const json& v : result["values"])
    if (v["name"] == "Global") global = &v;
  REQUIRE(global != nullptr);
  const Bytes got = read_file(result["dir"].get<std::string>() + "/" + (*global)["file"].get<std::string>());
  CHECK(got == e.host->content(replayer::PerfKey::kData, "Global", e.tick).data);
  CHECK(!perfdata::has_errors(perfdata::validate(got)));
  perfdata::DataBlock d;
  REQUIRE(perfdata::parse(got, d, {.tolerant = false}).ok());
  const perfdata::Object* transfer = d.find(fc);
  const perfdata::Object* peer = d.find(fc + 6);
  REQUIRE(transfer != nullptr);
  REQUIRE(peer != nullptr);
  std::vector<std::string> counters;
  for (const perfdata::Object* o : {transfer, peer})
    for (const perfdata::CounterDef& c : o->counters) counters.push_back(c.name_index ? names[c.name_index] : "(base)");
  CHECK(counters == std::vector<std::string>{"Bytes Sent", "Available Bandwidth", "(base)", "Bytes Served"});
  REQUIRE(peer->instances.size() == 2);
  CHECK(peer->instances[1].name() == u"Peer 2");
}

TEST_CASE("samba-python reads the Transfer/Peer provider with the host's names", "[interop][samba]") {
  check_client("collector_samba.py");
}

TEST_CASE("impacket reads the Transfer/Peer provider with the host's names", "[interop][impacket]") {
  check_client("collector_impacket.py");
}

}  // namespace
}  // namespace perfsim::lodctr
