#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "core/utf16.h"
#include "helpers.h"
#include "perfdata/names.h"
#include "perfdata/winperf.h"
#include "synth/profiles.h"
#include "synth/synth.h"

using namespace perfsim;
using namespace perfsim::synth;
using namespace perfsim::winperf;
using test::decode;
using test::make;
using test::names_of;
using test::value;

namespace {

std::vector<perfdata::DataBlock> blocks(const captures::Capture& c, const std::string& name) {
  std::vector<perfdata::DataBlock> v;
  for (const captures::QueryRecord& r : c.records)
    if (r.value_name == name) v.push_back(decode(r));
  return v;
}

bool cumulative(uint32_t type) {
  switch (type) {
    case PERF_COUNTER_COUNTER:
    case PERF_COUNTER_BULK_COUNT:
    case PERF_100NSEC_TIMER:
    case PERF_100NSEC_TIMER_INV:
    case PERF_AVERAGE_TIMER:
    case PERF_AVERAGE_BULK:
    case PERF_AVERAGE_BASE:
    case PERF_COUNTER_100NS_QUEUELEN_TYPE:
    case PERF_PRECISION_100NS_TIMER:
    case PERF_PRECISION_TIMESTAMP:
      return true;
    default:
      return false;
  }
}

// Who an instance is across samples: name, plus process/thread IDs where the object has them.
std::string identity(const perfdata::Object& o, const perfdata::Instance& in) {
  std::string id = utf16_to_utf8(in.name());
  for (uint32_t c : {784u, 804u})
    for (const auto& d : o.counters)
      if (d.name_index == c) id += "/" + std::to_string(perfdata::read_counter(in.counter_block, d));
  return id;
}

}  // namespace

TEST_CASE("every profile's payloads parse strictly and its names resolve every index") {
  for (const std::string& name : windows::os_names()) {
    INFO(name);
    const captures::Capture c = make(test::small_spec(name, 2));
    REQUIRE(c.names.size() == 1);
    perfdata::NameTable counters, helps;
    REQUIRE(perfdata::parse_names(c.names[0].counter, counters).ok());
    REQUIRE(perfdata::parse_names(c.names[0].help, helps).ok());
    CHECK(counters.entries.front().index == 1);
    CHECK(counters.declared_last() == counters.highest_index());
    REQUIRE(c.records.size() == 4);
    std::set<uint32_t> seen;
    for (const captures::QueryRecord& r : c.records) {
      CHECK(r.size == r.payload.size());
      const perfdata::DataBlock b = decode(r);
      CHECK(utf16_to_utf8(b.system_name()) == c.host.name);
      CHECK(b.perf_freq == c.host.perf_freq);
      // Server 2022's costly objects all belong to the disabled PerfProc: its Costly answer is empty.
      CHECK(b.objects.empty() == (name == "2022" && r.value_name == "Costly"));
      for (const perfdata::Object& o : b.objects) {
        seen.insert(o.name_index);
        CHECK(counters.find(o.name_index) != nullptr);
        CHECK(helps.find(o.help_index) != nullptr);
        for (const perfdata::CounterDef& d : o.counters) {
          INFO("object " << o.name_index << " counter " << d.name_index);
          CHECK(counters.find(d.name_index) != nullptr);
          CHECK(helps.find(d.help_index) != nullptr);
          CHECK(d.size == size_for(d.type));
        }
      }
    }
    const bool v1_off = name == "2022";
    for (uint32_t want : {2u, 4u, 238u, 234u, 236u, 510u, 700u}) CHECK(seen.count(want) == 1);
    for (uint32_t want : {230u, 232u, 786u, 740u, 816u}) CHECK(seen.count(want) == (v1_off ? 0u : 1u));
  }
}

