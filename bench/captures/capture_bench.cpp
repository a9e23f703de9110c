// Capture size and decode speed on what perfsim itself produces (issue 16): the synth library's
// 24 h / 15 s days of a 2016 host and a win2000 host with 200 processes (what `perfsim synth`
// writes for the same spec), and any capture given on the command line (a `perfsim record` of a
// served host). For each input, in one run:
//   - raw payload bytes, LZ4 of each sample alone, zstd -19 (long mode) of the raw payload stream;
//   - the file size of v1 (XOR+LZ4, keyframe 32) and of v2 variants (entropy coder, keyframe interval);
//   - sequential decode throughput in GB/s of raw bytes, as a ratio to memcpy of the same bytes;
//   - random access: one record of a fresh reader (its keyframe chain and structure);
//   - the CRC-32C line (isa-l against the portable Boost.CRC it replaced).
// Usage: capture_bench [hours=24] [dir=/tmp] [zstd19_mb=256] [capture.perfcap ...]
#include <lz4.h>
#include <zstd.h>

#include <boost/crc.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>

#include "captures/format.h"
#include "captures/reader.h"
#include "captures/writer.h"
#include "synth/synth.h"

using namespace perfsim;
using namespace perfsim::captures;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "capture_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Variant {
  std::string name;
  WriterOptions opt;
  std::string path;
  std::unique_ptr<Writer> w;
  double encode_s = 0;
};

WriterOptions options(uint32_t version, uint32_t keyframe, Entropy e = Entropy::kZstd, int level = 3,
                      bool cross = true) {
  WriterOptions o;
  o.cross_columns = cross;
  o.version = version;
  o.keyframe_interval = keyframe;
  o.entropy = e;
  o.zstd_level = level;
  return o;
}

// zstd -19 --long=27 of the raw payload stream, over its first `limit` bytes (level 19 runs at a few
// MB/s: the ratio on a prefix of hours stands for the day's, the prefix is printed).
struct Zstd19 {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  uint64_t in = 0, out = 0, limit;
  Bytes buf = Bytes(ZSTD_CStreamOutSize());
  explicit Zstd19(uint64_t lim) : limit(lim) {
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 19);
    ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 27);
  }
  ~Zstd19() { ZSTD_freeCCtx(c); }
  void feed(ByteView b, bool last) {
    if (in >= limit && !last) return;
    const size_t take = std::min<uint64_t>(b.size(), limit - std::min(limit, in));
    ZSTD_inBuffer ib{b.data(), take, 0};
    const ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
    for (;;) {
      ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
      const size_t left = ZSTD_compressStream2(c, &ob, &ib, mode);
      if (ZSTD_isError(left)) die(ZSTD_getErrorName(left));
      out += ob.pos;
      if (last ? left == 0 : ib.pos == ib.size) break;
    }
    in += take;
  }
};

