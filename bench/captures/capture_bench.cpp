// Capture size and decode speed for a day of a 2016-like host polled every 15 s (issue: capture
// format v1). Builds realistic PERF_DATA_BLOCKs with the perfdata make_* helpers (9 objects,
// Process with 200 instances x 28 counters, Thread with ~2000 instances x 12 counters; cumulative
// counters grow at per-instance rates, most threads idle, a few gauges move, a process is replaced
// now and then), writes them with each delta codec and reports:
//   - file size against the raw payloads and against LZ4 of each sample alone (the baselines);
//   - sequential decode throughput as a ratio to memcpy of the same bytes, measured in this run;
//   - random access to tick k.
// Usage: capture_bench [ticks=5760] [dir=/tmp]
#include <lz4.h>

#include <boost/crc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "captures/format.h"
#include "captures/reader.h"
#include "captures/writer.h"
#include "core/utf16.h"
#include "perfdata/model.h"

using namespace perfsim;
using namespace perfsim::captures;
using namespace perfsim::perfdata;
namespace wp = perfsim::winperf;

namespace {

struct Rng {  // xorshift64*: deterministic and cheap enough for 30k counter updates a tick
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

enum class Kind { kCumulative, kGauge, kConstant };
struct CounterSpec {
  uint32_t type;
  uint32_t size;
  Kind kind;
  uint64_t rate;  // mean increase per tick (cumulative) or spread (gauge)
};

constexpr int64_t kTick100ns = 150000000;  // 15 s

void add_counters(Object& o, const std::vector<CounterSpec>& specs, uint32_t first_index) {
  uint32_t offset = wp::kCounterBlockSize;
  for (size_t i = 0; i < specs.size(); ++i) {
    CounterDef d;
    d.name_index = first_index + 2 * uint32_t(i);
    d.help_index = d.name_index + 1;
    d.type = specs[i].type;
    d.size = specs[i].size;
    offset = align_up(offset, d.size);
    d.offset = offset;
    offset += d.size;
    o.counters.push_back(d);
  }
}

uint32_t data_bytes(const Object& o) {
  uint32_t end = wp::kCounterBlockSize;
  for (const CounterDef& d : o.counters) end = std::max(end, d.offset + d.size);
  return end - wp::kCounterBlockSize;
}

// One object and how its counters move.
struct ObjectModel {
  Object obj;
  std::vector<CounterSpec> specs;
  uint32_t active_percent = 100;  // share of instances whose cumulative counters move in a tick
};

ObjectModel make_object(uint32_t index, const std::vector<CounterSpec>& specs, uint32_t active_percent) {
  ObjectModel m;
  m.obj.name_index = index;
  m.obj.help_index = index + 1;
  m.obj.perf_freq = 10000000;
  m.obj.num_instances = 0;  // multi-instance unless made single below
  add_counters(m.obj, specs, index + 2);
  m.specs = specs;
  m.active_percent = active_percent;
  return m;
}

void seed_block(Bytes& block, const ObjectModel& m, Rng& rng) {
  for (size_t i = 0; i < m.specs.size(); ++i) {
    const CounterSpec& s = m.specs[i];
    const uint64_t v = s.kind == Kind::kConstant ? rng.next() >> 20 : rng.below(s.rate * 1000 + 1);
    write_counter(block, m.obj.counters[i], s.size == 4 ? uint32_t(v) : v);
  }
}

void add_instance(ObjectModel& m, const std::u16string& name, Rng& rng, uint32_t parent_title = 0,
                  uint32_t parent_instance = 0) {
  Instance in = make_instance(name, data_bytes(m.obj), parent_title, parent_instance);
  seed_block(in.counter_block, m, rng);
  m.obj.instances.push_back(std::move(in));
}

void step_block(Bytes& block, const ObjectModel& m, Rng& rng) {
  const bool active = rng.below(100) < m.active_percent;
  for (size_t i = 0; i < m.specs.size(); ++i) {
    const CounterSpec& s = m.specs[i];
    const CounterDef& d = m.obj.counters[i];
    if (s.kind == Kind::kCumulative && active) {
      write_counter(block, d, read_counter(block, d) + rng.below(2 * s.rate + 1));
    } else if (s.kind == Kind::kGauge && rng.below(4) == 0) {  // gauges move in one sample of four
      const uint64_t v = read_counter(block, d);
      write_counter(block, d, v + rng.below(2 * s.rate + 1) - std::min(v, s.rate));
    }
  }
}

void step_object(ObjectModel& m, Rng& rng) {
  if (m.obj.multi_instance())
    for (Instance& in : m.obj.instances) step_block(in.counter_block, m, rng);
  else
    step_block(m.obj.counter_block, m, rng);
}

const CounterSpec kTimer{wp::PERF_100NSEC_TIMER, 8, Kind::kCumulative, 2000000};
const CounterSpec kBulk{wp::PERF_COUNTER_BULK_COUNT, 8, Kind::kCumulative, 200000};
const CounterSpec kOps{wp::PERF_COUNTER_COUNTER, 4, Kind::kCumulative, 300};
const CounterSpec kBytesGauge{wp::PERF_COUNTER_LARGE_RAWCOUNT, 8, Kind::kGauge, 65536};
const CounterSpec kSmallGauge{wp::PERF_COUNTER_RAWCOUNT, 4, Kind::kGauge, 3};
const CounterSpec kFixed{wp::PERF_COUNTER_RAWCOUNT, 4, Kind::kConstant, 0};
const CounterSpec kElapsed{wp::PERF_ELAPSED_TIME, 8, Kind::kConstant, 0};

// A Windows Server 2016 host with 8 processors and 200 processes.
struct HostModel {
  std::vector<ObjectModel> objects;
  DataBlock block;
  Rng rng;
  uint32_t next_pid = 9000;

