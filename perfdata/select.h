// Query selection as perflib does it: what a HKEY_PERFORMANCE_DATA value name asks for, and which
// objects the answer holds. Asking for one object returns every object of its provider
// (extra-objects); costly objects come only with `Costly` or when named explicitly; unknown names
// give an empty PERF_DATA_BLOCK.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "perfdata/model.h"

namespace perfsim::perfdata {

// What perflib knows about an object: its provider and whether it is costly.
struct ObjectInfo {
  uint32_t index = 0;
  std::string provider;
  bool costly = false;
};

enum class QueryKind {
  kGlobal,     // "Global" (and "OLD_Global" on Vista+)
  kCostly,     // "Costly"
  kIndexList,  // "238 230 232"
  kForeign,    // "Foreign <computer> [indices]"
  kCounter,    // "Counter 009" / "Counter" (HKPT, HKPN)
  kHelp,       // "Help 009" / "Help"
  kExplain,    // "Explain 009"
  kUnknown,    // anything else: an empty PERF_DATA_BLOCK
};

struct Query {
  QueryKind kind = QueryKind::kUnknown;
  std::vector<uint32_t> indices;  // kIndexList, kForeign
  std::string lang;  // kCounter/kHelp/kExplain: "009" or "CURRENTLANGUAGE" (upper-cased); empty for the bare form
  std::string foreign_host;  // kForeign
};

// A name-table language as Perflib's subkeys and "Counter LLL" name it: three hex digits ("009",
// "804") or "CurrentLanguage" (Vista and later: the table of the user interface language).
bool is_language(std::string_view t);

// Value names are case-insensitive; blanks around and between tokens are tolerated as perflib does.
Query parse_query(std::string_view value_name);

// The object indices the answer holds, in catalog order. Indices not in the catalog are ignored.
std::vector<uint32_t> select_objects(const Query& q, const std::vector<ObjectInfo>& catalog);

// Builds the answer from full samples: header (times, system name) from `base`, objects taken from
// `sources` (e.g. the Global and Costly samples of one tick) in the order of `indices`.
DataBlock assemble(const DataBlock& base, const std::vector<const DataBlock*>& sources,
                   const std::vector<uint32_t>& indices);

}  // namespace perfsim::perfdata
