// The perf-data model's contract (model.h): byte-identical round trip, bounds-checked parse on
// every truncation, and tolerant mode for object-count-lies.
#include <catch2/catch.hpp>

#include "tests/perfdata_model/rich_blob.h"

using namespace perfsim;
using namespace perfsim::perfdata;
using namespace perfsim::perfdata::testing;

namespace {

// Everything Windows may leave between structures, with non-zero bytes so a lost byte shows.
DataBlock odd_block() {
  DataBlock d = rich_block();
  for (size_t i = 14; i < d.header_region.size(); ++i) d.header_region[i] = 0xA1;  // after "HOST01\0"
  d.header_region.insert(d.header_region.end(), {1, 2, 3, 4, 5, 6, 7, 8});
  d.objects[0].definitions_extra = {0xB1, 0xB2, 0xB3, 0xB4};
  d.objects[0].counters[1].extra = {0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8};
  d.objects[1].header_extra = Bytes(8, 0xD1);
  Bytes& name = d.objects[1].instances[0].name_region;  // "Idle\0" is 10 bytes, padded to 16
  for (size_t i = 10; i < name.size(); ++i) name[i] = 0xE1;
  d.objects[1].instances[1].counter_block.push_back(0xE2);  // odd padding inside the chain
  d.objects[1].instances[1].counter_block.push_back(0xE3);
  store_le32(d.objects[1].instances[1].counter_block.data(), uint32_t(d.objects[1].instances[1].counter_block.size()));
  d.objects[2].trailer = {0xF1, 0xF2, 0xF3};
  d.trailer = {0x11, 0x22, 0x33, 0x44, 0x55};
  return d;
}

Bytes with_total(ByteView b, uint32_t total) {
  Bytes out(b.begin(), b.end());
  store_le32(&out[winperf::data_block::kTotalByteLength], total);
  return out;
}

}  // namespace

TEST_CASE("locate() agrees with build() on where each object starts") {
  const DataBlock d = odd_block();
  const Bytes b = build(d);
  const Layout l = locate(d);
  REQUIRE(l.trailer + d.trailer.size() == b.size());
  for (size_t i = 0; i < d.objects.size(); ++i) {
    CHECK(load_le32(&b[l.objects[i].at]) == l.objects[i].end - l.objects[i].at);
    CHECK(load_le32(&b[l.objects[i].at + winperf::object_type::kObjectNameTitleIndex]) == d.objects[i].name_index);
  }
}

TEST_CASE("rich blob round-trips and decodes") {
  const DataBlock d = rich_block();
  const Bytes b = build(d);
  DataBlock p;
  REQUIRE(parse(b, p, ParseOptions{false}).ok());
  CHECK(build(p) == b);
  CHECK(p.system_name() == u"HOST01");
  REQUIRE(p.objects.size() == 5);
  CHECK(p.objects[0].counter_block == d.objects[0].counter_block);
  CHECK(read_counter(p.objects[0].counter_block, p.objects[0].counters[1]) == 1001);
  REQUIRE(p.objects[1].instances.size() == 4);
  CHECK(p.objects[1].instances[2].name() == u"svchost");
  CHECK(read_counter(p.objects[1].instances[3].counter_block, p.objects[1].counters[4]) == 2404);
  CHECK(p.objects[2].instances[2].parent_title_index == 230);
  CHECK(p.objects[2].instances[2].parent_instance == 1);
  CHECK(p.objects[3].multi_instance());
  CHECK(p.objects[3].instances.empty());
  CHECK(p.objects[4].instances[1].unique_id == 6);
  CHECK(p.objects[4].instances[1].name().empty());
}

TEST_CASE("odd padding, extra bytes and trailers survive the round trip") {
  const Bytes b = build(odd_block());
  DataBlock p;
  REQUIRE(parse(b, p).ok());
  CHECK(build(p) == b);
  CHECK(p.system_name() == u"HOST01");
  CHECK(p.objects[0].definitions_extra == Bytes{0xB1, 0xB2, 0xB3, 0xB4});
  CHECK(p.objects[0].counters[1].extra.size() == 8);
  CHECK(p.objects[1].header_extra == Bytes(8, 0xD1));
  CHECK(p.objects[1].instances[0].name() == u"Idle");
  CHECK(p.objects[1].instances[1].counter_block.back() == 0xE3);
  CHECK(p.objects[2].trailer == Bytes{0xF1, 0xF2, 0xF3});
  CHECK(p.trailer == Bytes{0x11, 0x22, 0x33, 0x44, 0x55});
}

TEST_CASE("every truncation parses or fails cleanly, and what parses round-trips") {
  for (const Bytes& full : {build(rich_block()), build(odd_block())}) {
    size_t accepted = 0;
    for (size_t n = 0; n < full.size(); ++n) {
      // An exact-size heap copy, so a read past the end is an ASan error.
      const Bytes cut(full.begin(), full.begin() + std::ptrdiff_t(n));
      DataBlock p;
      INFO("length " << n);
      CHECK_FALSE(parse(cut, p).ok());  // TotalByteLength still says more
      if (n < 24) continue;
      // With TotalByteLength matching, the parser has to walk into the cut structure.
      const Bytes fitted = with_total(cut, uint32_t(n));
      Status s = parse(fitted, p);
      if (s.ok()) {
        ++accepted;
        CHECK(build(p) == fitted);
      } else {
        CHECK(s.message().find("at offset ") == 0);
      }
    }
    // The cut at each object boundary leaves a valid blob whose NumObjectTypes lies.
    CHECK(accepted >= 5);
  }
}

TEST_CASE("random byte damage parses or fails cleanly") {
  const Bytes full = build(odd_block());
  std::mt19937 rng(20240503);
  size_t rejected = 0;
  for (int round = 0; round < 4000; ++round) {
    const Bytes b = damaged(full, rng);
    DataBlock p;
    if (Status s = parse(b, p); !s.ok()) {
      ++rejected;
      continue;
    }
    // Accepted: the block up to its TotalByteLength comes back byte for byte.
    const size_t total = load_le32(&b[winperf::data_block::kTotalByteLength]);
    REQUIRE(total <= b.size());
    CHECK(build(p) == Bytes(b.begin(), b.begin() + std::ptrdiff_t(total)));
  }
  CHECK(rejected > 0);
}

TEST_CASE("tolerant mode: NumObjectTypes larger than the objects present") {
  Bytes b = build(rich_block());
  store_le32(&b[winperf::data_block::kNumObjectTypes], 9);
  DataBlock p;
  REQUIRE(parse(b, p, ParseOptions{true}).ok());
  CHECK(p.objects.size() == 5);
  CHECK(p.num_object_types == 9);
  CHECK(build(p) == b);
  CHECK_FALSE(parse(b, p, ParseOptions{false}).ok());
}

TEST_CASE("tolerant mode accepts bytes past TotalByteLength, strict mode does not") {
  Bytes b = build(rich_block());
  const size_t total = b.size();
  b.insert(b.end(), 8, 0xEE);
  DataBlock p;
  REQUIRE(parse(b, p, ParseOptions{true}).ok());
  CHECK(p.objects.size() == 5);
  // The model has no field for bytes past TotalByteLength: only the block itself comes back.
  CHECK(build(p) == Bytes(b.begin(), b.begin() + std::ptrdiff_t(total)));
  CHECK_FALSE(parse(b, p, ParseOptions{false}).ok());
}
