// What `perfsim inspect` prints about a capture: host, records per query, ticks, time span, sizes
// raw vs file. Computed from the index alone (no payload is decoded), so it is cheap on any size.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "captures/reader.h"

namespace perfsim::captures {

struct QuerySummary {
  std::string value_name;
  uint64_t records = 0;
  uint64_t raw_bytes = 0;
};

struct CaptureSummary {
  HostInfo host;
  size_t registry_values = 0;
  size_t name_tables = 0;
  size_t catalog_objects = 0;
  bool has_fingerprint = false;
  std::vector<QuerySummary> queries;  // first-seen order
  uint64_t records = 0;
  uint64_t ticks = 0;  // distinct ticks holding a record
  uint32_t first_tick = 0, last_tick = 0;
  int64_t first_time_100ns = 0, last_time_100ns = 0;
  double span_seconds = 0;
  uint64_t raw_bytes = 0;  // sum of decoded payload sizes
  uint64_t file_bytes = 0;
  double compression_ratio = 0;  // raw_bytes / file_bytes
  bool indexed = false;          // the index trailer was used (false: rebuilt by scanning)
  std::vector<std::string> warnings;
};

CaptureSummary summarize(const Reader& r);
Status summarize(const std::string& path, CaptureSummary& out);

void to_json(nlohmann::json& j, const CaptureSummary& s);

}  // namespace perfsim::captures
