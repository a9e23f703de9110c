// Internal to synth: the host's full object list (profile objects + the spec's custom objects with
// their title indices assigned) and the capture header built from it (host info, registry values,
// 009 name tables, object catalog, fingerprint).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "core/status.h"
#include "synth/profiles.h"
#include "synth/spec.h"

namespace perfsim::synth {

struct CatalogObject {
  ObjectDesc desc;
  const ObjectSpec* custom = nullptr;       // null for profile objects
  std::vector<const CounterSpec*> spec_of;  // custom: per desc counter, its spec (bases: their counter's)
};

struct Catalog {
  std::vector<CatalogObject> objects;                   // Global order, costly ones included
  std::vector<std::pair<uint32_t, std::string>> names;  // index -> name, ascending
  std::vector<std::pair<uint32_t, std::string>> helps;  // index + 1 -> help, ascending
  uint32_t last_counter = 0;
  bool process_v1_disabled = false;
};

Status build_catalog(const Spec& spec, const Profile& profile, Catalog& out);
captures::Capture build_header(const Spec& spec, const Profile& profile, const Catalog& catalog);

}  // namespace perfsim::synth
