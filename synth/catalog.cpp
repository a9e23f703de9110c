#include "synth/catalog.h"

#include <algorithm>
#include <map>
#include <set>

#include "captures/fingerprint.h"
#include "captures/registry_values.h"
#include "captures/system_values.h"
#include "core/utf16.h"
#include "perfdata/names.h"
#include "perfdata/winperf.h"
#include "synth/roles.h"
#include "windows/constants.h"
#include "windows/registry_keys.h"

namespace perfsim::synth {
namespace {

using namespace winperf;

using windows::kPerflibKey;

uint32_t base_type_for(uint32_t type) {
  switch (type) {
    case PERF_RAW_FRACTION:
      return PERF_RAW_BASE;
    case PERF_LARGE_RAW_FRACTION:
      return PERF_LARGE_RAW_BASE;
    case PERF_AVERAGE_TIMER:
    case PERF_AVERAGE_BULK:
      return PERF_AVERAGE_BASE;
    default:
      return 0;
  }
}

// Custom objects, the roles' (the OS's own .NET Framework first: it comes with the OS) and then
// the spec's: indices given in the spec are kept; the others
// follow the highest index in use, in that order (a real host's registration order).
Status add_custom(const Spec& spec, const Profile& profile, Catalog& cat, std::set<uint32_t>& used) {
  std::vector<const ObjectSpec*> customs;
  for (const std::string& role : host_roles(spec, profile)) {
    const std::vector<ObjectSpec>* objects = nullptr;
    if (Status s = role_objects(role, objects); !s.ok()) return s;
    for (const ObjectSpec& o : *objects) customs.push_back(&o);
  }
  for (const ObjectSpec& o : spec.objects) customs.push_back(&o);
  uint32_t next = std::max<uint32_t>(*used.rbegin(), 1846) + 2;
  for (const ObjectSpec* o : customs) {
    used.insert(o->index);
    for (const CounterSpec& c : o->counters) used.insert(c.index);
  }
  used.erase(0);
  auto take = [&](uint32_t wanted) {
    if (wanted) return wanted;
    while (used.count(next)) next += 2;
    used.insert(next);
    return next;
  };
  for (const ObjectSpec* op : customs) {
    const ObjectSpec& o = *op;
    CatalogObject co;
    co.custom = &o;
    co.desc.index = take(o.index);
    co.desc.provider = o.provider;
    co.desc.costly = o.costly;
    co.desc.multi = o.instances.multi;
    for (const CounterSpec& c : o.counters) {
      const uint32_t index = take(c.index);
      co.desc.counters.push_back({index, c.type, size_for(c.type), c.detail, c.scale});
      co.spec_of.push_back(&c);
      if (c.type == PERF_ELAPSED_TIME) co.desc.object_timer = true;
      if (uint32_t b = base_type_for(c.type)) {
        co.desc.counters.push_back({index, b, size_for(b), c.detail, c.scale});
        co.spec_of.push_back(&c);
      }
    }
    for (const CatalogObject& other : cat.objects)
      if (other.desc.index == co.desc.index)
        return Status::InvalidArgument("spec: object \"" + o.name + "\" index " + std::to_string(co.desc.index) +
                                       " is already an object");
    cat.objects.push_back(std::move(co));
  }
  return Status::Ok();
}

using captures::reg_dword;
using captures::reg_sz;

void add_provider_keys(captures::Capture& cap, const Catalog& cat) {
  std::map<std::string, std::pair<uint32_t, uint32_t>> range;  // provider -> min/max title index
  for (const CatalogObject& o : cat.objects) {
    if (o.desc.family != Family::kStandard) continue;  // counter sets: Perflib V2, no service key
    auto& r = range.try_emplace(o.desc.provider, o.desc.index, o.desc.index).first->second;
    for (const CounterDesc& c : o.desc.counters) {
      r.first = std::min({r.first, o.desc.index, c.index});
      r.second = std::max({r.second, o.desc.index, c.index});
    }
  }
  for (const auto& [svc, r] : range) {
    ProviderDesc pd{svc, svc + ".dll", "Open" + svc, "Collect" + svc, "Close" + svc};
    for (const ProviderDesc& b : builtin_providers())
      if (b.service == svc) pd = b;
    const std::string key = "SYSTEM\\CurrentControlSet\\Services\\" + svc + "\\Performance";
    cap.registry.push_back({key, "Library", windows::kRegSz, reg_sz(pd.library)});
    cap.registry.push_back({key, "Open", windows::kRegSz, reg_sz(pd.open)});
    cap.registry.push_back({key, "Collect", windows::kRegSz, reg_sz(pd.collect)});
    cap.registry.push_back({key, "Close", windows::kRegSz, reg_sz(pd.close)});
    cap.registry.push_back({key, "First Counter", windows::kRegDword, reg_dword(r.first)});
    cap.registry.push_back({key, "Last Counter", windows::kRegDword, reg_dword(r.second)});
    cap.registry.push_back({key, "First Help", windows::kRegDword, reg_dword(r.first + 1)});
    cap.registry.push_back({key, "Last Help", windows::kRegDword, reg_dword(r.second + 1)});
    if (svc == "PerfProc" && cat.process_v1_disabled)
      cap.registry.push_back({key, "Disable Performance Counters", windows::kRegDword, reg_dword(1)});
  }
}

std::string fingerprint(const Spec& spec, const Profile& p, const Catalog& cat) {
  captures::Fingerprint fp;
  fp.source = "synth";
  fp.profile = std::string(p.os->name);
  fp.seed = spec.seed;
  fp.perf_freq = p.host.perf_freq;
  fp.more_data = std::string(p.os->more_data);
  fp.pipe_not_available_first = windows::has_quirk(*p.os, "pipe-not-available-first");
  fp.process_v1_disabled = cat.process_v1_disabled;
  fp.counter_type_change =
      p.host.xp_counters ? "User PC PERF_COUNTER_LARGE_RAWCOUNT_HEX" : "User PC PERF_COUNTER_RAWCOUNT";
  fp.large_memory_counters = large_byte_counters(p);
  fp.costly_objects.emplace();
  for (const CatalogObject& o : cat.objects)
    if (o.desc.costly) fp.costly_objects->push_back(o.desc.index);
  return captures::to_json(fp);
}

}  // namespace

Status build_catalog(const Spec& spec, const Profile& profile, Catalog& out) {
  Catalog cat;
  cat.process_v1_disabled = spec.process_v1_disabled.value_or(windows::has_quirk(*profile.os, "process-v1-disabled"));
  std::set<uint32_t> used;
  std::map<uint32_t, std::pair<std::string, std::string>> text;
  for (const NameDef& n : profile_names(profile)) {
    used.insert(n.index);
    text[n.index] = {n.name, n.help};
  }
  for (ObjectDesc& d : builtin_objects(profile)) {
    if (d.index == idx::kThreadDetails && !spec.thread_details) continue;
    if (d.index == idx::kImage && spec.images_per_process == 0) continue;
    cat.objects.push_back({std::move(d), nullptr, {}});
  }
  if (Status s = add_custom(spec, profile, cat, used); !s.ok()) return s;
  for (const CatalogObject& o : cat.objects) {
    if (!o.custom) continue;
    auto put = [&](uint32_t index, const std::string& name, const std::string& help) -> Status {
      auto [it, fresh] = text.try_emplace(index, name, help.empty() ? name : help);
      if (!fresh && it->second.first != name)
        return Status::InvalidArgument("spec: index " + std::to_string(index) + " names both \"" + it->second.first +
                                       "\" and \"" + name + "\"");
      return Status::Ok();
    };
    if (Status s = put(o.desc.index, o.custom->name, o.custom->help); !s.ok()) return s;
    for (size_t i = 0; i < o.desc.counters.size(); ++i)
      if (Status s = put(o.desc.counters[i].index, o.spec_of[i]->name, o.spec_of[i]->help); !s.ok()) return s;
  }
  for (const auto& [index, nh] : text) {
    cat.names.emplace_back(index, nh.first);
    cat.helps.emplace_back(index + 1, nh.second);
    cat.last_counter = std::max(cat.last_counter, index);
  }
  out = std::move(cat);
  return Status::Ok();
}

captures::Capture build_header(const Spec& spec, const Profile& p, const Catalog& cat) {
  captures::Capture cap;
  cap.host.name = host_name(spec);
  cap.host.profile = p.os->name;
  cap.host.product_name = p.os->product_name;
  cap.host.current_version = p.os->current_version;
  cap.host.build_number = p.os->build;
  cap.host.csd_version = p.os->csd_version;
  cap.host.perf_freq = p.host.perf_freq;
  cap.host.processors = spec.processors;
  cap.host.start_time_100ns = spec.start_100ns;
  cap.host.interval_ms = spec.interval_ms;

  std::vector<std::pair<uint32_t, std::string>> counter_pairs{{1, std::to_string(cat.last_counter)}};
  counter_pairs.insert(counter_pairs.end(), cat.names.begin(), cat.names.end());
  captures::NameTable names;
  names.lang = "009";
  names.counter = perfdata::build_names(perfdata::make_names(counter_pairs));
  names.help = perfdata::build_names(perfdata::make_names(cat.helps));

  // The host's system keys (CurrentVersion, Environment, ProductOptions, ComputerName): its row's,
  // with its own processor count and name.
  cap.registry = captures::system_values(*p.os, spec.processors, cap.host.name);
  cap.registry.push_back({kPerflibKey, "Last Counter", windows::kRegDword, reg_dword(cat.last_counter)});
  cap.registry.push_back({kPerflibKey, "Last Help", windows::kRegDword, reg_dword(cat.last_counter + 1)});
  cap.registry.push_back({kPerflibKey, "Version", windows::kRegDword, reg_dword(p.host.perflib_version)});
  cap.registry.push_back({kPerflibKey, "Base Index", windows::kRegDword, reg_dword(p.host.base_index)});
  cap.registry.push_back({std::string(kPerflibKey) + "\\009", "Counter", windows::kRegMultiSz, names.counter});
  cap.registry.push_back({std::string(kPerflibKey) + "\\009", "Help", windows::kRegMultiSz, names.help});
  add_provider_keys(cap, cat);
  cap.names.push_back(std::move(names));

  for (const CatalogObject& o : cat.objects) cap.catalog.push_back({o.desc.index, o.desc.provider, o.desc.costly});
  cap.fingerprint_json = fingerprint(spec, p, cat);
  return cap;
}

}  // namespace perfsim::synth
