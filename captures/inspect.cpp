#include "captures/inspect.h"

namespace perfsim::captures {

CaptureSummary summarize(const Reader& r) {
  CaptureSummary s;
  const Capture& m = r.metadata();
  s.host = m.host;
  s.registry_values = m.registry.size();
  s.name_tables = m.names.size();
  s.catalog_objects = m.catalog.size();
  s.has_fingerprint = !m.fingerprint_json.empty();
  for (const std::string& q : r.queries()) s.queries.push_back(QuerySummary{q, 0, 0});
  const auto& recs = r.records();
  s.records = recs.size();
  for (size_t i = 0; i < recs.size(); ++i) {
    s.queries[recs[i].query].records++;
    s.queries[recs[i].query].raw_bytes += recs[i].raw_size;
    s.raw_bytes += recs[i].raw_size;
    if (i == 0 || recs[i].tick != recs[i - 1].tick) s.ticks++;
  }
  if (!recs.empty()) {
    s.first_tick = recs.front().tick;
    s.last_tick = recs.back().tick;
    s.first_time_100ns = recs.front().time_100ns;
    s.last_time_100ns = recs.back().time_100ns;
    s.span_seconds = double(s.last_time_100ns - s.first_time_100ns) / 1e7;
  }
  s.file_bytes = r.file_size();
  s.compression_ratio = s.file_bytes ? double(s.raw_bytes) / double(s.file_bytes) : 0;
  s.indexed = r.used_index();
  s.warnings = r.warnings();
  return s;
}

Status summarize(const std::string& path, CaptureSummary& out) {
  std::unique_ptr<Reader> r;
  if (Status st = Reader::open(path, r); !st.ok()) return st;
  out = summarize(*r);
  return Status::Ok();
}

void to_json(nlohmann::json& j, const CaptureSummary& s) {
  nlohmann::json queries = nlohmann::json::array();
  for (const QuerySummary& q : s.queries)
    queries.push_back({{"value_name", q.value_name}, {"records", q.records}, {"raw_bytes", q.raw_bytes}});
  j = {
      {"host",
       {{"name", s.host.name},
        {"profile", s.host.profile},
        {"product_name", s.host.product_name},
        {"current_version", s.host.current_version},
        {"build_number", s.host.build_number},
        {"csd_version", s.host.csd_version},
        {"perf_freq", s.host.perf_freq},
        {"processors", s.host.processors},
        {"start_time_100ns", s.host.start_time_100ns},
        {"interval_ms", s.host.interval_ms}}},
      {"registry_values", s.registry_values},
      {"name_tables", s.name_tables},
      {"catalog_objects", s.catalog_objects},
      {"has_fingerprint", s.has_fingerprint},
      {"queries", queries},
      {"records", s.records},
      {"ticks", s.ticks},
      {"first_tick", s.first_tick},
      {"last_tick", s.last_tick},
      {"first_time_100ns", s.first_time_100ns},
      {"last_time_100ns", s.last_time_100ns},
      {"span_seconds", s.span_seconds},
      {"raw_bytes", s.raw_bytes},
      {"file_bytes", s.file_bytes},
      {"compression_ratio", s.compression_ratio},
      {"indexed", s.indexed},
      {"warnings", s.warnings},
  };
}

}  // namespace perfsim::captures
