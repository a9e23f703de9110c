// Prints a sample's objects, instances and counter values the way typeperf names them
// (\\HOST\Object(instance)\Counter), formatted between two samples when `prev` is given.
// Shared by `perfsim dump` (samples from a capture) and `perfsim query` (samples from a live host).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "perfdata/model.h"

namespace perfsim::cli {

struct ValuesView {
  const perfdata::DataBlock* prev = nullptr;
  const perfdata::DataBlock* cur = nullptr;
  const std::map<uint32_t, std::string>* names = nullptr;  // Counter table (index -> name)
  std::string object_filter;                               // name or index; empty = all
};

// Text to stdout, or appended to `json_objects` (an array) when it is non-null. `shown` counts the
// objects that passed the filter.
Status print_values(const ValuesView& v, nlohmann::json* json_objects, size_t& shown);

}  // namespace perfsim::cli
