#include "captures/compare.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "captures/fingerprint.h"
#include "captures/registry_values.h"
#include "captures/samples.h"
#include "core/json.h"
#include "core/utf16.h"
#include "perfdata/counters.h"
#include "perfdata/names.h"
#include "windows/constants.h"

namespace perfsim::captures {
namespace {

// Registry keys and names compare without regard to case, as the registry does.
std::string fold(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void add_if_different(std::vector<Change>& out, std::string what, const std::optional<std::string>& a,
                      const std::optional<std::string>& b) {
  if (a != b) out.push_back({std::move(what), a, b});
}

// ---- host, fingerprint, registry ----

void compare_host(const Capture& a, size_t ticks_a, const Capture& b, size_t ticks_b, std::vector<Change>& out) {
  const auto row = [&](const char* what, auto get) { add_if_different(out, what, get(a.host), get(b.host)); };
  row("name", [](const HostInfo& h) { return h.name; });
  row("profile", [](const HostInfo& h) { return h.profile; });
  row("product", [](const HostInfo& h) { return h.product_name; });
  row("version", [](const HostInfo& h) { return h.current_version; });
  row("build", [](const HostInfo& h) { return h.build_number; });
  row("service pack", [](const HostInfo& h) { return h.csd_version; });
  row("processors", [](const HostInfo& h) { return std::to_string(h.processors); });
  row("perf freq", [](const HostInfo& h) { return std::to_string(h.perf_freq); });
  row("interval ms", [](const HostInfo& h) { return std::to_string(h.interval_ms); });
  add_if_different(out, "samples", std::to_string(ticks_a), std::to_string(ticks_b));
}

// Top-level keys of the fingerprint as fingerprint.h writes it back (canonical), each as JSON.
std::map<std::string, std::string> fingerprint_keys(const std::string& text) {
  std::map<std::string, std::string> out;
  Fingerprint fp;
  if (!from_json(text, fp).ok()) {
    out["(unreadable)"] = text;
    return out;
  }
  const nlohmann::json j = parse_json_or_discarded(to_json(fp));
  if (j.is_object())
    for (const auto& [k, v] : j.items()) out[k] = v.dump();
  return out;
}

template <class Map>
void compare_maps(const Map& a, const Map& b, std::vector<Change>& out) {
  std::set<std::string> keys;
  for (const auto& kv : a) keys.insert(kv.first);
  for (const auto& kv : b) keys.insert(kv.first);
  for (const std::string& k : keys) {
    std::optional<std::string> va, vb;
    std::string what = k;
    if (auto it = a.find(k); it != a.end()) va = it->second.second, what = it->second.first;
    if (auto it = b.find(k); it != b.end()) vb = it->second.second, what = va ? what : it->second.first;
    add_if_different(out, what, va, vb);
  }
}

std::string hex_bytes(const Bytes& d, size_t n) {
  std::string s;
  for (size_t i = 0; i < std::min(n, d.size()); ++i) s += fmt::format("{}{:02x}", i ? " " : "", d[i]);
  return d.size() > n ? s + " ..." : s;
}

// A value as a person reads it; equal texts mean equal type and bytes (sizes and a digest-free
// prefix are shown where the whole would not fit a line, so the bytes are compared separately).
std::string value_text(const RegistryValue& v) {
  switch (v.type) {
    case windows::kRegSz:
    case windows::kRegExpandSz:
      return fmt::format("{} \"{}\"", v.type == windows::kRegSz ? "REG_SZ" : "REG_EXPAND_SZ", reg_sz_text(v.data));
    case windows::kRegDword:
      if (v.data.size() == 4) return fmt::format("REG_DWORD {}", load_le32(v.data.data()));
      break;
    case windows::kRegQword:
      if (v.data.size() == 8) return fmt::format("REG_QWORD {}", load_le64(v.data.data()));
      break;
    case windows::kRegMultiSz: {
      const std::u16string all = load_utf16le(v.data.data(), v.data.size() / 2);
      std::vector<std::string> items;
      for (size_t p = 0; p < all.size();) {
        const size_t end = std::min(all.find(u'\0', p), all.size());
        if (end == p) break;
        items.push_back(utf16_to_utf8(std::u16string_view(all).substr(p, end - p)));
        p = end + 1;
      }
      std::string s = fmt::format("REG_MULTI_SZ {} strings, {} bytes:", items.size(), v.data.size());
      for (size_t i = 0; i < items.size() && s.size() < 80; ++i) s += " \"" + items[i] + "\"";
      return s;
    }
    default:
      break;
  }
  return fmt::format("type {} {} bytes: {}", v.type, v.data.size(), hex_bytes(v.data, 16));
}

void compare_registry(const Capture& a, const Capture& b, std::vector<Change>& out) {
  using Values = std::map<std::string, std::pair<std::string, std::string>>;  // folded -> (shown, text)
  using Raw = std::map<std::string, const RegistryValue*>;
  const auto collect = [](const Capture& c, Values& v, Raw& raw) {
    for (const RegistryValue& r : c.registry) {
      const std::string shown = r.key + "\\" + r.name;
      v[fold(shown)] = {shown, value_text(r)};
      raw[fold(shown)] = &r;
    }
  };
  Values va, vb;
  Raw ra, rb;
  collect(a, va, ra);
  collect(b, vb, rb);
  // Values whose shown texts agree but whose bytes differ (a long REG_MULTI_SZ) still differ.
  for (auto& [k, v] : va)
    if (auto it = rb.find(k); it != rb.end() && (ra[k]->type != it->second->type || ra[k]->data != it->second->data) &&
                              vb[k].second == v.second)
      v.second += " (bytes differ)";
  compare_maps(va, vb, out);
}

// ---- structure: objects, counters, instances of one sample, by name ----

struct ObjectShape {
  size_t source = 0;
  uint32_t index = 0;
  uint32_t detail = 0;
  std::vector<std::string> keys;                  // by counter_index: "Name" or "Name #2"
  std::map<std::string, size_t> by_key;           // key -> counter_index
  std::vector<const perfdata::CounterDef*> defs;  // by counter_index (valid while the sample lives)
  std::set<std::string> instances;                // PDH names; empty for a single-instance object
  bool multi = false;
};
using Shape = std::map<std::string, ObjectShape>;

std::string detail_text(uint32_t level) {
  switch (level) {
    case winperf::PERF_DETAIL_NOVICE:
      return "novice";
    case winperf::PERF_DETAIL_ADVANCED:
      return "advanced";
    case winperf::PERF_DETAIL_EXPERT:
      return "expert";
    case winperf::PERF_DETAIL_WIZARD:
      return "wizard";
    default:
      return std::to_string(level);
  }
}

Shape shape_of(const Samples& s, const std::map<uint32_t, std::string>& names) {
  Shape shape;
  for (size_t src = 0; src < s.size(); ++src) {
    if (!s[src]) continue;
    for (const perfdata::Object& o : s[src]->objects) {
      auto [it, fresh] = shape.try_emplace(perfdata::name_or_index(names, o.name_index));
      if (!fresh) continue;  // Global's copy first, as series resolves paths
      ObjectShape& os = it->second;
      os.source = src;
      os.index = o.name_index;
      os.detail = o.detail_level;
      os.multi = o.multi_instance();
      std::map<std::string, int> seen;
      for (const perfdata::CounterDef& d : o.counters) {
        const std::string base = perfdata::name_or_index(names, d.name_index);
        const int n = ++seen[base];
        std::string key = n == 1 ? base : fmt::format("{} #{}", base, n);
        os.by_key.emplace(key, os.keys.size());
        os.keys.push_back(std::move(key));
        os.defs.push_back(&d);
      }
      std::vector<perfdata::InstanceValues> values;
      if (os.multi && perfdata::format_object(nullptr, *s[src], o.name_index, values).ok())
        for (const auto& iv : values) os.instances.insert(iv.name);
    }
  }
  return shape;
}

// Keys of `a` (a set, or a map's keys) that `b` lacks, each after `prefix`.
const std::string& key_of(const std::string& s) { return s; }
template <class V>
const std::string& key_of(const std::pair<const std::string, V>& kv) {
  return kv.first;
}
template <class Set>
void only_in(const Set& a, const Set& b, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& x : a)
    if (!b.count(key_of(x))) out.push_back(prefix + key_of(x));
}

void compare_shapes(const Shape& a, const Shape& b, CompareReport& r) {
  for (const auto& [name, oa] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      r.objects_only_a.push_back(name);
      continue;
    }
    const ObjectShape& ob = it->second;
    add_if_different(r.definitions, name + " detail level", detail_text(oa.detail), detail_text(ob.detail));
    if (oa.multi != ob.multi)
      r.definitions.push_back({name + " instances", oa.multi ? "multi-instance" : "single-instance",
                               ob.multi ? "multi-instance" : "single-instance"});
    only_in(oa.by_key, ob.by_key, name + "\\", r.counters_only_a);
    only_in(ob.by_key, oa.by_key, name + "\\", r.counters_only_b);
    for (size_t i = 0; i < oa.keys.size(); ++i) {
      auto j = ob.by_key.find(oa.keys[i]);
      if (j == ob.by_key.end()) continue;
      const perfdata::CounterDef& da = *oa.defs[i];
      const perfdata::CounterDef& db = *ob.defs[j->second];
      const std::string path = name + "\\" + oa.keys[i];
      add_if_different(r.definitions, path + " type", perfdata::counter_type_name(da.type),
                       perfdata::counter_type_name(db.type));
      add_if_different(r.definitions, path + " size", std::to_string(da.size), std::to_string(db.size));
      add_if_different(r.definitions, path + " detail level", detail_text(da.detail_level),
                       detail_text(db.detail_level));
    }
    only_in(oa.instances, ob.instances, name + "(", r.instances_only_a);
    only_in(ob.instances, oa.instances, name + "(", r.instances_only_b);
  }
  for (const auto& [name, ob] : b)
    if (!a.count(name)) r.objects_only_b.push_back(name);
  for (auto* v : {&r.instances_only_a, &r.instances_only_b})
    for (std::string& s : *v) s += ")";
}

// ---- values: per object, instance and counter, Stats over the intervals read ----

struct Cell {
  bool present = false;  // the counter has a value slot (not a base type) in some interval
  Stats stats;
};
// object name -> instance name -> cells by counter_index
using Acc = std::map<std::string, std::unordered_map<std::string, std::vector<Cell>>>;

// Adds the interval prev -> cur (prev: nullptr per source for the first) of every object of `shape`.
void accumulate(const Shape& shape, const std::vector<const perfdata::DataBlock*>& prev,
                const std::vector<const perfdata::DataBlock*>& cur, bool raw, Acc& acc) {
  std::vector<perfdata::InstanceValues> values;
  for (const auto& [name, os] : shape) {
    if (os.source >= cur.size() || !cur[os.source]) continue;
    const perfdata::DataBlock* before = os.source < prev.size() ? prev[os.source] : nullptr;
    if (!perfdata::format_object(before, *cur[os.source], os.index, values).ok()) continue;
    auto& instances = acc[name];
    for (const perfdata::InstanceValues& iv : values) {
      std::vector<Cell>& cells = instances[iv.name];
      if (cells.size() < os.keys.size()) cells.resize(os.keys.size());
      for (const perfdata::CounterValue& cv : iv.counters) {
        if (cv.counter_index >= cells.size()) continue;  // a definition added after the shape's sample
        Cell& c = cells[cv.counter_index];
        c.present = true;
        if (raw)
          c.stats.add(static_cast<double>(cv.value.raw));
        else if (cv.value.valid())
          c.stats.add(cv.value.value);
      }
    }
  }
}

void compare_values(const Shape& sa, const Acc& aa, const Shape& sb, const Acc& ab, CompareReport& r) {
  for (const auto& [name, insts_a] : aa) {
    auto ob = sb.find(name);
    auto ib = ab.find(name);
    if (ob == sb.end() || ib == ab.end()) continue;
    const ObjectShape& oa = sa.at(name);
    std::vector<std::string> inst_names;
    for (const auto& kv : insts_a) inst_names.push_back(kv.first);
    std::sort(inst_names.begin(), inst_names.end());
    for (const std::string& inst : inst_names) {
      auto cb = ib->second.find(inst);
      if (cb == ib->second.end()) continue;
      const std::vector<Cell>& ca = insts_a.at(inst);
      for (size_t i = 0; i < ca.size(); ++i) {
        auto j = ob->second.by_key.find(oa.keys[i]);
        if (!ca[i].present || j == ob->second.by_key.end() || j->second >= cb->second.size()) continue;
        const Cell& other = cb->second[j->second];
        if (!other.present) continue;
        ++r.values_compared;
        if (ca[i].stats == other.stats) continue;
        ValueChange v;
        v.path = name + (inst.empty() ? "" : "(" + inst + ")") + "\\" + oa.keys[i];
        v.sa = ca[i].stats;
        v.sb = other.stats;
        if (v.sa.n) v.a = v.sa.min;
        if (v.sb.n) v.b = v.sb.min;
        r.values.push_back(std::move(v));
      }
    }
  }
}

// One capture's side: its names, the sample its structure is read from, and its values.
struct Side {
  std::map<uint32_t, std::string> names;
  std::vector<uint32_t> ticks;
  Samples shape_sample;
  Shape shape;
  Acc acc;
};

bool has_any(const Samples& s) {
  return std::any_of(s.begin(), s.end(), [](const auto& b) { return b.has_value(); });
}

Status no_sample(const char* which, uint32_t tick, const std::vector<uint32_t>& ticks) {
  return Status::NotFound(ticks.empty()
                              ? fmt::format("{} holds no samples", which)
                              : fmt::format("{} has no Global or Costly sample at tick {} (its ticks: {} to {})", which,
                                            tick, ticks.front(), ticks.back()));
}

Status read_side(Reader& r, const char* which, const CompareOptions& o, Side& s) {
  s.names = counter_names(r.metadata(), o.lang);
  s.ticks = sample_ticks(r);
  const uint32_t first = s.ticks.empty() ? 0 : s.ticks.front();
  const uint32_t at = o.summary ? first : o.sample;
  if (s.ticks.empty()) return no_sample(which, at, s.ticks);
  if (Status st = read_samples(r, at, s.shape_sample); !st.ok()) return st;
  if (!has_any(s.shape_sample)) return no_sample(which, at, s.ticks);
  s.shape = shape_of(s.shape_sample, s.names);
  if (!o.summary) {
    Samples before;
    const std::vector<const perfdata::DataBlock*> none(kSampleSourceCount, nullptr);
    if (o.sample > 0) {
      if (Status st = read_samples(r, o.sample - 1, before); !st.ok()) return st;
    }
    accumulate(s.shape, o.sample > 0 ? sample_pointers(before) : none, sample_pointers(s.shape_sample), o.sample == 0,
               s.acc);
    return Status::Ok();
  }
  // Summary: every interval, two ticks held at a time.
  Samples prev, cur;
  for (size_t i = 0; i < s.ticks.size(); ++i) {
    if (Status st = read_samples(r, s.ticks[i], cur); !st.ok())
      return Status::Corruption(fmt::format("{} tick {}: {}", which, s.ticks[i], st.message()));
    accumulate(s.shape, i ? sample_pointers(prev) : std::vector<const perfdata::DataBlock*>(kSampleSourceCount),
               sample_pointers(cur), false, s.acc);
    std::swap(prev, cur);
  }
  return Status::Ok();
}

}  // namespace

