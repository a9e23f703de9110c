#include "names/place.h"

#include <algorithm>
#include <cctype>
#include <fmt/ranges.h>

#include "core/utf16.h"

namespace perfsim::names {
namespace {

std::string folded(std::string s) {
  for (char& c : s) c = char(std::tolower(uint8_t(c)));
  return s;
}

std::string describe(const Wanted& w) {
  return w.object.empty() ? "object \"" + w.name + "\"" : "counter \"" + w.name + "\" of \"" + w.object + "\"";
}

}  // namespace

Status place(const NameSet& set, const std::vector<Wanted>& wanted, std::map<uint32_t, uint32_t>& out) {
  const Strings* english = set.find("009");
  if (!english)
    return Status::InvalidArgument(
        "the names file has no [PerfStrings_009]: objects and counters are placed by "
        "their English names, so the English table is needed");
  std::map<std::string, std::vector<uint32_t>> by_name;  // folded name -> even indices, ascending
  for (const auto& [index, text] : english->text)
    if (index % 2 == 0 && index > 1) by_name[folded(text)].push_back(index);
  std::map<uint32_t, uint32_t> map;
  std::vector<std::string> missing;
  std::map<uint32_t, const Wanted*> objects;  // file index -> the object placed there
  for (const Wanted& w : wanted) {
    if (map.count(w.index)) continue;
    const auto it = by_name.find(folded(w.name));
    if (it == by_name.end()) {
      if (std::find(missing.begin(), missing.end(), describe(w)) == missing.end()) missing.push_back(describe(w));
      continue;
    }
    const std::vector<uint32_t>& at = it->second;
    uint32_t chosen = at.front();
    if (std::find(at.begin(), at.end(), w.index) != at.end()) {
      chosen = w.index;
    } else if (const ServiceRange* r = set.service(w.provider)) {
      const uint32_t lo = value_of(r->values, "First Counter").value_or(0);
      const uint32_t hi = value_of(r->values, "Last Counter").value_or(0);
      for (uint32_t i : at)
        if (i >= lo && i <= hi) {
          chosen = i;
          break;
        }
    }
    map[w.index] = chosen;
    // Two objects at one index would be one object to every collector: refuse, naming both.
    if (w.object.empty()) {
      const auto [there, fresh] = objects.emplace(chosen, &w);
      if (!fresh && there->second->index != w.index)
        return Status::InvalidArgument("objects \"" + there->second->name + "\" and \"" + w.name +
                                       "\" both take index " + std::to_string(chosen) +
                                       " from [PerfStrings_009]; give one of them another name");
    }
  }
  if (!missing.empty()) {
    std::string list =
        fmt::format("{}", fmt::join(missing.begin(), missing.begin() + std::min<size_t>(missing.size(), 20), ", "));
    if (missing.size() > 20) list += ", and " + std::to_string(missing.size() - 20) + " more";
    return Status::InvalidArgument("the names file's [PerfStrings_009] lacks " + std::to_string(missing.size()) +
                                   " English name(s) the host needs: " + list +
                                   ". Add each (its name at an even index, its help at the next odd one) or "
                                   "leave those objects out (another profile, or the spec without them)");
  }
  out = std::move(map);
  return Status::Ok();
}

}  // namespace perfsim::names
