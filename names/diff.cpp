#include "names/diff.h"

#include <set>

#include "core/utf16.h"

namespace perfsim::names {
namespace {

void values(const std::string& section, const Values& a, const Values& b, std::vector<Difference>& out) {
  for (const auto& [key, v] : a) {
    const auto other = value_of(b, key);
    if (!other || *other != v)
      out.push_back({section, key, std::to_string(v), other ? std::optional(std::to_string(*other)) : std::nullopt});
  }
  for (const auto& [key, v] : b)
    if (!value_of(a, key)) out.push_back({section, key, std::nullopt, std::to_string(v)});
}

std::string count(const Strings& s) { return std::to_string(s.text.size()) + " strings"; }

void strings(const Strings& a, const Strings& b, std::vector<Difference>& out) {
  const std::string section = "PerfStrings_" + a.lang;
  auto ia = a.text.begin(), ib = b.text.begin();
  while (ia != a.text.end() || ib != b.text.end()) {
    if (ib == b.text.end() || (ia != a.text.end() && ia->first < ib->first)) {
      out.push_back({section, std::to_string(ia->first), ia->second, std::nullopt});
      ++ia;
    } else if (ia == a.text.end() || ib->first < ia->first) {
      out.push_back({section, std::to_string(ib->first), std::nullopt, ib->second});
      ++ib;
    } else {
      if (ia->second != ib->second) out.push_back({section, std::to_string(ia->first), ia->second, ib->second});
      ++ia, ++ib;
    }
  }
}

}  // namespace

std::vector<Difference> diff(const NameSet& a, const NameSet& b) {
  std::vector<Difference> out;
  values("Perflib", a.perflib, b.perflib, out);
  for (const ServiceRange& s : a.services) {
    if (const ServiceRange* o = b.service(s.service))
      values("PERF_" + s.service, s.values, o->values, out);
    else
      out.push_back({"PERF_" + s.service, "", "present", std::nullopt});
  }
  for (const ServiceRange& s : b.services)
    if (!a.service(s.service)) out.push_back({"PERF_" + s.service, "", std::nullopt, "present"});
  for (const Strings& s : a.languages) {
    if (const Strings* o = b.find(s.lang))
      strings(s, *o, out);
    else
      out.push_back({"PerfStrings_" + s.lang, "", count(s), std::nullopt});
  }
  for (const Strings& s : b.languages)
    if (!a.find(s.lang)) out.push_back({"PerfStrings_" + s.lang, "", std::nullopt, count(s)});
  return out;
}

std::string to_line(const Difference& d) {
  std::string line = "[" + d.section + "]" + (d.key.empty() ? "" : " " + d.key) + ": ";
  auto quoted = [](const std::string& s) { return "\"" + s + "\""; };
  if (d.a && d.b) return line + quoted(*d.a) + " -> " + quoted(*d.b);
  if (d.a) return line + "only in A: " + quoted(*d.a);
  return line + "only in B: " + quoted(*d.b);
}

}  // namespace perfsim::names
