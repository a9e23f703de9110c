// Content quirks switched on per host (content_quirks.h): each rewrite shows in what the host
// serves, and leaves everything else as it was.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>

#include "perfdata/counters.h"
#include "perfdata/names.h"
#include "perfdata/validate.h"
#include "replayer/host.h"
#include "tests/common/small_synth.h"

using namespace perfsim;
using namespace perfsim::replayer;
namespace pd = perfsim::perfdata;

namespace {

const captures::Capture& synth_host() {
  static const captures::Capture cap = testing::small_synth_capture(6, 2, 45);
  return cap;
}

std::shared_ptr<SimulatedHost> host_with_quirk(const QuirkSetting& s, uint32_t tick = 1) {
  HostOptions opt{TimelineMode::kFrozen, tick};
  REQUIRE(apply_setting(opt.quirks, s).ok());
  std::shared_ptr<SimulatedHost> h;
  const Status st = SimulatedHost::load(synth_host(), opt, h);
  INFO(st.message());
  REQUIRE(st.ok());
  return h;
}

pd::DataBlock global(SimulatedHost& h, uint32_t tick) {
  pd::DataBlock d;
  REQUIRE(pd::parse(h.content(PerfKey::kData, "Global", tick).data, d, pd::ParseOptions{false}).ok());
  return d;
}

std::shared_ptr<SimulatedHost> plain(uint32_t tick = 1) {
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(synth_host(), {TimelineMode::kFrozen, tick}, h).ok());
  return h;
}

pd::NameTable names(SimulatedHost& h, const std::string& value) {
  pd::NameTable t;
  const ValueContent c = h.content(PerfKey::kData, value, 0);
  REQUIRE(c.status == 0);
  REQUIRE(pd::parse_names(c.data, t).ok());
  return t;
}

}  // namespace

TEST_CASE("duplicate-counter-defs repeats the object's first definition in the next slot") {
  auto h = host_with_quirk({"duplicate-counter-defs", true, {{"object", "238"}}});
  const pd::DataBlock before = global(*plain(), 1), after = global(*h, 1);
  const pd::Object* o = after.find(238);
  REQUIRE(o);
  REQUIRE(o->counters.size() == before.find(238)->counters.size() + 1);
  CHECK(o->counters[0].name_index == o->counters[1].name_index);
  CHECK(o->counters[0].offset == o->counters[1].offset);
  CHECK(o->num_counters == o->counters.size());
  CHECK_FALSE(pd::has_errors(pd::validate(h->content(PerfKey::kData, "Global", 1).data)));
  CHECK(after.find(230)->counters.size() == before.find(230)->counters.size());  // other objects untouched
}

TEST_CASE("duplicate-instances gives several instances one name, PDH-style names tell them apart") {
  auto h = host_with_quirk({"duplicate-instances", true, {{"object", "230"}, {"count", "3"}}});
  const pd::DataBlock d = global(*h, 1);
  const pd::Object* o = d.find(230);
  REQUIRE(o);
  REQUIRE(o->instances.size() >= 3);
  CHECK(o->instances[1].name() == o->instances[0].name());
  CHECK(o->instances[2].name() == o->instances[0].name());
  std::vector<pd::InstanceValues> vals;
  REQUIRE(pd::format_object(nullptr, d, 230, vals).ok());
  CHECK(vals[1].name == vals[0].name + "#1");
  CHECK(vals[2].name == vals[0].name + "#2");
}

TEST_CASE("name-table-gaps: a duplicate name past a gap, and Last Counter no longer the highest index") {
  auto h = host_with_quirk({"name-table-gaps", true, {}});
  const pd::NameTable before = names(*plain(), "Counter 009"), after = names(*h, "Counter 009");
  CHECK(after.highest_index() == before.highest_index() + 20);
  CHECK(after.find(before.highest_index() + 2) == nullptr);                          // the gap
  CHECK(*after.find(after.highest_index()) == *after.find(after.entries[1].index));  // the duplicate
  CHECK(after.declared_last() != after.highest_index());
  const pd::NameTable help = names(*h, "Help 009");
  CHECK(help.find(after.highest_index() + 1) != nullptr);
}