  size_t process_obj = 0, thread_obj = 0;

  HostModel() {
    block.perf_freq = 10000000;
    set_system_name(block, u"WIN2016-DB");
    objects.push_back(make_object(2, {kOps, kOps, kOps, kTimer, kFixed, kSmallGauge, kSmallGauge, kElapsed}, 100));
    objects.push_back(make_object(4,
                                  {kBytesGauge, kBytesGauge, kOps, kOps, kOps, kOps, kBytesGauge, kBytesGauge,
                                   kBytesGauge, kSmallGauge, kOps, kOps},
                                  100));
    objects.push_back(make_object(238, {kTimer, kTimer, kTimer, kOps, kOps, kTimer, kTimer, kOps}, 100));
    objects.push_back(make_object(234, {kTimer, kTimer, kTimer, kOps, kOps, kBulk, kBulk, kSmallGauge}, 60));
    objects.push_back(make_object(236, {kTimer, kTimer, kOps, kOps, kBulk, kBulk, kBytesGauge, kBytesGauge}, 60));
    objects.push_back(make_object(510, {kBulk, kBulk, kOps, kOps, kFixed, kSmallGauge}, 100));
    objects.push_back(make_object(700, {kSmallGauge, kSmallGauge}, 100));
    // Process: 28 counters as perfproc lays them out.
    objects.push_back(
        make_object(230, {kTimer,      kTimer,      kTimer,      kBytesGauge, kBytesGauge, kOps,   kBytesGauge,
                          kBytesGauge, kBytesGauge, kBytesGauge, kBytesGauge, kSmallGauge, kFixed, kElapsed,
                          kFixed,      kFixed,      kSmallGauge, kSmallGauge, kSmallGauge, kBulk,  kBulk,
                          kBulk,       kBulk,       kBulk,       kBulk,       kBulk,       kBulk,  kBytesGauge},
                    30));
    // Thread: 12 counters; most threads are idle in a 15 s window.
    objects.push_back(make_object(
        232,
        {kTimer, kTimer, kTimer, kOps, kElapsed, kSmallGauge, kFixed, kFixed, kSmallGauge, kSmallGauge, kFixed, kFixed},
        15));
    process_obj = 7;
    thread_obj = 8;
    for (size_t i : {0u, 1u}) {  // System and Memory have no instances
      objects[i].obj.num_instances = wp::PERF_NO_INSTANCES;
      objects[i].obj.counter_block = make_counter_block(data_bytes(objects[i].obj));
      seed_block(objects[i].obj.counter_block, objects[i], rng);
    }
    for (int c = 0; c < 8; ++c) add_instance(objects[2], utf8_to_utf16(std::to_string(c)), rng);
    add_instance(objects[2], u"_Total", rng);
    for (const char* d : {"0 C:", "1 D:", "2 E:", "_Total"}) add_instance(objects[3], utf8_to_utf16(d), rng);
    for (const char* d : {"C:", "D:", "E:", "HarddiskVolume1", "_Total"})
      add_instance(objects[4], utf8_to_utf16(d), rng);
    for (const char* n : {"Intel[R] 82574L Gigabit Network Connection", "vmxnet3 Ethernet Adapter"})
      add_instance(objects[5], utf8_to_utf16(n), rng);
    for (const char* n : {"\\??\\C:\\pagefile.sys", "_Total"}) add_instance(objects[6], utf8_to_utf16(n), rng);
    for (int p = 0; p < 200; ++p) add_process();
    add_instance(objects[process_obj], u"_Total", rng);
  }

