// What differs between two captures (`perfsim diff A B`): host metadata, fingerprint, registry
// values, objects and counters present in one only, counter type / size / detail level changes,
// instance sets, and counter values side by side. `names/diff.h` (`perfsim names diff`) compares
// the name tables themselves; this compares what the tables name.
//
// Contract:
//  - Objects, counters and instances are matched by name, each capture's indices looked up in its
//    own Counter table of `lang` (an index it does not name is "#N"), so two hosts whose tables
//    place the same counter at different indices compare equal. A name repeated within an object
//    (duplicate-counter-defs) is matched by occurrence: "Name", "Name #2".
//  - Structure (objects, counters, instances) is compared in one sample: tick `sample` (sample
//    mode) or the first tick (summary mode), Global then Costly (captures/samples.h).
//  - Values are perfdata/counters.h's formatted values (typeperf's): between ticks sample-1 and
//    sample (sample 0: the raw values, as `perfsim dump -k 0`), or min/mean/max of every
//    interval's valid value over the whole capture (`summary`), read tick by tick with bounded
//    memory (one state per counter instance, not per sample). Values are equal only when exactly
//    equal; a value one side cannot format (first sample of a rate, zero base) is null there.
//  - Quirks are compared as the caller resolves them (the replayer owns quirks, captures cannot
//    depend on it): compare_settings() on each side's settings list.
//  - Nothing throws; a capture without the asked sample is NotFound naming its ticks.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "captures/reader.h"
#include "core/status.h"

namespace perfsim::captures {

struct CompareOptions {
  bool summary = false;
  uint32_t sample = 1;  // tick number (sample mode)
  std::string lang = "009";
};

// One thing both sides have a value for, or one side only: `what`, and its text on each side
// (nullopt: absent there).
struct Change {
  std::string what;
  std::optional<std::string> a, b;
};

// Summary statistics of one counter instance's valid values over a capture.
struct Stats {
  uint64_t n = 0;
  double min = 0, max = 0, sum = 0;
  void add(double v);
  double mean() const { return n ? sum / static_cast<double>(n) : 0; }
  bool operator==(const Stats& o) const { return n == o.n && min == o.min && max == o.max && sum == o.sum; }
};

struct ValueChange {
  std::string path;            // Object(Instance)\Counter, Object\Counter for a single-instance object
  std::optional<double> a, b;  // sample mode: nullopt where it has no value
  Stats sa, sb;                // summary mode
};

struct CompareReport {
  std::vector<Change> host;         // profile, OS, build, processors, PerfFreq, interval, samples
  std::vector<Change> quirks;       // filled by the caller (compare_settings)
  std::vector<Change> fingerprint;  // top-level fingerprint keys, as JSON text
  std::vector<Change> registry;     // "KEY\name" -> "REG_DWORD 5"
  std::vector<std::string> objects_only_a, objects_only_b;
  std::vector<std::string> counters_only_a, counters_only_b;  // "Object\Counter"
  std::vector<Change> definitions;  // "Object\Counter type|size|detail level", "Object detail level"
  std::vector<std::string> instances_only_a, instances_only_b;  // "Object(Instance)"
  std::vector<ValueChange> values;
  uint64_t values_compared = 0;  // counter instances present on both sides
  bool same() const;
};

Status compare_captures(Reader& a, Reader& b, const CompareOptions& o, CompareReport& out);

// Settings lists as `perfsim serve --quirk` takes them ("busy:probability=0.1", "costly=off"),
// matched by the name before ':' or '='.
std::vector<Change> compare_settings(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace perfsim::captures
