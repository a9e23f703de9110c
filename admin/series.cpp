#include "admin/series.h"

#include <map>

#include "core/utf16.h"
#include "perfdata/counters.h"
#include "perfdata/model.h"
#include "perfdata/names.h"

namespace perfsim::admin {
namespace {

using replayer::PerfKey;

std::map<uint32_t, std::string> counter_names(const replayer::SimulatedHost& host) {
  for (const captures::NameTable& t : host.capture().names) {
    perfdata::NameTable nt;
    if (iequals(t.lang, "009") && perfdata::parse_names(t.counter, nt).ok()) return nt.to_map();
  }
  return {};
}

bool names_match(const std::string& asked, const std::map<uint32_t, std::string>& names, uint32_t index) {
  return iequals(asked, perfdata::name_or_index(names, index)) || asked == std::to_string(index);
}

// The recorded sample answering `query` at timeline position `tick`; false when there is none.
bool sample_at(const replayer::SimulatedHost& host, const char* query, uint32_t tick, perfdata::DataBlock& out) {
  const replayer::ValueContent c = host.content(PerfKey::kData, query, tick);
  if (c.status != 0 || c.data.size() == 0) return false;
  return perfdata::parse(c.data.view(), out).ok();
}

}  // namespace

Status host_counters(const replayer::SimulatedHost& host, nlohmann::json& out) {
  const auto names = counter_names(host);
  nlohmann::json objects = nlohmann::json::array();
  for (const char* query : {"Global", "Costly"}) {
    perfdata::DataBlock b;
    if (!sample_at(host, query, 0, b)) continue;
    std::vector<perfdata::InstanceValues> first;
    for (const perfdata::Object& o : b.objects) {
      std::vector<perfdata::InstanceValues> values;
      if (!perfdata::format_object(nullptr, b, o.name_index, values).ok()) continue;
      nlohmann::json instances = nlohmann::json::array(), counters = nlohmann::json::array();
      for (const perfdata::InstanceValues& iv : values) instances.push_back(iv.name);
      if (!values.empty())
        for (const perfdata::CounterValue& cv : values.front().counters)
          counters.push_back(perfdata::name_or_index(names, cv.name_index));
      objects.push_back({{"object", perfdata::name_or_index(names, o.name_index)},
                         {"index", o.name_index},
                         {"query", query},
                         {"instances", instances},
                         {"counters", counters}});
    }
  }
  out = {{"host", host.name()}, {"ticks", host.ticks()}, {"objects", objects}};
  return Status::Ok();
}

Status host_series(const replayer::SimulatedHost& host, const SeriesRequest& req, nlohmann::json& out) {
  const auto names = counter_names(host);
  // Which query carries the object, from the first sample.
  const char* query = nullptr;
  uint32_t object_index = 0;
  for (const char* q : {"Global", "Costly"}) {
    perfdata::DataBlock b;
    if (query || !sample_at(host, q, 0, b)) continue;
    for (const perfdata::Object& o : b.objects)
      if (names_match(req.object, names, o.name_index)) {
        query = q;
        object_index = o.name_index;
        break;
      }
  }
  if (!query) return Status::NotFound("host " + host.name() + " has no object '" + req.object + "'");
  const uint32_t n = host.ticks();
  const uint32_t points = std::max<uint32_t>(1, std::min(n, req.max_points));
  const std::vector<int64_t>& offsets = host.recording().offsets();
  nlohmann::json jpoints = nlohmann::json::array();
  std::string type;
  bool counter_seen = false, instance_seen = false;
  for (uint32_t i = 0; i < points; ++i) {
    const uint32_t tick = points == n ? i : uint32_t(uint64_t(i) * (n - 1) / std::max<uint32_t>(points - 1, 1));
    perfdata::DataBlock cur, prev;
    nlohmann::json p = {{"tick", tick}, {"t", double(offsets[tick]) / 1e7}};
    const bool have_prev = tick > 0 && sample_at(host, query, tick - 1, prev);
    std::vector<perfdata::InstanceValues> values;
    if (!sample_at(host, query, tick, cur) ||
        !perfdata::format_object(have_prev ? &prev : nullptr, cur, object_index, values).ok()) {
      p["error"] = "no sample";
      jpoints.push_back(std::move(p));
      continue;
    }
    bool found = false;
    for (const perfdata::InstanceValues& iv : values) {
      if (!iequals(iv.name, req.instance)) continue;
      instance_seen = true;
      for (const perfdata::CounterValue& cv : iv.counters) {
        if (!names_match(req.counter, names, cv.name_index)) continue;
        counter_seen = found = true;
        type = perfdata::counter_type_name(cv.type);
        if (cv.value.valid())
          p["value"] = cv.value.value;
        else
          p["error"] = cv.value.error;
        break;
      }
      break;
    }
    if (!found && !p.contains("error")) p["error"] = "not in this sample";
    jpoints.push_back(std::move(p));
  }
  if (!instance_seen)
    return Status::NotFound("object '" + req.object + "' of host " + host.name() + " has no instance '" + req.instance +
                            "' (a single-instance object takes instance=\"\")");
  if (!counter_seen)
    return Status::NotFound("object '" + req.object + "' of host " + host.name() + " has no counter '" + req.counter +
                            "'");
  out = {{"host", host.name()},
         {"object", perfdata::name_or_index(names, object_index)},
         {"instance", req.instance},
         {"counter", req.counter},
         {"type", type},
         {"points", jpoints}};
  return Status::Ok();
}

}  // namespace perfsim::admin
