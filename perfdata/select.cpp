#include "perfdata/select.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <set>

#include "core/utf16.h"

namespace perfsim::perfdata {
namespace {

bool to_index(const std::string& t, uint32_t& v) {
  if (t.empty() || t.size() > 10 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  unsigned long long x = std::stoull(t);
  if (x > 0xFFFFFFFFull) return false;
  v = uint32_t(x);
  return true;
}

}  // namespace

bool is_language(std::string_view t) {
  if (iequals(t, "CurrentLanguage")) return true;
  return !t.empty() && t.size() <= 4 &&
         std::all_of(t.begin(), t.end(), [](char c) { return std::isxdigit(uint8_t(c)); });
}

std::string perflib_language(std::string_view t, bool vista_or_later) {
  if (!is_language(t)) return "";
  if (iequals(t, "CurrentLanguage")) return std::string(t);
  const uint32_t id = uint32_t(std::stoul(std::string(t), nullptr, 16));
  const uint32_t primary = id & 0x3FF;
  constexpr uint32_t kChinese = 0x04, kPortuguese = 0x16;
  uint32_t name = primary;
  if (primary == kChinese) name = id == primary ? 0x804 : id;
  if (primary == kPortuguese && vista_or_later) name = id == primary ? 0x416 : id;
  return fmt::format("{:03X}", name);
}

Query parse_query(std::string_view name) {
  Query q;
  std::vector<std::string> t = split_nonempty(name, " \t");
  if (t.empty()) return q;
  if (t.size() == 1 && (iequals(t[0], "Global") || iequals(t[0], "OLD_Global"))) {
    q.kind = QueryKind::kGlobal;
    return q;
  }
  if (t.size() == 1 && iequals(t[0], "Costly")) {
    q.kind = QueryKind::kCostly;
    return q;
  }
  for (auto [word, kind] : {std::pair{"Counter", QueryKind::kCounter}, std::pair{"Help", QueryKind::kHelp},
                            std::pair{"Explain", QueryKind::kExplain}}) {
    if (!iequals(t[0], word)) continue;
    if (t.size() == 1) {
      q.kind = kind;
      return q;
    }
    if (t.size() == 2 && is_language(t[1])) {
      q.kind = kind;
      // The LANGID as a number: "9", "009" and "0009" name one table (Microsoft's own sample
      // asks for "Counter %d"; perfdata/README.md).
      q.lang =
          iequals(t[1], "CurrentLanguage") ? "CURRENTLANGUAGE" : fmt::format("{:03X}", std::stoul(t[1], nullptr, 16));
      return q;
    }
    return q;  // "Counter xyz": unknown
  }
  size_t first = 0;
  if (iequals(t[0], "Foreign")) {
    if (t.size() < 2) return q;
    q.foreign_host = t[1];
    first = 2;
  }
  for (size_t i = first; i < t.size(); ++i) {
    uint32_t v = 0;
    if (!to_index(t[i], v)) {
      q.indices.clear();
      q.foreign_host.clear();
      return q;
    }
    q.indices.push_back(v);
  }
  if (first == 2)
    q.kind = QueryKind::kForeign;
  else
    q.kind = q.indices.empty() ? QueryKind::kUnknown : QueryKind::kIndexList;
  return q;
}

std::vector<uint32_t> select_objects(const Query& q, const std::vector<ObjectInfo>& catalog) {
  std::vector<uint32_t> out;
  switch (q.kind) {
    case QueryKind::kGlobal:
      for (const ObjectInfo& o : catalog)
        if (!o.costly) out.push_back(o.index);
      return out;
    case QueryKind::kCostly:
      for (const ObjectInfo& o : catalog)
        if (o.costly) out.push_back(o.index);
      return out;
    case QueryKind::kIndexList:
    case QueryKind::kForeign: {
      std::set<uint32_t> named(q.indices.begin(), q.indices.end());
      std::set<std::string> providers;
      for (const ObjectInfo& o : catalog)
        if (named.count(o.index)) providers.insert(o.provider);
      // A provider returns all of its objects, except costly ones nobody named.
      for (const ObjectInfo& o : catalog)
        if (named.count(o.index) || (providers.count(o.provider) && !o.costly)) out.push_back(o.index);
      return out;
    }
    default:
      return out;
  }
}

DataBlock assemble(const DataBlock& base, const std::vector<const DataBlock*>& sources,
                   const std::vector<uint32_t>& indices) {
  DataBlock d = base;
  d.objects.clear();
  d.trailer.clear();
  for (uint32_t idx : indices) {
    for (const DataBlock* src : sources) {
      if (!src) continue;
      if (const Object* o = src->find(idx)) {
        d.objects.push_back(*o);
        break;
      }
    }
  }
  d.num_object_types = uint32_t(d.objects.size());
  return d;
}

}  // namespace perfsim::perfdata