  std::u16string process_name(uint32_t pid) const {
    static const char* names[] = {"svchost",   "sqlservr", "w3wp",          "lsass",   "csrss",
                                  "explorer",  "conhost",  "MsMpEng",       "spoolsv", "WmiPrvSE",
                                  "taskhostw", "dllhost",  "RuntimeBroker", "services"};
    return utf8_to_utf16(names[pid % 14]);
  }

  // A process and its threads (10 on average), inserted before _Total like perfproc lists them.
  void add_process() {
    ObjectModel& procs = objects[process_obj];
    const uint32_t pid = next_pid += 4;
    const auto at = procs.obj.instances.empty() || procs.obj.instances.back().name() != u"_Total"
                        ? procs.obj.instances.end()
                        : procs.obj.instances.end() - 1;
    Instance in = make_instance(process_name(pid), data_bytes(procs.obj));
    seed_block(in.counter_block, procs, rng);
    const uint32_t parent = uint32_t(at - procs.obj.instances.begin());
    procs.obj.instances.insert(at, std::move(in));
    const int threads = 1 + int(rng.below(19));
    for (int t = 0; t < threads; ++t)
      add_instance(objects[thread_obj], process_name(pid) + u"/" + utf8_to_utf16(std::to_string(t)), rng, 230, parent);
  }

  // Rare churn: a process exits (its threads with it) and another starts.
  void replace_process() {
    ObjectModel& procs = objects[process_obj];
    const size_t victim = rng.below(procs.obj.instances.size() - 1);
    procs.obj.instances.erase(procs.obj.instances.begin() + std::ptrdiff_t(victim));
    auto& threads = objects[thread_obj].obj.instances;
    threads.erase(
        std::remove_if(threads.begin(), threads.end(), [&](const Instance& t) { return t.parent_instance == victim; }),
        threads.end());
    for (Instance& t : threads)
      if (t.parent_instance > victim) t.parent_instance--;
    add_process();
  }

