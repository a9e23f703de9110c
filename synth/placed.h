// Internal to synth: a host whose name tables come from a file (Spec::names_file, names/backup.h).
// The model keeps working with the English indices; the header and every answer are moved to the
// indices the file gives the English names (names/place.h) on the way out.
//
// Contract: without a names file nothing changes (identity). With one, the header's name tables,
// Perflib\LLL values, Perflib and Services values, catalog and fingerprint are the file's / moved,
// and Renamer moves a DataBlock's title indices (objects, counters, helps, instance parents, the
// default object) there and back, so the model's objects are untouched between ticks.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "perfdata/model.h"
#include "synth/catalog.h"
#include "synth/spec.h"

namespace perfsim::synth {

class Renamer {
 public:
  bool empty() const { return map_.empty(); }
  void set(std::unordered_map<uint32_t, uint32_t> map) { map_ = std::move(map); }
  uint32_t to(uint32_t index) const;  // a help index (odd, its name's + 1) follows its name
  void apply(perfdata::DataBlock& block);
  void undo(perfdata::DataBlock& block);

 private:
  template <typename F>
  void each(perfdata::DataBlock& block, F f);
  std::unordered_map<uint32_t, uint32_t> map_;
  std::vector<uint32_t> saved_;
};

// Reads spec.names_file, places the catalog's objects and counters by their English names and
// rewrites `header` (built by build_header) for the file. InvalidArgument names the file and what
// it lacks; `notes` gets the file's warnings (lines skipped) and one line saying where the names
// of Perflib V2 counter sets the file lacks were placed.
Status apply_names_file(const Spec& spec, const Catalog& catalog, captures::Capture& header, Renamer& renamer,
                        std::vector<std::string>& notes);

}  // namespace perfsim::synth