void Stats::add(double v) {
  min = n ? std::min(min, v) : v;
  max = n ? std::max(max, v) : v;
  sum += v;
  ++n;
}

bool CompareReport::same() const {
  return host.empty() && quirks.empty() && fingerprint.empty() && registry.empty() && objects_only_a.empty() &&
         objects_only_b.empty() && counters_only_a.empty() && counters_only_b.empty() && definitions.empty() &&
         instances_only_a.empty() && instances_only_b.empty() && values.empty();
}

std::vector<Change> compare_settings(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  using Map = std::map<std::string, std::pair<std::string, std::string>>;
  const auto by_name = [](const std::vector<std::string>& v) {
    Map m;
    for (const std::string& s : v) {
      const std::string name = s.substr(0, s.find_first_of(":="));
      m[name] = {name, s};
    }
    return m;
  };
  std::vector<Change> out;
  compare_maps(by_name(a), by_name(b), out);
  return out;
}

Status compare_captures(Reader& a, Reader& b, const CompareOptions& o, CompareReport& out) {
  out = {};
  Side sa, sb;
  if (Status s = read_side(a, "A", o, sa); !s.ok()) return s;
  if (Status s = read_side(b, "B", o, sb); !s.ok()) return s;
  compare_host(a.metadata(), sa.ticks.size(), b.metadata(), sb.ticks.size(), out.host);
  {
    std::map<std::string, std::pair<std::string, std::string>> fa, fb;
    for (auto& [k, v] : fingerprint_keys(a.metadata().fingerprint_json)) fa[k] = {k, v};
    for (auto& [k, v] : fingerprint_keys(b.metadata().fingerprint_json)) fb[k] = {k, v};
    compare_maps(fa, fb, out.fingerprint);
  }
  compare_registry(a.metadata(), b.metadata(), out.registry);
  compare_shapes(sa.shape, sb.shape, out);
  compare_values(sa.shape, sa.acc, sb.shape, sb.acc, out);
  return Status::Ok();
}

}  // namespace perfsim::captures
