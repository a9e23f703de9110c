// Live answers (a realtime moment past the first loop, a fleet host's own name, clock offset and
// variation) checked field by field against the recorded sample, read through the copying model
// (perfdata/model.h) rather than the in-place view the host patches with: every byte outside the
// clocks and the cumulative counters stays as recorded, the clocks move by what the moment says,
// and the counters follow one per-host factor and grow linearly with the loops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "captures/reader.h"
#include "perfdata/model.h"
#include "replayer/host.h"
#include "replayer/recording.h"

using namespace perfsim;
using namespace perfsim::replayer;
namespace pd = perfsim::perfdata;

namespace {

constexpr int64_t k100nsPerSecond = 10000000;

int64_t ticks_at(int64_t t100, int64_t freq) { return int64_t(double(t100) * double(freq) / 1e7); }

// FILETIME (100 ns since 1601-01-01 UTC) as SYSTEMTIME, by the standard calendar.
pd::SystemTime civil(int64_t filetime) {
  using namespace std::chrono;
  const sys_days epoch = sys_days(year(1601) / January / 1);
  const auto t = epoch + duration_cast<milliseconds>(duration<int64_t, std::ratio<1, k100nsPerSecond>>(filetime));
  const sys_days day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss hms(floor<milliseconds>(t - day));
  return {uint16_t(int(ymd.year())),       uint16_t(unsigned(ymd.month())),   uint16_t(weekday(day).c_encoding()),
          uint16_t(unsigned(ymd.day())),   uint16_t(hms.hours().count()),     uint16_t(hms.minutes().count()),
          uint16_t(hms.seconds().count()), uint16_t(hms.subseconds().count())};
}

bool same_time(const pd::SystemTime& a, const pd::SystemTime& b) {
  return a.year == b.year && a.month == b.month && a.day_of_week == b.day_of_week && a.day == b.day &&
         a.hour == b.hour && a.minute == b.minute && a.second == b.second && a.ms == b.ms;
}

pd::DataBlock parsed(ByteView b) {
  pd::DataBlock d;
  REQUIRE(pd::parse(b, d, pd::ParseOptions{false}).ok());
  return d;
}

// Every counter of every block of `d`, in order, with whether the host keeps it growing.
struct Value {
  uint64_t v;
  uint32_t size;
  bool cumulative;
};
std::vector<Value> values(const pd::DataBlock& d) {
  std::vector<Value> out;
  for (const pd::Object& o : d.objects) {
    std::vector<const Bytes*> blocks;
    if (o.multi_instance())
      for (const pd::Instance& in : o.instances) blocks.push_back(&in.counter_block);
    else
      blocks.push_back(&o.counter_block);
    for (const Bytes* b : blocks)
      for (size_t j = 0; j < o.counters.size(); ++j) {
        const pd::CounterDef& c = o.counters[j];
        const bool sized = c.size == 4 || c.size == 8;
        const bool cumulative = sized && winperf::accumulates(c.type, j ? o.counters[j - 1].type : 0);
        out.push_back({sized ? pd::read_counter(*b, c) : 0, c.size, cumulative});
      }
  }
  return out;
}

// One object's bytes, as build() lays them out.
Bytes alone(const pd::Object& o) {
  pd::DataBlock d;
  d.objects.push_back(o);
  return pd::build(d);
}

// A fleet member's identity: its name, clock offset and variation.
HostIdentity member(std::string name, int64_t clock_offset_100ns, uint64_t seed, double variation) {
  HostIdentity id;
  id.system_name = std::move(name);
  id.clock_offset_100ns = clock_offset_100ns;
  id.seed = seed;
  id.variation = variation;
  return id;
}

std::shared_ptr<SimulatedHost> host(std::shared_ptr<const Recording> rec, const HostIdentity& id) {
  HostOptions opt{TimelineMode::kRealtime, 0};
  opt.identity = id;
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::create(std::move(rec), opt, h).ok());
  return h;
}

}  // namespace

