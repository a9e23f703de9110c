// Counter block layouts: where Windows puts each counter of an object inside its PERF_COUNTER_BLOCK,
// per Windows version, and what says so. The one table: synth lays its objects out by it
// (synth/model.cpp make_state) and the validator checks blocks against it (validate.h,
// ValidateOptions::layout_version).
//
// Why it matters: readers in the field (nmap's msrpcperformance.lua, smb-enum-processes) walk a
// counter block field after field in definition order and ignore CounterOffset, which works
// against Windows because of how Windows packs its blocks. A block laid out otherwise parses
// right for CounterOffset readers and wrong for those.
//
// The rule every row shares: the row's `lead` counter (a 4-byte one) right after the block's
// ByteLength, at offset 4; then the other counters in definition order, each 8-byte counter on an
// 8-byte boundary (a 4-byte hole before it when needed), as a C struct of DWORDs and LONGLONGs is
// laid out. Objects of no row (a spec's own objects) are laid out by the same rule, lead-less.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace perfsim::perfdata {

// Every row whose `source` shows no layout of Windows says so with these words (the layout test
// holds each row to it: a citation, or this marker).
inline constexpr char kNotAudited[] = "not audited";

struct CounterLayout {
  const char* object;     // English name the object is served under
  uint32_t object_index;  // its fixed 009 title index; 0: differs per host (counter sets, extensible providers)
  uint32_t first, last;   // Windows versions the row covers, major * 100 + minor; 0: open end
  uint32_t lead;          // title index of the 4-byte counter Windows puts at offset 4; 0: none
  bool audited;           // `source` shows Windows lays it out so (else: perfsim's rule, no evidence yet)
  const char* source;     // the evidence; a row not audited says kNotAudited and what evidence there is
};

// Every row; windows/README.md "Counter block layouts" prints this table.
const std::vector<CounterLayout>& counter_layouts();
// The row of `object` (by name) covering `version`; nullptr for none.
const CounterLayout* find_counter_layout(std::string_view object, uint32_t version);
// The row of a fixed title index covering `version` (for blocks read without a name table).
const CounterLayout* find_counter_layout(uint32_t object_index, uint32_t version);

struct CounterShape {
  uint32_t index = 0;  // counter title index
  uint32_t size = 0;   // CounterSize
};
// The CounterOffset of each counter (definition order in, same order out) under `row`'s rule
// (nullptr: no lead). The last element is the data's end: offsets.size() == counters.size() + 1.
std::vector<uint32_t> counter_offsets(const CounterLayout* row, const std::vector<CounterShape>& counters);

}  // namespace perfsim::perfdata
