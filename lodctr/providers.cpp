// Providers: the collect spec is turned into a synth spec (symbols -> lodctr's title indices) and
// synth::ObjectSource produces the objects tick by tick; they are spliced into the recorded answers.
#include "core/file.h"
#include "lodctr/providers.h"

#include <algorithm>
#include <set>

#include "core/config.h"
#include "core/utf16.h"
#include "lodctr/install.h"
#include "perfdata/model.h"
#include "perfdata/select.h"
#include "perfdata/winperf.h"
#include "synth/objects.h"
#include "windows/constants.h"

namespace perfsim::lodctr {
namespace {

using config::join;
using config::Json;
using config::Reader;

Status fail(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("collect spec: " + path + ": " + what);
}

// `symbol` in the collect spec is synth's `name`: the value moves and so does its line, so synth's
// errors about it point at the line the user wrote.
void rename_symbol(Json& obj, const std::string& path, config::Doc& synth) {
  obj["name"] = obj["symbol"];
  obj.erase("symbol");
  if (auto it = synth.lines.find(join(path, "symbol")); it != synth.lines.end())
    synth.lines[join(path, "name")] = it->second;
}

Status check_symbol(const Reader& r, const Json& v, const std::string& path) {
  std::string symbol;
  Status s = r.require(v, path, "symbol");
  if (s.ok()) s = r.string(v, path, "symbol", symbol);
  return s;
}

// Our keys out, synth's [[objects]] schema in; the counters' base symbols are kept aside.
Status to_synth_object(const Reader& r, const Json& in, const std::string& path, config::Doc& synth,
                       std::vector<std::string>& bases) {
  Status s = r.keys(in, path, {"symbol", "costly", "instances", "counters"});
  if (s.ok()) s = check_symbol(r, in, path);
  if (s.ok()) s = r.require(in, path, "counters");
  if (s.ok() && !in["counters"].is_array())
    s = r.type_error(join(path, "counters"), "an array of counters", in["counters"]);
  if (!s.ok()) return s;
  Json out = in;
  rename_symbol(out, path, synth);
  for (size_t i = 0; i < in["counters"].size(); ++i) {
    const Json& c = in["counters"][i];
    const std::string cp = config::index(join(path, "counters"), i);
    std::string base;
    s = r.keys(c, cp, {"symbol", "base_symbol", "type", "detail", "scale", "value", "base", "ops_per_second"});
    if (s.ok()) s = check_symbol(r, c, cp);
    if (s.ok()) s = r.string(c, cp, "base_symbol", base);
    if (!s.ok()) return s;
    out["counters"][i].erase("base_symbol");
    rename_symbol(out["counters"][i], cp, synth);
    bases.push_back(base);
  }
  synth.root["objects"].push_back(std::move(out));
  return Status::Ok();
}

Status read_bad(const Reader& r, const Json& p, BadMode& out) {
  std::string b = bad_mode_name(out);
  if (Status s = r.string(p, "provider", "bad", b); !s.ok()) return s;
  for (BadMode m : {BadMode::kNone, BadMode::kCounterOutsideBlock, BadMode::kSizeMismatch, BadMode::kMissingBase})
    if (b == bad_mode_name(m)) out = m;
  if (b == bad_mode_name(out)) return Status::Ok();
  return r.fail("provider.bad", "\"" + b + "\" is not one of none, counter-outside-block, size-mismatch, missing-base");
}

Status read_provider(const Reader& r, const Json& p, CollectSpec& cs) {
  Status s = r.keys(p, "provider", {"library", "open", "collect", "close", "seed", "disabled", "timeout", "bad"});
  for (auto [key, field] :
       {std::pair{"library", &cs.library}, {"open", &cs.open}, {"collect", &cs.collect}, {"close", &cs.close}})
    if (s.ok()) s = r.string(p, "provider", key, *field);
  if (s.ok()) s = r.integer(p, "provider", "seed", cs.seed, 0, INT64_MAX);
  if (s.ok()) s = r.boolean(p, "provider", "disabled", cs.disabled);
  if (s.ok() && p.contains("timeout")) {
    const Json& t = p["timeout"];
    s = r.keys(t, "provider.timeout", {"ticks", "every"});
    if (s.ok()) s = r.integers(t, "provider.timeout", "ticks", cs.timeout_ticks);
    if (s.ok()) s = r.integer(t, "provider.timeout", "every", cs.timeout_every);
  }
  if (s.ok()) s = read_bad(r, p, cs.bad);
  return s;
}

Status read_collect_spec(const config::Doc& doc, CollectSpec& out) {
  const Reader r(doc);
  const Json& root = doc.root;
  if (Status s = r.keys(root, "", {"provider", "objects"}); !s.ok()) return s;
  CollectSpec cs;
  if (root.contains("provider"))
    if (Status s = read_provider(r, root["provider"], cs); !s.ok()) return s;
  if (!root.contains("objects") || !root["objects"].is_array() || root["objects"].empty())
    return r.fail("objects", "a provider needs at least one [[objects]] entry");
  // synth reads the objects from a tree with the same key paths, so its errors keep our lines.
  config::Doc synth{doc.origin, {{"host", {{"seed", cs.seed}}}, {"objects", Json::array()}}, doc.lines};
  for (size_t i = 0; i < root["objects"].size(); ++i) {
    if (Status s =
            to_synth_object(r, root["objects"][i], config::index("objects", i), synth, cs.base_symbols.emplace_back());
        !s.ok())
      return s;
  }
  synth::Spec spec;
  if (Status s = synth::read_spec(synth, spec); !s.ok()) return s;
  cs.objects = std::move(spec.objects);
  out = std::move(cs);
  return Status::Ok();
}

uint32_t base_type_needed(uint32_t type) {
  switch (type) {
    case winperf::PERF_RAW_FRACTION:
    case winperf::PERF_LARGE_RAW_FRACTION:
    case winperf::PERF_AVERAGE_TIMER:
    case winperf::PERF_AVERAGE_BULK:
      return 1;
    default:
      return 0;
  }
}

// Resolved symbols of the spec for an installed driver.
struct Layout {
  std::vector<uint32_t> object_index;             // per object
  std::vector<std::vector<uint32_t>> base_index;  // per object, per counter spec: 0 = none
  DriverRange range;
};

Status resolve_symbol(const Layout& l, const Symbols& symbols, const std::string& symbol, const std::string& where,
                      uint32_t& index) {
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
    case BadMode::kNone:
      break;
    case BadMode::kCounterOutsideBlock:
      o.counters[0].offset = 0x10000;
      break;
    case BadMode::kSizeMismatch:
      for (perfdata::CounterDef& c : o.counters)
        if (c.size == 4) {
          c.size = 8;
          break;
        }
      break;
    case BadMode::kMissingBase:
      for (size_t i = 0; i < o.counters.size(); ++i)
        if (winperf::is_base_type(o.counters[i].type)) {
          o.counters.erase(o.counters.begin() + long(i));
          break;
        }
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
                      : q.kind == perfdata::QueryKind::kCostly
                          ? src.costly(i)
                          : std::find(selected.begin(), selected.end(), indices[i]) != selected.end();
    if (take) out.push_back(i);
  }
  return out;
}

bool perf_payload(const captures::QueryRecord& r) {
  return r.status == windows::kErrorSuccess && r.reg_type == windows::kRegBinary &&
         r.payload.size() >= winperf::kDataBlockSize;
}

void replace_payload(captures::QueryRecord& r, const perfdata::DataBlock& block) {
  const size_t old = r.payload.size();
  r.payload = perfdata::build(block);
  if (r.size == old) r.size = uint32_t(r.payload.size());  // a size recorded as a quirk stays
}

}  // namespace

