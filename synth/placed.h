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
#include "names/backup.h"
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

// Reads spec.names_file (or names_text) into `set`, its languages named as a host of `profile`'s
// version names them (names::to_perflib_languages). `notes` gets the file's warnings and one line
// naming the languages renamed.
Status load_names_file(const Spec& spec, const Profile& profile, names::NameSet& set, std::vector<std::string>& notes);

// The backup is what the host registered: the V1 objects and counters whose English names its 009
// table lacks are taken out of `catalog` (a custom object's counters with their spec entries), and
// one note lists them ("left out: 8 counters of Terminal Services Session, .NET CLR Memory, ...").
// With spec.strict_names they are InvalidArgument instead, each named. Perflib V2 counter sets are
// never left out: no backup holds their names (apply_names_file places them).
Status leave_out_unnamed(const Spec& spec, const names::NameSet& set, Catalog& catalog,
                         std::vector<std::string>& notes);

// Places the catalog's objects and counters by their English names in `set` and rewrites `header`
// (built by build_header) for the file. InvalidArgument names the file and what it lacks; `notes`
// gets one line saying where the names of Perflib V2 counter sets the file lacks were placed.
Status apply_names_file(const Spec& spec, names::NameSet set, const Catalog& catalog, captures::Capture& header,
                        Renamer& renamer, std::vector<std::string>& notes);

}  // namespace perfsim::synth
