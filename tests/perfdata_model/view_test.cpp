// The zero-copy view (view.h) against the copying model: it finds the structures parse() finds,
// where locate() (the test's own arithmetic) says they are, and stops, saying so, at one that does
// not fit.
#include <catch2/catch.hpp>

#include "core/utf16.h"
#include "perfdata/view.h"
#include "tests/perfdata_model/rich_blob.h"

using namespace perfsim;
using namespace perfsim::perfdata;
using namespace perfsim::perfdata::testing;

namespace {

namespace db = winperf::data_block;
namespace ot = winperf::object_type;
namespace id = winperf::instance_def;

BlockView viewed(const Bytes& b) {
  BlockView v;
  REQUIRE(view_block(b, v));
  return v;
}

size_t count_objects(const Bytes& b, bool& damaged) {
  const BlockView v = viewed(b);
  ObjectCursor c(v);
  size_t n = 0;
  for (ObjectView o; c.next(o);) ++n;
  damaged = c.damaged();
  return n;
}

}  // namespace

TEST_CASE("the view finds every structure of a rich blob where the model puts it") {
  const DataBlock d = rich_block();
  const Bytes b = build(d);
  const Layout l = locate(d);
  const BlockView v = viewed(b);
  CHECK(v.header_length == l.objects[0].at);
  CHECK(v.end == b.size());
  ByteView name;
  REQUIRE(v.system_name(name));
  CHECK(load_utf16le(name.data(), name.size() / 2) == d.system_name() + u'\0');
  ObjectCursor objects(v);
  size_t k = 0;
  for (ObjectView o; objects.next(o); ++k) {
    REQUIRE(k < d.objects.size());
    const Object& m = d.objects[k];
    CHECK(o.at == l.objects[k].at);
    CHECK(o.length == l.objects[k].end - l.objects[k].at);
    CHECK(o.name_index() == m.name_index);
    CHECK(o.perf_time() == uint64_t(m.perf_time));
    CHECK(o.perf_freq() == uint64_t(m.perf_freq));
    REQUIRE(o.lengths_consistent());
    CounterDefCursor defs(o);
    size_t j = 0;
    for (CounterDefView c; defs.next(c); ++j) {
      REQUIRE(j < m.counters.size());
      CHECK(o.at + size_t(c.p - o.p) == l.objects[k].counters[j]);
      CHECK(c.name_index() == m.counters[j].name_index);
      CHECK(c.type() == m.counters[j].type);
      CHECK(c.size() == m.counters[j].size);
      CHECK(c.offset() == m.counters[j].offset);
    }
    CHECK(j == m.counters.size());
    std::vector<CounterBlockView> blocks;
    if (!o.multi_instance()) {
      CounterBlockView cb;
      REQUIRE(single_block(o, cb));
      blocks.push_back(cb);
    } else {
      InstanceCursor instances(o);
      size_t i = 0;
      for (InstanceView in; instances.next(in); ++i) {
        REQUIRE(i < m.instances.size());
        CHECK(o.at + in.at == l.objects[k].instances[i]);
        CHECK(in.unique_id() == uint32_t(m.instances[i].unique_id));
        ByteView n;
        REQUIRE(in.name(n));
        CHECK(load_utf16le(n.data(), n.size() / 2) ==
              m.instances[i].name() + (m.instances[i].name_length ? std::u16string(1, u'\0') : u""));
        blocks.push_back(in.block);
      }
      CHECK_FALSE(instances.damaged());
      CHECK(i == m.instances.size());
    }
    // Counter values through the view equal the model's.
    for (size_t bi = 0; bi < blocks.size(); ++bi) {
      CHECK(o.at + blocks[bi].at == l.objects[k].blocks[bi]);
      const Bytes& block = m.multi_instance() ? m.instances[bi].counter_block : m.counter_block;
      CHECK(blocks[bi].length == block.size());
      for (const CounterDef& c : m.counters)
        if (blocks[bi].holds(c.offset, c.size) && (c.size == 4 || c.size == 8))
          CHECK(load_counter(o.p + blocks[bi].at + c.offset, c.size) == read_counter(block, c));
    }
  }
  CHECK_FALSE(objects.damaged());
  CHECK(k == d.objects.size());
}

