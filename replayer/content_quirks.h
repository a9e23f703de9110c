// Content quirks (quirks.md, "Content"): changes to what a host's answers contain, switched on per
// host like every other quirk. They rewrite a copy of the capture before it is prepared for
// serving, so a host with content quirks owns its Recording (a fleet member with none still
// shares the fleet's). Each rewrite keeps the data well-formed where Windows' was: lengths and
// counts are recomputed; only what the quirk is about is odd.
//
//   duplicate-counter-defs  object=N (238): its first counter definition appears twice, adjacent
//   duplicate-instances     object=N (230), count=K (2): the first K instances share one name
//   name-table-gaps         every Counter table gets a duplicate name at an index 20 past the
//                           highest (leaving a gap of unused indices) and Perflib's Last Counter no
//                           longer matches the highest index present
//   counter-type-change     counter=N, type=T: every definition of counter N gets type T; a size
//                           change (4 <-> 8 bytes, PERF_SIZE_LARGE) lays the counter blocks out again
//   perffreq                hz=F: PerfFreq becomes F; PerfTime and the counters kept in timer ticks
//                           are scaled so every formatted value stays what it was
//   localized-partial       lang=L (019), share=S (0.5): a name table for L holding the first S of
//                           009's entries, in English (as real partial translations mix)
#pragma once
#include <cstdint>
#include <string>

#include "captures/capture.h"
#include "core/status.h"

namespace perfsim::replayer {

struct ContentQuirks {
  uint32_t duplicate_counter_object = 0;  // 0: off
  uint32_t duplicate_instances_object = 0;
  uint32_t duplicate_instances_count = 2;
  bool name_table_gaps = false;
  uint32_t type_change_counter = 0;  // 0: off
  uint32_t type_change_type = 0;
  int64_t perf_freq = 0;       // 0: off
  std::string localized_lang;  // empty: off
  double localized_share = 0.5;

  bool any() const {
    return duplicate_counter_object || duplicate_instances_object || name_table_gaps || type_change_counter ||
           perf_freq || !localized_lang.empty();
  }
};

// Rewrites `cap` (every sample and table the quirks touch). InvalidArgument when a parameter
// names nothing the capture has (e.g. an object no sample carries).
Status apply_content_quirks(const ContentQuirks& q, captures::Capture& cap);

}  // namespace perfsim::replayer
