// A capture prepared for serving: everything that depends only on the capture, built once and
// shared (read-only) by every simulated host made from it — a fleet of 1,000 hosts holds one
// Recording, so memory grows with hosts by their small identity state, not by capture size.
//
// Besides the capture and its registry tree it precomputes where each answer must be patched to
// look live: the byte ranges of every recorded object (index queries are slice copies), the
// object-level PerfTime fields and every cumulative counter (the two-sample types and their bases)
// with how much it grows per loop of the timeline. Guarantees:
//  - per_loop is chosen so that, when the timeline wraps from the last tick to tick 0, a counter
//    present at ticks 0, 1 and last grows by exactly its tick 0 -> 1 increment while every clock
//    grows by its tick 0 -> 1 interval: the wrap looks like the recorded first interval again,
//    and nothing runs backwards.
//  - A damaged sample (bad lengths) gets no slices or patches; it is served as recorded.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "replayer/registry.h"

namespace perfsim::replayer {

// One cumulative counter inside an object slice.
struct CounterPatch {
  uint32_t offset = 0;    // from the start of the object
  uint32_t size = 4;      // 4 or 8
  uint64_t per_loop = 0;  // added once per completed loop (mod 2^(8*size))
};

struct ObjectSlice {
  uint32_t index = 0;     // ObjectNameTitleIndex
  uint32_t offset = 0;    // in the payload
  uint32_t length = 0;    // TotalByteLength of the object
  int64_t time_span = 0;  // object PerfTime advance per loop (0: the object keeps no own time)
  std::vector<CounterPatch> counters;
};

// One recorded Global or Costly answer, cut into objects.
struct SampleView {
  const captures::QueryRecord* record = nullptr;
  uint32_t header_length = 0;  // 0: not a usable PERF_DATA_BLOCK (served as recorded)
  std::vector<ObjectSlice> objects;
};

// Per-loop advance of a series' block clocks.
struct SeriesClock {
  int64_t perf_time_span = 0;  // PerfTime ticks per loop
  int64_t time100_span = 0;    // PerfTime100nSec per loop
};

struct RecordedTick {
  SampleView global, costly;
  std::vector<const captures::QueryRecord*> others;  // values recorded under other names
  int64_t offset_100ns = 0;                          // time since tick 0 (from the recorded PerfTime100nSec)
};

struct Recording {
  captures::Capture cap;
  Registry registry;
  std::vector<RecordedTick> ticks;
  SeriesClock global_clock, costly_clock;
  int64_t loop_100ns = 0;   // one loop of the timeline on the host's clock
  int64_t start_100ns = 0;  // recorded PerfTime100nSec of tick 0 (FILETIME)

  uint32_t tick_count() const { return uint32_t(ticks.size()); }
};

// Prepares `cap` (moved in). InvalidArgument when it holds no samples.
Status build_recording(captures::Capture cap, std::shared_ptr<const Recording>& out);

// True for counter types whose value only makes sense as a difference between two samples, and
// for the base counters paired with them: the counters that must keep growing across loops.
bool is_cumulative(uint32_t type, uint32_t previous_type);

}  // namespace perfsim::replayer
