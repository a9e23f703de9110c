// Test support shared by the perfdata tests: a rich, valid PERF_DATA_BLOCK (single- and
// multi-instance objects, parent instances, base counters, unique-id instances, an object with no
// instances) and locate(), which computes where build() puts each structure from the model's
// field sizes alone, so tests can name expected offsets without asking the code under test.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "perfdata/model.h"

namespace perfsim::perfdata::testing {

using namespace winperf;

inline CounterDef counter(uint32_t title, uint32_t type, uint32_t size, uint32_t offset) {
  CounterDef c;
  c.name_index = title;
  c.help_index = title + 1;
  c.type = type;
  c.size = size;
  c.offset = offset;
  return c;
}

// Gives every counter of every block a distinct, recognisable value.
inline void fill_values(Object& o, uint64_t seed) {
  auto fill = [&](Bytes& block, uint64_t base) {
    for (size_t k = 0; k < o.counters.size(); ++k) write_counter(block, o.counters[k], base + k);
  };
  if (!o.multi_instance()) fill(o.counter_block, seed);
  for (size_t i = 0; i < o.instances.size(); ++i) fill(o.instances[i].counter_block, seed + 100 * (i + 1));
}

// Objects, by index: 0 System (2, single instance), 1 Process (230, 4 instances), 2 Thread (232,
// parents in Process), 3 Paging File (700, no instances), 4 Network (9000, instances by UniqueID).
inline DataBlock rich_block() {
  DataBlock d =
      empty_block(u"HOST01", SystemTime{2024, 5, 5, 3, 10, 12, 30, 250}, 123456789, 10000000, 133600000000000000);
  Object sys;
  sys.name_index = 2;
  sys.help_index = 3;
  sys.perf_time = 123456000;
  sys.perf_freq = 10000000;
  sys.counters = {counter(10, PERF_COUNTER_COUNTER, 4, 8), counter(12, PERF_COUNTER_LARGE_RAWCOUNT, 8, 16),
                  counter(14, PERF_RAW_FRACTION, 4, 24), counter(16, PERF_RAW_BASE, 4, 28),
                  counter(18, PERF_COUNTER_RAWCOUNT, 4, 4)};
  sys.counter_block = make_counter_block(28);
  fill_values(sys, 1000);

  Object proc;
  proc.name_index = 230;
  proc.num_instances = 0;
  proc.counters = {counter(6, PERF_100NSEC_TIMER, 8, 8), counter(180, PERF_COUNTER_RAWCOUNT, 4, 16),
                   counter(184, PERF_AVERAGE_BULK, 8, 24), counter(186, PERF_AVERAGE_BASE, 4, 32),
                   counter(188, PERF_COUNTER_LARGE_RAWCOUNT, 8, 40)};
  for (auto name : {u"Idle", u"System", u"svchost", u"_Total"}) proc.instances.push_back(make_instance(name, 44));
  fill_values(proc, 2000);

  Object thread;
  thread.name_index = 232;
  thread.num_instances = 0;
  thread.counters = {counter(190, PERF_COUNTER_RAWCOUNT, 4, 4), counter(192, PERF_PRECISION_100NS_TIMER, 8, 8),
                     counter(194, PERF_PRECISION_TIMESTAMP, 8, 16)};
  // Thread names repeat across processes; unique per parent.
  thread.instances = {make_instance(u"0", 20, 230, 0), make_instance(u"0", 20, 230, 1),
                      make_instance(u"1", 20, 230, 1)};
  fill_values(thread, 3000);

  Object paging;
  paging.name_index = 700;
  paging.num_instances = 0;
  paging.counters = {counter(702, PERF_RAW_FRACTION, 4, 4), counter(704, PERF_RAW_BASE, 4, 8)};

  Object net;
  net.name_index = 9000;
  net.num_instances = 0;
  net.counters = {counter(9002, PERF_COUNTER_BULK_COUNT, 8, 8)};
  for (int32_t id : {5, 6}) {
    Instance in;
    in.unique_id = id;
    in.name_length = 0;
    in.counter_block = make_counter_block(12);
    net.instances.push_back(in);
  }
  fill_values(net, 4000);

  d.objects = {sys, proc, thread, paging, net};
  fix_counts(d);
  return d;
}

struct ObjectLayout {
  size_t at = 0;
  std::vector<size_t> counters, instances, blocks;
  size_t trailer = 0, end = 0;
};

struct Layout {
  std::vector<ObjectLayout> objects;
  size_t trailer = 0;
};

inline Layout locate(const DataBlock& d) {
  Layout l;
  size_t pos = kDataBlockSize + d.header_region.size();
  for (const Object& o : d.objects) {
    ObjectLayout ol;
    ol.at = pos;
    pos += kObjectTypeSize + o.header_extra.size();
    for (const CounterDef& c : o.counters) {
      ol.counters.push_back(pos);
      pos += kCounterDefSize + c.extra.size();
    }
    pos += o.definitions_extra.size();
    if (o.multi_instance()) {
      for (const Instance& in : o.instances) {
        ol.instances.push_back(pos);
        pos += kInstanceDefSize + in.name_region.size();
        ol.blocks.push_back(pos);
        pos += in.counter_block.size();
      }
    } else {
      ol.blocks.push_back(pos);
      pos += o.counter_block.size();
    }
    ol.trailer = pos;
    pos += o.trailer.size();
    ol.end = pos;
    l.objects.push_back(ol);
  }
  l.trailer = pos;
  return l;
}

// A copy of `b` with one to three bytes overwritten at random (deterministic for a seeded rng).
inline Bytes damaged(const Bytes& b, std::mt19937& rng) {
  Bytes out = b;
  const int flips = 1 + int(rng() % 3);
  for (int i = 0; i < flips; ++i) out[rng() % out.size()] = uint8_t(rng());
  return out;
}

}  // namespace perfsim::perfdata::testing
