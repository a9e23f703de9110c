// Server roles ([host] roles, synth/roles/*.toml): each role's objects are served with the
// counters and types its file gives, registered after the OS's objects as lodctr would have
// registered them, and formatted values stay within what their generators describe.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "captures/registry_values.h"
#include "core/utf16.h"
#include "helpers.h"
#include "perfdata/counters.h"
#include "perfdata/names.h"
#include "synth/profiles.h"
#include "synth/roles.h"
#include "synth/synth.h"
#include "windows/os.h"

using namespace perfsim;
using namespace perfsim::synth;
using test::decode;
using test::make;
using test::names_of;

namespace {

const captures::QueryRecord& global(const captures::Capture& c, uint32_t tick) {
  for (const captures::QueryRecord& r : c.records)
    if (r.value_name == "Global" && r.tick == tick) return r;
  throw std::runtime_error("no Global at tick " + std::to_string(tick));
}

const perfdata::Object* find_object(const perfdata::DataBlock& b, const std::map<uint32_t, std::string>& names,
                                    const std::string& name) {
  for (const perfdata::Object& o : b.objects)
    if (auto it = names.find(o.name_index); it != names.end() && it->second == name) return &o;
  return nullptr;
}

std::vector<const ObjectSpec*> all_role_objects() {
  std::vector<const ObjectSpec*> out;
  for (const std::string& r : role_names()) {
    const std::vector<ObjectSpec>* objects = nullptr;
    REQUIRE(role_objects(r, objects).ok());
    for (const ObjectSpec& o : *objects) out.push_back(&o);
  }
  return out;
}

Spec with_all_roles() {
  Spec s = test::small_spec("2016", 3);
  s.roles = role_names();
  return s;
}

}  // namespace

TEST_CASE("every built-in role parses and names the objects the issue lists", "[synth][roles]") {
  CHECK(role_names() == std::vector<std::string>{"iis", "mssql", "hyperv", "dc", "dotnet"});
  std::set<std::string> names;
  for (const ObjectSpec* o : all_role_objects()) {
    names.insert(o->name);
    CHECK(!o->provider.empty());
    CHECK(!o->counters.empty());
  }
  for (const char* want :
       {"Web Service", "APP_POOL_WAS", "W3SVC_W3WP", "ASP.NET", "SQLServer:General Statistics",
        "SQLServer:Buffer Manager", "SQLServer:SQL Statistics", "SQLServer:Databases",
        "Hyper-V Hypervisor Logical Processor", "Hyper-V Virtual Machine Health Summary", "NTDS", "DNS"})
    CHECK(names.count(want) == 1);
}

TEST_CASE("a host with roles serves their objects with the files' counters and types, above the OS's indices",
          "[synth][roles]") {
  const captures::Capture plain = make(test::small_spec("2016", 3));
  const captures::Capture roles = make(with_all_roles());
  const std::map<uint32_t, std::string> names = names_of(roles);
  const uint32_t os_last = names_of(plain).rbegin()->first;

  const perfdata::DataBlock b = decode(global(roles, 1));
  const perfdata::DataBlock p = decode(global(plain, 1));
  // 2016 has the dotnet objects already: its .NET Framework comes with the OS.
  const std::vector<ObjectSpec>* clr = nullptr;
  REQUIRE(role_objects("dotnet", clr).ok());
  REQUIRE(b.objects.size() == p.objects.size() + all_role_objects().size() - clr->size());
  // The OS's objects come first and keep their values: roles draw from no generator the OS uses.
  for (size_t i = 0; i < p.objects.size(); ++i) {
    const perfdata::Object &x = p.objects[i], &y = b.objects[i];
    INFO("object " << x.name_index);
    REQUIRE(x.name_index == y.name_index);
    CHECK(x.counter_block == y.counter_block);
    REQUIRE(x.instances.size() == y.instances.size());
    for (size_t k = 0; k < x.instances.size(); ++k) CHECK(x.instances[k].counter_block == y.instances[k].counter_block);
  }

  // Registered after the OS (whose own .NET objects are in `plain` already) and the roles before
  // them, in order.
  uint32_t previous = os_last;
  std::set<std::string> os_own;
  for (const ObjectSpec& o : *clr) os_own.insert(o.name);
  for (const ObjectSpec* spec : all_role_objects()) {
    INFO(spec->name);
    const perfdata::Object* o = find_object(b, names, spec->name);
    REQUIRE(o != nullptr);
    if (os_own.count(spec->name)) {
      CHECK(o->name_index < os_last);
    } else {
      CHECK(o->name_index > previous);
      previous = o->name_index;
    }
    CHECK((o->num_instances >= 0) == spec->instances.multi);
    if (spec->instances.multi)
      CHECK(size_t(o->num_instances) == spec->instances.names.size() + (spec->instances.total ? 1 : 0));
    size_t k = 0;
    for (const CounterSpec& c : spec->counters) {
      REQUIRE(k < o->counters.size());
      CHECK(names.at(o->counters[k].name_index) == c.name);
      CHECK(o->counters[k].type == c.type);
      k += (c.type == winperf::PERF_RAW_FRACTION || c.type == winperf::PERF_LARGE_RAW_FRACTION) ? 2 : 1;
    }
    CHECK(k == o->counters.size());
  }
}

