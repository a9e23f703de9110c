// A customer's perfmon log through what a support engineer does with it (issue 54): the input is
// a typeperf/relog CSV imported as a 2016 host (`perfsim import --perfmon`), the capture redacted
// (`perfsim redact`, with a /REGEX/ pattern), and the redacted capture served: its Counter table
// under HKEY_PERFORMANCE_TEXT and its Global under HKEY_PERFORMANCE_DATA. Names of any length
// come in through the log's header; the bounds (perfdata/limits.h) must refuse them cleanly, and
// what gets through must be served within the same bounds.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "captures/reader.h"
#include "captures/redact.h"
#include "fuzz/fuzz_input.h"
#include "perfdata/limits.h"
#include "replayer/host.h"
#include "synth/perfmon_import.h"

using namespace perfsim;
namespace fs = std::filesystem;

namespace {

// One directory per process for the files the commands take (they read and write paths).
const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("perfsim-fuzz-import-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Every name a served Counter table holds is within the counter-name bound (a MULTI_SZ of
// index/name pairs in UTF-16LE).
void check_names(const Bytes& table) {
  size_t start = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    if (table[i] != 0 || table[i + 1] != 0) continue;
    fuzz::require((i - start) / 2 <= perfdata::limits::kCounterName.max);
    start = i + 2;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path log = work_dir() / "log.csv", cap = work_dir() / "log.perfcap", red = work_dir() / "red.perfcap",
                 map = work_dir() / "red.map.json";
  for (const fs::path& p : {cap, red, map}) fs::remove(p);
  std::ofstream(log, std::ios::binary).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  synth::PerfmonImportReport report;
  if (!synth::import_perfmon(log.string(), cap.string(), "2016", report).ok()) return 0;
  captures::RedactOptions ro;
  ro.redact = {"/[a-z]+[0-9]+/"};
  captures::TokenMap tokens;
  fuzz::require(captures::redact_capture(cap.string(), red.string(), map.string(), ro, tokens).ok());
  captures::Capture c;
  fuzz::require(captures::read_capture(red.string(), c).ok());
  std::shared_ptr<replayer::SimulatedHost> host;
  if (!replayer::SimulatedHost::load(c, {replayer::TimelineMode::kFrozen, 0}, host).ok()) return 0;
  const replayer::ValueContent names = host->content(replayer::PerfKey::kText, "Counter", 0);
  if (names.status == 0) check_names(names.data.to_bytes());
  host->content(replayer::PerfKey::kData, "Global", 0);
  return 0;
}
