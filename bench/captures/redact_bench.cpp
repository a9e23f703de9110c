// `perfsim redact` throughput on a 24 h synth capture (MB/s of decoded payload), as a ratio to the
// two passes it is made of, measured in the same run on the same file: a plain read (every record
// decoded, CRC checked, nothing written) and `convert` (read, re-encode, write: the same work
// without rewriting a name). Each run is a child process, so each peak RSS (wait4's ru_maxrss)
// is that run's own; rounds alternate the three. bench/captures/README.md has the figures.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/child_run.h"
#include "bench/common/stats.h"
#include "captures/reader.h"
#include "captures/redact.h"
#include "captures/writer.h"
#include "synth/synth.h"

namespace captures = perfsim::captures;
using perfsim::Status;

namespace {

// `perfsim synth --profile 2016 --duration 24h --interval 15s` with `processes` processes.
Status write_day(const std::string& path, uint32_t processes, uint32_t hours) {
  perfsim::synth::Spec spec;
  spec.profile = "2016";
  spec.host_name = "ACMEWEB07";
  spec.duration_s = hours * 3600;
  spec.interval_ms = 15000;
  spec.process_count = processes;
  std::unique_ptr<perfsim::synth::Synthesizer> gen;
  if (Status s = perfsim::synth::Synthesizer::create(spec, gen); !s.ok()) return s;
  std::unique_ptr<captures::Writer> w;
  Status s = captures::Writer::create(path, gen->header().host, {}, w);
  if (s.ok()) s = captures::add_metadata(*w, gen->header());
  std::vector<captures::QueryRecord> recs;
  while (s.ok() && !gen->done()) {
    recs.clear();
    s = gen->next(recs);
    for (captures::QueryRecord& r : recs)
      if (s.ok()) s = w->append(r);
  }
  if (w) {
    const Status closed = w->close();
    if (s.ok()) s = closed;
  }
  return s;
}

int fail(const Status& s) {
  std::fprintf(stderr, "%s\n", s.ToString().c_str());
  return 1;
}

int read_all(const std::string& path) {
  std::unique_ptr<captures::Reader> r;
  if (Status s = captures::Reader::open(path, r, captures::ReaderOptions{true, true}); !s.ok()) return fail(s);
  perfsim::ByteView v;
  uint64_t sum = 0;
  for (size_t i = 0; i < r->records().size(); ++i) {
    if (Status s = r->payload(i, v); !s.ok()) return fail(s);
    sum += v.empty() ? 0 : v[v.size() / 2];
  }
  return sum == uint64_t(-1) ? 1 : 0;
}

int convert(const std::string& in, const std::string& out) {
  const Status s = captures::convert_capture(in, out, {});
  return s.ok() ? 0 : fail(s);
}

int redact(const std::string& in, const std::string& out, const std::string& map) {
  captures::TokenMap tokens;
  const Status s = captures::redact_capture(in, out, map, {}, tokens);
  return s.ok() ? 0 : fail(s);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const uint32_t processes = argc > 2 ? uint32_t(std::atoi(argv[2])) : 60;
  const uint32_t hours = argc > 3 ? uint32_t(std::atoi(argv[3])) : 24;
  const auto dir = std::filesystem::path(argc > 4 ? argv[4] : std::filesystem::temp_directory_path().string()) /
                   ("redact-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "day.perfcap").string(), conv = (dir / "conv.perfcap").string(),
                    out = (dir / "redacted.perfcap").string(), map = (dir / "redacted.map.json").string();
  if (Status s = write_day(in, processes, hours); !s.ok()) return fail(s);
  uint64_t raw = 0;
  size_t records = 0;
  {
    std::unique_ptr<captures::Reader> r;
    if (Status s = captures::Reader::open(in, r); !s.ok()) return fail(s);
    for (const captures::RecordInfo& i : r->records()) raw += i.raw_size;
    records = r->records().size();
  }
  const double mb = double(raw) / 1e6;
  std::vector<double> read_mbs, conv_mbs, red_mbs, vs_read, vs_conv;
  long read_peak = 0, conv_peak = 0, red_peak = 0;
  for (int k = 0; k < rounds; ++k) {
    const perfsim::bench::ChildRun a = perfsim::bench::in_child([&] { return read_all(in); });
    const perfsim::bench::ChildRun b = perfsim::bench::in_child([&] { return convert(in, conv); });
    const perfsim::bench::ChildRun c = perfsim::bench::in_child([&] { return redact(in, out, map); });
    read_mbs.push_back(mb / a.seconds);
    conv_mbs.push_back(mb / b.seconds);
    red_mbs.push_back(mb / c.seconds);
    vs_read.push_back(a.seconds / c.seconds);
    vs_conv.push_back(b.seconds / c.seconds);
    read_peak = std::max(read_peak, a.peak_kib);
    conv_peak = std::max(conv_peak, b.peak_kib);
    red_peak = std::max(red_peak, c.peak_kib);
  }
  using perfsim::bench::median_range;
  std::printf("synth 2016, %u processes, %u h / 15 s: %zu records, %.1f MB decoded, file %.1f MB, redacted %.1f MB\n",
              processes, hours, records, mb, double(std::filesystem::file_size(in)) / 1e6,
              double(std::filesystem::file_size(out)) / 1e6);
  std::printf("read (decode only):  %s MB/s, peak RSS %ld KiB\n", median_range(read_mbs, "%.1f").c_str(), read_peak);
  std::printf("convert (v2 -> v2):  %s MB/s, peak RSS %ld KiB\n", median_range(conv_mbs, "%.1f").c_str(), conv_peak);
  std::printf("redact:              %s MB/s, peak RSS %ld KiB\n", median_range(red_mbs, "%.1f").c_str(), red_peak);
  std::printf("ratio redact / read: %s, redact / convert: %s (medians of %d rounds)\n",
              median_range(vs_read, "%.2f").c_str(), median_range(vs_conv, "%.2f").c_str(), rounds);
  std::filesystem::remove_all(dir);
  return 0;
}