// Sequential decode of every record (the replayer's access pattern); returns seconds.
double decode_all(Reader& r, uint64_t& checksum) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < r.records().size(); ++i) {
    ByteView p;
    if (Status st = r.payload(i, p); !st.ok()) die("decode failed: " + st.ToString());
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

void decode_figures(const Variant& v, uint64_t raw) {
  std::unique_ptr<Reader> r;
  if (Status st = Reader::open(v.path, r); !st.ok()) die(st.ToString());
  uint64_t sink = 0;
  decode_all(*r, sink);  // warm: page cache, mapping, checksums verified once
  double dec = 1e9, cpy = 1e9;
  for (int rep = 0; rep < 2; ++rep) {
    std::unique_ptr<Reader> fresh;  // a fresh reader: first read, checksums verified
    if (Status st = Reader::open(v.path, fresh); !st.ok()) die(st.ToString());
    dec = std::min(dec, decode_all(*fresh, sink));
    cpy = std::min(cpy, memcpy_all(*fresh, sink));
  }
  // Random access: one record of a fresh reader each, spread over the day.
  std::mt19937 rng(7);
  const size_t n = r->records().size(), probes = std::min<size_t>(n, 40);
  double ra = 0;
  for (size_t k = 0; k < probes; ++k) {
    std::unique_ptr<Reader> fresh;
    if (Status st = Reader::open(v.path, fresh); !st.ok()) die(st.ToString());
    const size_t i = rng() % n;
    const auto t0 = std::chrono::steady_clock::now();
    ByteView p;
    if (Status st = fresh->payload(i, p); !st.ok()) die(st.ToString());
    ra += seconds_since(t0);
    sink += p.size();
  }
  std::printf(
      "    decode %-26s: %.2f GB/s of raw bytes, memcpy %.2f GB/s, ratio %.3f; random record %.1f ms (sink %llu)\n",
      v.name.c_str(), double(raw) / dec / 1e9, double(raw) / cpy / 1e9, cpy / dec, ra / double(probes) * 1e3,
      (unsigned long long)(sink & 0xff));
}

// Checksum throughput over a capture's own bytes (what verifying a record reads): isa-l crc32c, the
// portable Boost.CRC it replaced, memcpy of the same bytes; best of three each.
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
      "  crc32c over %s (%zu bytes): %.2f GB/s (isa-l), portable Boost.CRC %.2f GB/s, memcpy %.2f GB/s;"
      " crc/memcpy = %.3f, isa-l/Boost = %.1fx  (sink %llu)\n",
      path.c_str(), file.size(), product, portable, copy, product / copy, product / portable,
      (unsigned long long)(sink & 0xff));
}

using Source = std::function<Status(HostInfo&, const std::function<Status(const QueryRecord&)>&)>;

Source synth_source(const std::string& profile, uint32_t hours) {
  return [profile, hours](HostInfo& host, const std::function<Status(const QueryRecord&)>& sink) {
    synth::Spec spec;
    const std::string toml = "[host]\nprofile = \"" + profile + "\"\nduration = \"" + std::to_string(hours) +
                             "h\"\ninterval = \"15s\"\n[processes]\ncount = 200\n";
    if (Status st = synth::parse_spec_toml(toml, spec); !st.ok()) return st;
    std::unique_ptr<synth::Synthesizer> gen;
    if (Status st = synth::Synthesizer::create(spec, gen); !st.ok()) return st;
    host = gen->header().host;
    std::vector<QueryRecord> tick;
    while (!gen->done()) {
      tick.clear();
      if (Status st = gen->next(tick); !st.ok()) return st;
      for (const QueryRecord& r : tick)
        if (Status st = sink(r); !st.ok()) return st;
    }
    return Status::Ok();
  };
}

Source file_source(const std::string& path) {
  return [path](HostInfo& host, const std::function<Status(const QueryRecord&)>& sink) {
    std::unique_ptr<Reader> r;
    if (Status st = Reader::open(path, r, ReaderOptions{true, true}); !st.ok()) return st;
    host = r->metadata().host;
    for (size_t i = 0; i < r->records().size(); ++i) {
      QueryRecord rec;
      if (Status st = r->read_record(i, rec); !st.ok()) return st;
      if (Status st = sink(rec); !st.ok()) return st;
    }
    return Status::Ok();
  };
}