TEST_CASE("each role provider gets the Performance key lodctr writes, bracketing its indices", "[synth][roles]") {
  const captures::Capture c = make(with_all_roles());
  const std::map<uint32_t, std::string> names = names_of(c);
  const perfdata::DataBlock b = decode(global(c, 0));
  std::map<std::string, std::pair<uint32_t, uint32_t>> range;  // provider -> lowest, highest index
  for (const ObjectSpec* spec : all_role_objects()) {
    const perfdata::Object* o = find_object(b, names, spec->name);
    REQUIRE(o != nullptr);
    auto [it, fresh] = range.try_emplace(spec->provider, o->name_index, o->name_index);
    for (const perfdata::CounterDef& d : o->counters) {
      it->second.first = std::min(it->second.first, d.name_index);
      it->second.second = std::max(it->second.second, d.name_index);
    }
  }
  // W3SVC, WAS, W3SVC_W3WP, ASP.NET, MSSQLSERVER, HvStats, VmmsVirtualMachineStats, NTDS, DNS, .NETFramework
  CHECK(range.size() == 10);
  for (const auto& [provider, r] : range) {
    INFO(provider);
    const std::string key = "SYSTEM\\CurrentControlSet\\Services\\" + provider + "\\Performance";
    const captures::RegistryValue* first = captures::find_value(c, key, "First Counter");
    const captures::RegistryValue* last = captures::find_value(c, key, "Last Counter");
    const captures::RegistryValue* help = captures::find_value(c, key, "First Help");
    REQUIRE(first != nullptr);
    REQUIRE(last != nullptr);
    REQUIRE(help != nullptr);
    CHECK(first->data == captures::reg_dword(r.first));
    CHECK(last->data == captures::reg_dword(r.second));
    CHECK(help->data == captures::reg_dword(r.first + 1));
    CHECK(captures::find_value(c, key, "Library") != nullptr);
  }
}