TEST_CASE("counter-type-change turns a 32-bit raw count into a 64-bit hex one, values kept") {
  const pd::DataBlock before = global(*plain(), 1);
  uint32_t object = 0, counter = 0;
  for (const pd::Object& o : before.objects)
    for (const pd::CounterDef& c : o.counters)
      if (!counter && c.type == winperf::PERF_COUNTER_RAWCOUNT && !o.multi_instance()) {
        object = o.name_index;
        counter = c.name_index;
      }
  REQUIRE(counter);
  auto h =
      host_with_quirk({"counter-type-change", true, {{"counter", std::to_string(counter)}, {"type", "0x00000100"}}});
  const pd::DataBlock after = global(*h, 1);
  const pd::Object *o0 = before.find(object), *o1 = after.find(object);
  REQUIRE(o1);
  for (size_t i = 0; i < o0->counters.size(); ++i) {
    const pd::CounterDef &c0 = o0->counters[i], &c1 = o1->counters[i];
    if (c0.name_index == counter) {
      CHECK(c1.type == winperf::PERF_COUNTER_LARGE_RAWCOUNT_HEX);
      CHECK(c1.size == 8);
      CHECK(c1.offset % 8 == 0);
    }
    CHECK(pd::read_counter(o1->counter_block, c1) == pd::read_counter(o0->counter_block, c0));
  }
  CHECK_FALSE(pd::has_errors(pd::validate(h->content(PerfKey::kData, "Global", 1).data)));
}

TEST_CASE("perffreq changes PerfFreq and every formatted value stays what it was") {
  auto h = host_with_quirk({"perffreq", true, {{"hz", "3579545"}}});
  auto p = plain();
  const pd::DataBlock b0 = global(*p, 0), b1 = global(*p, 1), a0 = global(*h, 0), a1 = global(*h, 1);
  CHECK(a1.perf_freq == 3579545);
  CHECK(b1.perf_freq != 3579545);
  size_t compared = 0, timer_ticks = 0;
  for (const pd::Object& o : b1.objects) {
    for (const pd::CounterDef& c : o.counters)
      timer_ticks += c.type == winperf::PERF_COUNTER_TIMER || c.type == winperf::PERF_AVERAGE_TIMER;
    std::vector<pd::InstanceValues> vb, va;
    REQUIRE(pd::format_object(&b0, b1, o.name_index, vb).ok());
    REQUIRE(pd::format_object(&a0, a1, o.name_index, va).ok());
    REQUIRE(va.size() == vb.size());
    for (size_t i = 0; i < vb.size(); ++i)
      for (size_t k = 0; k < vb[i].counters.size(); ++k) {
        const pd::FormattedValue &x = vb[i].counters[k].value, &y = va[i].counters[k].value;
        REQUIRE(x.valid() == y.valid());
        if (!x.valid()) continue;
        INFO("object " << o.name_index << " " << pd::counter_type_name(vb[i].counters[k].type) << ": " << x.value
                       << " vs " << y.value);
        CHECK(std::abs(x.value - y.value) <= 1e-6 * std::max(1.0, std::abs(x.value)));
        ++compared;
      }
  }
  CHECK(compared > 50);
  CHECK(timer_ticks > 0);  // the capture has counters kept in ticks, so the scaling was exercised
}

TEST_CASE("localized-partial adds a shorter table in another language, in English") {
  auto h = host_with_quirk({"localized-partial", true, {{"lang", "019"}, {"share", "0.4"}}});
  const pd::NameTable en = names(*h, "Counter 009"), ru = names(*h, "Counter 019");
  CHECK(ru.entries.size() < en.entries.size());
  CHECK(ru.entries.size() >= en.entries.size() * 3 / 10);
  const auto en_map = en.to_map();
  for (const auto& [i, text] : ru.to_map()) CHECK(en_map.at(i) == text);
  CHECK(h->content(PerfKey::kData, "Help 019", 0).status == 0);
}

