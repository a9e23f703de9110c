// `perfsim import --perfmon` throughput on a 24 h log (MB/s of CSV), as a ratio to reading the
// same file with the CSV dialect's own parser alone (perfdata/pdh_csv.h: split, time, values),
// each run in a child process so its peak RSS is its own. bench/perfmon/README.md has the figures.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/child_run.h"
#include "bench/common/stats.h"
#include "perfdata/filetime.h"
#include "perfdata/pdh_csv.h"
#include "synth/perfmon_import.h"

namespace csv = perfsim::perfdata::pdh_csv;

namespace {

// 24 h at 15 s of a typical support log: 16 processors' times, memory, disks, network, and an
// application's counters the profile does not know.
void write_log(const std::string& path, int rows) {
  std::vector<std::string> head{std::string(csv::kUtcHeader)};
  for (int p = 0; p < 16; ++p)
    for (const char* c : {"% Processor Time", "% User Time", "% Privileged Time", "Interrupts/sec"})
      head.push_back("\\\\HOST\\Processor(" + std::to_string(p) + ")\\" + c);
  for (const char* c : {"Available Bytes", "Page Faults/sec", "Pages/sec", "Committed Bytes"})
    head.push_back(std::string("\\\\HOST\\Memory\\") + c);
  for (int d = 0; d < 8; ++d)
    for (const char* c : {"Disk Bytes/sec", "Avg. Disk sec/Transfer", "Avg. Disk Queue Length", "% Disk Time"})
      head.push_back("\\\\HOST\\PhysicalDisk(" + std::to_string(d) + " C:)\\" + c);
  for (int a = 0; a < 20; ++a) head.push_back("\\\\HOST\\MyApp(queue" + std::to_string(a) + ")\\Depth");
  std::ofstream out(path, std::ios::binary);
  out << csv::write_row(head) << "\r\n";
  const int64_t start = 133485408000000000;
  std::vector<std::string> row(head.size());
  for (int r = 0; r < rows; ++r) {
    row[0] =
        csv::format_time(perfsim::perfdata::system_time_of(start + int64_t(r) * 150000000 + (r * 7919 % 300) * 10000));
    for (size_t c = 1; c < head.size(); ++c)
      row[c] = r == 0 && c < 65 ? " " : csv::format_value(double((r * 31 + c * 17) % 10000) / 100.0);
    out << csv::write_row(row) << "\r\n";
  }
}

// The baseline: every line split and its time and values parsed, nothing built.
int parse_only(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::vector<std::string> cells;
  std::getline(in, line);
  double sum = 0;
  int64_t t = 0;
  std::optional<double> v;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!csv::split_row(line, ',', cells).ok() || !csv::parse_time(cells[0], 0, t).ok()) return 1;
    for (size_t c = 1; c < cells.size(); ++c)
      if (csv::parse_value(cells[c], v).ok() && v) sum += *v;
  }
  return sum > 0 ? 0 : 1;
}

int import(const std::string& path, const std::string& out) {
  perfsim::synth::PerfmonImportReport rep;
  const perfsim::Status s = perfsim::synth::import_perfmon(path, out, "2016", rep);
  if (!s.ok()) std::fprintf(stderr, "import: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const auto dir = std::filesystem::temp_directory_path() / ("perfmon-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string log = (dir / "24h.csv").string(), cap = (dir / "24h.perfcap").string();
  write_log(log, 24 * 3600 / 15);
  const double mb = double(std::filesystem::file_size(log)) / 1e6;
  std::vector<double> base_mbs, import_mbs, ratios;
  long base_peak = 0, import_peak = 0;
  for (int r = 0; r < rounds; ++r) {
    const perfsim::bench::ChildRun b = perfsim::bench::in_child([&] { return parse_only(log); });
    const perfsim::bench::ChildRun i = perfsim::bench::in_child([&] { return import(log, cap); });
    base_mbs.push_back(mb / b.seconds);
    import_mbs.push_back(mb / i.seconds);
    ratios.push_back(b.seconds / i.seconds);
    base_peak = std::max(base_peak, b.peak_kib);
    import_peak = std::max(import_peak, i.peak_kib);
  }
  std::printf("24 h log: %.1f MB, %d rows; capture %.1f MB\n", mb, 24 * 3600 / 15,
              double(std::filesystem::file_size(cap)) / 1e6);
  std::printf("parse only (pdh_csv): %s MB/s, peak RSS %ld KiB\n",
              perfsim::bench::median_range(base_mbs, "%.1f").c_str(), base_peak);
  std::printf("import --perfmon:     %s MB/s, peak RSS %ld KiB\n",
              perfsim::bench::median_range(import_mbs, "%.1f").c_str(), import_peak);
  std::printf("ratio import / parse: %s (median of %d rounds)\n", perfsim::bench::median_range(ratios, "%.2f").c_str(),
              rounds);
  std::filesystem::remove_all(dir);
  return 0;
}