TEST_CASE("formatted role values stay within their generators' ranges", "[synth][roles]") {
  const captures::Capture c = make(with_all_roles());
  const std::map<uint32_t, std::string> names = names_of(c);
  std::map<std::string, uint32_t> index;
  for (const auto& [i, n] : names) index.try_emplace(n, i);
  const perfdata::DataBlock prev = decode(global(c, 1)), cur = decode(global(c, 2));
  auto values = [&](const std::string& object, const std::string& instance) {
    std::vector<perfdata::InstanceValues> out;
    REQUIRE(perfdata::format_object(&prev, cur, index.at(object), out).ok());
    std::map<std::string, double> v;
    for (const perfdata::InstanceValues& iv : out)
      if (iv.name == instance)
        for (const perfdata::CounterValue& cv : iv.counters) {
          REQUIRE(cv.value.valid());
          v[names.at(cv.name_index)] = cv.value.value;
        }
    REQUIRE(!v.empty());
    return v;
  };
  auto buffer = values("SQLServer:Buffer Manager", "");
  CHECK(buffer["Buffer cache hit ratio"] >= 90);
  CHECK(buffer["Buffer cache hit ratio"] <= 100);
  CHECK(buffer["Target pages"] == 1600000);
  auto web = values("Web Service", "_Total");
  CHECK(web["Get Requests/sec"] >= 0);
  CHECK(web["Get Requests/sec"] < 100);  // mean 45, amplitude 25, noise 20%
  CHECK(web["Current Connections"] <= 300);
  CHECK(web["Service Uptime"] >= 259000);  // PERF_ELAPSED_TIME: started 259,000 s before the first sample
  auto lp = values("Hyper-V Hypervisor Logical Processor", "Hv LP 0");
  CHECK(lp["% Total Run Time"] >= 0);
  CHECK(lp["% Total Run Time"] <= 100);
  // Its _Total averages the logical processors, as Windows' per-processor objects do (a sum
  // would pass 100%).
  double mean = 0;
  for (const char* n : {"Hv LP 0", "Hv LP 1", "Hv LP 2", "Hv LP 3"})
    mean += values("Hyper-V Hypervisor Logical Processor", n)["% Total Run Time"] / 4;
  CHECK(values("Hyper-V Hypervisor Logical Processor", "_Total")["% Total Run Time"] == Approx(mean).margin(1e-6));
  auto gc = values(".NET CLR Memory", "w3wp");
  CHECK(gc["% Time in GC"] >= 0);
  CHECK(gc["% Time in GC"] <= 40);
  auto dbs = values("SQLServer:Databases", "tempdb");
  CHECK(dbs["Percent Log Used"] >= 1);
  CHECK(dbs["Percent Log Used"] <= 90);
}

TEST_CASE("an unknown or repeated role is refused with the known ones named", "[synth][roles]") {
  Spec s;
  Status st = parse_spec_toml("[host]\nroles = [\"iis\", \"exchange\"]\n", s);
  REQUIRE(!st.ok());
  CHECK(st.message().find("host.roles") != std::string::npos);
  CHECK(st.message().find("\"exchange\"") != std::string::npos);
  CHECK(st.message().find("iis, mssql, hyperv, dc, dotnet") != std::string::npos);
  st = parse_spec_toml("[host]\nroles = [\"dc\", \"dc\"]\n", s);
  REQUIRE(!st.ok());
  CHECK(st.message().find("named twice") != std::string::npos);
  REQUIRE(parse_spec_toml("[host]\nroles = [\"mssql\", \"iis\"]\n", s).ok());
  st = parse_spec_toml(
      "[[objects]]\nname = \"X\"\ninstances = { count = 2, total = \"median\" }\n"
      "counters = [ { name = \"C\", type = \"PERF_COUNTER_RAWCOUNT\", value = 1 } ]\n",
      s);
  REQUIRE(!st.ok());
  CHECK(st.message().find("objects[0].instances.total: expected true, false, \"sum\" or \"average\"") !=
        std::string::npos);
  CHECK(s.roles == std::vector<std::string>{"mssql", "iis"});
}