void measure(const std::string& label, const Source& source, const std::filesystem::path& dir, uint64_t zstd_limit,
             bool crc) {
  std::vector<Variant> vs;
  vs.push_back({"v1 xor, keyframe 32", options(1, 32), "", nullptr});
  vs.push_back({"v2 zstd-3, keyframe 32", options(2, 32), "", nullptr});
  vs.push_back({"v2 no relations (codec 4)", options(2, 32, Entropy::kZstd, 3, false), "", nullptr});
  vs.push_back({"v2 zstd-3, keyframe 64", options(2, 64), "", nullptr});
  vs.push_back({"v2 lz4, keyframe 64", options(2, 64, Entropy::kLz4), "", nullptr});
  uint64_t raw = 0, lz4_alone = 0, records = 0;
  Zstd19 z19(zstd_limit);
  Bytes lz4_buf;
  bool opened = false;
  HostInfo host;
  double gen_s = 0;
  auto t_gen = std::chrono::steady_clock::now();
  Status st = source(host, [&](const QueryRecord& r) -> Status {
    gen_s += seconds_since(t_gen);
    if (!opened) {
      for (size_t i = 0; i < vs.size(); ++i) {
        vs[i].path = (dir / ("perfsim_capture_bench_" + std::to_string(i) + ".perfcap")).string();
        if (Status s = Writer::create(vs[i].path, host, vs[i].opt, vs[i].w); !s.ok()) return s;
      }
      opened = true;
    }
    ++records;
    raw += r.payload.size();
    lz4_buf.resize(size_t(LZ4_compressBound(int(r.payload.size()))));
    lz4_alone += size_t(LZ4_compress_default(reinterpret_cast<const char*>(r.payload.data()),
                                             reinterpret_cast<char*>(lz4_buf.data()), int(r.payload.size()),
                                             int(lz4_buf.size())));
    z19.feed(r.payload, false);
    for (Variant& v : vs) {
      const auto e0 = std::chrono::steady_clock::now();
      if (Status s = v.w->append(r); !s.ok()) return s;
      v.encode_s += seconds_since(e0);
    }
    t_gen = std::chrono::steady_clock::now();
    return Status::Ok();
  });
  if (!st.ok()) die(label + ": " + st.ToString());
  z19.feed({}, true);
  for (Variant& v : vs)
    if (Status s = v.w->close(); !s.ok()) die(v.path + ": " + s.ToString());

  std::printf("%s: %llu records, input made/read in %.1f s\n", label.c_str(), (unsigned long long)records, gen_s);
  std::printf("  raw payloads              : %14llu bytes\n", (unsigned long long)raw);
  std::printf("  LZ4 per sample            : %14llu bytes  %6.1fx smaller than raw\n", (unsigned long long)lz4_alone,
              double(raw) / double(lz4_alone));
  std::printf("  zstd -19 --long=27 stream : %14llu of the first %llu bytes: %.1fx smaller than raw\n",
              (unsigned long long)z19.out, (unsigned long long)z19.in, double(z19.in) / double(z19.out));
  const double z19_ratio = double(z19.in) / double(z19.out);
  for (const Variant& v : vs) {
    const auto size = std::filesystem::file_size(v.path);
    const double ratio = double(raw) / double(size);
    std::printf("  %-26s: %14llu bytes  %6.1fx smaller than raw, %5.2fx smaller than zstd -19; encode %.0f MB/s\n",
                v.name.c_str(), (unsigned long long)size, ratio, ratio / z19_ratio, double(raw) / v.encode_s / 1e6);
  }
  for (size_t i : {size_t(0), size_t(1), size_t(2), size_t(4)}) decode_figures(vs[i], raw);
  if (crc) crc_figures(vs[1].path);
  for (const Variant& v : vs) std::filesystem::remove(v.path);
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t hours = argc > 1 ? uint32_t(std::stoul(argv[1])) : 24;
  const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  const uint64_t zstd_limit = (argc > 3 ? std::stoull(argv[3]) : 256) << 20;
  measure("synth 2016, 200 processes, " + std::to_string(hours) + " h / 15 s", synth_source("2016", hours), dir,
          zstd_limit, true);
  measure("synth win2000, 200 processes, " + std::to_string(hours) + " h / 15 s", synth_source("win2000", hours), dir,
          zstd_limit, false);
  for (int i = 4; i < argc; ++i) measure(argv[i], file_source(argv[i]), dir, zstd_limit, false);
  return 0;
}
