// Lazy recordings (issue 20, issue 18 item 1): what a file-backed Recording prepares per sample
// equals what the eager preparation computed for the whole capture, for every tick; sparse ticks
// cost nothing.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "captures/reader.h"
#include "captures/writer.h"
#include "replayer/host.h"
#include "replayer/recording.h"
#include "replayer/sample_cache.h"
#include "synth/synth.h"
#include "tests/common/test_capture.h"
#include "tests/common/temp_file.h"
#include "tests/replayer/eager_reference.h"

using namespace perfsim;
using namespace perfsim::replayer;

namespace {

using perfsim::testing::temp_file_path;

// Resident memory of this process in bytes (VmRSS), 0 when unknown.
uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

// A short synthesised capture of `profile` written with short keyframe intervals, so reading a
// tick decodes deltas.
std::string synth_file(const std::string& profile) {
  synth::Spec spec;
  spec.profile = profile;
  spec.process_count = 6;
  spec.threads_max = 3;
  spec.duration_s = 300;
  spec.interval_ms = 15000;
  captures::Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  const std::string path = temp_file_path("perfsim-lazy-" + profile, ".perfcap");
  captures::WriterOptions opt;
  opt.keyframe_interval = 4;
  REQUIRE(captures::write_capture(path, cap, opt).ok());
  return path;
}

void check_sample(const eager::SampleView& want, const SampleRef& got) {
  if (!want.record) {
    CHECK_FALSE(got);
    return;
  }
  REQUIRE(got);
  CHECK(got->status == want.record->status);
  CHECK(got->reg_type == want.record->reg_type);
  CHECK(std::ranges::equal(got->payload, want.record->payload));
  CHECK(got->header_length == want.header_length);
  REQUIRE(got->patches == Patches::kAll);
  CHECK(got->objects == want.objects);
}

void check_same(const eager::EagerRecording& want, const Recording& got) {
  REQUIRE(got.tick_count() == want.ticks.size());
  CHECK(got.loop_100ns == want.loop_100ns);
  CHECK(got.start_100ns == want.start_100ns);
  CHECK(got.global_clock.perf_time_span == want.global_clock.perf_time_span);
  CHECK(got.global_clock.time100_span == want.global_clock.time100_span);
  CHECK(got.costly_clock.perf_time_span == want.costly_clock.perf_time_span);
  CHECK(got.costly_clock.time100_span == want.costly_clock.time100_span);
  size_t counters = 0;
  for (uint32_t t = 0; t < want.ticks.size(); ++t) {
    INFO("tick " << t);
    CHECK(got.tick_number(t) == t);
    CHECK(got.offsets()[t] == want.ticks[t].offset_100ns);
    check_sample(want.ticks[t].global, got.sample(t, Series::kGlobal, Patches::kAll));
    check_sample(want.ticks[t].costly, got.sample(t, Series::kCostly, Patches::kAll));
    for (const ObjectSlice& s : want.ticks[t].global.objects) counters += s.counters.size();
  }
  CHECK(counters > 0);  // the comparison covered counter patches, not only empty lists
}

}  // namespace

TEST_CASE("a lazy recording prepares every tick as the eager preparation did (2016, win2000, 2003 and 2022 synth)") {
  for (const std::string profile : {"2016", "win2000", "2003", "2022"}) {
    INFO("profile " << profile);
    const std::string path = synth_file(profile);
    captures::Capture cap;
    REQUIRE(captures::read_capture(path, cap).ok());
    const eager::EagerRecording want = eager::build(cap);
    // A cache smaller than the capture's samples: entries leave and are decoded again.
    auto cache = std::make_shared<SampleCache>(256 * 1024);
    std::shared_ptr<const Recording> lazy;
    REQUIRE(open_recording(path, cache, lazy).ok());
    check_same(want, *lazy);
    CHECK(cache->bytes() <= cache->max_bytes());
    std::shared_ptr<const Recording> memory;
    REQUIRE(build_recording(cap, memory).ok());
    check_same(want, *memory);
    std::filesystem::remove(path);
  }
}

TEST_CASE("a lazy recording of each bundled capture prepares every tick as the eager preparation did") {
  for (const std::string name : {"default-2016", "default-win2000", "default-2003", "default-2008r2", "default-2022"}) {
    INFO(name);
    const std::string path = std::string(PERFSIM_SOURCE_DIR) + "/captures/" + name + ".perfcap";
    captures::Capture cap;
    REQUIRE(captures::read_capture(path, cap).ok());
    std::shared_ptr<const Recording> lazy;
    REQUIRE(open_recording(path, nullptr, lazy).ok());
    check_same(eager::build(cap), *lazy);
  }
}

TEST_CASE("frozen answers of a lazy recording are the recorded bytes at every tick, quirked profiles included") {
  const std::string path = synth_file("win2000");
  captures::Capture cap;
  REQUIRE(captures::read_capture(path, cap).ok());
  std::shared_ptr<const Recording> lazy;
  REQUIRE(open_recording(path, nullptr, lazy).ok());
  for (const captures::QueryRecord& r : cap.records) {
    INFO("tick " << r.tick << " " << r.value_name);
    HostOptions opt{TimelineMode::kFrozen, r.tick};
    REQUIRE(profile_quirks("win2000", opt.quirks).ok());
    std::shared_ptr<SimulatedHost> h;
    REQUIRE(SimulatedHost::create(lazy, opt, h).ok());
    const ValueContent c = h->content(PerfKey::kData, r.value_name, r.tick);
    CHECK(c.status == r.status);
    CHECK(c.data == r.payload);
  }
  std::filesystem::remove(path);
}