  // The tick's Global answer and the Processor-only answer ("238").
  void sample(uint32_t tick, Bytes& global, Bytes& processor) {
    for (ObjectModel& m : objects) step_object(m, rng);
    if (tick > 0 && tick % 97 == 0) replace_process();
    block.perf_time_100ns = 132000000000000000ll + int64_t(tick) * kTick100ns + int64_t(rng.below(20000));
    block.perf_time = block.perf_time_100ns - 131990000000000000ll;
    const uint32_t sec = tick * 15;
    block.system_time = SystemTime{2024,
                                   3,
                                   2,
                                   5,
                                   uint16_t(sec / 3600 % 24),
                                   uint16_t(sec / 60 % 60),
                                   uint16_t(sec % 60),
                                   uint16_t(rng.below(1000))};
    block.objects.clear();
    for (ObjectModel& m : objects) {
      m.obj.perf_time = block.perf_time;
      block.objects.push_back(m.obj);
    }
    fix_counts(block);
    global = build(block);
    DataBlock only = block;
    only.objects = {objects[2].obj};
    fix_counts(only);
    processor = build(only);
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Variant {
  const char* name;
  WriterOptions opt;
  std::string path;
  std::unique_ptr<Writer> w;
  double encode_s = 0;
};

// Sequential decode of every record (the replayer's access pattern); returns seconds.
double decode_all(Reader& r, uint64_t& checksum) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < r.records().size(); ++i) {
    ByteView p;
    if (Status st = r.payload(i, p); !st.ok()) {
      std::fprintf(stderr, "decode failed: %s\n", st.ToString().c_str());
      std::exit(1);
    }
    checksum += p.empty() ? 0 : p[p.size() / 2];
  }
  return seconds_since(t0);
}

// memcpy of the same byte counts, from and to buffers of the decoder's working-set size.
double memcpy_all(const Reader& r, uint64_t& checksum) {
  uint32_t biggest = 0;
  for (const RecordInfo& e : r.records()) biggest = std::max(biggest, e.raw_size);
  Bytes src(biggest, 1), dst(biggest);
  const auto t0 = std::chrono::steady_clock::now();
  for (const RecordInfo& e : r.records()) {
    std::memcpy(dst.data(), src.data(), e.raw_size);
    src[e.raw_size / 2] = uint8_t(checksum += dst[e.raw_size / 2]);  // keeps the copies observable
  }
  return seconds_since(t0);
}

// Checksum throughput over a capture's own bytes, which is what verifying a record reads: the
// product's crc32c (isa-l, hardware where the CPU has it), the portable Boost.CRC it replaced,
// and memcpy of the same bytes, best of three each.
void crc_figures(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const Bytes file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Bytes dst(file.size());
  uint64_t sink = 0;
  auto best = [&](auto&& fn) {
    double t = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      fn();
      t = std::min(t, seconds_since(t0));
    }
    return double(file.size()) / t / 1e9;
  };
  const double product = best([&] { sink += captures::crc32c(file); });
  const double portable = best([&] {
    boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
    crc.process_bytes(file.data(), file.size());
    sink += crc.checksum();
  });
  const double copy = best([&] {
    std::memcpy(dst.data(), file.data(), file.size());
    sink += dst[dst.size() / 2];
  });
  std::printf(
      "  crc32c over the file   : %.2f GB/s (isa-l), portable Boost.CRC %.2f GB/s, memcpy %.2f GB/s;"
      " crc/memcpy = %.3f, isa-l/Boost = %.1fx  (sink %llu)\n",
      product, portable, copy, product / copy, product / portable, (unsigned long long)(sink & 0xff));
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t ticks = argc > 1 ? uint32_t(std::stoul(argv[1])) : 5760;
  const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  HostInfo host{"WIN2016-DB",         "2016", "Windows Server 2016 Datacenter", "6.3", "14393", "", 10000000, 8,
                132000000000000000ll, 15000};

