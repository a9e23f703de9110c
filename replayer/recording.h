// A capture prepared for serving, shared (read-only) by every simulated host made from it: a
// fleet of 1,000 hosts holds one Recording, so memory grows with hosts by their small identity
// state, not by capture size.
//
// A recording opened from a file is lazy (open_recording): at open it reads the metadata and the
// index, and the first bytes of each Global sample (its PERF_DATA_BLOCK clocks, decoded without
// the rest); samples are decoded when a timeline reaches them, into a byte-bounded SampleCache
// shared by every recording of the serve run, and the next 4 ticks are decoded ahead in the
// background (prefetch). Each decoded sample is cut once into what live answers patch: the byte
// ranges of its objects, their PerfTime fields and every cumulative counter (the two-sample types
// and their bases) with how much it grows per loop of the timeline. A counter's growth depends on
// the whole capture (its first, second and last values), so one background pass over the file
// computes it after open; answers that need it (a later loop, a fleet's per-host variation) wait
// for that pass, the first loop of an unvaried host never does.
//
// Guarantees:
//  - The timeline runs over the recorded ticks in order: tick numbers with nothing recorded
//    (gaps, a huge last tick) take no place and no memory (captures/FORMAT.md says why a capture
//    may have them; `perfsim validate` reports them).
//  - per_loop is chosen so that, when the timeline wraps from the last tick to the first, a
//    counter present at the first, second and last ticks grows by exactly its first increment
//    while every clock grows by its first interval: the wrap looks like the recorded first
//    interval again, and nothing runs backwards.
//  - A damaged sample (bad lengths) gets no slices or patches; it is served as recorded. A record
//    that cannot be decoded when reached is served as if it had not been recorded.
//  - The capture file is mapped, pages given back once decoded; it is never read whole.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "replayer/registry.h"
#include "replayer/sample_cache.h"

namespace perfsim::replayer {

// One cumulative counter inside an object slice (winperf::accumulates says which).
struct CounterPatch {
  uint32_t offset = 0;    // from the start of the object
  uint32_t size = 4;      // 4 or 8
  uint64_t per_loop = 0;  // added once per completed loop (mod 2^(8*size))
  // Growth to the same counter at the next tick on the timeline (the first tick plus per_loop
  // after the last; mod 2^(8*size), so a 32-bit counter wraps as recorded): an answer between the
  // two adds it in proportion to the time since this tick. 0 where the instance is gone at the
  // next tick, where a 64-bit value would go back, or where it is not known (Patches::kSteps at
  // the last tick).
  uint64_t step = 0;
  bool operator==(const CounterPatch&) const = default;
};

// The patches of one counter width, a column each (offsets, steps, per-loop growth): the live
// patch loop reads only what it needs (per_loop only on a later loop) and no width test per
// counter, and a 32-bit counter's step takes 4 bytes, not 8.
template <class T>
struct PatchColumn {
  std::vector<uint32_t> offset;    // from the start of the object, in the order the walk met them
  std::vector<T> step;             // as CounterPatch::step (a 32-bit counter's fits in 32 bits)
  std::vector<uint64_t> per_loop;  // as CounterPatch::per_loop (64 bits: a scaled answer uses them all)
  bool operator==(const PatchColumn&) const = default;
};

// An object's cumulative counters that move, by width.
struct CounterPatches {
  PatchColumn<uint32_t> narrow;  // 4-byte counters
  PatchColumn<uint64_t> wide;    // 8-byte counters
  void add(const CounterPatch& c);
  std::vector<CounterPatch> list() const;  // every patch as one record (narrow ones first), for tests
  size_t size() const { return narrow.offset.size() + wide.offset.size(); }
  bool empty() const { return size() == 0; }
  size_t bytes() const;  // heap held, for the sample cache's budget
  void shrink_to_fit();
  bool operator==(const CounterPatches&) const = default;
};

// What a prepared sample's counter patches hold; a later level includes the earlier.
enum class Patches : uint8_t {
  kNone,   // no counter patches (recorded bytes, or clocks only)
  kSteps,  // every cumulative counter that moves to the next tick, with its step (no per-loop
           // growth: the pass computing it has not finished; the last tick's steps need it)
  kAll,    // every cumulative counter that moves, with its step and per-loop growth
};

struct ObjectSlice {
  uint32_t index = 0;     // ObjectNameTitleIndex
  uint32_t offset = 0;    // in the payload
  uint32_t length = 0;    // TotalByteLength of the object
  int64_t time_span = 0;  // object PerfTime advance per loop (0: the object keeps no own time)
  CounterPatches counters;
  bool operator==(const ObjectSlice&) const = default;
};

// One recorded answer, decoded and (Global or Costly) cut into objects.
struct Sample {
  uint32_t status = 0;
  uint32_t reg_type = 0;
  Bytes owned;                 // the decoded payload; empty when `payload` views a capture held in memory
  ByteView payload;            // the bytes as recorded
  uint32_t header_length = 0;  // 0: not a usable PERF_DATA_BLOCK (served as recorded)
  std::vector<ObjectSlice> objects;
  Patches patches = Patches::kNone;  // what the objects' counter patches hold
};
using SampleRef = std::shared_ptr<const Sample>;

enum class Series : uint8_t { kGlobal, kCostly };

// Per-loop advance of a series' block clocks.
struct SeriesClock {
  int64_t perf_time_span = 0;  // PerfTime ticks per loop
  int64_t time100_span = 0;    // PerfTime100nSec per loop
};

class Recording {
 public:
  struct Impl;
  explicit Recording(std::unique_ptr<Impl> impl);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  captures::Capture cap;  // metadata; records only when built from a capture in memory
  Registry registry;
  SeriesClock global_clock, costly_clock;
  int64_t loop_100ns = 0;   // one loop of the timeline on the host's clock
  int64_t start_100ns = 0;  // recorded PerfTime100nSec of the first tick (FILETIME)