TEST_CASE("profiles carry the OS identity, registry values and counter types") {
  const captures::Capture w2k = make(test::small_spec("win2000", 1));
  const captures::Capture w16 = make(test::small_spec("2016", 1));
  CHECK(w2k.host.current_version == "5.0");
  CHECK(w16.host.perf_freq == 10000000);
  CHECK(w2k.host.perf_freq > 1000000000);  // TSC-like
  auto find_reg = [](const captures::Capture& c, const std::string& key, const std::string& name) {
    for (const auto& r : c.registry)
      if (r.key == key && r.name == name) return &r;
    return static_cast<const captures::RegistryValue*>(nullptr);
  };
  const auto* last = find_reg(w16, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", "Last Counter");
  REQUIRE(last);
  CHECK(last->type == 4);
  perfdata::NameTable names;
  REQUIRE(perfdata::parse_names(w16.names[0].counter, names).ok());
  CHECK(load_le32(last->data.data()) == names.declared_last());
  const auto* table = find_reg(w16, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib\\009", "Counter");
  REQUIRE(table);
  CHECK(table->type == 7);
  CHECK(table->data == w16.names[0].counter);
  CHECK(find_reg(w16, "SYSTEM\\CurrentControlSet\\Services\\PerfProc\\Performance", "Library"));
  CHECK(find_reg(w2k, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "CSDVersion"));
  CHECK_FALSE(find_reg(w16, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "CSDVersion"));
  // Real names at their real indices.
  CHECK(*names.find(6) == u"% Processor Time");
  CHECK(*names.find(784) == u"ID Process");
  CHECK(*names.find(230) == u"Process");
  // Counter types as Windows uses them, and the 2000 -> 2003 User PC type change.
  const perfdata::DataBlock g = decode(w16.records[0]);
  const perfdata::Object* cpu = g.find(238);
  REQUIRE(cpu);
  CHECK(cpu->counters[0].name_index == 6);
  CHECK(cpu->counters[0].type == PERF_100NSEC_TIMER_INV);
  const perfdata::Object* ld = g.find(236);
  REQUIRE(ld);
  CHECK(ld->counters[0].type == PERF_RAW_FRACTION);
  CHECK(ld->counters[1].type == PERF_RAW_BASE);
  auto type_of = [](const captures::Capture& c, size_t rec, uint32_t obj, uint32_t counter) {
    const perfdata::DataBlock b = decode(c.records[rec]);
    for (const auto& d : b.find(obj)->counters)
      if (d.name_index == counter) return d.type;
    return 0u;
  };
  CHECK(type_of(w2k, 1, 816, 708) == PERF_COUNTER_RAWCOUNT);
  CHECK(type_of(make(test::small_spec("2003", 1)), 1, 816, 708) == PERF_COUNTER_LARGE_RAWCOUNT_HEX);
  // Process's byte counters are 64-bit from 2000 on (perfdata/layout.cpp cites why), NT 4.0's not.
  CHECK(type_of(w2k, 0, 230, 180) == PERF_COUNTER_LARGE_RAWCOUNT);
  CHECK(type_of(make(test::small_spec("nt4", 1)), 0, 230, 180) == PERF_COUNTER_RAWCOUNT);
  // Memory's byte counters likewise (Microsoft KB 262330), NT 4.0's DWORDs.
  CHECK(type_of(w2k, 0, 4, 26) == PERF_COUNTER_LARGE_RAWCOUNT);
  CHECK(type_of(make(test::small_spec("nt4", 1)), 0, 4, 26) == PERF_COUNTER_RAWCOUNT);
  CHECK(type_of(w16, 0, 230, 180) == PERF_COUNTER_LARGE_RAWCOUNT);
  CHECK(type_of(w16, 0, 230, 684) == PERF_ELAPSED_TIME);
  CHECK(type_of(w16, 0, 234, 208) == PERF_AVERAGE_TIMER);
  CHECK(type_of(w16, 0, 234, 218) == PERF_COUNTER_BULK_COUNT);
}

TEST_CASE("cumulative counters never go backwards while their instance lives") {
  Spec s = test::small_spec("2016", 240);  // one hour at 15 s
  s.process_churn_per_hour = 40;
  const std::vector<perfdata::DataBlock> g = blocks(make(s), "Global");
  std::map<std::string, uint64_t> last;
  size_t checked = 0;
  for (const perfdata::DataBlock& b : g) {
    for (const perfdata::Object& o : b.objects) {
      auto check_block = [&](const std::string& who, const Bytes& block) {
        for (size_t i = 0; i < o.counters.size(); ++i) {
          const perfdata::CounterDef& d = o.counters[i];
          if (!cumulative(d.type)) continue;
          const std::string key = who + "#" + std::to_string(i);
          const uint64_t v = perfdata::read_counter(block, d);
          if (auto it = last.find(key); it != last.end()) {
            INFO(key << " " << it->second << " -> " << v);
            // DWORD counters wrap modulo 2^32 as on Windows: the step must still be forward.
            if (d.size == 4)
              CHECK(uint32_t(v - it->second) < 0x80000000u);
            else
              CHECK(v >= it->second);
            ++checked;
          }
          last[key] = v;
        }
      };
      if (!o.multi_instance()) {
        check_block(std::to_string(o.name_index), o.counter_block);
        continue;
      }
      for (const perfdata::Instance& in : o.instances) {
        // Process and Thread _Total sum the live instances: they drop when a process exits, as on
        // Windows; so do the sums over a session's or a job's processes.
        if ((o.name_index == 230 || o.name_index == 232) && in.name() == u"_Total") continue;
        if (in.name() == u"Services" || in.name() == u"Console" || in.name() == u"WmiProviderSubSystemHostJob")
          continue;
        check_block(std::to_string(o.name_index) + ":" + identity(o, in), in.counter_block);
      }
    }
  }
  CHECK(checked > 10000);
}

TEST_CASE("% Processor Time from two samples lies in [0, 100] and process times add up") {
  for (const std::string& profile : {std::string("win2000"), std::string("2016")}) {
    INFO(profile);
    Spec s = test::small_spec(profile, 40);
    s.cpu = GeneratorSpec::constant(90);
    s.cpu.noise = 0.3;
    const std::vector<perfdata::DataBlock> g = blocks(make(s), "Global");
    double max_seen = 0;
    size_t sums_checked = 0;  // steps whose process set did not change: the sum is judged on those
    for (size_t k = 1; k < g.size(); ++k) {
      const perfdata::Object* p0 = g[k - 1].find(238);
      const perfdata::Object* p1 = g[k].find(238);
      REQUIRE(p1->instances.size() == s.processors + 1);
      const double dt = double(g[k].perf_time_100ns - g[k - 1].perf_time_100ns);
      REQUIRE(dt > 0);
      for (size_t i = 0; i < p1->instances.size(); ++i) {
        const double d_idle = double(value(*p1, p1->instances[i].counter_block, 6)) -
                              double(value(*p0, p0->instances[i].counter_block, 6));
        const double pct = 100 * (1 - d_idle / dt);
        CHECK(pct >= 0);
        CHECK(pct <= 100);
        max_seen = std::max(max_seen, pct);
      }
      // All processes (Idle included) share exactly the processors' time.
      const perfdata::Object* q0 = g[k - 1].find(230);
      const perfdata::Object* q1 = g[k].find(230);
      std::map<uint64_t, uint64_t> before;
      for (const auto& in : q0->instances)
        if (in.name() != u"_Total")
          before[value(*q0, in.counter_block, 784) * 2 + (in.name() == u"Idle")] = value(*q0, in.counter_block, 6);
      bool same_set = q0->instances.size() == q1->instances.size();
      uint64_t sum = 0;
      for (const auto& in : q1->instances) {
        if (in.name() == u"_Total") continue;
        auto it = before.find(value(*q1, in.counter_block, 784) * 2 + (in.name() == u"Idle"));
        if (it == before.end())
          same_set = false;
        else
          sum += value(*q1, in.counter_block, 6) - it->second;
      }
      if (same_set) {
        CHECK(double(sum) == Approx(dt * s.processors).epsilon(1e-9));
        ++sums_checked;
      }
    }
    REQUIRE(sums_checked > 0);  // a churn that changes the set at every step would judge nothing
    CHECK(max_seen > 50);       // the load signal shows through
  }
}

TEST_CASE("threads point at their process, costly instances at the address space") {
  Spec s = test::small_spec("2016", 30);
  s.process_churn_per_hour = 120;
  const captures::Capture c = make(s);
  for (const captures::QueryRecord& r : c.records) {
    const perfdata::DataBlock b = decode(r);
    if (r.value_name == "Global") {
      const perfdata::Object* proc = b.find(230);
      const perfdata::Object* thr = b.find(232);
      REQUIRE(proc);
      REQUIRE(thr);
      for (const perfdata::Instance& t : thr->instances) {
        CHECK(t.parent_title_index == 230);
        REQUIRE(t.parent_instance < proc->instances.size());
        const perfdata::Instance& p = proc->instances[t.parent_instance];
        CHECK(value(*thr, t.counter_block, 784) == value(*proc, p.counter_block, 784));
        if (t.name() == u"_Total") CHECK(p.name() == u"_Total");
      }
      CHECK(proc->instances.back().name() == u"_Total");
      CHECK(proc->instances.front().name() == u"Idle");
      for (const perfdata::Instance& p : proc->instances) CHECK(p.unique_id == -1);
      // Process/Thread Elapsed Time uses the object's clock: start times lie before it.
      CHECK(proc->perf_freq == 10000000);
      CHECK(proc->perf_time == b.perf_time_100ns);
      for (const perfdata::Instance& p : proc->instances)
        CHECK(int64_t(value(*proc, p.counter_block, 684)) <= proc->perf_time);
    } else {
      const perfdata::Object* pas = b.find(786);
      REQUIRE(pas);
      for (uint32_t child : {740u, 816u}) {
        const perfdata::Object* o = b.find(child);
        REQUIRE(o);
        CHECK_FALSE(o->instances.empty());
        for (const perfdata::Instance& in : o->instances) {
          CHECK(in.parent_title_index == 786);
          CHECK(in.parent_instance < pas->instances.size());
        }
      }
    }
  }
}

TEST_CASE("process churn keeps IDs consistent and never reuses them") {
  Spec s = test::small_spec("2016", 120);
  s.process_churn_per_hour = 200;
  const std::vector<perfdata::DataBlock> g = blocks(make(s), "Global");
  std::map<uint64_t, std::pair<std::u16string, uint64_t>> pid_info;  // pid -> name, start
  std::set<uint64_t> gone, prev;
  size_t appeared = 0;
  for (const perfdata::DataBlock& b : g) {
    const perfdata::Object* p = b.find(230);
    std::set<uint64_t> now;
    for (const perfdata::Instance& in : p->instances) {
      if (in.name() == u"_Total" || in.name() == u"Idle") continue;
      const uint64_t pid = value(*p, in.counter_block, 784);
      const uint64_t start = value(*p, in.counter_block, 684);
      CHECK(now.insert(pid).second);
      CHECK(gone.count(pid) == 0);
      auto [it, fresh] = pid_info.try_emplace(pid, in.name(), start);
      if (!fresh) {
        CHECK(it->second.first == in.name());
        CHECK(it->second.second == start);
      } else if (!prev.empty()) {
        ++appeared;
        CHECK(int64_t(start) <= b.perf_time_100ns);
        CHECK(int64_t(start) > b.perf_time_100ns - 20 * 10000000LL);  // started during the last interval
      }
    }
    for (uint64_t pid : prev)
      if (!now.count(pid)) gone.insert(pid);
    prev = now;
  }
  CHECK(appeared > 20);
  CHECK(gone.size() > 20);
}

TEST_CASE("the same spec and seed give identical bytes, another seed does not") {
  Spec s = test::small_spec("2008r2", 5);
  const captures::Capture a = make(s), b = make(s);
  REQUIRE(a.records.size() == b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    CHECK(a.records[i].payload == b.records[i].payload);
    CHECK(a.records[i].time_100ns == b.records[i].time_100ns);
  }
  CHECK(a.fingerprint_json == b.fingerprint_json);
  s.seed = 2;
  const captures::Capture c = make(s);
  CHECK(a.records[2].payload != c.records[2].payload);
}

namespace {

// Processor _Total's % Processor Time (238/6, PERF_100NSEC_TIMER_INV) between the first two
// samples, as a collector computes it: what issue 56 saw alike on SYNTH-2016-1 and SYNTH-2022-1.
double cpu_busy(const captures::Capture& c) {
  const std::vector<perfdata::DataBlock> b = blocks(c, "Global");
  REQUIRE(b.size() >= 2);
  double at[2];
  for (int k = 0; k < 2; ++k) {
    const perfdata::Object* p = b[size_t(k)].find(238);
    REQUIRE(p != nullptr);
    const perfdata::Instance* total = nullptr;
    for (const perfdata::Instance& in : p->instances)
      if (in.name() == u"_Total") total = &in;
    REQUIRE(total != nullptr);
    at[k] = double(value(*p, total->counter_block, 6));
  }
  const double elapsed = double(b[1].perf_time_100ns - b[0].perf_time_100ns);
  return 100.0 * (1.0 - (at[1] - at[0]) / elapsed);
}

}  // namespace

// Issue 56: the default seed made hosts of two profiles (and, before issue 47, of two names)
// read the same series; values now come from seed, name and profile together (synth/spec.h).
TEST_CASE("hosts of two profiles or two names read apart with the default seed and the same three alike") {
  const Spec a = test::small_spec("2016");
  Spec other_profile = test::small_spec("2022");
  Spec named = test::small_spec("2016"), named_again = test::small_spec("2016");
  named.host_name = "WEB01";
  named_again.host_name = "web01";  // names compare without case, as Windows' do
  const double busy = cpu_busy(make(a));
  INFO(busy);
  CHECK(std::fabs(busy - cpu_busy(make(other_profile))) > 0.01);
  CHECK(std::fabs(busy - cpu_busy(make(named))) > 0.01);
  CHECK(cpu_busy(make(named)) == cpu_busy(make(named_again)));
  CHECK(value_seed(named, "2016") == value_seed(named_again, "2016"));
  // A profile's aliases name one OS row: the seed takes the row's name, not the spelling.
  Spec alias = named;
  alias.profile = "win2016";
  CHECK(cpu_busy(make(named)) == cpu_busy(make(alias)));
}

TEST_CASE("streaming yields the same records as the convenience call") {
  const Spec s = test::small_spec("2003", 4);
  const captures::Capture whole = make(s);
  std::unique_ptr<Synthesizer> syn;
  REQUIRE(Synthesizer::create(s, syn).ok());
  CHECK(syn->tick_count() == 4);
  std::vector<captures::QueryRecord> got;
  while (!syn->done()) REQUIRE(syn->next(got).ok());
  CHECK_FALSE(syn->next(got).ok());
  REQUIRE(got.size() == whole.records.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].payload == whole.records[i].payload);
    CHECK(got[i].tick == i / 2);
  }
  CHECK(syn->header().registry.size() == whole.registry.size());
}

