// The objects added to the first catalog (Objects, the counter sets such as Processor
// Information): served by the profiles that have them with the types synth/README.md's table
// gives, and consistent with the objects they mirror.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "core/text.h"
#include "core/utf16.h"
#include "helpers.h"
#include "perfdata/counters.h"
#include "perfdata/names.h"
#include "perfdata/winperf.h"
#include "synth/profiles.h"
#include "synth/synth.h"
#include "windows/os.h"

using namespace perfsim;
using namespace perfsim::synth;
using namespace perfsim::winperf;
using test::decode;
using test::make;
using test::names_of;
using test::value;

namespace {

using Row = std::tuple<std::string, std::string, std::string, std::string, std::string>;

// The cells of each row of the README table between <!-- MARKER --> and <!-- /MARKER -->.
std::vector<std::vector<std::string>> readme_table(const std::string& marker) {
  std::ifstream f(std::string(PERFSIM_SOURCE_DIR) + "/synth/README.md");
  std::vector<std::vector<std::string>> rows;
  bool in = false;
  for (std::string line; std::getline(f, line);) {
    if (line == "<!-- " + marker + " -->") in = true;
    if (line == "<!-- /" + marker + " -->") in = false;
    if (!in || line.rfind("| ", 0) != 0 || line.rfind("| object", 0) == 0) continue;
    std::vector<std::string> cells;
    for (size_t at = 1; at < line.size();) {
      const size_t bar = line.find('|', at);
      if (bar == std::string::npos) break;
      cells.push_back(trim(line.substr(at, bar - at)));
      at = bar + 1;
    }
    REQUIRE(cells.size() == 5);
    rows.push_back(std::move(cells));
  }
  return rows;
}

// The added-objects rows, `from` cut to its version and, for a counter a later version dropped,
// " to " and the last version serving it ("6.0 (2008) to 6.1 (2008 R2)" -> "6.0 to 6.1").
std::set<Row> readme_rows() {
  std::set<Row> rows;
  for (const auto& c : readme_table("added-objects")) {
    std::string from = c[4].substr(0, c[4].find(' '));
    if (const size_t to = c[4].find(" to "); to != std::string::npos)
      from += " to " + c[4].substr(to + 4, c[4].find(' ', to + 4) - (to + 4));
    rows.insert({c[0], c[1], c[2], c[3], from});
  }
  return rows;
}

std::string version(uint32_t v) { return std::to_string(v / 100) + "." + std::to_string(v % 100); }

// The first (lowest) index of each name.
std::map<std::string, uint32_t> index_of(const captures::Capture& c) {
  std::map<std::string, uint32_t> m;
  for (const auto& [i, name] : names_of(c)) m.try_emplace(name, i);
  return m;
}

const perfdata::Instance* instance(const perfdata::Object& o, const std::u16string& name) {
  for (const perfdata::Instance& in : o.instances)
    if (in.name() == name) return &in;
  return nullptr;
}

}  // namespace

TEST_CASE("the README's table of added objects is the catalogue's") {
  std::set<Row> code;
  const Profile* p2016 = find_profile("2016");
  REQUIRE(p2016);
  std::map<uint32_t, std::string> names;
  for (const NameDef& n : builtin_names()) names[n.index] = n.name;
  for (const ObjectDesc& o : builtin_objects(*p2016))
    if (o.index == idx::kObjects)
      for (const CounterDesc& c : o.counters)
        code.insert({"Objects", names.at(c.index), perfdata::counter_type_name(c.type), "", "all"});
  for (const CounterSet& set : counter_sets())
    for (const SetCounter& c : set.counters)
      code.insert(
          {set.name, c.name, perfdata::counter_type_name(c.type), c.base ? perfdata::counter_type_name(c.base) : "",
           version(c.since ? c.since : object_version(set.name)->first) + (c.until ? " to " + version(c.until) : "")});
  CHECK(code.size() > 30);
  const std::set<Row> readme = readme_rows();
  auto text = [](const Row& r) {
    return std::get<0>(r) + " | " + std::get<1>(r) + " | " + std::get<2>(r) + " | " + std::get<3>(r) + " | " +
           std::get<4>(r);
  };
  for (const Row& r : code)
    if (!readme.count(r)) FAIL_CHECK("the README lacks: " << text(r));
  for (const Row& r : readme)
    if (!code.count(r)) FAIL_CHECK("the code lacks: " << text(r));
}