const char* bad_mode_name(BadMode m) {
  switch (m) {
    case BadMode::kNone:
      return "none";
    case BadMode::kCounterOutsideBlock:
      return "counter-outside-block";
    case BadMode::kSizeMismatch:
      return "size-mismatch";
    case BadMode::kMissingBase:
      return "missing-base";
  }
  return "none";
}

bool CollectSpec::timed_out(uint32_t tick) const {
  if (timeout_every && tick % timeout_every == timeout_every - 1) return true;
  return std::find(timeout_ticks.begin(), timeout_ticks.end(), tick) != timeout_ticks.end();
}

Status parse_collect_spec_json(std::string_view text, CollectSpec& out) {
  config::Doc doc;
  if (Status s = config::parse_json(text, "collect spec", doc); !s.ok()) return s;
  return read_collect_spec(doc, out);
}

Status parse_collect_spec_toml(std::string_view text, CollectSpec& out) {
  config::Doc doc;
  if (Status s = config::parse_toml(text, "collect spec", doc); !s.ok()) return s;
  return read_collect_spec(doc, out);
}

Status load_collect_spec(const std::string& path, CollectSpec& out) {
  std::string text;
  if (Status s = read_bounded_file(path, "collect spec", text); !s.ok()) return s;
  const bool toml_file = path.size() >= 5 && iequals(path.substr(path.size() - 5), ".toml");  // else JSON
  config::Doc doc;
  Status s = toml_file ? config::parse_toml(text, path, doc) : config::parse_json(text, path, doc);
  return s.ok() ? read_collect_spec(doc, out) : s;
}