TEST_CASE("Server 2022 disables Process v1 unless the spec turns it back on") {
  Spec s = test::small_spec("2022", 1);
  captures::Capture c = make(s);
  CHECK(decode(c.records[0]).find(230) == nullptr);
  CHECK_THAT(c.fingerprint_json, Catch::Contains("\"process_v1_disabled\":true"));
  bool flagged = false;
  for (const auto& r : c.registry)
    flagged |= r.name == "Disable Performance Counters" && r.key.find("PerfProc") != std::string::npos;
  CHECK(flagged);
  s.process_v1_disabled = false;
  c = make(s);
  CHECK(decode(c.records[0]).find(230) != nullptr);
}

TEST_CASE("custom objects show the values their generators describe") {
  Spec s;
  REQUIRE(parse_spec_toml(R"(
[host]
duration = "10m"
interval = "10s"
[[objects]]
name = "Widget"
instances = { names = ["a", "b"], total = true }
[[objects.counters]]
name = "Level"
type = "PERF_COUNTER_RAWCOUNT"
value = 42
[[objects.counters]]
name = "Items/sec"
type = "PERF_COUNTER_COUNTER"
value = 100
[[objects.counters]]
name = "% Full"
type = "PERF_RAW_FRACTION"
base = 200
value = 25
[[objects.counters]]
name = "Avg. sec/Item"
type = "PERF_AVERAGE_TIMER"
ops_per_second = 10
value = 0.5
)",
                          s)
              .ok());
  const captures::Capture c = make(s);
  perfdata::NameTable names;
  REQUIRE(perfdata::parse_names(c.names[0].counter, names).ok());
  uint32_t widget = 0;
  for (const auto& e : names.entries)
    if (e.text == u"Widget") widget = e.index;
  REQUIRE(widget > 1847);
  const std::vector<perfdata::DataBlock> g = blocks(c, "Global");
  const perfdata::Object* o0 = g[3].find(widget);
  const perfdata::Object* o1 = g[4].find(widget);
  REQUIRE(o1);
  REQUIRE(o1->instances.size() == 3);
  CHECK(o1->instances[2].name() == u"_Total");
  const Bytes& b0 = o0->instances[0].counter_block;
  const Bytes& b1 = o1->instances[0].counter_block;
  const uint32_t base = o1->counters[0].name_index;
  // Each of several instances reads the generators scaled by its own factor in 0.6-1.4 (issue 30
  // item 10: instances must not read identical values).
  const uint64_t level = value(*o1, b1, base);
  CHECK(level >= 25);  // 42 x 0.6, truncated
  CHECK(level <= 59);  // 42 x 1.4
  CHECK(level != value(*o1, o1->instances[1].counter_block, base));
  const double dt_s = double(g[4].perf_time - g[3].perf_time) / double(g[4].perf_freq);
  const double scale = double(value(*o1, b1, base + 2) - value(*o0, b0, base + 2)) / dt_s / 100;
  CHECK(scale >= 0.6 * 0.95);
  CHECK(scale <= 1.4 * 1.05);
  CHECK(double(value(*o1, b1, base + 4)) / double(value(*o1, b1, base + 4, 1)) == Approx(0.25 * scale).epsilon(0.06));
  const double d_time = double(value(*o1, b1, base + 6) - value(*o0, b0, base + 6)) / double(g[4].perf_freq);
  const double d_ops = double(value(*o1, b1, base + 6, 1) - value(*o0, b0, base + 6, 1));
  CHECK(d_time / d_ops == Approx(0.5 * scale).epsilon(0.06));
  // _Total sums the instances' raw values (each truncated on its own: within 1).
  const uint64_t sum = level + value(*o1, o1->instances[1].counter_block, base);
  CHECK(value(*o1, o1->instances[2].counter_block, base) >= sum);
  CHECK(value(*o1, o1->instances[2].counter_block, base) <= sum + 1);
}