TEST_CASE("every profile serves Objects and each counter set from its first version on, with the catalogue's types") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    INFO(os.name);
    const captures::Capture c = make(test::small_spec(std::string(os.name), 2));
    const std::map<std::string, uint32_t> index = index_of(c);
    const std::map<uint32_t, std::string> names = names_of(c);
    const perfdata::DataBlock g = decode(c.records[0]);
    REQUIRE(c.records[0].value_name == "Global");
    const perfdata::Object* objects = g.find(idx::kObjects);
    REQUIRE(objects);
    CHECK(objects->num_instances == PERF_NO_INSTANCES);
    CHECK(objects->counters.size() == 6);
    for (const perfdata::CounterDef& d : objects->counters) CHECK(d.type == PERF_COUNTER_RAWCOUNT);
    const uint32_t v = os.by_version ? os.major * 100 + os.minor : 0;
    const Profile* profile = find_profile(os.name);
    REQUIRE(profile);
    for (const CounterSet& set : counter_sets()) {
      INFO(set.name);
      const bool served = serves(*profile, set);
      const ObjectVersion* row = object_version(set.name);
      REQUIRE(row);
      const bool as_named =
          v >= row->first && (!row->last || v <= row->last) && (v > row->first || os.first_build >= row->first_build);
      const ObjectVersion* legacy = set.legacy_name ? object_version(set.legacy_name) : nullptr;
      const bool as_legacy = legacy && v >= legacy->first && v <= legacy->last;
      CHECK(served == (as_named || as_legacy));
      REQUIRE(index.count(set.name) == (as_named ? 1u : 0u));
      if (set.legacy_name) CHECK(index.count(set.legacy_name) == (as_legacy ? 1u : 0u));
      if (!served) continue;
      const uint32_t set_index = index.at(served_name(*profile, set));
      CHECK(set_index > 1847);  // above Base Index: registered after the standard objects
      const perfdata::Object* o = g.find(set_index);
      // Disabling the legacy Process object disables its provider, PerfProc, and so Job Object.
      if (std::string(set.provider) == "PerfProc" && windows::has_quirk(os, "process-v1-disabled")) {
        CHECK(o == nullptr);
        continue;
      }
      REQUIRE(o);
      size_t expected = 0;
      for (const SetCounter& sc : set.counters) {
        // The object's counter of that name (names repeat: Processor has "% Processor Time" too).
        size_t at = 0;
        while (at < o->counters.size() && names.at(o->counters[at].name_index) != sc.name) ++at;
        INFO(sc.name);
        if (sc.since > v || (sc.until && sc.until < v)) {  // not yet, or no longer, served
          CHECK(at == o->counters.size());
          continue;
        }
        expected += sc.base ? 2 : 1;
        REQUIRE(at < o->counters.size());
        CHECK(o->counters[at].name_index > set_index);
        CHECK(o->counters[at].type == sc.type);
        if (sc.base) {
          REQUIRE(at + 1 < o->counters.size());
          CHECK(o->counters[at + 1].type == sc.base);
        }
      }
      CHECK(o->counters.size() == expected);
    }
  }
}

