// Capture format v2 (captures/FORMAT.md "Split codec") against what perfsim really stores: every
// OS profile's synth data, what a served host answers under every quirk, the bundled captures and
// damaged perf data. Decoding must give back the exact bytes recorded, every time. Lives with the
// replayer tests because the quirky answers come from a SimulatedHost.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>

#include "captures/reader.h"
#include "captures/split.h"
#include "captures/writer.h"
#include "replayer/host.h"
#include "synth/synth.h"
#include "tests/common/small_synth.h"
#include "tests/common/temp_file.h"
#include "windows/os.h"

using namespace perfsim;
using namespace perfsim::captures;

namespace {

using perfsim::testing::temp_file_path;

// Writes `cap` with `opt`, reads it back in order and in reverse (random access), checks every
// record is the one written; returns how many records used the split codec.
size_t round_trip(const Capture& cap, const WriterOptions& opt, const std::string& name) {
  const std::string path = temp_file_path("perfsim_v2_" + name);
  REQUIRE(write_capture(path, cap, opt).ok());
  std::unique_ptr<Reader> r;
  REQUIRE(Reader::open(path, r).ok());
  REQUIRE(r->damage().ok());
  REQUIRE(r->records().size() == cap.records.size());
  size_t split = 0;
  for (size_t i = 0; i < cap.records.size(); ++i) {
    QueryRecord got;
    REQUIRE(r->read_record(i, got).ok());
    INFO(name << " record " << i << " " << got.value_name);
    REQUIRE(got.payload == cap.records[i].payload);
    REQUIRE(got.value_name == cap.records[i].value_name);
    REQUIRE(got.status == cap.records[i].status);
    REQUIRE(got.size == cap.records[i].size);
    QueryHeader h;
    REQUIRE(r->head(i, h).ok());
    split += is_split(h.codec);
  }
  std::unique_ptr<Reader> pre;  // payload_prefix: the block header without decoding (v2: no chain)
  REQUIRE(Reader::open(path, pre).ok());
  for (size_t i = cap.records.size(); i-- > 0;) {
    for (size_t n : {size_t(80), size_t(50), size_t(3)}) {
      Bytes head;
      REQUIRE(pre->payload_prefix(i, n, head).ok());
      const Bytes& p = cap.records[i].payload;
      INFO(name << " record " << i << " prefix " << n);
      REQUIRE(head == Bytes(p.begin(), p.begin() + std::min(n, p.size())));
    }
  }
  std::unique_ptr<Reader> back;
  REQUIRE(Reader::open(path, back).ok());
  for (size_t i = cap.records.size(); i-- > 0;) {
    ByteView p;
    REQUIRE(back->payload(i, p).ok());
    INFO(name << " record " << i << " read backwards");
    REQUIRE(Bytes(p.begin(), p.end()) == cap.records[i].payload);
  }
  std::filesystem::remove(path);
  return split;
}

WriterOptions v2(uint32_t keyframe_interval = 32) {
  WriterOptions o;
  o.keyframe_interval = keyframe_interval;
  return o;
}

Capture synth_capture(std::string_view profile) {
  synth::Spec spec;
  spec.profile = std::string(profile);
  spec.process_count = 6;
  spec.threads_max = 3;
  spec.duration_s = 40 * 15;
  spec.interval_ms = 15000;
  spec.process_churn_per_hour = 60;  // structure changes within the capture
  Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  return cap;
}

// What a host with `q` answers: several value names, each with no buffer, a short one and a large one.
Capture served(const Capture& base, const replayer::Quirks& q) {
  replayer::HostOptions opt(replayer::TimelineMode::kStep);
  opt.quirks = q;
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(base, opt, host).ok());
  Capture cap = base;
  cap.records.clear();
  const std::pair<replayer::PerfKey, const char*> names[] = {
      {replayer::PerfKey::kData, "Global"},    {replayer::PerfKey::kData, "Costly"},
      {replayer::PerfKey::kData, "238"},       {replayer::PerfKey::kData, "230 232"},
      {replayer::PerfKey::kText, "Counter"},   {replayer::PerfKey::kData, "Counter 009"},
      {replayer::PerfKey::kData, "Foreign x"},
  };
  const replayer::BufferOffer offers[] = {{false, 0}, {true, 1024}, {true, 1u << 24}};
  for (uint32_t tick = 0; tick < 12; ++tick)
    for (const auto& [key, name] : names)
      for (const auto& offer : offers) {
        const replayer::ValueAnswer a = host->query(key, name, offer);
        QueryRecord r;
        r.tick = tick;
        r.value_name = std::string(name) + (offer.has_buffer ? "/" + std::to_string(offer.size) : "/null");
        r.status = a.status;
        r.reg_type = a.type;
        r.size = a.size;
        r.payload = a.data.to_bytes();
        cap.records.push_back(std::move(r));
      }
  return cap;
}

}  // namespace