TEST_CASE("instances = 0 makes a multi-instance object with no instances, no key a single-instance one") {
  // winperf.h: NumInstances is 0 for an object that can have instances but has none now, and
  // PERF_NO_INSTANCES (-1) for one that cannot have any.
  struct Case {
    const char* instances;  // the TOML value, "" = key absent
    int32_t num_instances;
    size_t listed;
  };
  for (const Case& k : {Case{"0", 0, 0}, Case{"{ count = 0 }", 0, 0}, Case{"{ count = 0, total = true }", 1, 1},
                        Case{"2", 2, 2}, Case{"", PERF_NO_INSTANCES, 0}}) {
    INFO("instances = " << k.instances);
    std::string toml = "[host]\nduration = \"1m\"\ninterval = \"15s\"\n[[objects]]\nname = \"Queue\"\n";
    if (*k.instances) toml += std::string("instances = ") + k.instances + "\n";
    toml += "[[objects.counters]]\nname = \"Depth\"\ntype = \"PERF_COUNTER_RAWCOUNT\"\nvalue = 3\n";
    Spec s;
    REQUIRE(parse_spec_toml(toml, s).ok());
    const captures::Capture c = make(s);
    perfdata::NameTable names;
    REQUIRE(perfdata::parse_names(c.names[0].counter, names).ok());
    uint32_t queue = 0;
    for (const auto& e : names.entries)
      if (e.text == u"Queue") queue = e.index;
    REQUIRE(queue != 0);
    for (const perfdata::DataBlock& b : blocks(c, "Global")) {
      const perfdata::Object* o = b.find(queue);
      REQUIRE(o);
      CHECK(o->num_instances == k.num_instances);
      CHECK(o->instances.size() == k.listed);
    }
  }
}