TEST_CASE("Processor Information mirrors Processor and Objects mirrors System and Process") {
  Spec s = test::small_spec("2016", 4);
  s.processors = 3;
  const captures::Capture c = make(s);
  const std::map<std::string, uint32_t> index = index_of(c);
  const uint32_t pi = index.at("Processor Information");
  size_t globals = 0;
  for (const captures::QueryRecord& r : c.records) {
    if (r.value_name != "Global") continue;
    ++globals;
    const perfdata::DataBlock g = decode(r);
    const perfdata::Object* proc = g.find(idx::kProcessor);
    const perfdata::Object* info = g.find(pi);
    REQUIRE(proc);
    REQUIRE(info);
    REQUIRE(info->instances.size() == s.processors + 2);
    // Processor Information's own "% Processor Time" index (a counter set's, above Base Index).
    uint32_t info_time = 0;
    for (const perfdata::CounterDef& d : info->counters)
      if (d.type == PERF_100NSEC_TIMER_INV && info_time == 0) info_time = d.name_index;
    REQUIRE(info_time > 1847);
    for (uint32_t k = 0; k < s.processors; ++k) {
      const perfdata::Instance* a = instance(*proc, utf8_to_utf16(std::to_string(k)));
      const perfdata::Instance* b = instance(*info, utf8_to_utf16("0," + std::to_string(k)));
      REQUIRE(a);
      REQUIRE(b);
      CHECK(value(*info, b->counter_block, info_time) == value(*proc, a->counter_block, idx::kProcessorTime));
    }
    const uint64_t total = value(*proc, instance(*proc, u"_Total")->counter_block, idx::kProcessorTime);
    for (const std::u16string name : {u"0,_Total", u"_Total"}) {
      const perfdata::Instance* in = instance(*info, name);
      REQUIRE(in);
      CHECK(value(*info, in->counter_block, info_time) == total);
    }
    const perfdata::Object* sys = g.find(idx::kSystem);
    const perfdata::Object* objs = g.find(idx::kObjects);
    const perfdata::Object* process = g.find(idx::kProcess);
    const perfdata::Object* thread = g.find(idx::kThread);
    REQUIRE((sys && objs && process && thread));
    const uint64_t procs = value(*objs, objs->counter_block, idx::kProcesses);
    const uint64_t threads = value(*objs, objs->counter_block, idx::kThreads);
    CHECK(procs == value(*sys, sys->counter_block, idx::kProcesses));
    CHECK(threads == value(*sys, sys->counter_block, idx::kThreads));
    CHECK(procs == process->instances.size() - 1);   // all but _Total
    CHECK(threads == thread->instances.size() - 1);  // all but _Total
    CHECK(value(*objs, objs->counter_block, idx::kEvents) > 0);
  }
  CHECK(globals == 4);
}

namespace {

// A counter of a set by its name: the object's counter whose 009 name it is.
uint64_t named(const perfdata::Object& o, const Bytes& block, const std::map<uint32_t, std::string>& names,
               const std::string& counter) {
  for (const perfdata::CounterDef& d : o.counters)
    if (names.at(d.name_index) == counter) return perfdata::read_counter(block, d);
  throw std::runtime_error("no counter " + counter);
}

}  // namespace

