// Timeline: a stepping host polled for three loops of a bundled capture must look like one host
// that never restarts — clocks and cumulative counters never go backwards, and every formatted
// value between two consecutive polls equals the recorded one for the same pair of samples
// (across a wrap: the recorded first interval) within 1%.
#include <catch2/catch.hpp>
#include <cmath>
#include <ctime>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "captures/reader.h"
#include "perfdata/counters.h"
#include "perfdata/model.h"
#include "replayer/host.h"
#include "windows/constants.h"

using namespace perfsim;
using namespace perfsim::replayer;
namespace pd = perfsim::perfdata;

namespace {

captures::Capture bundled(const std::string& name) {
  captures::Capture cap;
  REQUIRE(captures::read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/" + name, cap, nullptr).ok());
  return cap;
}

pd::DataBlock parsed(ByteView b) {
  pd::DataBlock d;
  REQUIRE(pd::parse(b, d, pd::ParseOptions{false}).ok());
  return d;
}

struct Comparison {
  size_t compared = 0, mismatches = 0, wraps32 = 0;
  std::string first_problem;
};

using Values = std::map<std::string, std::vector<pd::CounterValue>>;  // by PDH instance name

Values values_of(const pd::DataBlock* prev, const pd::DataBlock& cur, uint32_t object) {
  std::vector<pd::InstanceValues> v;
  Values out;
  if (pd::format_object(prev, cur, object, v).ok())
    for (auto& i : v) out[i.name] = std::move(i.counters);
  return out;
}

// Every counter of every object served at `tick` against the recording: one-sample types against
// the recorded sample itself, two-sample types against the recorded pair (k-1, k).
void compare(const pd::DataBlock& prev, const pd::DataBlock& cur, const std::vector<pd::DataBlock>& rec, uint32_t tick,
             uint32_t k, double elapsed_shift_s, Comparison& out) {
  for (const pd::Object& o : rec[tick].objects) {
    const Values single = values_of(nullptr, rec[tick], o.name_index);
    const Values pair = values_of(&rec[k - 1], rec[k], o.name_index);
    const Values got = values_of(&prev, cur, o.name_index);
    REQUIRE(got.size() == single.size());
    for (const auto& [name, counters] : got) {
      REQUIRE(single.count(name));
      for (size_t c = 0; c < counters.size(); ++c) {
        const pd::FormattedValue* w = &single.at(name)[c].value;
        if (w->status == pd::ValueStatus::kNeedsTwoSamples) {
          if (!pair.count(name)) continue;  // an instance the recorded pair does not hold twice
          w = &pair.at(name)[c].value;
        }
        if (!w->valid()) continue;
        const pd::FormattedValue& g = counters[c].value;
        // Elapsed time keeps counting across loops: the process has been up that much longer.
        const double want = w->value + (counters[c].type == winperf::PERF_ELAPSED_TIME ? elapsed_shift_s : 0);
        // A 32-bit counter wraps modulo 2^32 as it does on Windows; only those may "go back".
        if (!g.valid() && o.counters[counters[c].counter_index].size == 4 &&
            g.error.find("backwards") != std::string::npos) {
          ++out.wraps32;
          continue;
        }
        ++out.compared;
        const bool ok = g.valid() && std::fabs(g.value - want) <= 0.01 * std::max(std::fabs(want), 1e-9);
        if (!ok && ++out.mismatches == 1)
          out.first_problem = "object " + std::to_string(o.name_index) + " instance '" + name + "' counter " +
                              std::to_string(counters[c].name_index) + ": recorded " + std::to_string(want) +
                              ", served " + (g.valid() ? std::to_string(g.value) : g.error);
      }
    }
  }
}

void poll_three_loops(const std::string& capture_file) {
  const captures::Capture cap = bundled(capture_file);
  std::shared_ptr<SimulatedHost> host;
  REQUIRE(SimulatedHost::load(cap, HostOptions{TimelineMode::kStep}, host).ok());
  const uint32_t n = host->ticks();
  REQUIRE(n >= 3);
  std::vector<pd::DataBlock> recorded;
  for (uint32_t t = 0; t < n; ++t) recorded.push_back(parsed(host->content(PerfKey::kData, "Global", t).data));

  Comparison cmp;
  pd::DataBlock prev;
  for (uint32_t poll = 0; poll < 3 * n + 1; ++poll) {
    const Moment m = host->now();
    REQUIRE(m.tick == poll % n);
    REQUIRE(m.loop == poll / n);
    const ValueAnswer a = host->query(PerfKey::kData, "Global", {true, 1u << 26});
    REQUIRE(a.status == windows::kErrorSuccess);
    pd::DataBlock cur = parsed(a.data);
    if (poll > 0) {
      INFO("poll " << poll << " (tick " << m.tick << ", loop " << m.loop << ")");
      CHECK(cur.perf_time > prev.perf_time);
      CHECK(cur.perf_time_100ns > prev.perf_time_100ns);
      // A wrap replays the recorded first interval.
      const uint32_t k = m.tick == 0 ? 1 : m.tick;
      const size_t before = cmp.mismatches;
      compare(prev, cur, recorded, m.tick, k, double(m.loop) * double(host->recording().loop_100ns) / 1e7, cmp);
      if (before == 0 && cmp.mismatches) cmp.first_problem += " at poll " + std::to_string(poll);
    }
    prev = std::move(cur);
  }
  INFO(capture_file << ": " << cmp.first_problem);
  CHECK(cmp.compared > 100 * n);
  CHECK(cmp.mismatches == 0);
  CHECK(cmp.wraps32 < cmp.compared / 100);
}

}  // namespace

TEST_CASE("three loops of a stepping host: no counter goes back, every value as recorded (2016)") {
  poll_three_loops("default-2016.perfcap");
}

TEST_CASE("three loops of a stepping host: no counter goes back, every value as recorded (win2000, TSC clock)") {
  poll_three_loops("default-win2000.perfcap");
}

TEST_CASE("live answers carry the serving moment's wall clock, consistent in SystemTime and PerfTime100nSec") {
  const captures::Capture cap = bundled("default-2022.perfcap");
  std::shared_ptr<SimulatedHost> host;
  REQUIRE(SimulatedHost::load(cap, HostOptions{TimelineMode::kStep}, host).ok());
  const int64_t now_ft = 116444736000000000 + int64_t(std::time(nullptr)) * 10000000;
  pd::DataBlock d = parsed(host->query(PerfKey::kData, "Global", {true, 1u << 26}).data);
  CHECK(std::llabs(d.perf_time_100ns - now_ft) < 600 * 10000000ll);  // the host started "now"
  // SYSTEMTIME of the same instant (to the second), computed independently through time_t.
  const std::time_t secs = std::time_t((d.perf_time_100ns - 116444736000000000) / 10000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  CHECK(d.system_time.year == tm.tm_year + 1900);
  CHECK(d.system_time.month == tm.tm_mon + 1);
  CHECK(d.system_time.day == tm.tm_mday);
  CHECK(d.system_time.day_of_week == tm.tm_wday);
  CHECK(d.system_time.hour == tm.tm_hour);
  CHECK(d.system_time.minute == tm.tm_min);
  CHECK(d.system_time.second == tm.tm_sec);
}

TEST_CASE("frozen serves the recorded bytes, a fleet identity renames the host and keeps the layout valid") {
  const captures::Capture cap = bundled("default-2022.perfcap");
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(cap, rec).ok());
  HostOptions opt{TimelineMode::kFrozen, 3};
  std::shared_ptr<SimulatedHost> plain, renamed;
  REQUIRE(SimulatedHost::create(rec, opt, plain).ok());
  CHECK(plain->query(PerfKey::kData, "Global", {true, 1u << 26}).data == cap.records[6].payload);
  opt.identity.system_name = "FLEET-HOST-0042-WITH-A-LONG-NAME";
  REQUIRE(SimulatedHost::create(rec, opt, renamed).ok());
  const Bytes b = renamed->query(PerfKey::kData, "Global", {true, 1u << 26}).data.to_bytes();
  pd::DataBlock d = parsed(b);
  CHECK(d.system_name() == u"FLEET-HOST-0042-WITH-A-LONG-NAME");
  CHECK(d.objects.size() == parsed(cap.records[6].payload).objects.size());
  CHECK(parsed(renamed->content(PerfKey::kData, "238", 3).data).system_name() == u"FLEET-HOST-0042-WITH-A-LONG-NAME");
}

TEST_CASE("timeline control while other threads serve: every answer is whole, the last change holds") {
  std::shared_ptr<SimulatedHost> host;
  REQUIRE(SimulatedHost::load(bundled("default-2016.perfcap"), HostOptions{TimelineMode::kRealtime, 0}, host).ok());
  const uint32_t n = host->ticks();
  std::atomic<bool> stop{false};
  std::atomic<size_t> answers{0}, bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      while (!stop.load()) {
        const ValueAnswer a = host->query(PerfKey::kData, "Global", BufferOffer{true, 1u << 24});
        pd::DataBlock d;
        if (a.status != windows::kErrorSuccess || !pd::parse(a.data.view(), d, pd::ParseOptions{false}).ok()) ++bad;
        if (host->now().tick >= n) ++bad;
        ++answers;
      }
    });
  Quirks busy = host->quirks();
  busy.slow_global_ms = 1;
  // Changes of every kind, interleaved with the readers' calls: at least 300, and on until the
  // readers have answered 20 times (a loaded machine may start them late; bounded: 60 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (uint32_t i = 0; i < 300 || (answers < 20 && std::chrono::steady_clock::now() < deadline); ++i) {
    REQUIRE(host->control(TimelineOp{TimelineOpKind(i % 5), i % n, 1.0 + i % 7}).ok());
    REQUIRE(host->set_quirks(i % 2 ? busy : Quirks{}).ok());
  }
  REQUIRE(host->control(TimelineOp{TimelineOpKind::kSeek, 4, 1}).ok());
  REQUIRE(host->control(TimelineOp{TimelineOpKind::kPause, 0, 1}).ok());
  stop = true;
  for (auto& t : readers) t.join();
  CHECK(bad == 0);
  CHECK(answers >= 20);
  // Seek then pause: position 4 from now on, the same bytes each time.
  CHECK(host->now().tick == 4);
  CHECK(host->timeline_paused());
  const ValueAnswer a = host->query(PerfKey::kData, "Global", BufferOffer{true, 1u << 24});
  const ValueAnswer b = host->query(PerfKey::kData, "Global", BufferOffer{true, 1u << 24});
  CHECK(a.data.to_bytes() == b.data.to_bytes());
  CHECK(host->control(TimelineOp{TimelineOpKind::kSeek, n, 1}).code() == Status::Code::kInvalidArgument);
  Quirks content = host->quirks();
  content.content.perf_freq = 1000;
  CHECK(host->set_quirks(content).code() == Status::Code::kInvalidArgument);
}