  std::vector<Variant> variants;
  variants.push_back(
      {"xor, keyframe/32 (default)", WriterOptions{32, DeltaCodec::kXor, SyncPolicy::kOnClose}, "", nullptr});
  variants.push_back({"xor, keyframe/16", WriterOptions{16, DeltaCodec::kXor, SyncPolicy::kOnClose}, "", nullptr});
  variants.push_back({"xor, keyframe/64", WriterOptions{64, DeltaCodec::kXor, SyncPolicy::kOnClose}, "", nullptr});
  variants.push_back({"dict, keyframe/32", WriterOptions{32, DeltaCodec::kDict, SyncPolicy::kOnClose}, "", nullptr});
  for (size_t i = 0; i < variants.size(); ++i) {
    variants[i].path = (dir / ("perfsim_capture_bench_" + std::to_string(i) + ".pscap")).string();
    if (Status st = Writer::create(variants[i].path, host, variants[i].opt, variants[i].w); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }

  HostModel model;
  uint64_t raw = 0, lz4_alone = 0, global_bytes = 0;
  double gen_s = 0;
  Bytes global, processor, lz4_buf;
  for (uint32_t t = 0; t < ticks; ++t) {
    auto t0 = std::chrono::steady_clock::now();
    model.sample(t, global, processor);
    gen_s += seconds_since(t0);
    global_bytes += global.size();
    for (const auto& [name, payload] : {std::pair<const char*, Bytes*>{"Global", &global}, {"238", &processor}}) {
      QueryRecord r;
      r.tick = t;
      r.time_100ns = host.start_time_100ns + int64_t(t) * kTick100ns;
      r.latency_us = 20000;
      r.value_name = name;
      r.size = uint32_t(payload->size());
      r.payload = *payload;
      raw += payload->size();
      lz4_buf.resize(size_t(LZ4_compressBound(int(payload->size()))));
      lz4_alone += size_t(LZ4_compress_default(reinterpret_cast<const char*>(payload->data()),
                                               reinterpret_cast<char*>(lz4_buf.data()), int(payload->size()),
                                               int(lz4_buf.size())));
      for (Variant& v : variants) {
        auto e0 = std::chrono::steady_clock::now();
        if (Status st = v.w->append(r); !st.ok()) {
          std::fprintf(stderr, "%s\n", st.ToString().c_str());
          return 1;
        }
        v.encode_s += seconds_since(e0);
      }
    }
  }
  for (Variant& v : variants)
    if (Status st = v.w->close(); !st.ok()) {  // a capture not written whole would give false figures
      std::fprintf(stderr, "%s: %s\n", v.path.c_str(), st.ToString().c_str());
      return 1;
    }

  std::printf("capture_bench: %u ticks at 15 s (%.1f h), 2 queries per tick (Global, 238)\n", ticks,
              ticks * 15 / 3600.0);
  std::printf("  Global payload: %.0f KB average; generation took %.1f s\n", double(global_bytes) / ticks / 1024,
              gen_s);
  std::printf("  raw payloads          : %12llu bytes\n", (unsigned long long)raw);
  std::printf("  LZ4 per sample alone  : %12llu bytes  (%.2fx smaller than raw)\n", (unsigned long long)lz4_alone,
              double(raw) / double(lz4_alone));
  for (const Variant& v : variants) {
    const auto size = std::filesystem::file_size(v.path);
    std::printf("  %-27s: %12llu bytes  %.1fx smaller than raw, %.1fx smaller than LZ4 alone; encode %.0f MB/s\n",
                v.name, (unsigned long long)size, double(raw) / double(size), double(lz4_alone) / double(size),
                double(raw) / v.encode_s / 1e6);
  }

  crc_figures(variants[0].path);

  for (size_t i : {size_t(0), size_t(3)}) {
    std::unique_ptr<Reader> r;
    if (Status st = Reader::open(variants[i].path, r); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
    uint64_t sink = 0;
    decode_all(*r, sink);  // warm: page cache and mapping
    // First read verifies each record's CRC (over the compressed bytes); later reads of the same
    // open capture (the replayer looping its timeline) skip it.
    double first = 1e9, again = 1e9, cpy = 1e9;
    for (int rep = 0; rep < 2; ++rep) {
      std::unique_ptr<Reader> fresh;
      if (Status st = Reader::open(variants[i].path, fresh); !st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        return 1;
      }
      first = std::min(first, decode_all(*fresh, sink));
      again = std::min(again, decode_all(*fresh, sink));
      cpy = std::min(cpy, memcpy_all(*fresh, sink));
    }
    std::printf(
        "  decode %-20s: first read %.2f GB/s, later reads %.2f GB/s; memcpy of the same bytes %.2f GB/s;"
        " decode/memcpy = %.3f / %.3f  (sink %llu)\n",
        variants[i].name, double(raw) / first / 1e9, double(raw) / again / 1e9, double(raw) / cpy / 1e9, cpy / first,
        cpy / again, (unsigned long long)(sink & 0xff));
    if (i == 0) {
      // Random access: tick k in a shuffled order, each from a fresh cache state for its query.
      Rng rng;
      const int samples = 500;
      auto t0 = std::chrono::steady_clock::now();
      std::vector<QueryRecord> recs;
      for (int s = 0; s < samples; ++s)
        if (Status st = r->read_tick(uint32_t(rng.below(ticks)), recs); !st.ok()) {
          std::fprintf(stderr, "%s\n", st.ToString().c_str());
          return 1;
        }
      std::printf("  random access to tick k: %.0f us per tick (at most %u deltas per payload)\n",
                  seconds_since(t0) / samples * 1e6, variants[0].opt.keyframe_interval - 1);
    }
  }
  for (const Variant& v : variants) std::filesystem::remove(v.path);
  return 0;
}