TEST_CASE("capture v2 gives back the exact bytes of every OS profile's synth data and splits it into columns") {
  for (const windows::OsProfile& p : windows::os_profiles()) {
    const Capture cap = synth_capture(p.name);
    const std::string name(p.name);
    // Most payloads are PERF_DATA_BLOCKs: they must take the split codec, not the v1 fallback.
    CHECK(round_trip(cap, v2(), name + "-k32") * 10 >= cap.records.size() * 9);
    CHECK(round_trip(cap, v2(5), name + "-k5") * 10 >= cap.records.size() * 9);  // many structure references
    WriterOptions lz4 = v2();
    lz4.entropy = Entropy::kLz4;
    round_trip(cap, lz4, name + "-lz4");
    WriterOptions v1 = v2();
    v1.version = 1;
    CHECK(round_trip(cap, v1, name + "-v1") == 0);
  }
}

TEST_CASE("capture v2 gives back the exact bytes a served host answers under every quirk") {
  const Capture base = testing::small_synth_capture(4, 2, 120);
  std::vector<std::string> quirks = replayer::quirk_names();
  size_t applied = 0;
  for (const std::string& quirk : quirks) {
    replayer::Quirks q;
    if (!replayer::apply_setting(q, replayer::QuirkSetting{quirk, true, {}}).ok()) continue;
    ++applied;
    round_trip(served(base, q), v2(4), "quirk-" + quirk);
  }
  CHECK(applied * 2 >= quirks.size());
  for (const windows::OsProfile& p : windows::os_profiles()) {
    replayer::Quirks q;
    REQUIRE(replayer::profile_quirks(p.name, q).ok());
    round_trip(served(base, q), v2(4), "profile-" + std::string(p.name));
  }
}

TEST_CASE("capture v2 gives back the exact bytes of the bundled captures (read as v1)") {
  for (const char* name : {"default-win2000", "default-2003", "default-2008r2", "default-2016", "default-2022"}) {
    Capture cap;
    REQUIRE(read_capture(std::string(PERFSIM_SOURCE_DIR) + "/captures/" + name + ".perfcap", cap).ok());
    REQUIRE(!cap.records.empty());
    CHECK(round_trip(cap, v2(), name) > 0);
  }
}

TEST_CASE("capture v2 falls back losslessly to the v1 codecs for perf data that does not split") {
  Capture cap = testing::small_synth_capture(4, 2, 60);
  const Bytes good = cap.records[0].payload;
  REQUIRE(good.size() > 400);
  std::vector<QueryRecord> recs;
  auto add = [&](Bytes b) {
    QueryRecord r = cap.records[0];
    r.tick = uint32_t(recs.size());
    r.payload = std::move(b);
    recs.push_back(std::move(r));
  };
  for (size_t cut : {size_t(0), size_t(7), size_t(87), size_t(88), size_t(200), good.size() / 2, good.size() - 1}) {
    add(Bytes(good.begin(), good.begin() + cut));  // cut short: lengths point past the end
    add(good);
  }
  // Every structure field this walk reads, made absurd in turn (and a value word, which still splits).
  for (size_t at : {size_t(0), size_t(20), size_t(24), size_t(28), size_t(88), size_t(92), size_t(96), size_t(128),
                    size_t(36), size_t(60)}) {
    for (uint8_t v : {uint8_t(0), uint8_t(0xFF), uint8_t(3)}) {
      Bytes b = good;
      b[at] = v;
      b[at + 1] ^= 0x40;
      add(std::move(b));
    }
  }
  Bytes longer = good;  // bytes past TotalByteLength are structure too
  longer.insert(longer.end(), {1, 2, 3, 4, 5});
  add(longer);
  add(Bytes(1000, 0xAB));
  cap.records = std::move(recs);
  const size_t split = round_trip(cap, v2(3), "damaged");
  CHECK(split > 0);
  CHECK(split < cap.records.size());
}