TEST_CASE("the IP stack's objects fit Network Interface's traffic, Network Adapter equals it") {
  Spec s = test::small_spec("2016", 6);
  s.adapters = {"Intel[R] Ethernet A", "Intel[R] Ethernet B"};
  const captures::Capture c = make(s);
  const std::map<std::string, uint32_t> index = index_of(c);
  const std::map<uint32_t, std::string> names = names_of(c);
  std::vector<perfdata::DataBlock> g;
  for (const captures::QueryRecord& r : c.records)
    if (r.value_name == "Global") g.push_back(decode(r));
  REQUIRE(g.size() == 6);
  auto single = [&](const perfdata::DataBlock& b, const char* object, const char* counter) {
    const perfdata::Object* o = b.find(index.at(object));
    REQUIRE(o);
    return named(*o, o->counter_block, names, counter);
  };
  auto nic_sum = [&](const perfdata::DataBlock& b, uint32_t object, const char* counter) {
    const perfdata::Object* o = b.find(object);
    REQUIRE(o);
    REQUIRE(o->instances.size() == 2);
    uint64_t sum = 0;
    for (const perfdata::Instance& in : o->instances) sum += named(*o, in.counter_block, names, counter);
    return sum;
  };
  for (size_t k = 1; k < g.size(); ++k) {
    INFO("sample " << k);
    auto delta = [&](const char* object, const char* counter) {
      return single(g[k], object, counter) - single(g[k - 1], object, counter);
    };
    const uint64_t nic_rx = nic_sum(g[k], idx::kNetworkInterface, "Packets Received/sec") -
                            nic_sum(g[k - 1], idx::kNetworkInterface, "Packets Received/sec");
    const uint64_t ip_rx = delta("IPv4", "Datagrams Received/sec") + delta("IPv6", "Datagrams Received/sec");
    CHECK(nic_rx > 1000);
    CHECK(ip_rx <= nic_rx);
    CHECK(double(ip_rx) >= 0.99 * double(nic_rx));
    CHECK(delta("TCPv4", "Segments Received/sec") + delta("UDPv4", "Datagrams/sec") <= delta("IPv4", "Datagrams/sec"));
    CHECK(delta("TCPv4", "Segments Received/sec") > delta("TCPv6", "Segments Received/sec"));
    CHECK(single(g[k], "TCPv4", "Connections Established") > 0);
    // Network Adapter counts the same adapters' traffic as Network Interface.
    CHECK(nic_sum(g[k], index.at("Network Adapter"), "Bytes Total/sec") ==
          nic_sum(g[k], idx::kNetworkInterface, "Bytes Total/sec"));
  }
}

TEST_CASE(
    "Windows 2000 and XP serve TCP IP and UDP with all of the adapters' traffic and the 2003 code base split them") {
  for (const char* profile : {"win2000", "xp", "2003", "2008"}) {
    INFO(profile);
    // 2000/XP name them TCP/IP/UDP; the 2003 code base's real backup (issue 30 item 8) TCPv4 ... and v6.
    const bool pre_2003 = std::string(profile) == "win2000" || std::string(profile) == "xp";
    Spec s = test::small_spec(profile, 4);
    s.adapters = {"Intel[R] Ethernet A"};
    const captures::Capture c = make(s);
    const std::map<std::string, uint32_t> index = index_of(c);
    const std::map<uint32_t, std::string> names = names_of(c);
    for (const char* v4 : {"TCPv4", "IPv4", "UDPv4", "TCPv6", "IPv6", "UDPv6"}) CHECK(index.count(v4) == !pre_2003);
    for (const char* old : {"TCP", "IP", "UDP"}) CHECK(index.count(old) == pre_2003);
    if (!pre_2003) continue;
    std::vector<perfdata::DataBlock> g;
    for (const captures::QueryRecord& r : c.records)
      if (r.value_name == "Global") g.push_back(decode(r));
    REQUIRE(g.size() == 4);
    auto single = [&](const perfdata::DataBlock& b, const char* object, const char* counter) {
      const perfdata::Object* o = b.find(index.at(object));
      REQUIRE(o);
      CHECK(o->num_instances == PERF_NO_INSTANCES);
      return named(*o, o->counter_block, names, counter);
    };
    auto nic = [&](const perfdata::DataBlock& b) {
      const perfdata::Object* o = b.find(idx::kNetworkInterface);
      REQUIRE(o);
      REQUIRE(o->instances.size() == 1);
      return named(*o, o->instances[0].counter_block, names, "Packets Received/sec");
    };
    for (size_t k = 1; k < g.size(); ++k) {
      INFO("sample " << k);
      auto delta = [&](const char* object, const char* counter) {
        return single(g[k], object, counter) - single(g[k - 1], object, counter);
      };
      const uint64_t nic_rx = nic(g[k]) - nic(g[k - 1]), ip_rx = delta("IP", "Datagrams Received/sec");
      CHECK(nic_rx > 100);
      // No IPv6 counters before Vista: IP counts every packet the adapter received (within rounding).
      CHECK(ip_rx <= nic_rx);
      CHECK(ip_rx + 1 >= nic_rx);
      CHECK(delta("TCP", "Segments Received/sec") + delta("UDP", "Datagrams/sec") <= delta("IP", "Datagrams/sec"));
      CHECK(single(g[k], "TCP", "Connections Established") > 0);
    }
  }
}