struct ProviderEdit::Impl {
  Layout l;
  CollectSpec cs;
  std::unique_ptr<synth::ObjectSource> src;
  std::vector<perfdata::ObjectInfo> catalog;  // the host's, with the provider's objects
  std::vector<perfdata::Object> objects;      // the provider's answer at `tick`
  uint32_t tick = UINT32_MAX;
  bool skip = false;
  ProviderReport rep;
};

ProviderEdit::ProviderEdit() = default;
ProviderEdit::~ProviderEdit() = default;
ProviderEdit::ProviderEdit(ProviderEdit&&) noexcept = default;
ProviderEdit& ProviderEdit::operator=(ProviderEdit&&) noexcept = default;

std::optional<int64_t> first_sample_time(const captures::QueryRecord& r) {
  perfdata::DataBlock first;
  if (!perf_payload(r) || !perfdata::parse(r.payload, first).ok()) return std::nullopt;
  return first.perf_time_100ns ? first.perf_time_100ns : r.time_100ns;
}

Status ProviderEdit::prepare(captures::Capture& meta, const std::string& driver, const Symbols& symbols,
                             const CollectSpec& cs, std::optional<int64_t> start_100ns) {
  auto m = std::make_unique<Impl>();
  Layout& l = m->l;
  if (Status s = find_driver(meta, driver, l.range); !s.ok()) return s;
  synth::Spec spec;
  spec.seed = cs.seed;
  spec.start_100ns = start_100ns.value_or(meta.host.start_time_100ns);  // the provider starts with the first sample
  spec.interval_ms = std::max<uint32_t>(meta.host.interval_ms, 1);
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
    for (const perfdata::ObjectInfo& o : meta.catalog)
      if (o.index == index)
        return fail("objects", "object index " + std::to_string(index) + " is already in the host's catalog");
  if (Status s = synth::ObjectSource::create(spec, meta.host.perf_freq, m->src); !s.ok()) return s;

  // Nothing above changed `meta`: a refused spec leaves the capture as it was.
  const std::string key = performance_key(driver);
  set_value(meta, key, "Library", windows::kRegSz, reg_sz(cs.library.empty() ? driver + ".dll" : cs.library));
  set_value(meta, key, "Open", windows::kRegSz,
            reg_sz(cs.open.empty() ? "Open" + driver + "PerformanceData" : cs.open));
  set_value(meta, key, "Collect", windows::kRegSz,
            reg_sz(cs.collect.empty() ? "Collect" + driver + "PerformanceData" : cs.collect));
  set_value(meta, key, "Close", windows::kRegSz,
            reg_sz(cs.close.empty() ? "Close" + driver + "PerformanceData" : cs.close));
  m->cs = cs;
  if (cs.disabled) {  // perflib never loads it: nothing in any answer
    set_value(meta, key, "Disable Performance Counters", windows::kRegDword, reg_dword(1));
    impl_ = std::move(m);
    return Status::Ok();
  }
  for (size_t i = 0; i < l.object_index.size(); ++i)
    meta.catalog.push_back({l.object_index[i], driver, m->src->costly(i)});
  m->catalog = meta.catalog;
  m->rep.objects = l.object_index;
  impl_ = std::move(m);
  return Status::Ok();
}