namespace {

// Three groups (columns) of one multi-instance object with the same number of values, from the
// split codec's own walk: x, a, b (value indices of their first values) and their size.
struct Triple {
  size_t x = 0, a = 0, b = 0, n = 0;
};

bool pick_triple(const Layout& l, Triple& t) {
  size_t first = 10;  // the block header's ten lone words come first
  for (uint32_t end : l.object_end) {
    std::vector<size_t> same;
    auto begin = [&](size_t g) { return g ? l.group_end[g - 1] : 0; };
    for (size_t g = first; g < end; ++g)
      if (l.group_end[g] - begin(g) >= 8) same.push_back(g);
    for (size_t i = 0; i + 2 < same.size(); ++i) {
      const size_t n = l.group_end[same[i]] - begin(same[i]);
      if (l.group_end[same[i + 1]] - begin(same[i + 1]) == n && l.group_end[same[i + 2]] - begin(same[i + 2]) == n) {
        t = {begin(same[i]), begin(same[i + 1]), begin(same[i + 2]), n};
        return true;
      }
    }
    first = end;
  }
  return false;
}

}  // namespace

TEST_CASE("capture v2 cross-column prediction decodes exactly where the sum holds only at the keyframe") {
  synth::Spec spec;
  spec.profile = "2016";
  spec.process_count = 6;
  spec.threads_max = 3;
  spec.duration_s = 24 * 15;
  spec.interval_ms = 15000;
  spec.process_churn_per_hour = 0;  // one structure: every 8th record is a keyframe
  Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  std::vector<QueryRecord> global;
  for (const QueryRecord& r : cap.records)
    if (r.value_name == "Global") global.push_back(r);
  REQUIRE(global.size() >= 20);
  Layout l;
  REQUIRE(find_layout(global[0].payload, l));
  Triple t;
  REQUIRE(pick_triple(l, t));
  // Column x = a + b in every keyframe (records 0, 8, 16, ...); later records break it for some
  // instances by amounts of every size, and keep it for others.
  uint32_t noise = 12345;
  for (size_t i = 0; i < global.size(); ++i) {
    Bytes& p = global[i].payload;
    Layout li;
    REQUIRE(find_layout(p, li));
    REQUIRE(li.offsets == l.offsets);
    for (size_t k = 0; k < t.n; ++k) {
      uint32_t v = load_le32(&p[l.offsets[t.a + k]]) + load_le32(&p[l.offsets[t.b + k]]);
      if (i % 8 != 0 && k % 3 != 0) v += (noise = noise * 1103515245u + 12345u) >> (k % 29);
      store_le32(&p[l.offsets[t.x + k]], v);
    }
  }
  cap.records = global;
  const std::string path = temp_file_path("perfsim_v2_cross-broken");
  REQUIRE(write_capture(path, cap, v2(8)).ok());
  std::unique_ptr<Reader> r;
  REQUIRE(Reader::open(path, r).ok());
  size_t cross = 0;
  for (size_t i = 0; i < cap.records.size(); ++i) {
    QueryHeader h;
    REQUIRE(r->head(i, h).ok());
    cross += h.codec == Codec::kSplitCross;
    ByteView p;
    REQUIRE(r->payload(i, p).ok());
    INFO("record " << i);
    REQUIRE(Bytes(p.begin(), p.end()) == cap.records[i].payload);
  }
  CHECK(cross == cap.records.size());  // the keyframes declared relations; their chains say so
  std::filesystem::remove(path);
  round_trip(cap, v2(8), "cross-broken");  // and backwards, from fresh readers
}

TEST_CASE("capture v2 without relations writes only codec 4 records, which still decode") {
  const Capture cap = synth_capture("2016");
  WriterOptions o = v2();
  o.cross_columns = false;  // what perfsim wrote before mode table 2
  const std::string path = temp_file_path("perfsim_v2_codec4");
  REQUIRE(write_capture(path, cap, o).ok());
  std::unique_ptr<Reader> r;
  REQUIRE(Reader::open(path, r).ok());
  size_t split = 0;
  for (size_t i = 0; i < cap.records.size(); ++i) {
    QueryHeader h;
    REQUIRE(r->head(i, h).ok());
    CHECK(h.codec != Codec::kSplitCross);
    split += h.codec == Codec::kSplit;
    ByteView p;
    REQUIRE(r->payload(i, p).ok());
    REQUIRE(Bytes(p.begin(), p.end()) == cap.records[i].payload);
  }
  CHECK(split * 10 >= cap.records.size() * 9);
  std::filesystem::remove(path);
}

