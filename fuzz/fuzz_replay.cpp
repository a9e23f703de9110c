// replay: what a capture's samples do to the replayer once a file has been read. A capture is
// outside input (a customer's recording), and its samples' inner lengths and offsets drive the
// recording's walk (object slices, every instance's counter block, the growth pass) and the live
// answers' patches. Input: three PERF_DATA_BLOCKs (u32 length each) become Global at ticks 0-2,
// the rest Costly at every tick; a host with per-host variation then answers Global, Costly and
// index queries at loops 0-2 (every counter and clock patched) and through its buffer policy.
#include <string_view>

#include "fuzz/fuzz_input.h"
#include "replayer/host.h"
#include "windows/constants.h"

using namespace perfsim;
using namespace perfsim::replayer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  captures::Capture cap;
  cap.host.name = "FUZZ";
  cap.host.interval_ms = 1000;
  cap.catalog = {{2, "PerfOS", false}, {238, "PerfOS", false}, {230, "PerfProc", false}, {740, "PerfProc", true}};
  ByteView global[3];
  for (ByteView& g : global) g = in.take(in.u32() % (1u << 20));
  const ByteView costly = in.rest();
  for (uint32_t tick = 0; tick < 3; ++tick) {
    cap.records.push_back(
        {tick, 0, 0, "Global", 0, windows::kRegBinary, 0, Bytes(global[tick].begin(), global[tick].end())});
    cap.records.push_back({tick, 0, 0, "Costly", 0, windows::kRegBinary, 0, Bytes(costly.begin(), costly.end())});
  }
  for (bool costly_apart : {true, false}) {
    HostOptions opt{TimelineMode::kStep, 0};
    opt.identity.seed = 7;
    opt.identity.variation = 0.5;
    opt.quirks.costly = costly_apart;  // off: Global assembles Costly's objects too
    std::shared_ptr<SimulatedHost> host;
    if (!SimulatedHost::load(cap, opt, host).ok()) return 0;
    for (uint64_t loop = 0; loop < 3; ++loop)
      for (uint32_t tick = 0; tick < 3; ++tick)
        for (std::string_view value : {"Global", "Costly", "230 740", "Foreign FUZZ 2"})
          (void)host->content(PerfKey::kData, value, Moment{tick, loop, 5000000, false});
    for (int i = 0; i < 4; ++i) (void)host->query(PerfKey::kData, "Global", BufferOffer{true, 1u << 20});
  }
  return 0;
}
