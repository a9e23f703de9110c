// A capture's perf-data samples tick by tick, as the commands that format counter values read them
// (`perfsim series`, `perfsim diff`): each tick's Global and Costly answers parsed, the ticks that
// hold records, and the name table a capture's indices are named by.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "captures/reader.h"
#include "core/status.h"
#include "perfdata/model.h"

namespace perfsim::captures {

// The queries an object may come from, in the order they are searched: Global holds every object
// but the costly ones, Costly those (perflib's selection, perfdata/select.h).
inline constexpr const char* kSampleSources[] = {"Global", "Costly"};
inline constexpr size_t kSampleSourceCount = std::size(kSampleSources);

// One tick's sample of every source: [source] -> parsed block (absent: not recorded this tick, an
// error answer, or a payload that does not parse).
using Samples = std::vector<std::optional<perfdata::DataBlock>>;

Status read_samples(Reader& r, uint32_t tick, Samples& out);
// The blocks of `s`, nullptr where a source has none (what perfdata/series.h takes).
std::vector<const perfdata::DataBlock*> sample_pointers(const Samples& s);
// Distinct ticks in record order (a capture may skip tick numbers).
std::vector<uint32_t> sample_ticks(const Reader& r);
// Title index -> name from the capture's Counter table of `lang` ("009"); empty when it has none.
std::map<uint32_t, std::string> counter_names(const Capture& meta, std::string_view lang);

}  // namespace perfsim::captures