TEST_CASE("hosts of one lazy recording share its decoded samples through the cache") {
  const std::string path = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  auto cache = std::make_shared<SampleCache>();
  std::shared_ptr<const Recording> rec;
  REQUIRE(open_recording(path, cache, rec).ok());
  std::shared_ptr<SimulatedHost> a, b;
  REQUIRE(SimulatedHost::create(rec, HostOptions{TimelineMode::kFrozen, 1}, a).ok());
  REQUIRE(SimulatedHost::create(rec, HostOptions{TimelineMode::kFrozen, 1}, b).ok());
  const ValueContent ca = a->content(PerfKey::kData, "Global", 1), cb = b->content(PerfKey::kData, "Global", 1);
  REQUIRE(!ca.data.empty());
  CHECK(ca.data.data() == cb.data.data());  // one decoded copy, shared
  CHECK(cache->bytes() >= ca.data.size());
  rec.reset();
  a.reset();
  b.reset();
  CHECK(cache->bytes() == 0);  // the last host gone, its recording's entries leave the cache
}

TEST_CASE("a sample cache keeps to its byte bound, least recently used first") {
  SampleCache cache(1000);
  auto s = std::make_shared<Sample>();
  cache.put(1, 1, s, 400);
  cache.put(1, 2, s, 400);
  CHECK(cache.find(1, 1));  // 1 is now the most recently used
  cache.put(1, 3, s, 400);
  CHECK(cache.bytes() == 800);
  CHECK(cache.find(1, 1));
  CHECK_FALSE(cache.find(1, 2));
  CHECK(cache.find(1, 3));
  cache.put(2, 1, s, 5000);  // larger than the bound: not kept
  CHECK_FALSE(cache.find(2, 1));
  cache.forget(1);
  CHECK(cache.bytes() == 0);
}

TEST_CASE("a capture whose last tick is 1e9 opens in small memory and serves its recorded ticks back to back") {
  captures::Capture cap = testing::test_capture();
  constexpr uint32_t kHuge = 1000000000;
  captures::QueryRecord last = cap.records[4];  // tick 2's Global
  last.tick = kHuge;
  last.payload = testing::sample({2, 238, 230, 232}, 3);
  cap.records.push_back(last);
  const std::string path = temp_file_path("perfsim-lazy-huge-tick", ".perfcap");
  REQUIRE(captures::write_capture(path, cap).ok());

  const uint64_t before = resident_bytes();  // growth, not the total: ASan's own memory counts too
  std::shared_ptr<const Recording> rec;
  REQUIRE(open_recording(path, nullptr, rec).ok());
  CHECK(rec->tick_count() == 4);
  CHECK(rec->tick_number(3) == kHuge);
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::create(rec, HostOptions{TimelineMode::kFrozen, 3}, h).ok());
  CHECK(h->content(PerfKey::kData, "Global", 3).data == last.payload);
  std::shared_ptr<SimulatedHost> step;
  REQUIRE(SimulatedHost::create(rec, HostOptions{TimelineMode::kStep}, step).ok());
  for (uint32_t i = 0; i < 4; ++i) {
    INFO("step " << i);
    CHECK(step->current_tick() == i);
    const ValueAnswer a = step->query(PerfKey::kData, "Global", {true, 1u << 20});
    REQUIRE(a.status == windows::kErrorSuccess);
    CHECK(a.data.size() == (i == 3 ? last.payload : cap.records[2 * i].payload).size());
  }
  CHECK(step->current_tick() == 0);  // looped after the last recorded tick, not after 1e9 of them
  std::shared_ptr<const Recording> memory;
  REQUIRE(build_recording(cap, memory).ok());
  CHECK(memory->tick_count() == 4);
  // Before, a table of every tick number was made: ~140 bytes a tick, 140 GB here (or bad_alloc).
  CHECK(resident_bytes() - before < 200u * 1024 * 1024);
  std::filesystem::remove(path);
}

// Passes take turns in a few slots (recording.cpp): each must give its slot back, and a recording
// closed while its pass still waits for one must not wait for it.
TEST_CASE("background passes of many recordings take turns, all finish, and closing one never waits") {
  const std::string path = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  std::vector<std::shared_ptr<const Recording>> recs(6);
  for (auto& r : recs) REQUIRE(open_recording(path, std::make_shared<SampleCache>(), r).ok());
  recs.back().reset();  // its pass may still be queued behind the others
  recs.pop_back();
  for (const auto& r : recs) {
    const SampleRef s = r->sample(1, Series::kGlobal, Patches::kAll);  // waits for this recording's pass
    REQUIRE(s);
    CHECK(s->patches == Patches::kAll);
    CHECK(r->counters_known());
  }
}

TEST_CASE("prefetch decodes the next four ticks in the background, and no more") {
  const std::string path = synth_file("2016");
  auto cache = std::make_shared<SampleCache>();
  std::shared_ptr<const Recording> rec;
  REQUIRE(open_recording(path, cache, rec).ok());
  REQUIRE(rec->tick_count() > 7);
  // Counted in samples, not bytes: what a cached sample costs beyond its payload (object slices,
  // patch columns) is the cache's business, and once made a fifth tick's byte bound too lax.
  auto samples_in = [&](uint32_t first, uint32_t count) {
    size_t n = 0;
    for (uint32_t p = first; p < first + count; ++p)
      for (Series s : {Series::kGlobal, Series::kCostly}) n += rec->has_sample(p, s);
    return n;
  };
  REQUIRE(samples_in(2, 5) > samples_in(2, 4));
  // The recording's own counter pass caches what it read first: counted before the prefetch.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!rec->counters_known() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rec->counters_known());
  const size_t before = cache->entries();
  rec->prefetch(2, Patches::kNone);
  while (cache->entries() < before + samples_in(2, 4) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // room for a wrong fifth
  CHECK(cache->entries() == before + samples_in(2, 4));
}