// Issue 30: a 16 GB default overflowed win2000's 32-bit memory counters to 4294967295. Each
// profile's own memory size must show whole: 32-bit counters below 2^32 (not clamped at the top),
// Available < Commit Limit, Committed <= Commit Limit, Available MBytes the same memory as bytes.
TEST_CASE("every profile's default memory fits its counters and adds up") {
  for (const windows::OsProfile& os : windows::os_profiles()) {
    INFO(os.name);
    const captures::Capture c = make(test::small_spec(std::string(os.name), 2));
    for (const perfdata::DataBlock& b : blocks(c, "Global")) {
      const perfdata::Object* mem = b.find(4);
      REQUIRE(mem);
      const Bytes& cb = mem->counter_block;
      const uint64_t avail = value(*mem, cb, 24), committed = value(*mem, cb, 26), limit = value(*mem, cb, 30);
      const bool narrow = !find_profile(os.name)->host.large_counters;
      for (uint64_t v : {avail, committed, limit}) CHECK(v < (narrow ? UINT32_MAX : UINT64_MAX));
      CHECK(avail > 0);
      CHECK(avail < limit);
      CHECK(committed <= limit);
      CHECK(value(*mem, cb, 1382) == avail / (1024 * 1024));
      CHECK(limit > find_profile(os.name)->host.memory_mb * 1024 * 1024);  // memory + paging file
    }
  }
}

TEST_CASE("a 32-bit-counter profile refuses 4 GB of memory or more, a 64-bit one takes it") {
  Spec s = test::small_spec("win2000", 1);
  s.memory_mb = 4096;
  captures::Capture c;
  const Status st = synthesize(s, c);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find("32-bit") != std::string::npos);
  s.memory_mb = 4095;
  CHECK(synthesize(s, c).ok());
  s.profile = "2016";
  s.memory_mb = 65536;
  CHECK(synthesize(s, c).ok());
}
