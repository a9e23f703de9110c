#include <catch2/catch.hpp>

#include "perfdata/view.h"
#include "replayer/host.h"
#include "replayer/quirks.h"
#include "tests/common/byte_views.h"
#include "tests/common/test_capture.h"
#include "windows/constants.h"

using namespace perfsim;
using namespace perfsim::replayer;
namespace pd = perfsim::perfdata;
namespace db = perfsim::winperf::data_block;

using perfsim::testing::test_capture;

namespace {

std::shared_ptr<SimulatedHost> load(TimelineMode mode = TimelineMode::kFrozen, uint32_t tick = 1) {
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(test_capture(), HostOptions{mode, tick}, h).ok());
  return h;
}

std::vector<uint32_t> object_indices(ByteView b) {
  pd::DataBlock d;
  REQUIRE(pd::parse(b, d, pd::ParseOptions{false}).ok());
  std::vector<uint32_t> out;
  for (const auto& o : d.objects) out.push_back(o.name_index);
  return out;
}

}  // namespace

TEST_CASE("Global and Costly are served as recorded at the frozen tick") {
  auto h = load();
  auto cap = test_capture();
  CHECK(h->content(PerfKey::kData, "Global", h->current_tick()).data == cap.records[2].payload);
  CHECK(h->content(PerfKey::kData, "costly", h->current_tick()).data == cap.records[3].payload);
}

TEST_CASE("index queries return the provider's objects, assembled from the recorded bytes") {
  auto h = load();
  Bytes b = h->content(PerfKey::kData, "232", 1).data.to_bytes();
  CHECK(object_indices(b) == std::vector<uint32_t>{230, 232});
  pd::DataBlock d;
  REQUIRE(pd::parse(b, d, pd::ParseOptions{false}).ok());
  CHECK(d.perf_time == 1001);
  CHECK(d.system_name() == u"TESTHOST");
  CHECK(d.objects[1].instances.size() == 3);
  CHECK(pd::read_counter(d.objects[1].instances[2].counter_block, d.objects[1].counters[0]) == 2322);
  CHECK(object_indices(h->content(PerfKey::kData, "740 2", 1).data) == std::vector<uint32_t>{2, 238, 230, 232, 740});
  CHECK(object_indices(h->content(PerfKey::kData, "Foreign TESTHOST 238", 1).data) == std::vector<uint32_t>{2, 238});
}

TEST_CASE("an unknown name gives an empty PERF_DATA_BLOCK as Windows does") {
  auto h = load();
  Bytes b = h->content(PerfKey::kData, "NoSuchValue", 1).data.to_bytes();
  pd::DataBlock d;
  REQUIRE(pd::parse(b, d, pd::ParseOptions{false}).ok());
  CHECK(d.objects.empty());
  CHECK(d.num_object_types == 0);
  CHECK(pd::block_field32(b, db::kHeaderLength) == b.size());  // HeaderLength == TotalByteLength
  CHECK(b.size() == align_up(88 + d.system_name_length, 8));
  CHECK(d.system_name_offset == 88);
}

TEST_CASE("name tables answer Counter/Help in any case, bare on HKPT, missing languages not found") {
  auto h = load();
  ValueContent c = h->content(PerfKey::kData, "Counter 009", 0);
  CHECK(c.type == windows::kRegMultiSz);
  CHECK(c.data == test_capture().names[0].counter);
  CHECK(h->content(PerfKey::kText, "Counter", 0).data == c.data);
  CHECK(h->content(PerfKey::kData, "help 009", 0).data == test_capture().names[0].help);
  CHECK(h->content(PerfKey::kData, "Counter 019", 0).status == windows::kErrorFileNotFound);
  CHECK(h->content(PerfKey::kText, "Global", 0).status == windows::kErrorFileNotFound);
}