TEST_CASE("Server 2022 serves Process V2 with or without the legacy Process, agreeing with it") {
  for (bool v1_off : {true, false}) {
    INFO("process v1 disabled: " << v1_off);
    Spec s = test::small_spec("2022", 3);
    s.process_v1_disabled = v1_off;
    s.process_churn_per_hour = 400;  // instances come and go between samples
    const captures::Capture c = make(s);
    const std::map<std::string, uint32_t> index = index_of(c);
    const std::map<uint32_t, std::string> names = names_of(c);
    REQUIRE(index.count("Process V2") == 1);
    for (const captures::QueryRecord& r : c.records) {
      if (r.value_name != "Global") continue;
      const perfdata::DataBlock g = decode(r);
      const perfdata::Object* v2 = g.find(index.at("Process V2"));
      REQUIRE(v2);
      const perfdata::Object* sys = g.find(idx::kSystem);
      REQUIRE(sys);
      CHECK(v2->instances.size() == value(*sys, sys->counter_block, idx::kProcesses) + 1);  // + _Total:0
      CHECK(v2->instances.back().name() == u"_Total:0");
      // Every instance is name:pid with its Process ID.
      for (const perfdata::Instance& in : v2->instances) {
        const std::string name = utf16_to_utf8(in.name());
        REQUIRE(name.find(':') != std::string::npos);
        CHECK(name.substr(name.rfind(':') + 1) == std::to_string(named(*v2, in.counter_block, names, "Process ID")));
      }
      const perfdata::Object* v1 = g.find(idx::kProcess);
      CHECK((v1 == nullptr) == v1_off);
      if (v1) {
        const uint64_t a = value(*v1, v1->instances.back().counter_block, idx::kProcessorTime);
        CHECK(named(*v2, v2->instances.back().counter_block, names, "% Processor Time") == a);
      }
    }
  }
  const captures::Capture c2016 = make(test::small_spec("2016", 1));
  CHECK(index_of(c2016).count("Process V2") == 0);
}

