// Synthetic hosts: turns a Spec into a perfsim capture, tick by tick.
//
// Contract:
//  - Deterministic: the same Spec (seed included) gives byte-identical records, registry values,
//    name tables and fingerprint, on every platform.
//  - Each tick yields two QueryRecords: "Global" (every non-costly object) and "Costly" (Process
//    Address Space, Image, Thread Details, costly custom objects). Payloads are PERF_DATA_BLOCKs
//    built with perfdata::build; every object and counter title index is in the 009 name tables
//    (with Spec::names_file, the file's: indices are the ones its 009 table gives the English names).
//  - Counters behave as on Windows: cumulative counters only grow for as long as their instance
//    lives (32-bit ones wrap modulo 2^32, as on Windows); processor and process times advance with
//    PerfTime100nSec so % values land in [0, 100] (per processor); a thread's parent is its Process
//    instance; processes come and go (churn) with IDs never reused within a capture.
//  - Memory: Synthesizer holds one tick of state, never the past records; a caller streams them.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "synth/spec.h"

namespace perfsim::synth {

class Synthesizer {
 public:
  static Status create(const Spec& spec, std::unique_ptr<Synthesizer>& out);
  ~Synthesizer();

  // Host info, registry, name tables, catalog and fingerprint: the capture without records.
  const captures::Capture& header() const;
  // What the user should know about how the host was built, one line each: lines of the names
  // file skipped, counter sets placed after the file's indices (synth/README.md, Names files).
  const std::vector<std::string>& notes() const;
  uint32_t tick_count() const;
  bool done() const;
  // Appends the next tick's records (Global, then Costly) to `out`.
  Status next(std::vector<captures::QueryRecord>& out);

 private:
  struct Impl;
  explicit Synthesizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

using RecordSink = std::function<Status(captures::QueryRecord&&)>;

// Streams every record to `sink` (stops at the first error it returns); `header` gets the rest.
Status synthesize(const Spec& spec, captures::Capture& header, const RecordSink& sink);
// Convenience: the whole capture in memory (fine for short captures; stream long ones).
Status synthesize(const Spec& spec, captures::Capture& out);

}  // namespace perfsim::synth