TEST_CASE("rrp-exact buffer policy") {
  auto h = load();
  const size_t n = test_capture().records[2].payload.size();
  ValueAnswer probe = h->query(PerfKey::kData, "Global", BufferOffer{false, 0});
  CHECK(probe.status == windows::kErrorSuccess);
  CHECK(probe.size == n);
  CHECK(probe.data.empty());
  ValueAnswer short_ = h->query(PerfKey::kData, "Global", BufferOffer{true, uint32_t(n - 1)});
  CHECK(short_.status == windows::kErrorMoreData);
  CHECK(short_.size == n);
  ValueAnswer ok = h->query(PerfKey::kData, "Global", BufferOffer{true, uint32_t(n)});
  CHECK(ok.status == windows::kErrorSuccess);
  CHECK(ok.data.size() == n);
}

TEST_CASE("echo-offered buffer policy: the size offered comes back, not the size needed, name tables keep theirs") {
  // windows/README.md, "A buffer too small": 2008 to 2022 (impacket #1677 against 2012 R2).
  Quirks q;
  REQUIRE(apply_setting(q, QuirkSetting{"echo-offered", true, {}}).ok());
  HostOptions opt{TimelineMode::kFrozen, 1};
  opt.quirks = q;
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(test_capture(), opt, h).ok());
  const size_t n = test_capture().records[2].payload.size();
  const ValueAnswer probe = h->query(PerfKey::kData, "Global", BufferOffer{false, 0});
  CHECK(probe.status == windows::kErrorMoreData);
  CHECK(probe.size == 0);
  for (uint32_t offer : {0u, 512u, uint32_t(n - 1)}) {
    INFO(offer);
    const ValueAnswer a = h->query(PerfKey::kData, "Global", BufferOffer{true, offer});
    CHECK(a.status == windows::kErrorMoreData);
    CHECK(a.size == offer);
    CHECK(a.data.empty());
  }
  const ValueAnswer ok = h->query(PerfKey::kData, "Global", BufferOffer{true, uint32_t(n)});
  CHECK(ok.status == windows::kErrorSuccess);
  CHECK(ok.data.size() == n);
  const size_t names = test_capture().names[0].counter.size();
  const ValueAnswer text = h->query(PerfKey::kData, "Counter 009", BufferOffer{true, uint32_t(names - 1)});
  CHECK(text.status == windows::kErrorMoreData);
  CHECK(text.size == names);
}

TEST_CASE("step timeline advances once per completed data answer and wraps") {
  auto h = load(TimelineMode::kStep, 0);
  CHECK(h->current_tick() == 0);
  h->query(PerfKey::kData, "Global", BufferOffer{false, 0});  // a size probe does not advance
  CHECK(h->current_tick() == 0);
  for (int i = 0; i < 3; ++i) h->query(PerfKey::kData, "Global", BufferOffer{true, 1 << 20});
  CHECK(h->current_tick() == 0);  // 3 ticks: wrapped
  h->query(PerfKey::kData, "238", BufferOffer{true, 1 << 20});
  CHECK(h->current_tick() == 1);
}

TEST_CASE("HKLM registry resolves paths case-insensitively and holds the name tables") {
  auto h = load();
  const Registry& r = h->registry();
  const RegKey* perflib = r.open(r.root(), "software\\microsoft\\WINDOWS NT\\CurrentVersion\\Perflib");
  REQUIRE(perflib);
  REQUIRE(perflib->value("last counter"));
  CHECK(load_le32(perflib->value("Last Counter")->data.data()) == 740);
  const RegKey* lang = r.open(*perflib, "009");
  REQUIRE(lang);
  CHECK(lang->value("Counter")->type == windows::kRegMultiSz);
  CHECK(r.open(r.root(), "SOFTWARE\\Nope") == nullptr);
  CHECK(r.open(*perflib, "") == perflib);
}

namespace {

// True when [v.data(), v.data() + v.size()) lies inside a recorded payload or name table.
bool inside_recording(const SimulatedHost& h, ByteView v) {
  auto in = [&](const Bytes& b) { return testing::lies_within(v, b); };
  for (const captures::QueryRecord& r : h.capture().records)
    if (in(r.payload)) return true;
  for (const captures::NameTable& t : h.capture().names)
    if (in(t.counter) || in(t.help)) return true;
  return false;
}

}  // namespace

