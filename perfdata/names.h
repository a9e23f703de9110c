// Counter/Help/Explain name tables as the REG_MULTI_SZ Windows returns for `Counter 009` etc.:
// UTF-16LE "index\0text\0index\0text\0...\0". parse keeps duplicates, gaps and entry order, and
// build(parse(x)) == x for every table parse accepts (odd tails are kept raw in `trailer`).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"
#include "perfdata/limits.h"

namespace perfsim::perfdata {

struct NameEntry {
  uint32_t index = 0;
  std::u16string index_text;  // as written (normally the decimal index; kept for byte identity)
  std::u16string text;
};

struct NameTable {
  std::vector<NameEntry> entries;  // in table order, duplicates kept
  Bytes trailer;                   // bytes after the last complete pair (normally the final NUL)

  // The first pair of a Counter table is "1" followed by the highest index (Windows' convention).
  uint32_t declared_last() const;
  uint32_t highest_index() const;
  // First text for an index (nullptr when absent).
  const std::u16string* find(uint32_t index) const;
  // All (index, text) pairs as UTF-8 for lookups; later duplicates do not override earlier ones.
  std::map<uint32_t, std::string> to_map() const;
};

// A title index's name in a to_map() lookup, or "#N" when the table has none (how dump, series,
// diff and the admin API show an index the host's table lacks).
std::string name_or_index(const std::map<uint32_t, std::string>& names, uint32_t index);

Status parse_names(ByteView multisz, NameTable& out);
Bytes build_names(const NameTable& table);

// Builds a table from (index, text) pairs the way Windows writes one: entries in the given order,
// each index written in decimal, terminated by an empty string.
NameTable make_names(const std::vector<std::pair<uint32_t, std::string>>& pairs);

// What LodCtr and UnLodCtr keep in step with Perflib's Last Counter: a Counter table's "1" entry
// (its highest index), set to `last` when the table has one.
void set_declared_last(NameTable& t, uint32_t last);
// UnLodCtr's new Perflib Last Counter (or Last Help) after removing a provider's range ending at
// `removed_last`: Microsoft documents "Last Counter = updated if changed", "Last Help = updated if
// changed" (Removing Counter Names and Descriptions from the Registry,
// https://learn.microsoft.com/en-us/windows/win32/perfctrs/removing-counter-names-and-descriptions-from-the-registry):
// it changes only when that range was the top, to `highest_left`, the highest index left below
// it; a range below another provider's leaves `last` as it was (a gap, never reused).
uint32_t last_after_unlodctr(uint32_t last, uint32_t removed_last, uint32_t highest_left);

// A string of a name table longer than its bound (perfdata/limits.h), and where it is.
struct LongName {
  size_t offset = 0;    // byte offset of the string in the table
  std::string message;  // "at byte N: index 238's text 'aaa…' (50000000 characters) is longer than ..."
};
// The table's strings past `bound` (an index or its text), in order: what a Windows host never
// serves (its Counter table is bounded by PDH_MAX_COUNTER_NAME, its Help by perfsim's help bound).
std::vector<LongName> long_names(ByteView table, limits::Bound bound);
// `table` without the pairs long_names finds (index and text together, so the pairs after them
// stay pairs; a final string without a NUL, or without its pair, on its own): every other byte kept
// in order. Returns what was taken out.
std::vector<LongName> drop_long_names(Bytes& table, limits::Bound bound);

// REG_MULTI_SZ <-> strings, for registry values in general.
Bytes build_multisz(const std::vector<std::string>& strings);
std::vector<std::string> parse_multisz(ByteView data);

}  // namespace perfsim::perfdata
