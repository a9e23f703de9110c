#include "perfdata/select.h"

#include <algorithm>
#include <cctype>
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
  return t.size() == 3 && std::all_of(t.begin(), t.end(), [](char c) { return std::isxdigit(uint8_t(c)); });
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
      q.lang = t[1];
      for (char& c : q.lang) c = char(std::toupper(uint8_t(c)));
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