TEST_CASE("the OS's own .NET Framework: its CLR objects are served without the dotnet role from 2003 on",
          "[synth][roles]") {
  const std::vector<ObjectSpec>* clr = nullptr;
  REQUIRE(role_objects("dotnet", clr).ok());
  std::map<std::string, bool> served;
  for (const windows::OsProfile& os : windows::os_profiles()) {
    if (!os.by_version) continue;
    INFO(os.name);
    const bool ships = !os.dotnet_framework.empty();
    const captures::Capture c = make(test::small_spec(std::string(os.name), 1));
    const std::map<uint32_t, std::string> names = names_of(c);
    const perfdata::DataBlock g = decode(global(c, 0));
    for (const ObjectSpec& o : *clr) {
      INFO(o.name);
      CHECK((find_object(g, names, o.name) != nullptr) == ships);
      // The version table has the same first version (catalogue test: rows serve exactly these).
      const ObjectVersion* row = object_version(o.name);
      REQUIRE(row);
      CHECK(serves(*find_profile(os.name), *row) == ships);
    }
    served[std::string(os.name)] = ships;
  }
  // Microsoft, ".NET Framework versions and dependencies": included in Server 2003 (1.1, x86),
  // 2008 SP2 and 2008 R2 SP1 (2.0), 2012 (4.5) ... 2022 (4.8); NT 4.0, 2000 and XP have none.
  for (const char* none : {"nt4", "win2000", "xp"}) CHECK_FALSE(served.at(none));
  for (const char* has : {"2003", "2008", "2008r2", "2012", "2016", "2022"}) CHECK(served.at(has));
}

TEST_CASE("the dotnet role adds the CLR objects where the OS has none and nothing twice where it has them",
          "[synth][roles]") {
  for (const char* profile : {"xp", "2016"}) {
    INFO(profile);
    Spec s = test::small_spec(profile, 1);
    s.roles = {"iis", "dotnet"};
    const captures::Capture c = make(s);
    size_t memory_names = 0;
    for (const auto& [i, n] : names_of(c)) memory_names += n == ".NET CLR Memory";
    CHECK(memory_names == 1);
    const std::map<uint32_t, std::string> names = names_of(c);
    size_t memory_objects = 0;
    for (const perfdata::Object& o : decode(global(c, 0)).objects)
      memory_objects += names.at(o.name_index) == ".NET CLR Memory";
    CHECK(memory_objects == 1);
  }
}

TEST_CASE("instances of a custom object do not read identical values and a single instance reads its generator",
          "[synth][roles]") {
  Spec s;
  REQUIRE(parse_spec_toml(R"([host]
profile = "2008r2"
duration = "1m"
[processes]
count = 4
[[objects]]
name = "Widgets"
instances = { names = ["a", "b", "c"] }
counters = [
  { name = "Widgets Made", type = "PERF_COUNTER_RAWCOUNT", value = { kind = "rate", start = 1000, per_second = 10 } },
  { name = "Queue", type = "PERF_COUNTER_RAWCOUNT", value = { kind = "constant", value = 500 } },
  { name = "Share", type = "PERF_COUNTER_RAWCOUNT", value = { kind = "fraction", base = 1000, ratio = 0.5 } },
]
[[objects]]
name = "Gadget"
counters = [
  { name = "Gadgets", type = "PERF_COUNTER_RAWCOUNT", value = { kind = "constant", value = 500 } },
]
)",
                          s)
              .ok());
  const captures::Capture c = make(s);
  const std::map<uint32_t, std::string> names = names_of(c);
  const perfdata::DataBlock g = decode(global(c, 2));
  const perfdata::Object* w = find_object(g, names, "Widgets");
  REQUIRE(w);
  REQUIRE(w->instances.size() == 3);
  std::set<uint64_t> made, queue, share;
  for (const perfdata::Instance& in : w->instances) {
    made.insert(perfdata::read_counter(in.counter_block, w->counters[0]));
    share.insert(perfdata::read_counter(in.counter_block, w->counters[2]));
    const uint64_t q = perfdata::read_counter(in.counter_block, w->counters[1]);
    CHECK(q >= 300);  // 500 scaled by 0.6 to 1.4
    CHECK(q < 700);
    queue.insert(q);
  }
  CHECK(made.size() == 3);
  CHECK(queue.size() == 3);
  CHECK(share.size() == 3);  // a fraction of a constant ratio is a shared series too
  const perfdata::Object* one = find_object(g, names, "Gadget");
  REQUIRE(one);
  CHECK(perfdata::read_counter(one->counter_block, one->counters[0]) == 500);
}
