// The capture reader (captures/reader.h): the input is a capture file, put in a memory file
// (memfd) and opened by path as `perfsim inspect` / `serve` open one, with the index trailer and
// by scanning. Every record and tick is read, then the whole file through read_capture and its
// fingerprint record through captures::from_json.
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <string>

#include "captures/fingerprint.h"
#include "captures/reader.h"
#include "fuzz/fuzz_input.h"

using namespace perfsim;

namespace {

// Bounds the work per input: a large damaged file may list many records.
constexpr size_t kMaxRecords = 4096;

void read_all(const std::string& path, bool use_index) {
  std::unique_ptr<captures::Reader> r;
  if (!captures::Reader::open(path, r, {.use_index = use_index}).ok()) return;
  (void)r->metadata();
  std::set<uint32_t> ticks;
  const size_t n = std::min(r->records().size(), kMaxRecords);
  for (size_t i = 0; i < n; ++i) {
    ByteView payload;
    (void)r->payload(i, payload);
    captures::QueryRecord rec;
    (void)r->read_record(i, rec);
    ticks.insert(r->records()[i].tick);
  }
  for (uint32_t t : ticks) {
    if (ticks.size() > 64) break;
    (void)r->tick_range(t);
    std::vector<captures::QueryRecord> out;
    (void)r->read_tick(t, out);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("perfcap", 0);
  fuzz::require(fd >= 0);
  size_t done = 0;
  while (done < size) {
    const ssize_t w = write(fd, data + done, size - done);
    fuzz::require(w > 0);
    done += size_t(w);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  read_all(path, true);
  read_all(path, false);
  captures::Capture cap;
  std::vector<std::string> warnings;
  (void)captures::read_capture(path, cap, &warnings);
  captures::Fingerprint fp;
  (void)captures::from_json(cap.fingerprint_json, fp);  // what serve and inspect do with it
  close(fd);
  return 0;
}