TEST_CASE("capture v2 refuses relations that cannot be decoded in order, and decodes the valid ones exactly") {
  const Capture cap = testing::small_synth_capture(6, 3, 60);
  const Bytes& payload = cap.records[0].payload;
  SplitState st;
  REQUIRE(find_layout(payload, st.layout));
  make_structure(payload, st.layout, st.structure);
  SplitCoder coder;
  Bytes coded;
  REQUIRE(coder.encode(payload, st, false, true, 0, coded) == Codec::kSplitCross);
  REQUIRE(st.relations.size() >= 2);
  // FORMAT.md "Split codec": entropy, struct_ref, size, clen, structure, 10 clock words, n_values,
  // n_columns, then the relation table.
  const size_t at = 1 + 4 + 4 + 4 + load_le32(&coded[9]) + 40 + 8;
  REQUIRE(load_le32(&coded[at]) == st.relations.size());
  const Layout& l = st.layout;
  const uint32_t groups = uint32_t(l.group_end.size());
  auto size = [&](uint32_t g) { return l.group_end[g] - (g ? l.group_end[g - 1] : 0); };
  auto decode = [&](const Bytes& c) {
    SplitState d;
    SplitCoder dec;
    Bytes out;
    auto fetch = [](uint32_t, ByteView&) { return Status::Corruption("no other record"); };
    const Status s = dec.decode(c, Codec::kSplitCross, 0, uint32_t(payload.size()), false, d, fetch, out);
    if (s.ok()) CHECK(out == payload);
    return s;
  };
  // field f of relation i set to v
  auto with = [&](size_t i, size_t f, uint32_t v) {
    Bytes c = coded;
    store_le32(&c[at + 4 + 12 * i + 4 * f], v);
    return c;
  };
  REQUIRE(decode(coded).ok());
  const Relation r0 = st.relations[0];
  CHECK(decode(with(0, 0, groups)).message().find("outside the structure") != std::string::npos);
  CHECK(decode(with(0, 1, r0.target)).message().find("or itself") != std::string::npos);
  uint32_t other = 0;  // a column of another size than relation 0's
  while (other < groups && size(other) == size(r0.target)) ++other;
  REQUIRE(other < groups);
  CHECK(decode(with(0, 2, other)).message().find("different sizes") != std::string::npos);
  // Relations i < j of one size: j's target as a source of i is decoded too late; j's target made
  // i's is a second relation on one target.
  size_t i = 0, j = 1;
  for (; i < st.relations.size(); ++i) {
    for (j = i + 1; j < st.relations.size(); ++j)
      if (size(st.relations[j].target) == size(st.relations[i].target)) break;
    if (j < st.relations.size()) break;
  }
  REQUIRE(i < st.relations.size());
  CHECK(decode(with(i, 1, st.relations[j].target)).message().find("before its own relation") != std::string::npos);
  CHECK(decode(with(j, 0, st.relations[i].target)).message().find("target of two relations") != std::string::npos);
  Bytes too_many = coded;
  store_le32(&too_many[at], groups + 1);
  CHECK(!decode(too_many).ok());
}

TEST_CASE("capture v2 child-sum relations (a process's times from its threads') decode exactly when broken") {
  synth::Spec spec;
  spec.profile = "2016";
  spec.process_count = 6;
  spec.threads_max = 3;
  spec.duration_s = 24 * 15;
  spec.interval_ms = 15000;
  spec.process_churn_per_hour = 0;
  Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  std::vector<QueryRecord> global;
  for (const QueryRecord& r : cap.records)
    if (r.value_name == "Global") global.push_back(r);
  REQUIRE(global.size() >= 20);
  // Which group the writer predicts from a child object: Process % User Time from Thread's, say.
  SplitState st;
  REQUIRE(find_layout(global[0].payload, st.layout));
  make_structure(global[0].payload, st.layout, st.structure);
  SplitCoder coder;
  Bytes coded;
  REQUIRE(coder.encode(global[0].payload, st, false, true, 0, coded) == Codec::kSplitCross);
  const auto child =
      std::find_if(st.relations.begin(), st.relations.end(), [](const Relation& r) { return r.b == kChildSum; });
  REQUIRE(child != st.relations.end());
  const Layout& l = st.layout;
  const size_t x0 = child->target ? l.group_end[child->target - 1] : 0, x1 = l.group_end[child->target];
  // Exact in every keyframe (records 0, 8, ...), off by every size in the deltas for most instances.
  uint32_t noise = 777;
  for (size_t i = 0; i < global.size(); ++i) {
    if (i % 8 == 0) continue;
    Bytes& p = global[i].payload;
    for (size_t j = x0; j < x1; ++j)
      if (j % 4 != 0)
        store_le32(&p[l.offsets[j]], load_le32(&p[l.offsets[j]]) + ((noise = noise * 69069u + 1) >> (j % 31)));
  }
  cap.records = global;
  round_trip(cap, v2(8), "child-sum-broken");
}