TEST_CASE("live answers move the clocks and cumulative counters only and by what the moment says") {
  captures::Capture cap;
  REQUIRE(captures::read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", cap).ok());
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(std::move(cap), rec).ok());
  const int64_t offset = 3600 * k100nsPerSecond;
  const auto varied = host(rec, member("A-LONGER-FLEET-HOST-NAME", offset, 11, 0.25));
  const auto plain = host(rec, member("H", -offset, 0, 0));
  const int64_t now =
      int64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count()) *
          10 +
      116444736000000000;  // FILETIME of 1970-01-01

  const uint32_t pos = 1;
  const SampleRef recorded_sample = rec->sample(pos, Series::kGlobal, Patches::kAll);
  REQUIRE(recorded_sample);
  const pd::DataBlock r = parsed(recorded_sample->payload);
  const std::vector<Value> rv = values(r);
  REQUIRE(std::count_if(rv.begin(), rv.end(), [](const Value& v) { return v.cumulative; }) > 100);

  std::vector<std::vector<std::vector<Value>>> served;  // per host, per loop (extra 0), every counter
  for (const auto& [h, name, clock_offset] : {std::tuple{varied, std::u16string(u"A-LONGER-FLEET-HOST-NAME"), offset},
                                              std::tuple{plain, std::u16string(u"H"), -offset}}) {
    std::vector<std::vector<Value>> by_loop;
    std::optional<int64_t> shift;
    for (uint64_t loop : {0, 1, 2}) {
      for (int64_t extra : {int64_t(0), int64_t(7 * k100nsPerSecond)}) {
        const Moment m{pos, loop, extra, false};
        const Bytes got = h->content(PerfKey::kData, "Global", m).data.to_bytes();
        const pd::DataBlock s = parsed(got);
        CHECK(s.system_name() == name);
        // The header's clocks: PerfTime by the loops and the extra time at PerfFreq; the wall clock
        // (PerfTime100nSec, SystemTime) the same and the host's one shift from the recording.
        CHECK(s.perf_freq == r.perf_freq);
        CHECK(s.perf_time ==
              r.perf_time + int64_t(loop) * rec->global_clock.perf_time_span + ticks_at(extra, r.perf_freq));
        const int64_t moved =
            s.perf_time_100ns - r.perf_time_100ns - int64_t(loop) * rec->global_clock.time100_span - extra;
        if (!shift) shift = moved;
        CHECK(moved == *shift);
        CHECK(std::abs(*shift - (now + clock_offset - rec->start_100ns)) < 600 * k100nsPerSecond);
        CHECK(same_time(s.system_time, civil(s.perf_time_100ns)));
        // Objects: the same structure; an object's own PerfTime moves as the block's does.
        REQUIRE(s.objects.size() == r.objects.size());
        for (size_t k = 0; k < r.objects.size(); ++k) {
          const pd::Object &so = s.objects[k], &ro = r.objects[k];
          CHECK(so.name_index == ro.name_index);
          CHECK(so.instances.size() == ro.instances.size());
          CHECK(so.perf_freq == ro.perf_freq);
          const int64_t span = recorded_sample->objects[k].time_span;
          CHECK(so.perf_time ==
                (ro.perf_freq ? ro.perf_time + int64_t(loop) * span + ticks_at(extra, ro.perf_freq) : ro.perf_time));
        }
        const std::vector<Value> sv = values(s);
        REQUIRE(sv.size() == rv.size());
        for (size_t i = 0; i < sv.size(); ++i)
          if (!sv[i].cumulative) CHECK(sv[i].v == rv[i].v);
        if (extra == 0) by_loop.push_back(sv);
      }
    }
    REQUIRE(by_loop.size() == 3);
    served.push_back(std::move(by_loop));
  }
  // No variation: as recorded in the first loop, then the same growth each loop.
  const auto& plain_loops = served[1];
  size_t growing = 0;
  for (size_t i = 0; i < rv.size(); ++i) {
    if (!rv[i].cumulative) continue;
    const uint64_t mask = rv[i].size == 8 ? UINT64_MAX : UINT32_MAX;
    const uint64_t step = (plain_loops[1][i].v - plain_loops[0][i].v) & mask;
    CHECK(plain_loops[0][i].v == rv[i].v);
    CHECK(((plain_loops[2][i].v - plain_loops[0][i].v) & mask) == ((2 * step) & mask));
    growing += step != 0;
  }
  CHECK(growing > 100);
  // Variation: every counter that grows is, in the first loop, the recorded one scaled down by the
  // same factor in [0.75, 1] (rounded down): the factors each counter allows overlap. One that
  // does not grow stays as recorded.
  const auto& varied_loops = served[0];
  double lo = 0.75, hi = 1.0 + 1e-9;
  for (size_t i = 0; i < rv.size(); ++i) {
    if (!rv[i].cumulative) continue;
    if (plain_loops[1][i].v == plain_loops[0][i].v) {
      CHECK(varied_loops[0][i].v == rv[i].v);
      continue;
    }
    CHECK(varied_loops[0][i].v <= rv[i].v);
    if (rv[i].v < 1000) continue;
    const double v = double(rv[i].v), got = double(varied_loops[0][i].v);
    lo = std::max(lo, got / v - 1e-12);
    hi = std::min(hi, (got + 1) / v);
  }
  CHECK(lo < hi);
  CHECK(hi < 1.0);  // seed 11 draws a factor below 1
}

