// Helper process for the SIGKILL test: writes sample records to the capture named on the command
// line and reports each finished append on stdout ("<records written>\n"), until killed or a bound.
#include <cstdio>

#include "captures/writer.h"
#include "sample_data.h"

using namespace perfsim::captures;

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::unique_ptr<Writer> w;
  const Capture meta = testdata::make_capture(0);
  if (!Writer::create(argv[1], meta.host, WriterOptions{4, DeltaCodec::kXor, SyncPolicy::kOnClose}, w).ok()) return 1;
  size_t written = 0;
  for (uint32_t tick = 0; tick < 100000; ++tick) {  // bounded: the test kills it long before
    for (const QueryRecord& r : testdata::tick_records(tick, 60000)) {
      if (!w->append(r).ok()) return 1;
      std::printf("%zu\n", ++written);
      std::fflush(stdout);
    }
  }
  return 0;
}