// replayer/README.md: on a step timeline the blocks' clocks move a recorded interval per answer,
// not with the wall clock (issue 56: two polls a second apart saw 15 s pass).
TEST_CASE("a stepping host's clocks move one recorded interval per answer however soon it follows") {
  const captures::Capture cap = bundled("default-2016.perfcap");
  std::shared_ptr<SimulatedHost> host;
  REQUIRE(SimulatedHost::load(cap, HostOptions{TimelineMode::kStep}, host).ok());
  REQUIRE(host->ticks() >= 3);
  const std::vector<int64_t>& t = host->recording().offsets();
  const auto started = std::chrono::steady_clock::now();
  std::vector<pd::DataBlock> polls;
  for (int i = 0; i < 3; ++i) polls.push_back(parsed(host->query(PerfKey::kData, "Global", {true, 1u << 26}).data));
  const int64_t wall_100ns =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count() * 10;
  for (int i = 1; i < 3; ++i) {
    INFO("poll " << i);
    const int64_t recorded = t[size_t(i)] - t[size_t(i) - 1];
    REQUIRE(recorded > wall_100ns);  // the three answers came sooner than one recorded interval
    CHECK(polls[size_t(i)].perf_time_100ns - polls[size_t(i) - 1].perf_time_100ns == recorded);
    const double perf_s =
        double(polls[size_t(i)].perf_time - polls[size_t(i) - 1].perf_time) / double(polls[size_t(i)].perf_freq);
    CHECK(std::fabs(perf_s - double(recorded) / 1e7) < 0.01 * double(recorded) / 1e7);
  }
}
