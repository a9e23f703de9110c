#include "perfdata/series.h"

#include <fmt/core.h>

#include <string_view>
#include <unordered_map>

#include "core/utf16.h"
#include "perfdata/counters.h"

namespace perfsim::perfdata {
namespace {

Status bad_path(std::string_view text, const std::string& why) {
  return Status::InvalidArgument(
      fmt::format("counter path {}: {}; write it as perfmon does, e.g. "
                  "'\\Processor(_Total)\\% Processor Time' or '\\Process(*)\\% Processor "
                  "Time'",
                  quote_input(text), why));
}

std::string name_of(const std::map<uint32_t, std::string>& names, uint32_t index) {
  auto it = names.find(index);
  return it != names.end() ? it->second : std::to_string(index);
}

bool matches(const std::string& asked, const std::map<uint32_t, std::string>& names, uint32_t index) {
  auto it = names.find(index);
  return (it != names.end() && iequals(asked, it->second)) || asked == std::to_string(index);
}

}  // namespace

Status parse_counter_path(std::string_view text, CounterPath& out) {
  out = {};
  std::string_view rest = text;
  if (rest.substr(0, 2) == "\\\\") {
    const size_t slash = rest.find('\\', 2);
    if (slash == std::string_view::npos) return bad_path(text, "a machine name but no object");
    out.machine = std::string(rest.substr(2, slash - 2));
    rest = rest.substr(slash);
  }
  if (rest.empty() || rest.front() != '\\') return bad_path(text, "it must start with \\ (or \\\\MACHINE\\)");
  // The counter is after the last backslash: object and instance names may hold '(' or '/',
  // counter names do not hold '\'.
  const size_t last = rest.rfind('\\');
  if (last == 0) return bad_path(text, "no counter after the object");
  out.counter = std::string(rest.substr(last + 1));
  std::string_view head = rest.substr(1, last - 1);
  if (!head.empty() && head.back() == ')') {
    const size_t open = head.find('(');
    if (open == std::string_view::npos) return bad_path(text, "')' without '('");
    out.instance = std::string(head.substr(open + 1, head.size() - open - 2));
    out.has_instance = true;
    head = head.substr(0, open);
  }
  out.object = std::string(head);
  if (out.object.empty()) return bad_path(text, "no object name");
  if (out.counter.empty()) return bad_path(text, "no counter name");
  if (out.has_instance && out.instance.empty()) return bad_path(text, "an empty instance '()'");
  return Status::Ok();
}

Status resolve_columns(const std::vector<const DataBlock*>& firsts, const std::map<uint32_t, std::string>& names,
                       const std::vector<CounterPath>& asked, std::vector<SeriesColumn>& out) {
  out.clear();
  for (const CounterPath& p : asked) {
    bool object_seen = false, instance_seen = false, counter_seen = false, none_now = false;
    for (size_t src = 0; src < firsts.size() && !object_seen; ++src) {
      if (!firsts[src]) continue;
      for (const Object& o : firsts[src]->objects) {
        if (!matches(p.object, names, o.name_index)) continue;
        object_seen = true;
        std::vector<InstanceValues> values;
        if (Status s = format_object(nullptr, *firsts[src], o.name_index, values); !s.ok()) return s;
        none_now = values.empty();
        const std::string machine = utf16_to_utf8(firsts[src]->system_name());
        for (const InstanceValues& iv : values) {
          const bool single = iv.name.empty();
          if (single ? p.has_instance : !(p.has_instance && (p.instance == "*" || iequals(p.instance, iv.name))))
            continue;
          instance_seen = true;
          for (const CounterValue& cv : iv.counters) {
            if (!matches(p.counter, names, cv.name_index)) continue;
            counter_seen = true;
            const std::string inst = single ? "" : "(" + iv.name + ")";
            out.push_back({fmt::format("\\\\{}\\{}{}\\{}", machine, name_of(names, o.name_index), inst,
                                       name_of(names, cv.name_index)),
                           src, o.name_index, iv.name, cv.name_index});
          }
        }
        break;
      }
    }
    if (!object_seen) return Status::NotFound(fmt::format("no object '{}' in the first sample", p.object));
    // NumInstances 0 (winperf.h: an object that can have instances and has none now) has no
    // value to read, with an instance named or without.
    if (!instance_seen && none_now)
      return Status::NotFound(
          fmt::format("object '{}' has no instances (NumInstances 0) in the first sample", p.object));
    if (!instance_seen)
      return Status::NotFound(
          p.has_instance ? fmt::format("object '{}' has no instance '{}' in the first sample", p.object, p.instance)
                         : fmt::format("object '{}' has instances: name one, or (*) for all", p.object));
    if (!counter_seen) return Status::NotFound(fmt::format("object '{}' has no counter '{}'", p.object, p.counter));
  }
  return Status::Ok();
}

void series_row(const std::vector<const DataBlock*>& prev, const std::vector<const DataBlock*>& cur,
                const std::vector<SeriesColumn>& columns, std::vector<std::optional<double>>& values,
                const FormatOptions& opt) {
  values.assign(columns.size(), std::nullopt);
  // Each object formatted once per row, whatever number of columns read it, and its instances
  // indexed by name (the first of a name), so `\Process(*)\...` of n instances costs n, not n^2.
  struct Formatted {
    std::vector<InstanceValues> instances;
    std::unordered_map<std::string_view, size_t> by_name;
  };
  std::map<std::pair<size_t, uint32_t>, Formatted> formatted;
  for (size_t c = 0; c < columns.size(); ++c) {
    const SeriesColumn& col = columns[c];
    if (col.source >= cur.size() || !cur[col.source]) continue;
    auto [it, fresh] = formatted.try_emplace({col.source, col.object});
    Formatted& f = it->second;
    if (fresh) {
      const DataBlock* before = col.source < prev.size() ? prev[col.source] : nullptr;
      if (!format_object(before, *cur[col.source], col.object, f.instances, opt).ok()) f.instances.clear();
      for (size_t i = 0; i < f.instances.size(); ++i) f.by_name.try_emplace(f.instances[i].name, i);
    }
    const auto at = f.by_name.find(col.instance);
    if (at == f.by_name.end()) continue;
    for (const CounterValue& cv : f.instances[at->second].counters)
      if (cv.name_index == col.counter && cv.value.valid()) values[c] = cv.value.value;
  }
}

}  // namespace perfsim::perfdata