void ProviderEdit::apply(captures::QueryRecord& r) {
  Impl& m = *impl_;
  if (m.cs.disabled || !perf_payload(r)) return;
  perfdata::DataBlock block;
  if (!perfdata::parse(r.payload, block).ok()) {
    ++m.rep.records_unparsed;
    return;
  }
  if (r.tick != m.tick) {  // the provider is called once per tick; its clock is the host's
    m.tick = r.tick;
    m.objects =
        m.src->advance(block.perf_time_100ns ? block.perf_time_100ns : r.time_100ns, block.perf_time, block.perf_freq);
    for (size_t i = 0; i < m.objects.size(); ++i)
      finish_object(m.objects[i], m.l.base_index[i], m.l, i == 0 ? m.cs.bad : BadMode::kNone);
    m.skip = m.cs.timed_out(m.tick);
    m.rep.ticks_timed_out += m.skip;
  }
  if (m.skip) return;
  const std::vector<size_t> take = wanted(r, m.catalog, m.l.object_index, *m.src);
  if (take.empty()) return;
  for (size_t i : take) block.objects.push_back(m.objects[i]);
  block.num_object_types += uint32_t(take.size());  // a recorded count lie stays a lie
  replace_payload(r, block);
  ++m.rep.records_changed;
}

const ProviderReport& ProviderEdit::report() const { return impl_->rep; }

Status add_provider(captures::Capture& cap, const std::string& driver, const Symbols& symbols, const CollectSpec& cs,
                    ProviderReport* report) {
  std::optional<int64_t> start;
  for (const captures::QueryRecord& r : cap.records)
    if ((start = first_sample_time(r))) break;
  captures::Capture meta = cap;
  meta.records.clear();
  ProviderEdit edit;
  if (Status s = edit.prepare(meta, driver, symbols, cs, start); !s.ok()) return s;
  meta.records = std::move(cap.records);
  for (captures::QueryRecord& r : meta.records) edit.apply(r);
  cap = std::move(meta);
  if (report) *report = edit.report();
  return Status::Ok();
}

captures::RecordEdit provider_removal(captures::Capture& meta, const std::string& driver) {
  std::set<uint32_t> indices;
  for (const perfdata::ObjectInfo& o : meta.catalog)
    if (iequals(o.provider, driver)) indices.insert(o.index);
  if (indices.empty()) return nullptr;
  std::erase_if(meta.catalog, [&](const perfdata::ObjectInfo& o) { return indices.count(o.index) != 0; });
  return [indices](captures::QueryRecord& r) {
    perfdata::DataBlock block;
    if (!perf_payload(r) || !perfdata::parse(r.payload, block).ok()) return;
    const size_t before = block.objects.size();
    std::erase_if(block.objects, [&](const perfdata::Object& o) { return indices.count(o.name_index) != 0; });
    const size_t removed = before - block.objects.size();
    if (removed == 0) return;
    block.num_object_types -= std::min<uint32_t>(block.num_object_types, uint32_t(removed));
    replace_payload(r, block);
  };
}

void remove_provider(captures::Capture& cap, const std::string& driver) {
  if (const captures::RecordEdit edit = provider_removal(cap, driver))
    for (captures::QueryRecord& r : cap.records) edit(r);
}

}  // namespace perfsim::lodctr