  // Samples on the timeline (recorded ticks; gaps in the tick numbers take no place).
  uint32_t tick_count() const;
  uint32_t tick_number(uint32_t pos) const;  // the recorded tick number at timeline position pos
  // Time since the first tick (from the recorded PerfTime100nSec), non-decreasing.
  const std::vector<int64_t>& offsets() const;
  // The Global or Costly sample at `pos`, or null when none was recorded (or it cannot be
  // decoded), its counter patches filled in to `need` at least (kAll waits for the pass that
  // computes the per-loop growth if it has not finished; kSteps never waits).
  SampleRef sample(uint32_t pos, Series s, Patches need = Patches::kNone) const;
  // Whether one was recorded, and its decoded size, without decoding it.
  bool has_sample(uint32_t pos, Series s) const;
  uint32_t sample_size(uint32_t pos, Series s) const;
  // A value recorded under exactly `name` (case-insensitive) at pos, else at position 0; or null.
  SampleRef other(uint32_t pos, std::string_view name) const;
  // Decodes the samples of positions pos..pos+3 (wrapping) in the background, with counter
  // patches to `need`, unless they are cached.
  void prefetch(uint32_t pos, Patches need) const;
  // True once every counter's per-loop growth is known.
  bool counters_known() const;
  // The whole capture in memory (what content quirks rewrite); reads the file if lazy.
  Status load_capture(captures::Capture& out) const;
  SampleCache& cache() const;

 private:
  std::unique_ptr<Impl> impl_;
};

// Prepares `cap` (moved in), held in memory, counters computed before returning. InvalidArgument
// when it holds no samples.
Status build_recording(captures::Capture cap, std::shared_ptr<const Recording>& out);
// Opens the capture at `path` lazily (above), caching its samples in `cache` (null: the process
// default). The reader's warnings at open go to `warnings`.
Status open_recording(const std::string& path, std::shared_ptr<SampleCache> cache,
                      std::shared_ptr<const Recording>& out, std::vector<std::string>* warnings = nullptr);

}  // namespace perfsim::replayer
