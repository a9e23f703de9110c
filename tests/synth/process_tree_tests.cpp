// The processes each profile's host runs (synth/process_tree.cpp): System's PID of its version,
// one smss, lsass, services (and wininit from Vista), each under the parent that version gives
// it; Process(_Total) the sum of its instances; memory that fits the host's.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "windows/os.h"

using namespace perfsim;
using namespace perfsim::synth;

namespace {

struct Proc {
  std::string name;
  uint64_t pid = 0, ppid = 0;
};

std::vector<Proc> processes(const perfdata::Object& p) {
  std::vector<Proc> out;
  for (const perfdata::Instance& in : p.instances) {
    if (in.name() == u"_Total") continue;
    out.push_back(
        {utf16_to_utf8(in.name()), test::value(p, in.counter_block, 784), test::value(p, in.counter_block, 1410)});
  }
  return out;
}

std::vector<const Proc*> named(const std::vector<Proc>& ps, const std::string& name) {
  std::vector<const Proc*> out;
  for (const Proc& p : ps)
    if (p.name == name) out.push_back(&p);
  return out;
}

bool running(const std::vector<Proc>& ps, uint64_t pid) {
  for (const Proc& p : ps)
    if (p.pid == pid) return true;
  return false;
}

}  // namespace

TEST_CASE("each profile's host runs its version's processes, each under the parent that version gives it") {
  for (const std::string& profile : windows::os_names()) {
    INFO(profile);
    const windows::OsProfile* os = windows::find_os(profile);
    const uint32_t v = os->major * 100 + os->minor;
    Spec s = test::small_spec(profile, 2);
    s.process_count = 40;
    s.process_v1_disabled = false;
    const captures::Capture c = test::make(s);
    const perfdata::DataBlock g = test::decode(c.records[0]);
    const perfdata::Object* proc = g.find(230);
    REQUIRE(proc != nullptr);
    const std::vector<Proc> ps = processes(*proc);
    const auto system = named(ps, "System");
    REQUIRE(system.size() == 1);
    CHECK(system[0]->pid == (v < 500 ? 2u : v == 500 ? 8u : 4u));
    for (const char* one : {"smss", "lsass", "services"}) {
      INFO(one);
      REQUIRE(named(ps, one).size() == 1);
    }
    const uint64_t smss = named(ps, "smss")[0]->pid;
    CHECK(named(ps, "smss")[0]->ppid == system[0]->pid);
    const auto wininit = named(ps, "wininit");
    const auto winlogon = named(ps, "winlogon");
    REQUIRE(winlogon.size() == 1);
    uint64_t scm_parent = winlogon[0]->pid;  // who starts services and lsass
    if (v >= 600) {
      REQUIRE(wininit.size() == 1);
      scm_parent = wininit[0]->pid;
      // Session smss instances have exited: csrss, wininit and winlogon's parent runs no more.
      for (const char* orphan : {"csrss", "wininit", "winlogon"})
        for (const Proc* p : named(ps, orphan)) CHECK_FALSE(running(ps, p->ppid));
    } else {
      CHECK(wininit.empty());
      for (const char* later : {"dwm", "LogonUI", "conhost", "taskhostw", "MsMpEng"}) CHECK(named(ps, later).empty());
      for (const char* child : {"csrss", "winlogon"})
        for (const Proc* p : named(ps, child)) CHECK(p->ppid == smss);
    }
    CHECK(named(ps, "services")[0]->ppid == scm_parent);
    CHECK(named(ps, "lsass")[0]->ppid == scm_parent);
    const uint64_t services = named(ps, "services")[0]->pid;
    for (const Proc* p : named(ps, "svchost")) CHECK(p->ppid == services);
    const auto explorer = named(ps, "explorer");
    REQUIRE(explorer.size() == 1);
    CHECK_FALSE(running(ps, explorer[0]->ppid));  // userinit has exited
  }
}

TEST_CASE("Process(_Total) is the sum of its instances counter by counter, and memory fits the host's") {
  for (const char* profile : {"win2000", "2003", "2016"}) {
    INFO(profile);
    Spec s = test::small_spec(profile, 8);
    s.process_count = 60;
    s.process_churn_per_hour = 400;
    const captures::Capture c = test::make(s);
    const windows::OsProfile* os = windows::find_os(profile);
    const uint64_t physical = uint64_t(os->synth.memory_mb) << 20;
    for (const captures::QueryRecord& r : c.records) {
      if (r.value_name != "Global") continue;
      const perfdata::DataBlock g = test::decode(r);
      const perfdata::Object* proc = g.find(230);
      const perfdata::Object* mem = g.find(4);
      REQUIRE(proc != nullptr);
      REQUIRE(mem != nullptr);
      const perfdata::Instance& total = proc->instances.back();
      REQUIRE(total.name() == u"_Total");
      for (const perfdata::CounterDef& d : proc->counters) {
        if (d.name_index == 784 || d.name_index == 1410 || d.name_index == 682 || d.name_index == 684) continue;
        INFO(d.name_index);
        uint64_t sum = 0;
        for (size_t i = 0; i + 1 < proc->instances.size(); ++i)
          sum += perfdata::read_counter(proc->instances[i].counter_block, d);
        if (d.size == 4) sum &= 0xFFFFFFFFu;
        CHECK(perfdata::read_counter(total.counter_block, d) == sum);
      }
      const uint64_t private_bytes = test::value(*proc, total.counter_block, 186);
      const uint64_t working_set = test::value(*proc, total.counter_block, 180);
      CHECK(private_bytes <= test::value(*mem, mem->counter_block, 26));           // Committed Bytes
      CHECK(working_set <= physical - test::value(*mem, mem->counter_block, 24));  // in use: not Available
      if (os->synth.large_counters) continue;
      CHECK(private_bytes < 0xFFFFFFFFu);                      // a 32-bit host's commit fits its 4 GB
      for (size_t i = 0; i + 1 < proc->instances.size(); ++i)  // a 32-bit process's 2 GB of user space
        CHECK(test::value(*proc, proc->instances[i].counter_block, 174) < (2ull << 30));
    }
  }
}