TEST_CASE("content quirks: bad parameters and objects the capture lacks are refused with the reason") {
  Quirks q;
  CHECK_FALSE(apply_setting(q, {"counter-type-change", true, {{"counter", "6"}}}).ok());
  CHECK_FALSE(apply_setting(q, {"perffreq", true, {{"hz", "fast"}}}).ok());
  CHECK_FALSE(apply_setting(q, {"localized-partial", true, {{"share", "2"}}}).ok());
  CHECK_FALSE(apply_setting(q, {"duplicate-instances", true, {{"count", "1"}}}).ok());
  HostOptions opt{TimelineMode::kFrozen, 0};
  REQUIRE(apply_setting(opt.quirks, {"duplicate-counter-defs", true, {{"object", "99999"}}}).ok());
  std::shared_ptr<SimulatedHost> h;
  const Status s = SimulatedHost::load(synth_host(), opt, h);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("99999") != std::string::npos);
}

TEST_CASE("a host with content quirks owns its recording, hosts without share theirs") {
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(synth_host(), rec).ok());
  HostOptions with{TimelineMode::kFrozen, 0};
  REQUIRE(apply_setting(with.quirks, {"name-table-gaps", true, {}}).ok());
  std::shared_ptr<SimulatedHost> a, b;
  REQUIRE(SimulatedHost::create(rec, with, a).ok());
  REQUIRE(SimulatedHost::create(rec, {TimelineMode::kFrozen, 0}, b).ok());
  CHECK(&a->recording() != rec.get());
  CHECK(&b->recording() == rec.get());
}

namespace {

std::vector<uint32_t> indices_in(SimulatedHost& h, const std::string& value) {
  pd::DataBlock d;
  const ValueContent c = h.content(PerfKey::kData, value, 1);
  REQUIRE(c.status == 0);
  REQUIRE(pd::parse(c.data, d, pd::ParseOptions{false}).ok());
  CHECK(d.num_object_types == d.objects.size());
  std::vector<uint32_t> out;
  for (const pd::Object& o : d.objects) out.push_back(o.name_index);
  return out;
}

bool holds(const std::vector<uint32_t>& v, uint32_t i) { return std::find(v.begin(), v.end(), i) != v.end(); }

}  // namespace

// Windows drops a disabled provider's objects (Disable Performance Counters, or the Process V1
// object turned off on 2022) from every collection, Costly included.
TEST_CASE("a disabled or timed-out provider's objects vanish from Global, Costly and index queries") {
  auto base = plain();
  REQUIRE(indices_in(*base, "Costly") == std::vector<uint32_t>{786, 740, 816});
  REQUIRE(holds(indices_in(*base, "Global"), 230));

  auto v1_off = host_with_quirk({"process-v1-disabled", true, {}});
  for (const std::string value : {"Global", "Costly", "230 232 786 740 816"}) {
    INFO(value);
    const std::vector<uint32_t> got = indices_in(*v1_off, value);
    for (uint32_t perfproc : {230u, 232u, 786u, 740u, 816u}) CHECK_FALSE(holds(got, perfproc));
  }
  CHECK(indices_in(*v1_off, "Costly").empty());
  CHECK(holds(indices_in(*v1_off, "Global"), 238));

  auto disk_timeout = host_with_quirk({"provider-timeout", true, {{"provider", "PerfDisk"}}});
  const std::vector<uint32_t> g = indices_in(*disk_timeout, "Global");
  CHECK_FALSE(holds(g, 234));
  CHECK_FALSE(holds(g, 236));
  CHECK(holds(g, 230));
  CHECK(indices_in(*disk_timeout, "Costly") == std::vector<uint32_t>{786, 740, 816});
}