TEST_CASE("Terminal Services Session's two sessions add up to Process(_Total), Job Object follows WmiPrvSE") {
  Spec s = test::small_spec("2016", 4);
  s.process_count = 30;            // the built-in names: WmiPrvSE, explorer and dwm among them
  s.process_churn_per_hour = 400;  // processes come and go between samples
  const captures::Capture c = make(s);
  const std::map<std::string, uint32_t> index = index_of(c);
  const std::map<uint32_t, std::string> names = names_of(c);
  size_t with_job = 0;
  for (const captures::QueryRecord& r : c.records) {
    if (r.value_name != "Global") continue;
    const perfdata::DataBlock g = decode(r);
    const perfdata::Object* proc = g.find(idx::kProcess);
    const perfdata::Object* sessions = g.find(index.at("Terminal Services Session"));
    const perfdata::Object* jobs = g.find(index.at("Job Object"));
    REQUIRE(proc);
    REQUIRE(sessions);
    REQUIRE(jobs);
    REQUIRE(sessions->instances.size() == 2);
    CHECK(sessions->instances[0].name() == u"Services");
    CHECK(sessions->instances[1].name() == u"Console");
    const perfdata::Instance& total = proc->instances.back();
    REQUIRE(total.name() == u"_Total");
    const std::pair<const char*, uint32_t> pairs[] = {{"% Processor Time", idx::kProcessorTime},
                                                      {"Thread Count", idx::kThreadCount},
                                                      {"Handle Count", idx::kHandleCount},
                                                      {"Working Set", idx::kWorkingSet},
                                                      {"Page Faults/sec", idx::kPageFaults}};
    for (const auto& [session_counter, process_counter] : pairs) {
      INFO(session_counter);
      const uint64_t sum = named(*sessions, sessions->instances[0].counter_block, names, session_counter) +
                           named(*sessions, sessions->instances[1].counter_block, names, session_counter);
      const uint64_t whole = value(*proc, total.counter_block, process_counter);
      // Working Set and Handle Count are sums of doubles truncated per session: within 2 units.
      CHECK(sum <= whole + 2);
      CHECK(sum + 2 >= whole);
    }
    CHECK(named(*sessions, sessions->instances[0].counter_block, names, "Thread Count") >
          named(*sessions, sessions->instances[1].counter_block, names, "Thread Count"));
    // Job Object: WmiProviderSubSystemHostJob while a WmiPrvSE runs, with their processor time.
    uint64_t wmi = 0, wmi_time = 0;
    for (const perfdata::Instance& in : proc->instances)
      if (in.name() == u"WmiPrvSE") ++wmi, wmi_time += value(*proc, in.counter_block, idx::kProcessorTime);
    REQUIRE(jobs->instances.size() == (wmi ? 1u : 0u));
    CHECK(jobs->num_instances == int32_t(jobs->instances.size()));
    if (!wmi) continue;
    ++with_job;
    CHECK(jobs->instances[0].name() == u"WmiProviderSubSystemHostJob");
    CHECK(named(*jobs, jobs->instances[0].counter_block, names, "Process Count - Active") == wmi);
    CHECK(named(*jobs, jobs->instances[0].counter_block, names, "Current % Processor Time") == wmi_time);
    CHECK(named(*jobs, jobs->instances[0].counter_block, names, "Total mSec - Processor") == wmi_time / 10000);
  }
  CHECK(with_job > 0);
  // Twelve processes, none of them WmiPrvSE: a multi-instance Job Object with NumInstances 0.
  const captures::Capture few = make(test::small_spec("2016", 1));
  const perfdata::DataBlock g = decode(few.records[0]);
  const perfdata::Object* jobs = g.find(index_of(few).at("Job Object"));
  REQUIRE(jobs);
  CHECK(jobs->num_instances == 0);
  CHECK(jobs->instances.empty());
  const captures::Capture c2003 = make(test::small_spec("2003", 1));
  CHECK(index_of(c2003).count("Terminal Services Session") == 0);
  CHECK(index_of(c2003).count("Job Object") == 0);
}

