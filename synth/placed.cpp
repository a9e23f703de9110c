#include "synth/placed.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

#include "captures/fingerprint.h"
#include "captures/registry_values.h"
#include "core/utf16.h"
#include "names/backup.h"
#include "names/place.h"
#include "windows/constants.h"
#include "windows/registry_keys.h"

namespace perfsim::synth {

uint32_t Renamer::to(uint32_t index) const {
  if (auto it = map_.find(index); it != map_.end()) return it->second;
  if (index % 2 == 1)
    if (auto it = map_.find(index - 1); it != map_.end()) return it->second + 1;
  return index;
}

template <typename F>
void Renamer::each(perfdata::DataBlock& block, F f) {
  uint32_t default_object = uint32_t(block.default_object);
  f(default_object);
  block.default_object = int32_t(default_object);
  for (perfdata::Object& o : block.objects) {
    f(o.name_index);
    f(o.help_index);
    for (perfdata::CounterDef& c : o.counters) {
      f(c.name_index);
      f(c.help_index);
    }
    for (perfdata::Instance& i : o.instances)
      if (i.parent_title_index) f(i.parent_title_index);
  }
}

void Renamer::apply(perfdata::DataBlock& block) {
  saved_.clear();
  each(block, [&](uint32_t& v) {
    saved_.push_back(v);
    v = to(v);
  });
}

void Renamer::undo(perfdata::DataBlock& block) {
  size_t k = 0;
  each(block, [&](uint32_t& v) { v = saved_[k++]; });
}

namespace {

using windows::kPerflibKey;

bool is_base(uint32_t type) { return (type & 0x00070000) == 0x00030000; }  // PERF_COUNTER_BASE

void set_dword(captures::Capture& cap, const std::string& key, const std::string& name, uint32_t v) {
  captures::set_value(cap, key, name, windows::kRegDword, captures::reg_dword(v));
}

// Services\<svc>\Performance ranges from the placed indices (the file's [PERF_] sections, applied
// after, override them).
void provider_ranges(const Catalog& cat, const Renamer& r, captures::Capture& cap) {
  std::map<std::string, std::pair<uint32_t, uint32_t>> range;
  for (const CatalogObject& o : cat.objects) {
    if (o.desc.family != Family::kStandard) continue;  // counter sets: Perflib V2, no service key
    const uint32_t index = r.to(o.desc.index);
    auto& x = range.try_emplace(o.desc.provider, index, index).first->second;
    x = {std::min(x.first, index), std::max(x.second, index)};
    for (const CounterDesc& c : o.desc.counters)
      x = {std::min(x.first, r.to(c.index)), std::max(x.second, r.to(c.index))};
  }
  for (const auto& [svc, x] : range) {
    const std::string key = "SYSTEM\\CurrentControlSet\\Services\\" + svc + "\\Performance";
    set_dword(cap, key, "First Counter", x.first);
    set_dword(cap, key, "Last Counter", x.second);
    set_dword(cap, key, "First Help", x.first + 1);
    set_dword(cap, key, "Last Help", x.second + 1);
  }
}

uint32_t parse_index(const std::string& text) {
  uint32_t v = 0;
  for (char c : text) v = c >= '0' && c <= '9' ? v * 10 + uint32_t(c - '0') : v;
  return v;
}

// Perflib's Last Counter / Last Help when the file has no [Perflib] (raw .dat tables): the 009
// Counter table's `1` entry (Windows' own record of it), else the highest index of each parity.
void perflib_from_tables(const names::NameSet& set, captures::Capture& cap) {
  const names::Strings* en = set.find("009");
  uint32_t last_counter = 0, last_help = 0;
  for (const auto& [index, text] : en->text)
    (index % 2 ? last_help : last_counter) = std::max(index % 2 ? last_help : last_counter, index);
  if (auto it = en->text.find(1); it != en->text.end())
    if (const uint32_t v = parse_index(it->second)) last_counter = v;
  if (!set.perflib_value("Last Counter")) set_dword(cap, kPerflibKey, "Last Counter", last_counter);
  if (!set.perflib_value("Last Help")) set_dword(cap, kPerflibKey, "Last Help", std::max(last_help, last_counter + 1));
}

std::string folded(std::string s) {
  for (char& c : s) c = char(std::tolower(uint8_t(c)));
  return s;
}

// The names of the host's Perflib V2 counter sets that the file's 009 table lacks. A `lodctr /s`
// backup holds only V1 strings (Perflib\<LLL>); a V2 counter set's names live in its provider's
// manifest and binary (Microsoft, "Performance Counters Schema": LodCtr /M records the provider
// under Perflib\_V2Providers), and Windows serves them in the Counter/Help values of
// HKEY_PERFORMANCE_DATA at indices it assigns above the V1 strings'. So they are placed after the
// file's last index (or at spec.v2_index), in registration order, in every language of the file
// (in English: perfsim has no translations), and Last Counter/Last Help and each Counter table's
// `1` entry follow. Names the file has are left to names::place, which finds them by name.
Status place_v2_names(const Spec& spec, const Catalog& cat, names::NameSet& set, std::vector<std::string>& notes) {
  const names::Strings* en = set.find("009");
  if (!en) return Status::Ok();  // names::place says what is wrong
  std::set<std::string> have;
  uint32_t last = 0;
  for (const names::Strings& l : set.languages)
    for (const auto& [index, text] : l.text) {
      last = std::max(last, index);
      if (&l == en && index % 2 == 0 && index > 1) have.insert(folded(text));
    }
  for (const names::Strings& l : set.languages)
    if (auto it = l.text.find(1); it != l.text.end()) last = std::max(last, parse_index(it->second));
  for (const char* key : {"Last Counter", "Last Help"}) last = std::max(last, set.perflib_value(key).value_or(0));
  const std::map<uint32_t, std::string> help(cat.helps.begin(), cat.helps.end());
  const std::map<uint32_t, std::string> english(cat.names.begin(), cat.names.end());
  std::vector<std::pair<std::string, std::string>> missing;  // name, help
  std::vector<std::string> sets;
  for (const CatalogObject& o : cat.objects) {
    if (o.desc.perflib != Perflib::kV2) continue;
    const size_t before = missing.size();
    auto want = [&](uint32_t index) {
      const std::string& name = english.at(index);
      if (have.insert(folded(name)).second)
        missing.emplace_back(name, help.count(index + 1) ? help.at(index + 1) : name);
    };
    want(o.desc.index);
    for (const CounterDesc& c : o.desc.counters)
      if (!is_base(c.type)) want(c.index);
    if (missing.size() > before) sets.push_back(english.at(o.desc.index));
  }
  if (missing.empty()) return Status::Ok();
  const uint32_t first = spec.v2_index ? spec.v2_index : (last + 2) & ~1u;
  const uint32_t end = first + 2 * uint32_t(missing.size());  // one past the last help index
  for (const names::Strings& l : set.languages) {
    auto it = l.text.lower_bound(first);
    if (it != l.text.end() && it->first < end)
      return Status::InvalidArgument("the names of the host's Perflib V2 counter sets (" +
                                     std::to_string(missing.size()) + " the file lacks) would take indices " +
                                     std::to_string(first) + " to " + std::to_string(end - 1) + ", but [PerfStrings_" +
                                     l.lang + "] has " + std::to_string(it->first) + " \"" + it->second +
                                     "\"; give --v2-index (host.v2_index) an even index above " + std::to_string(last));
  }
  for (names::Strings& l : set.languages) {
    uint32_t i = first;
    for (const auto& [name, text] : missing) {
      l.text[i] = name;
      l.text[i + 1] = text;
      i += 2;
    }
    if (auto it = l.text.find(1); it != l.text.end() && parse_index(it->second) < end - 2)
      it->second = std::to_string(end - 2);
  }
  for (auto& [key, v] : set.perflib) {
    if (iequals(key, "Last Counter")) v = std::max(v, end - 2);
    if (iequals(key, "Last Help")) v = std::max(v, end - 1);
  }
  notes.push_back(fmt::format(
      "{} names of Perflib V2 counter sets ({}) are not in the names file (a `lodctr /s` backup holds V1 strings "
      "only); placed at {}..{}, {} (--v2-index to choose)",
      missing.size(), fmt::join(sets, ", "), first, end - 1,
      spec.v2_index ? "where --v2-index says" : "after the file's last index " + std::to_string(last)));
  return Status::Ok();
}

}  // namespace

Status load_names_file(const Spec& spec, const Profile& profile, names::NameSet& set, std::vector<std::string>& notes) {
  std::vector<std::string> warnings;
  if (spec.names_text.empty()) {
    if (Status s = names::load_names(spec.names_file, set, &warnings); !s.ok()) return s;
  } else {
    const ByteView text(reinterpret_cast<const uint8_t*>(spec.names_text.data()), spec.names_text.size());
    if (Status s = names::parse_backup(text, set, &warnings); !s.ok())
      return Status::InvalidArgument(spec.names_file + ": " + s.message());
    for (std::string& w : warnings) w = spec.names_file + ": " + w;
  }
  for (const std::string& w : warnings) notes.push_back("warning: " + w);
  const uint32_t version = version_of(profile);  // 0: Samba, which answers as a Vista-era host
  std::vector<std::string> renamed;
  if (Status s = names::to_perflib_languages(set, version == 0 || version >= os_version::kVista, &renamed); !s.ok())
    return Status::InvalidArgument(spec.names_file + ": " + s.message());
  if (!renamed.empty())
    notes.push_back(
        fmt::format("{}: languages named as this Windows version names them (Perflib\\LLL, Counter LLL): {}",
                    spec.names_file, fmt::join(renamed, ", ")));
  return Status::Ok();
}

Status leave_out_unnamed(const Spec& spec, const names::NameSet& set, Catalog& cat, std::vector<std::string>& notes) {
  const names::Strings* en = set.find("009");
  if (!en) return Status::Ok();  // names::place says what is wrong
  std::set<std::string> have;
  for (const auto& [index, text] : en->text)
    if (index % 2 == 0 && index > 1) have.insert(folded(text));
  std::map<uint32_t, std::string> english(cat.names.begin(), cat.names.end());
  auto named = [&](uint32_t index) { return have.count(folded(english[index])) != 0; };
  std::vector<std::string> left, missing;  // the note's items; strict's, one per name
  for (auto o = cat.objects.begin(); o != cat.objects.end();) {
    const std::string object = english[o->desc.index];
    if (o->desc.perflib == Perflib::kV2) {
      ++o;
      continue;
    }
    if (!named(o->desc.index)) {
      left.push_back(object);
      missing.push_back("object \"" + object + "\"");
      o = cat.objects.erase(o);
      continue;
    }
    std::vector<CounterDesc>& cs = o->desc.counters;
    size_t gone = 0;
    for (size_t i = 0; i < cs.size();) {
      if (named(cs[i].index)) {
        ++i;
        continue;
      }
      if (!is_base(cs[i].type)) {
        ++gone;
        missing.push_back("counter \"" + english[cs[i].index] + "\" of \"" + object + "\"");
      }
      if (o->desc.default_counter > int32_t(i))
        --o->desc.default_counter;
      else if (o->desc.default_counter == int32_t(i))
        o->desc.default_counter = 0;
      cs.erase(cs.begin() + ptrdiff_t(i));  // its base (same index) goes next
      if (!o->spec_of.empty()) o->spec_of.erase(o->spec_of.begin() + ptrdiff_t(i));
    }
    if (gone) left.push_back(fmt::format("{} counter{} of {}", gone, gone == 1 ? "" : "s", object));
    ++o;
  }
  if (left.empty()) return Status::Ok();
  if (spec.strict_names)
    return Status::InvalidArgument(fmt::format(
        "{}: [PerfStrings_009] lacks {} English name(s) the host serves: {} (--strict-names; without it they are left "
        "out of the host, as a Windows host that did not register them lacks them)",
        spec.names_file, missing.size(), fmt::join(missing, ", ")));
  notes.push_back(fmt::format("warning: {}: the file does not name them, so the host does not serve them; left out: {}",
                              spec.names_file, fmt::join(left, ", ")));
  return Status::Ok();
}

Status apply_names_file(const Spec& spec, names::NameSet set, const Catalog& cat, captures::Capture& header,
                        Renamer& renamer, std::vector<std::string>& notes) {
  if (Status s = place_v2_names(spec, cat, set, notes); !s.ok())
    return Status::InvalidArgument(spec.names_file + ": " + s.message());
  std::map<uint32_t, std::string> english(cat.names.begin(), cat.names.end());
  std::vector<names::Wanted> wanted;
  for (const CatalogObject& o : cat.objects) {
    const std::string& object = english[o.desc.index];
    wanted.push_back({o.desc.index, object, o.desc.provider, ""});
    for (const CounterDesc& c : o.desc.counters)
      if (!is_base(c.type)) wanted.push_back({c.index, english[c.index], o.desc.provider, object});
  }
  std::map<uint32_t, uint32_t> placed;
  if (Status s = names::place(set, wanted, placed); !s.ok())
    return Status::InvalidArgument(spec.names_file + ": " + s.message());
  renamer.set({placed.begin(), placed.end()});

  for (captures::ObjectInfo& o : header.catalog) o.index = renamer.to(o.index);
  captures::Fingerprint fp;
  if (captures::from_json(header.fingerprint_json, fp).ok() && fp.costly_objects) {
    for (uint32_t& i : *fp.costly_objects) i = renamer.to(i);
    header.fingerprint_json = captures::to_json(fp);
  }
  provider_ranges(cat, renamer, header);
  names::to_capture(set, header);
  perflib_from_tables(set, header);
  return Status::Ok();
}

}  // namespace perfsim::synth
