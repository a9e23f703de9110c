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
  // kCounter/kHelp/kExplain: the LANGID as three upper-case hex digits ("009" for "9", "009" or
  // "0009"; "804" for "0804") or "CURRENTLANGUAGE"; empty for the bare form
  std::string lang;
  std::string foreign_host;  // kForeign
};

// A name-table language as Perflib's subkeys and "Counter LLL" name it: a LANGID in hex ("009",
// "804"; 1 to 4 digits are read, so "9" and "0804" too) or "CurrentLanguage" (Vista and later: the
// table of the user interface language).
bool is_language(std::string_view t);

// The name Windows gives a language's table (Perflib\<LLL>, "Counter <LLL>", perfc<LLL>.dat) for a
// LANGID written with 1 to 4 hex digits (a backup's "0804", an INI's "004"): three upper-case hex
// digits of the primary language id, but Chinese keeps its sublanguage on every version and
// Portuguese from Vista on (0804 -> 804, 0404 -> 404, 0416 -> 416 and 0816 -> 816 from Vista,
// 016 before; 0C0A -> 00A), and a primary id alone is the sublanguage lodctr takes (004 -> 804,
// 016 -> 416 from Vista). Microsoft, "Retrieving Counter Names and Help Text" and "Adding Counter
// Names and Descriptions to the Registry" (perfdata/README.md). "CurrentLanguage" is kept as
// written; "" when `t` is no language.
std::string perflib_language(std::string_view t, bool vista_or_later);

// Value names are case-insensitive; blanks around and between tokens are tolerated as perflib does.
Query parse_query(std::string_view value_name);

// The object indices the answer holds, in catalog order. Indices not in the catalog are ignored.
std::vector<uint32_t> select_objects(const Query& q, const std::vector<ObjectInfo>& catalog);

// Builds the answer from full samples: header (times, system name) from `base`, objects taken from
// `sources` (e.g. the Global and Costly samples of one tick) in the order of `indices`.
DataBlock assemble(const DataBlock& base, const std::vector<const DataBlock*>& sources,
                   const std::vector<uint32_t>& indices);

}  // namespace perfsim::perfdata
