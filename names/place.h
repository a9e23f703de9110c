// Where a host's objects and counters go when its names come from a file: each is looked up by
// its English name in the file's [PerfStrings_009] and takes the index found there.
//
// Contract: an index whose 009 text is already the wanted name is kept; otherwise among the even
// indices carrying the name (ASCII case ignored, as PDH compares names) the one inside the
// provider's [PERF_<service>] First..Last Counter range wins, else the lowest. Names the file
// lacks are all reported in one InvalidArgument, each as `object "X"` or `counter "Y" of "X"`,
// with how to fix it; nothing is invented. Two objects landing on one index (a name the file has
// once, given to two objects) are refused too.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "names/backup.h"

namespace perfsim::names {

struct Wanted {
  uint32_t index = 0;    // the English (built-in or spec) index
  std::string name;      // its English name
  std::string provider;  // the object's service
  std::string object;    // the object's English name ("" for the object itself)
};

// English index -> the file's index, for every wanted entry (help indices follow: index + 1).
Status place(const NameSet& set, const std::vector<Wanted>& wanted, std::map<uint32_t, uint32_t>& out);

}  // namespace perfsim::names