TEST_CASE("Cache agrees with System and Memory, Server Work Queues carry Server's traffic") {
  Spec s = test::small_spec("2016", 5);
  s.memory = GeneratorSpec::constant(90);  // hard faults and page writes under memory pressure
  const captures::Capture c = make(s);
  const std::map<std::string, uint32_t> index = index_of(c);
  const std::map<uint32_t, std::string> names = names_of(c);
  std::vector<perfdata::DataBlock> g;
  for (const captures::QueryRecord& r : c.records)
    if (r.value_name == "Global") g.push_back(decode(r));
  REQUIRE(g.size() == 5);
  for (size_t k = 1; k < g.size(); ++k) {
    INFO("sample " << k);
    const perfdata::Object* c0 = g[k - 1].find(index.at("Cache"));
    const perfdata::Object* c1 = g[k].find(index.at("Cache"));
    const perfdata::Object* m0 = g[k - 1].find(idx::kMemory);
    const perfdata::Object* m1 = g[k].find(idx::kMemory);
    const perfdata::Object* s0 = g[k - 1].find(idx::kSystem);
    const perfdata::Object* s1 = g[k].find(idx::kSystem);
    REQUIRE((c0 && c1 && m0 && m1 && s0 && s1));
    auto cache = [&](const perfdata::Object* o, const char* name) { return named(*o, o->counter_block, names, name); };
    auto mem = [&](const perfdata::Object* o, uint32_t i) { return value(*o, o->counter_block, i); };
    const uint64_t reads = cache(c1, "Copy Reads/sec") - cache(c0, "Copy Reads/sec");
    CHECK(reads > 0);
    CHECK(reads == mem(s1, idx::kFileReadOps) - mem(s0, idx::kFileReadOps));
    // Copy Read Hits %: hits over reads between the samples, misses no more than Memory's cache faults.
    uint64_t hit0 = 0, hit1 = 0, base1 = 0;
    for (size_t i = 0; i < c1->counters.size(); ++i)
      if (names.at(c1->counters[i].name_index) == "Copy Read Hits %") {
        hit0 = perfdata::read_counter(c0->counter_block, c0->counters[i]);
        hit1 = perfdata::read_counter(c1->counter_block, c1->counters[i]);
        base1 = perfdata::read_counter(c1->counter_block, c1->counters[i + 1]);
        CHECK(c1->counters[i + 1].type == PERF_SAMPLE_BASE);
        break;  // the base that follows carries the same title index
      }
    CHECK(base1 == cache(c1, "Copy Reads/sec"));
    const uint64_t misses = reads - (hit1 - hit0);
    CHECK(misses <= mem(m1, idx::kCacheFaults) - mem(m0, idx::kCacheFaults));
    CHECK(cache(c1, "Lazy Write Pages/sec") - cache(c0, "Lazy Write Pages/sec") <=
          mem(m1, idx::kPagesOutput) - mem(m0, idx::kPagesOutput));
    CHECK(cache(c1, "Lazy Write Flushes/sec") - cache(c0, "Lazy Write Flushes/sec") <=
          mem(m1, idx::kPageWrites) - mem(m0, idx::kPageWrites));
    CHECK(cache(c1, "Dirty Pages") * 4096 <= mem(m1, idx::kCacheBytesPeak));
    // Server Work Queues: the processors' queues carry the Server's bytes.
    const perfdata::Object* server = g[k].find(index.at("Server"));
    const perfdata::Object* queues = g[k].find(index.at("Server Work Queues"));
    REQUIRE((server && queues));
    REQUIRE(queues->instances.size() == s.processors + 1);
    CHECK(queues->instances.back().name() == u"Blocking Queue");
    uint64_t queued = 0;
    for (const perfdata::Instance& in : queues->instances)
      queued += named(*queues, in.counter_block, names, "Bytes Received/sec");
    const uint64_t served = named(*server, server->counter_block, names, "Bytes Received/sec");
    CHECK(queued <= served);
    CHECK(queued + s.processors >= served);  // integer shares
  }
}

TEST_CASE("NUMA Node Memory holds Memory's available megabytes, the thermal zone a plausible temperature") {
  const captures::Capture c = make(test::small_spec("2016", 2));
  const std::map<std::string, uint32_t> index = index_of(c);
  const std::map<uint32_t, std::string> names = names_of(c);
  const perfdata::DataBlock g = decode(c.records[2]);
  REQUIRE(c.records[2].value_name == "Global");
  const perfdata::Object* numa = g.find(index.at("NUMA Node Memory"));
  const perfdata::Object* mem = g.find(idx::kMemory);
  const perfdata::Object* tz = g.find(index.at("Thermal Zone Information"));
  REQUIRE((numa && mem && tz));
  for (const perfdata::Instance& in : numa->instances) {
    CHECK(named(*numa, in.counter_block, names, "Available MBytes") ==
          value(*mem, mem->counter_block, idx::kAvailableMBytes));
    CHECK(named(*numa, in.counter_block, names, "Total MBytes") == 16384);
  }
  const uint64_t kelvin = named(*tz, tz->instances.at(0).counter_block, names, "Temperature");
  CHECK(kelvin >= 313);
  CHECK(kelvin <= 333);
}

