#include "captures/samples.h"

#include "core/utf16.h"
#include "perfdata/names.h"

namespace perfsim::captures {

Status read_samples(Reader& r, uint32_t tick, Samples& out) {
  out.assign(kSampleSourceCount, std::nullopt);
  std::vector<QueryRecord> recs;
  if (Status s = r.read_tick(tick, recs); !s.ok()) return s;
  for (const QueryRecord& q : recs)
    for (size_t i = 0; i < kSampleSourceCount; ++i)
      if (q.status == 0 && iequals(q.value_name, kSampleSources[i]) && !out[i]) {
        perfdata::DataBlock b;
        if (perfdata::parse(q.payload, b).ok()) out[i] = std::move(b);
      }
  return Status::Ok();
}

std::vector<const perfdata::DataBlock*> sample_pointers(const Samples& s) {
  std::vector<const perfdata::DataBlock*> v;
  for (const auto& b : s) v.push_back(b ? &*b : nullptr);
  return v;
}

std::vector<uint32_t> sample_ticks(const Reader& r) {
  std::vector<uint32_t> ticks;
  for (const RecordInfo& ri : r.records())
    if (ticks.empty() || ticks.back() != ri.tick) ticks.push_back(ri.tick);
  return ticks;
}

std::map<uint32_t, std::string> counter_names(const Capture& meta, std::string_view lang) {
  std::map<uint32_t, std::string> names;
  for (const NameTable& t : meta.names) {
    perfdata::NameTable nt;
    if (iequals(t.lang, lang) && perfdata::parse_names(t.counter, nt).ok()) names = nt.to_map();
  }
  return names;
}

}  // namespace perfsim::captures
