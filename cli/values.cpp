#include "cli/values.h"

#include <fmt/core.h>

#include "core/utf16.h"
#include "perfdata/counters.h"
#include "perfdata/names.h"

namespace perfsim::cli {
namespace {

std::string name_of(const std::map<uint32_t, std::string>* names, uint32_t index) {
  static const std::map<uint32_t, std::string> kNone;
  return perfdata::name_or_index(names ? *names : kNone, index);
}

}  // namespace

Status print_values(const ValuesView& v, nlohmann::json* jobjects, size_t& shown) {
  shown = 0;
  const std::string host = utf16_to_utf8(v.cur->system_name());
  for (const perfdata::Object& obj : v.cur->objects) {
    const std::string oname = name_of(v.names, obj.name_index);
    if (!v.object_filter.empty() && !iequals(v.object_filter, oname) &&
        v.object_filter != std::to_string(obj.name_index))
      continue;
    ++shown;
    std::vector<perfdata::InstanceValues> values;
    if (Status s = perfdata::format_object(v.prev, *v.cur, obj.name_index, values); !s.ok()) return s;
    nlohmann::json jinst = nlohmann::json::array();
    for (const auto& iv : values) {
      const std::string path = iv.name.empty() ? fmt::format("\\\\{}\\{}", host, oname)
                                               : fmt::format("\\\\{}\\{}({})", host, oname, iv.name);
      nlohmann::json jc = nlohmann::json::array();
      for (const auto& cv : iv.counters) {
        const std::string cname = name_of(v.names, cv.name_index);
        const char* tname = perfdata::counter_type_name(cv.type);
        if (jobjects) {
          nlohmann::json j = {{"counter", cname}, {"index", cv.name_index}, {"type", tname}, {"raw", cv.value.raw}};
          if (cv.value.valid())
            j["value"] = cv.value.value;
          else
            j["error"] = cv.value.error;
          jc.push_back(j);
        } else if (cv.value.valid()) {
          fmt::print("{}\\{} = {:.3f}  [{}]\n", path, cname, cv.value.value, tname);
        } else {
          fmt::print("{}\\{} = ({})  raw {}  [{}]\n", path, cname, cv.value.error, cv.value.raw, tname);
        }
      }
      if (jobjects) jinst.push_back({{"path", path}, {"instance", iv.name}, {"counters", jc}});
    }
    if (jobjects) jobjects->push_back({{"object", oname}, {"index", obj.name_index}, {"instances", jinst}});
  }
  return Status::Ok();
}

}  // namespace perfsim::cli