TEST_CASE("catalogue: every profile serves the names of its version's rows and no other") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    if (!os.by_version) continue;  // not a Windows version (samba)
    INFO(os.name);
    const Profile* profile = find_profile(os.name);
    REQUIRE(profile);
    const captures::Capture c = make(test::small_spec(std::string(os.name), 1));
    const std::map<uint32_t, std::string> names = names_of(c);
    const std::map<std::string, uint32_t> index = index_of(c);
    // Every object answered has a row serving this version...
    for (const captures::QueryRecord& r : c.records)
      for (const perfdata::Object& o : decode(r).objects) {
        const std::string& name = names.at(o.name_index);
        INFO(name);
        const ObjectVersion* row = object_version(name);
        REQUIRE(row);
        CHECK(serves(*profile, *row));
        CHECK(std::string(row->source).size() > 10);
      }
    // ...and every row serving it names an object of its table, none other.
    for (const ObjectVersion& row : object_versions()) {
      INFO(row.name);
      CHECK(index.count(row.name) == (serves(*profile, row) ? 1u : 0u));
    }
  }
}

TEST_CASE("catalogue: the TCP/IP objects' names follow each version's backup and V2 sets start with Vista") {
  auto table = [](const char* profile) { return index_of(make(test::small_spec(profile, 1))); };
  // 2000 and XP: TCP, IP, UDP, ICMP and no IPv6 objects (the 2000/XP names of issue 30 item 8).
  for (const char* old : {"win2000", "xp"}) {
    INFO(old);
    const auto t = table(old);
    for (const char* n : {"TCP", "IP", "UDP", "ICMP"}) CHECK(t.count(n));
    for (const char* n : {"TCPv4", "IPv4", "UDPv4", "TCPv6", "IPv6", "UDPv6", "ICMPv6"}) CHECK_FALSE(t.count(n));
  }
  // The real XP x64 SP2 (Server 2003 SP2 code base) backup of issue 30 item 8: IPv4, IPv6, TCPv4,
  // UDPv4, TCPv6, UDPv6, ICMPv6 and ICMP.
  const auto t2003 = table("2003");
  for (const char* n : {"TCPv4", "IPv4", "UDPv4", "ICMP", "TCPv6", "IPv6", "UDPv6", "ICMPv6"}) CHECK(t2003.count(n));
  for (const char* n : {"TCP", "IP", "UDP", "Terminal Services"}) CHECK_FALSE(t2003.count(n));
  // 2008 serves Terminal Services, from Vista on the Local Session Manager's V2 counter set.
  CHECK(table("2008").count("Terminal Services"));
  REQUIRE(object_version("Terminal Services"));
  CHECK(object_version("Terminal Services")->perflib == Perflib::kV2);
  // "V2 performance data providers are supported on Windows Vista or later" (Performance Counters Schema).
  for (const ObjectVersion& row : object_versions())
    if (row.perflib == Perflib::kV2) CHECK(row.first >= 600);
  CHECK(object_version("Processor Information")->perflib == Perflib::kV2);
  CHECK(object_version("TCPv4")->perflib == Perflib::kV1);
}

TEST_CASE("the README's table of object versions is the code's") {
  std::set<std::vector<std::string>> readme, code;
  for (std::vector<std::string> cells : readme_table("object-versions")) {
    for (size_t i : {1, 2}) cells[i] = cells[i].substr(0, cells[i].find(' '));  // "6.0 (2008)" -> "6.0"
    readme.insert(cells);
  }
  for (const ObjectVersion& r : object_versions())
    code.insert(
        {r.name, version(r.first), r.last ? version(r.last) : "", r.perflib == Perflib::kV2 ? "V2" : "V1", r.source});
  CHECK(code.size() == object_versions().size());
  for (const auto& r : code)
    if (!readme.count(r)) FAIL_CHECK("the README lacks: " << r[0] << " " << r[1] << " " << r[4]);
  for (const auto& r : readme)
    if (!code.count(r)) FAIL_CHECK("the code lacks: " << r[0] << " " << r[1] << " " << r[4]);
}
