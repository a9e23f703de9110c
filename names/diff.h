// What differs between two name sets (backups, raw tables or captures): the first thing a support
// engineer compares between a working host and a broken one.
//
// Contract: differences come in a fixed order: [Perflib] values, [PERF_<service>] sections and
// their values (services by name, case ignored), then each language (A's order, then B's extra
// ones) index by index ascending. A language present on one side only is one difference (with its
// string count), not one per string. Texts are compared exactly.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "names/backup.h"

namespace perfsim::names {

struct Difference {
  std::string section;              // "Perflib", "PERF_<service>", "PerfStrings_009"
  std::string key;                  // value name or index ("" for the whole section)
  std::optional<std::string> a, b;  // absent on that side when empty
};

std::vector<Difference> diff(const NameSet& a, const NameSet& b);
// One line: `[PerfStrings_009] 238: "Processor" -> "Prozessor"`, `... only in B: "..."`.
std::string to_line(const Difference& d);

}  // namespace perfsim::names