TEST_CASE("view_block refuses what is not a usable PERF_DATA_BLOCK") {
  const Bytes good = build(rich_block());
  BlockView v;
  CHECK_FALSE(view_block(ByteView(good).first(winperf::kDataBlockSize - 1), v));
  Bytes b = good;
  b[db::kSignature + 2] = 'X';
  CHECK_FALSE(view_block(b, v));
  b = good;
  store_le32(&b[db::kHeaderLength], winperf::kDataBlockSize - 8);
  CHECK_FALSE(view_block(b, v));
  b = good;
  store_le32(&b[db::kTotalByteLength], 100);  // HeaderLength now past TotalByteLength
  CHECK_FALSE(view_block(b, v));
  b = good;
  store_le32(&b[db::kTotalByteLength], uint32_t(b.size() + 4096));  // more than present: the blob's end bounds
  REQUIRE(view_block(b, v));
  CHECK(v.end == b.size());
}

TEST_CASE("cursors stop at a structure that does not fit and say damaged") {
  const DataBlock d = rich_block();
  const Bytes good = build(d);
  const Layout l = locate(d);
  bool damaged = false;
  CHECK(count_objects(good, damaged) == d.objects.size());
  CHECK_FALSE(damaged);

  SECTION("an object's TotalByteLength past the block's end") {
    Bytes b = good;
    store_le32(&b[l.objects[2].at + ot::kTotalByteLength], uint32_t(b.size()));
    CHECK(count_objects(b, damaged) == 2);
    CHECK(damaged);
  }
  SECTION("an object's TotalByteLength shorter than its header") {
    Bytes b = good;
    store_le32(&b[l.objects[1].at + ot::kTotalByteLength], winperf::kObjectTypeSize - 4);
    CHECK(count_objects(b, damaged) == 1);
    CHECK(damaged);
  }
  SECTION("NumObjectTypes larger than the objects present ends cleanly at TotalByteLength") {
    Bytes b = good;
    store_le32(&b[db::kNumObjectTypes], uint32_t(d.objects.size() + 3));
    CHECK(count_objects(b, damaged) == d.objects.size());
    CHECK_FALSE(damaged);
  }
  SECTION("NumObjectTypes smaller stops early, cleanly") {
    Bytes b = good;
    store_le32(&b[db::kNumObjectTypes], 2);
    CHECK(count_objects(b, damaged) == 2);
    CHECK_FALSE(damaged);
  }
  SECTION("an instance's ByteLength past its object, and a negative NumInstances") {
    for (const auto& [field, at, value] :
         {std::tuple{"ByteLength", l.objects[1].instances[2] + id::kByteLength, uint32_t(1) << 20},
          std::tuple{"NumInstances", l.objects[1].at + ot::kNumInstances, uint32_t(-5)}}) {
      INFO(field);
      Bytes b = good;
      store_le32(&b[at], value);
      const BlockView v = viewed(b);
      ObjectCursor objects(v);
      ObjectView o;
      REQUIRE(objects.next(o));
      REQUIRE(objects.next(o));
      REQUIRE(o.name_index() == 230);
      InstanceCursor instances(o);
      size_t n = 0;
      for (InstanceView in; instances.next(in);) ++n;
      CHECK(n == (value == uint32_t(-5) ? 0u : 2u));
      CHECK(instances.damaged());
    }
  }
  SECTION("a counter block's ByteLength past its object") {
    Bytes b = good;
    store_le32(&b[l.objects[0].blocks[0]], uint32_t(1) << 20);
    const BlockView v = viewed(b);
    ObjectCursor objects(v);
    ObjectView o;
    REQUIRE(objects.next(o));
    CounterBlockView cb;
    CHECK_FALSE(single_block(o, cb));
  }
  SECTION("a counter definition shorter than 40 bytes is the last one read") {
    Bytes b = good;
    store_le32(&b[l.objects[0].counters[1]], 8);
    const BlockView v = viewed(b);
    ObjectCursor objects(v);
    ObjectView o;
    REQUIRE(objects.next(o));
    CounterDefCursor defs(o);
    size_t n = 0;
    for (CounterDefView c; defs.next(c);) ++n;
    CHECK(n == 2);
    REQUIRE(d.objects[0].counters.size() > 2);
  }
}