TEST_CASE("frozen answers share the recorded bytes instead of copying them, and outlive their host") {
  auto h = load();
  const Bytes want = test_capture().records[2].payload;
  ValueAnswer a = h->query(PerfKey::kData, "Global", {true, 1u << 20});
  REQUIRE(a.status == windows::kErrorSuccess);
  CHECK(a.data == want);
  CHECK(inside_recording(*h, a.data));
  const ValueAnswer names = h->query(PerfKey::kData, "Counter 009", {true, 1u << 20});
  REQUIRE(names.status == windows::kErrorSuccess);
  CHECK(inside_recording(*h, names.data));
  h.reset();  // the answer keeps the recording alive
  CHECK(a.data == want);
}

TEST_CASE("live answers and quirks that edit an answer edit their own copy, never the shared recording") {
  std::shared_ptr<const Recording> rec;
  REQUIRE(build_recording(test_capture(), rec).ok());
  std::shared_ptr<SimulatedHost> frozen;
  REQUIRE(SimulatedHost::create(rec, HostOptions{TimelineMode::kFrozen, 1}, frozen).ok());
  const Bytes want = test_capture().records[2].payload;
  auto live = load(TimelineMode::kRealtime);
  const ValueAnswer la = live->query(PerfKey::kData, "Global", {true, 1u << 20});
  REQUIRE(la.status == windows::kErrorSuccess);
  CHECK_FALSE(inside_recording(*live, la.data));
  CHECK(la.data.size() == want.size());

  HostOptions lying{TimelineMode::kFrozen, 1};
  lying.quirks.object_count_extra = 3;
  std::shared_ptr<SimulatedHost> liar;
  REQUIRE(SimulatedHost::create(rec, lying, liar).ok());
  const ValueAnswer lie = liar->query(PerfKey::kData, "Global", {true, 1u << 20});
  REQUIRE(lie.status == windows::kErrorSuccess);
  CHECK(pd::block_field32(lie.data.view(), db::kNumObjectTypes) == pd::block_field32(want, db::kNumObjectTypes) + 3);
  CHECK_FALSE(inside_recording(*liar, lie.data));

  HostOptions samba{TimelineMode::kFrozen, 1};
  samba.quirks.buffer = BufferPolicy::kSambaTruncate;
  std::shared_ptr<SimulatedHost> trunc;
  REQUIRE(SimulatedHost::create(rec, samba, trunc).ok());
  const ValueAnswer header = trunc->query(PerfKey::kData, "Global", {true, uint32_t(want.size())});
  REQUIRE(header.data.size() == pd::block_field32(want, db::kHeaderLength));
  CHECK(pd::block_field32(header.data.view(), db::kNumObjectTypes) == 0);  // NumObjectTypes 0 in the copy...

  // ...while the recording every host shares still holds what was recorded.
  CHECK(frozen->query(PerfKey::kData, "Global", {true, 1u << 20}).data == want);
  CHECK(frozen->capture().records[2].payload == want);
}

TEST_CASE("samba-truncate cuts a recorded answer with a HeaderLength below 88 at 88 bytes") {
  // A damaged capture's Global is served as recorded; its header must still hold the fields the
  // cut rewrites (TotalByteLength, NumObjectTypes), whatever its HeaderLength says.
  captures::Capture cap = test_capture();
  store_le32(&cap.records[2].payload[db::kHeaderLength], 8);
  HostOptions samba{TimelineMode::kFrozen, 1};
  samba.quirks.buffer = BufferPolicy::kSambaTruncate;
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(SimulatedHost::load(cap, samba, h).ok());
  const uint32_t size = uint32_t(cap.records[2].payload.size());
  const ValueAnswer a = h->query(PerfKey::kData, "Global", {true, size});
  REQUIRE(a.status == windows::kErrorSuccess);
  REQUIRE(a.data.size() == winperf::kDataBlockSize);
  CHECK(pd::block_field32(a.data.view(), db::kTotalByteLength) == winperf::kDataBlockSize);
  CHECK(pd::block_field32(a.data.view(), db::kNumObjectTypes) == 0);
}