TEST_CASE("an index query assembles the objects a live Global answer holds") {
  captures::Capture cap;
  REQUIRE(captures::read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", cap).ok());
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(std::move(cap), rec).ok());
  const auto h = host(rec, member("ASSEMBLED-HOST", 0, 5, 0.1));
  const Moment m{2, 3, 1234567, false};
  const pd::DataBlock global = parsed(h->content(PerfKey::kData, "Global", m).data.to_bytes());
  const pd::DataBlock some = parsed(h->content(PerfKey::kData, "230 232", m).data.to_bytes());
  CHECK(some.system_name() == u"ASSEMBLED-HOST");
  CHECK(some.perf_time == global.perf_time);
  CHECK(some.perf_time_100ns == global.perf_time_100ns);
  CHECK(some.num_object_types == some.objects.size());
  REQUIRE(some.objects.size() >= 2);
  for (const pd::Object& o : some.objects) {
    const pd::Object* g = global.find(o.name_index);
    REQUIRE(g);
    CHECK(alone(o) == alone(*g));
  }
}

TEST_CASE("between two samples cumulative counters move toward the next one with time and between = step holds them") {
  captures::Capture cap;
  REQUIRE(captures::read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap", cap).ok());
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(std::move(cap), rec).ok());
  const uint32_t pos = 1;
  REQUIRE(rec->tick_count() > pos + 1);
  const int64_t interval = rec->offsets()[pos + 1] - rec->offsets()[pos];
  const std::vector<Value> now = values(parsed(rec->sample(pos, Series::kGlobal)->payload));
  const std::vector<Value> next = values(parsed(rec->sample(pos + 1, Series::kGlobal)->payload));
  REQUIRE(now.size() == next.size());  // the same instances at both ticks: counters pair by position
  HostOptions step_opt{TimelineMode::kRealtime, 0};
  step_opt.between = Between::kStep;
  std::shared_ptr<SimulatedHost> interpolating, stepping;
  REQUIRE(SimulatedHost::create(rec, HostOptions{TimelineMode::kRealtime, 0}, interpolating).ok());
  REQUIRE(SimulatedHost::create(rec, step_opt, stepping).ok());
  auto served = [&](const std::shared_ptr<SimulatedHost>& h, int64_t extra) {
    return values(parsed(h->content(PerfKey::kData, "Global", Moment{pos, 0, extra, false}).data.to_bytes()));
  };
  // At the sample itself nothing moves; a stepping host holds the sample's values throughout.
  for (const std::vector<Value>& v : {served(interpolating, 0), served(stepping, interval / 2)}) {
    REQUIRE(v.size() == now.size());
    for (size_t i = 0; i < v.size(); ++i) CHECK(v[i].v == now[i].v);
  }
  std::vector<uint64_t> before(now.size(), 0);  // growth so far, for "never goes back"
  size_t moved = 0;
  for (int64_t extra : {interval / 4, interval / 2, 3 * interval / 4, interval - 1}) {
    INFO("at " << extra << " of " << interval);
    const std::vector<Value> v = served(interpolating, extra);
    REQUIRE(v.size() == now.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (!now[i].cumulative) {
        CHECK(v[i].v == now[i].v);  // instantaneous: the last recorded value
        continue;
      }
      const uint64_t mask = now[i].size == 8 ? UINT64_MAX : UINT32_MAX;
      if (now[i].size == 8 && next[i].v < now[i].v) {
        CHECK(v[i].v == now[i].v);  // a 64-bit counter that would go back holds
        continue;
      }
      const uint64_t step = (next[i].v - now[i].v) & mask, got = (v[i].v - now[i].v) & mask;
      // In proportion to the time (rounded down), never past the next value, never back.
      const double want = double(step) * double(extra) / double(interval);
      CHECK(double(got) <= want + 1e-6 * double(step) + 1);
      CHECK(double(got) >= want - 1e-6 * double(step) - 1);
      CHECK(got <= step);
      CHECK(got >= before[i]);
      before[i] = got;
      moved += got != 0;
    }
  }
  CHECK(moved > 100);
}
