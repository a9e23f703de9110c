// Providers: the collect spec is turned into a synth spec (symbols -> lodctr's title indices) and
// synth::ObjectSource produces the objects tick by tick; they are spliced into the recorded answers.
#include "lodctr/providers.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "core/utf16.h"
#include "lodctr/install.h"
#include "perfdata/model.h"
#include "perfdata/select.h"
#include "perfdata/winperf.h"
#include "synth/objects.h"
#include "windows/constants.h"

namespace perfsim::lodctr {
namespace {

using nlohmann::json;

Status fail(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("collect spec: " + path + ": " + what);
}

Status check_keys(const json& v, const std::string& path, const std::set<std::string>& allowed) {
  if (!v.is_object()) return fail(path, "expected a table");
  for (const auto& [k, _] : v.items())
    if (!allowed.count(k)) return fail(path + "." + k, "unknown key");
  return Status::Ok();
}

// Our keys out, synth's [[objects]] schema in: `symbol` becomes synth's `name`.
Status to_synth_object(const json& in, const std::string& path, json& out, std::vector<std::string>& bases) {
  if (Status s = check_keys(in, path, {"symbol", "costly", "instances", "counters"}); !s.ok()) return s;
  if (!in.contains("symbol") || !in["symbol"].is_string()) return fail(path + ".symbol", "every object needs its symbol");
  out = in;
  out.erase("symbol");
  out["name"] = in["symbol"];
  if (!in.contains("counters") || !in["counters"].is_array()) return fail(path + ".counters", "expected an array of counters");
  for (size_t i = 0; i < in["counters"].size(); ++i) {
    const json& c = in["counters"][i];
    const std::string cp = path + ".counters[" + std::to_string(i) + "]";
    if (Status s = check_keys(c, cp, {"symbol", "base_symbol", "type", "detail", "scale", "value", "base", "ops_per_second"});
        !s.ok())
      return s;
    if (!c.contains("symbol") || !c["symbol"].is_string()) return fail(cp + ".symbol", "every counter needs its symbol");
    json& o = out["counters"][i];
    o.erase("symbol");
    o.erase("base_symbol");
    o["name"] = c["symbol"];
    bases.push_back(c.contains("base_symbol") && c["base_symbol"].is_string() ? c["base_symbol"].get<std::string>() : "");
  }
  return Status::Ok();
}

Status read_provider(const json& p, CollectSpec& cs) {
  if (Status s = check_keys(p, "provider", {"library", "open", "collect", "close", "seed", "disabled", "timeout", "bad"}); !s.ok())
    return s;
  try {
    for (auto [key, field] : {std::pair{"library", &cs.library}, {"open", &cs.open}, {"collect", &cs.collect}, {"close", &cs.close}})
      if (p.contains(key)) *field = p[key].get<std::string>();
    if (p.contains("seed")) cs.seed = p["seed"].get<uint64_t>();
    if (p.contains("disabled")) cs.disabled = p["disabled"].get<bool>();
    if (p.contains("timeout")) {
      const json& t = p["timeout"];
      if (Status s = check_keys(t, "provider.timeout", {"ticks", "every"}); !s.ok()) return s;
      if (t.contains("ticks")) cs.timeout_ticks = t["ticks"].get<std::vector<uint32_t>>();
      if (t.contains("every")) cs.timeout_every = t["every"].get<uint32_t>();
    }
    if (p.contains("bad")) {
      const std::string b = p["bad"].get<std::string>();
      cs.bad = BadMode::kNone;
      for (BadMode m : {BadMode::kNone, BadMode::kCounterOutsideBlock, BadMode::kSizeMismatch, BadMode::kMissingBase})
        if (b == bad_mode_name(m)) cs.bad = m;
      if (b != bad_mode_name(cs.bad))
        return fail("provider.bad", "'" + b + "' is not one of none, counter-outside-block, size-mismatch, missing-base");
    }
  } catch (const json::exception& e) {
    return fail("provider", std::string("wrong value type (") + e.what() + ")");
  }
  return Status::Ok();
}

Status read_collect_spec(const json& root, CollectSpec& out) {
  if (Status s = check_keys(root, "(top)", {"provider", "objects"}); !s.ok()) return s;
  CollectSpec cs;
  if (root.contains("provider"))
    if (Status s = read_provider(root["provider"], cs); !s.ok()) return s;
  if (!root.contains("objects") || !root["objects"].is_array() || root["objects"].empty())
    return fail("objects", "a provider needs at least one [[objects]] entry");
  json synth_root = {{"host", {{"seed", cs.seed}}}, {"objects", json::array()}};
  for (size_t i = 0; i < root["objects"].size(); ++i) {
    json o;
    cs.base_symbols.emplace_back();
    if (Status s = to_synth_object(root["objects"][i], "objects[" + std::to_string(i) + "]", o, cs.base_symbols.back()); !s.ok())
      return s;
    synth_root["objects"].push_back(std::move(o));
  }
  synth::Spec spec;
  if (Status s = synth::parse_spec_json(synth_root.dump(), spec); !s.ok()) return Status::InvalidArgument("collect " + s.message());
  cs.objects = std::move(spec.objects);
  out = std::move(cs);
  return Status::Ok();
}

uint32_t base_type_needed(uint32_t type) {
  switch (type) {
    case winperf::PERF_RAW_FRACTION:
    case winperf::PERF_LARGE_RAW_FRACTION:
    case winperf::PERF_AVERAGE_TIMER:
    case winperf::PERF_AVERAGE_BULK: return 1;
    default: return 0;
  }
}

// Resolved symbols of the spec for an installed driver.
struct Layout {
  std::vector<uint32_t> object_index;               // per object
  std::vector<std::vector<uint32_t>> base_index;    // per object, per counter spec: 0 = none
  DriverRange range;
};

Status resolve_symbol(const Layout& l, const Symbols& symbols, const std::string& symbol, const std::string& where, uint32_t& index) {
  uint32_t off = 0;
  if (!find_symbol(symbols, symbol, off)) return fail(where, "symbol " + symbol + " is not defined in the symbol file");
  if (off % 2) return fail(where, "symbol " + symbol + " has odd offset " + std::to_string(off));
  index = l.range.first_counter + off;
  return Status::Ok();
}

// Base counters carry their own symbol's indices or none; defects for the bad modes.
void finish_object(perfdata::Object& o, const std::vector<uint32_t>& base_index, const Layout& l, BadMode bad) {
  size_t spec_counter = 0;
  for (perfdata::CounterDef& c : o.counters) {
    if (!winperf::is_base_type(c.type)) {
      ++spec_counter;
      continue;
    }
    const uint32_t b = spec_counter > 0 && spec_counter - 1 < base_index.size() ? base_index[spec_counter - 1] : 0;
    c.name_index = b;
    c.help_index = b ? b - l.range.first_counter + l.range.first_help : 0;
  }
  switch (bad) {
    case BadMode::kNone: break;
    case BadMode::kCounterOutsideBlock: o.counters[0].offset = 0x10000; break;
    case BadMode::kSizeMismatch:
      for (perfdata::CounterDef& c : o.counters)
        if (c.size == 4) { c.size = 8; break; }
      break;
    case BadMode::kMissingBase:
      for (size_t i = 0; i < o.counters.size(); ++i)
        if (winperf::is_base_type(o.counters[i].type)) { o.counters.erase(o.counters.begin() + long(i)); break; }
      break;
  }
  o.num_counters = uint32_t(o.counters.size());
  if (o.multi_instance()) o.num_instances = int32_t(o.instances.size());
}

// The provider objects a recorded answer holds: by the query its value name makes.
std::vector<size_t> wanted(const captures::QueryRecord& r, const std::vector<perfdata::ObjectInfo>& catalog,
                           const std::vector<uint32_t>& indices, const synth::ObjectSource& src) {
  const perfdata::Query q = perfdata::parse_query(r.value_name);
  std::vector<size_t> out;
  std::vector<uint32_t> selected;
  if (q.kind == perfdata::QueryKind::kIndexList) selected = perfdata::select_objects(q, catalog);
  for (size_t i = 0; i < indices.size(); ++i) {
    const bool take = q.kind == perfdata::QueryKind::kGlobal ? !src.costly(i)
                      : q.kind == perfdata::QueryKind::kCostly ? src.costly(i)
                      : std::find(selected.begin(), selected.end(), indices[i]) != selected.end();
    if (take) out.push_back(i);
  }
  return out;
}

bool perf_payload(const captures::QueryRecord& r) {
  return r.status == windows::kErrorSuccess && r.reg_type == windows::kRegBinary && r.payload.size() >= winperf::kDataBlockSize;
}

void replace_payload(captures::QueryRecord& r, const perfdata::DataBlock& block) {
  const size_t old = r.payload.size();
  r.payload = perfdata::build(block);
  if (r.size == old) r.size = uint32_t(r.payload.size());  // a size recorded as a quirk stays
}

}  // namespace

const char* bad_mode_name(BadMode m) {
  switch (m) {
    case BadMode::kNone: return "none";
    case BadMode::kCounterOutsideBlock: return "counter-outside-block";
    case BadMode::kSizeMismatch: return "size-mismatch";
    case BadMode::kMissingBase: return "missing-base";
  }
  return "none";
}

bool CollectSpec::timed_out(uint32_t tick) const {
  if (timeout_every && tick % timeout_every == timeout_every - 1) return true;
  return std::find(timeout_ticks.begin(), timeout_ticks.end(), tick) != timeout_ticks.end();
}

Status parse_collect_spec_json(std::string_view text, CollectSpec& out) {
  const json root = json::parse(text, nullptr, false);
  if (root.is_discarded()) return Status::InvalidArgument("collect spec: not valid JSON");
  return read_collect_spec(root, out);
}

Status parse_collect_spec_toml(std::string_view text, CollectSpec& out) {
  toml::table tbl;
  try {
    tbl = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument("collect spec: TOML syntax error (line " + std::to_string(e.source().begin.line) + "): " +
                                   std::string(e.description()));
  }
  std::ostringstream js;
  js << toml::json_formatter{tbl};
  return parse_collect_spec_json(js.str(), out);
}

Status load_collect_spec(const std::string& path, CollectSpec& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound(path + ": cannot open");
  const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  const bool toml_file = path.size() >= 5 && iequals(path.substr(path.size() - 5), ".toml");
  Status s = toml_file ? parse_collect_spec_toml(text, out) : parse_collect_spec_json(text, out);
  return s.ok() ? s : Status::InvalidArgument(path + ": " + s.message());
}

Status add_provider(captures::Capture& cap_in, const std::string& driver, const Symbols& symbols, const CollectSpec& cs,
                    ProviderReport* report) {
  Layout l;
  if (Status s = find_driver(cap_in, driver, l.range); !s.ok()) return s;
  synth::Spec spec;
  spec.seed = cs.seed;
  spec.start_100ns = cap_in.host.start_time_100ns;
  for (const captures::QueryRecord& r : cap_in.records) {  // the provider starts with the first sample
    perfdata::DataBlock first;
    if (!perf_payload(r) || !perfdata::parse(r.payload, first).ok()) continue;
    spec.start_100ns = first.perf_time_100ns ? first.perf_time_100ns : r.time_100ns;
    break;
  }
  spec.interval_ms = std::max<uint32_t>(cap_in.host.interval_ms, 1);
  spec.objects = cs.objects;
  bool has_base = false;
  for (size_t i = 0; i < spec.objects.size(); ++i) {
    synth::ObjectSpec& o = spec.objects[i];
    const std::string where = "objects[" + std::to_string(i) + "]";
    if (Status s = resolve_symbol(l, symbols, o.name, where, o.index); !s.ok()) return s;
    l.object_index.push_back(o.index);
    l.base_index.emplace_back();
    for (size_t k = 0; k < o.counters.size(); ++k) {
      const std::string cw = where + ".counters[" + std::to_string(k) + "]";
      if (Status s = resolve_symbol(l, symbols, o.counters[k].name, cw, o.counters[k].index); !s.ok()) return s;
      uint32_t b = 0;
      const std::string& bs = k < cs.base_symbols[i].size() ? cs.base_symbols[i][k] : "";
      if (!bs.empty())
        if (Status s = resolve_symbol(l, symbols, bs, cw + ".base_symbol", b); !s.ok()) return s;
      l.base_index.back().push_back(b);
      has_base |= base_type_needed(o.counters[k].type) != 0;
    }
  }
  if (cs.bad == BadMode::kMissingBase && !has_base)
    return fail("provider.bad", "missing-base needs a fraction or average counter (they have a base)");
  for (uint32_t index : l.object_index)
    for (const perfdata::ObjectInfo& o : cap_in.catalog)
      if (o.index == index) return fail("objects", "object index " + std::to_string(index) + " is already in the host's catalog");
  std::unique_ptr<synth::ObjectSource> src;
  if (Status s = synth::ObjectSource::create(spec, cap_in.host.perf_freq, src); !s.ok()) return s;

  captures::Capture cap = cap_in;
  ProviderReport rep;
  const std::string key = performance_key(driver);
  set_value(cap, key, "Library", windows::kRegSz, reg_sz(cs.library.empty() ? driver + ".dll" : cs.library));
  set_value(cap, key, "Open", windows::kRegSz, reg_sz(cs.open.empty() ? "Open" + driver + "PerformanceData" : cs.open));
  set_value(cap, key, "Collect", windows::kRegSz, reg_sz(cs.collect.empty() ? "Collect" + driver + "PerformanceData" : cs.collect));
  set_value(cap, key, "Close", windows::kRegSz, reg_sz(cs.close.empty() ? "Close" + driver + "PerformanceData" : cs.close));
  if (cs.disabled) {  // perflib never loads it: nothing in any answer
    set_value(cap, key, "Disable Performance Counters", windows::kRegDword, reg_dword(1));
    cap_in = std::move(cap);
    if (report) *report = std::move(rep);
    return Status::Ok();
  }
  for (size_t i = 0; i < l.object_index.size(); ++i) cap.catalog.push_back({l.object_index[i], driver, src->costly(i)});
  rep.objects = l.object_index;

  std::vector<perfdata::Object> objects;
  uint32_t tick = UINT32_MAX;
  bool skip = false;
  for (captures::QueryRecord& r : cap.records) {
    if (!perf_payload(r)) continue;
    perfdata::DataBlock block;
    if (!perfdata::parse(r.payload, block).ok()) {
      ++rep.records_unparsed;
      continue;
    }
    if (r.tick != tick) {  // the provider is called once per tick; its clock is the host's
      tick = r.tick;
      objects = src->advance(block.perf_time_100ns ? block.perf_time_100ns : r.time_100ns, block.perf_time, block.perf_freq);
      for (size_t i = 0; i < objects.size(); ++i) finish_object(objects[i], l.base_index[i], l, i == 0 ? cs.bad : BadMode::kNone);
      skip = cs.timed_out(tick);
      rep.ticks_timed_out += skip;
    }
    if (skip) continue;
    const std::vector<size_t> take = wanted(r, cap.catalog, l.object_index, *src);
    if (take.empty()) continue;
    for (size_t i : take) block.objects.push_back(objects[i]);
    block.num_object_types += uint32_t(take.size());  // a recorded count lie stays a lie
    replace_payload(r, block);
    ++rep.records_changed;
  }
  cap_in = std::move(cap);
  if (report) *report = std::move(rep);
  return Status::Ok();
}

void remove_provider(captures::Capture& cap, const std::string& driver) {
  std::set<uint32_t> indices;
  for (const perfdata::ObjectInfo& o : cap.catalog)
    if (iequals(o.provider, driver)) indices.insert(o.index);
  if (indices.empty()) return;
  std::erase_if(cap.catalog, [&](const perfdata::ObjectInfo& o) { return indices.count(o.index) != 0; });
  for (captures::QueryRecord& r : cap.records) {
    perfdata::DataBlock block;
    if (!perf_payload(r) || !perfdata::parse(r.payload, block).ok()) continue;
    const size_t before = block.objects.size();
    std::erase_if(block.objects, [&](const perfdata::Object& o) { return indices.count(o.name_index) != 0; });
    const size_t removed = before - block.objects.size();
    if (removed == 0) continue;
    block.num_object_types -= std::min<uint32_t>(block.num_object_types, uint32_t(removed));
    replace_payload(r, block);
  }
}

}  // namespace perfsim::lodctr
