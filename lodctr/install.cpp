#include "lodctr/install.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>

#include "captures/writer.h"
#include "core/utf16.h"
#include "lodctr/providers.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "windows/constants.h"

namespace perfsim::lodctr {
namespace {

const char* const kRangeValues[] = {"First Counter", "Last Counter", "First Help", "Last Help"};

uint32_t lang_number(const std::string& lang) {
  uint32_t n = 0;
  const auto [end, ec] = std::from_chars(lang.data(), lang.data() + lang.size(), n, 16);
  return ec == std::errc() && end == lang.data() + lang.size() ? n : 0xFFFFFFFF;
}
bool same_lang(const std::string& a, const std::string& b) { return lang_number(a) == lang_number(b); }

// Whether the host is Vista or later (CurrentVersion 6.0 on), where Portuguese keeps its
// sublanguage; a capture that does not say is taken as one.
bool vista_or_later(const captures::Capture& cap) {
  const std::string& v = cap.host.current_version;
  return v.empty() || !std::isdigit(uint8_t(v[0])) || std::atoi(v.c_str()) >= 6;
}

// The Counter or Help bytes of one language wherever the capture keeps them: the name tables the
// host serves for `Counter 009` and the Perflib\009 registry values collectors read over HKLM.
std::vector<Bytes*> table_slots(captures::Capture& cap, const std::string& lang, bool help) {
  std::vector<Bytes*> out;
  for (captures::NameTable& t : cap.names)
    if (same_lang(t.lang, lang)) out.push_back(help ? &t.help : &t.counter);
  for (captures::RegistryValue& v : cap.registry) {
    const std::string prefix = std::string(kPerflibKey) + "\\";
    if (v.key.size() <= prefix.size() || !iequals(v.key.substr(0, prefix.size()), prefix)) continue;
    const std::string sub = v.key.substr(prefix.size());
    if (sub.size() < 3 || sub.size() > 4 || sub.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      continue;
    if (same_lang(sub, lang) && iequals(v.name, help ? "Help" : "Counter")) out.push_back(&v.data);
  }
  return out;
}

std::vector<std::string> host_languages(const captures::Capture& cap) {
  std::vector<std::string> out;
  auto add = [&](const std::string& l) {
    for (const std::string& have : out)
      if (same_lang(have, l)) return;
    out.push_back(l);
  };
  for (const captures::NameTable& t : cap.names) add(t.lang);
  const std::string prefix = std::string(kPerflibKey) + "\\";
  for (const captures::RegistryValue& v : cap.registry) {
    if (v.key.size() <= prefix.size() || !iequals(v.key.substr(0, prefix.size()), prefix)) continue;
    const std::string sub = v.key.substr(prefix.size());
    if (sub.size() >= 3 && sub.size() <= 4 && sub.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos &&
        iequals(v.name, "Counter"))
      add(sub);
  }
  return out;
}

Status parse_table(const Bytes& b, const std::string& lang, bool help, perfdata::NameTable& t) {
  const Status s = perfdata::parse_names(b, t);
  return s.ok() ? s
                : Status::Corruption("the host's " + std::string(help ? "Help " : "Counter ") + lang +
                                     " table: " + s.message());
}

uint32_t dword_value(const captures::Capture& cap, const std::string& key, const std::string& name, uint32_t fallback) {
  const captures::RegistryValue* v = find_value(cap, key, name);
  return v && v->data.size() >= 4 ? load_le32(v->data.data()) : fallback;
}

// Perflib's Last Counter / Last Help, or what the 009 table says when the values are missing.
std::pair<uint32_t, uint32_t> perflib_last(captures::Capture& cap) {
  uint32_t table_last = 0;
  for (const std::string& lang : host_languages(cap))
    for (Bytes* b : table_slots(cap, lang, false)) {
      perfdata::NameTable t;
      if (perfdata::parse_names(*b, t).ok()) table_last = std::max(table_last, t.highest_index());
    }
  const uint32_t last_counter = dword_value(cap, kPerflibKey, "Last Counter", table_last);
  return {last_counter, dword_value(cap, kPerflibKey, "Last Help", last_counter + 1)};
}

struct Resolved {  // one [text] line with its offset
  const IniText* text;
  uint32_t offset;
};

Status resolve(const CounterIni& ini, const Symbols& symbols, std::vector<Resolved>& out, uint32_t& max_offset) {
  for (const std::vector<IniText>* list : {&ini.texts, &ini.objects})
    for (const IniText& t : *list) {
      const std::string where = "ini line " + std::to_string(t.line) + ": ";
      uint32_t off = 0;
      if (!find_symbol(symbols, t.symbol, off))
        return Status::InvalidArgument(where + "symbol " + t.symbol + " is not defined in " + ini.symbol_file);
      if (off % 2)
        return Status::InvalidArgument(where + "symbol " + t.symbol + " has odd offset " + std::to_string(off) +
                                       " (offsets are even: names at even indices, help at odd)");
      bool listed = false;
      for (const std::string& l : ini.languages) listed |= same_lang(l, t.lang);
      if (!listed) return Status::InvalidArgument(where + "language " + t.lang + " is not in [languages]");
      if (list == &ini.texts) out.push_back({&t, off});
      max_offset = std::max(max_offset, off);
    }
  return Status::Ok();
}

}  // namespace

std::string performance_key(const std::string& driver) {
  return "SYSTEM\\CurrentControlSet\\Services\\" + driver + "\\Performance";
}

Status save_capture(const std::string& path, const captures::Capture& cap) {
  return captures::write_replacing(path, [&](const std::string& tmp) { return captures::write_capture(tmp, cap); });
}

Status save_capture(const std::string& path, captures::Reader& from, const captures::Capture& meta,
                    const captures::RecordEdit& edit) {
  return captures::write_replacing(
      path, [&](const std::string& tmp) { return captures::rewrite_capture(from, meta, edit, tmp); });
}

Status find_driver(const captures::Capture& cap, const std::string& driver, DriverRange& out) {
  const std::string key = performance_key(driver);
  const captures::RegistryValue* first = find_value(cap, key, "First Counter");
  const captures::RegistryValue* last = find_value(cap, key, "Last Counter");
  if (!first || !last || first->data.size() < 4 || last->data.size() < 4)
    return Status::NotFound("driver " + driver + " is not loaded (no First/Last Counter under HKLM\\" + key + ")");
  out.driver = driver;
  out.first_counter = load_le32(first->data.data());
  out.last_counter = load_le32(last->data.data());
  out.first_help = dword_value(cap, key, "First Help", out.first_counter + 1);
  out.last_help = dword_value(cap, key, "Last Help", out.last_counter + 1);
  return Status::Ok();
}

bool symbol_index(const DriverRange& range, const Symbols& symbols, const std::string& symbol, uint32_t& index) {
  uint32_t off = 0;
  if (!find_symbol(symbols, symbol, off)) return false;
  index = range.first_counter + off;
  return true;
}

Status install(captures::Capture& cap_in, const CounterIni& ini, const Symbols& symbols, InstallReport* report) {
  DriverRange existing;
  if (find_driver(cap_in, ini.driver, existing).ok())
    return Status::InvalidArgument("driver " + ini.driver + " is already loaded (First Counter " +
                                   std::to_string(existing.first_counter) + "); run unlodctr first");
  std::vector<Resolved> texts;
  uint32_t max_offset = 0;
  if (Status s = resolve(ini, symbols, texts, max_offset); !s.ok()) return s;
  std::stable_sort(texts.begin(), texts.end(),
                   [](const Resolved& a, const Resolved& b) { return a.offset < b.offset; });

  captures::Capture cap = cap_in;  // changed copy; swapped in at the end
  InstallReport rep;
  const auto [last_counter, last_help] = perflib_last(cap);
  DriverRange& r = rep.range;
  r.driver = ini.driver;
  r.first_counter = last_counter + 2;
  r.first_help = last_help + 2;
  r.last_counter = r.first_counter + max_offset;
  r.last_help = r.first_help + max_offset;

  const std::vector<std::string> have = host_languages(cap);
  const bool vista = vista_or_later(cap);
  for (const std::string& lang : ini.languages) {
    // The table Windows keeps the language in: an INI's "004" is Perflib\804 (perfdata/select.h).
    const std::string table = perfdata::perflib_language(lang, vista);
    const auto it = std::find_if(have.begin(), have.end(), [&](const std::string& h) { return same_lang(h, table); });
    if (it == have.end()) {
      rep.skipped_languages.push_back(lang);
      continue;
    }
    rep.languages.push_back(*it);
    for (bool help : {false, true}) {
      size_t added = 0;  // the same in each copy of the table
      for (Bytes* slot : table_slots(cap, *it, help)) {
        perfdata::NameTable t;
        if (Status s = parse_table(*slot, *it, help, t); !s.ok()) return s;
        std::set<uint32_t> done;  // the first text of a symbol counts, as GetPrivateProfileString returns it
        for (const Resolved& x : texts) {
          if (x.text->help != help || !same_lang(x.text->lang, lang)) continue;
          const uint32_t index = (help ? r.first_help : r.first_counter) + x.offset;
          if (!done.insert(index).second) continue;
          t.entries.push_back({index, utf8_to_utf16(std::to_string(index)), utf8_to_utf16(x.text->text)});
        }
        added = done.size();
        if (!help) perfdata::set_declared_last(t, r.last_counter);
        *slot = perfdata::build_names(t);
      }
      rep.entries += added;
    }
  }
  const std::string key = performance_key(ini.driver);
  const uint32_t values[] = {r.first_counter, r.last_counter, r.first_help, r.last_help};
  for (size_t i = 0; i < 4; ++i) set_value(cap, key, kRangeValues[i], windows::kRegDword, reg_dword(values[i]));
  std::string object_list;
  for (const IniText& o : ini.objects) {
    uint32_t off = 0;
    find_symbol(symbols, o.symbol, off);
    if (std::find(rep.objects.begin(), rep.objects.end(), r.first_counter + off) != rep.objects.end()) continue;
    rep.objects.push_back(r.first_counter + off);
    object_list += (object_list.empty() ? "" : " ") + std::to_string(r.first_counter + off);
  }
  if (!object_list.empty()) set_value(cap, key, "Object List", windows::kRegSz, reg_sz(object_list));
  set_value(cap, kPerflibKey, "Last Counter", windows::kRegDword, reg_dword(r.last_counter));
  set_value(cap, kPerflibKey, "Last Help", windows::kRegDword, reg_dword(r.last_help));
  rep.perflib_last_counter = r.last_counter;
  rep.perflib_last_help = r.last_help;
  cap_in = std::move(cap);
  if (report) *report = std::move(rep);
  return Status::Ok();
}

Status uninstall(captures::Capture& cap_in, const std::string& driver, InstallReport* report) {
  InstallReport rep;
  if (Status s = find_driver(cap_in, driver, rep.range); !s.ok()) return s;
  const DriverRange& r = rep.range;
  captures::Capture cap = cap_in;
  remove_provider(cap, driver);
  auto [last_counter, last_help] = perflib_last(cap);
  uint32_t below_counter = 0, below_help = 0;  // highest indices left below the driver's range
  std::vector<std::pair<Bytes*, perfdata::NameTable>> counters;
  for (const std::string& lang : host_languages(cap)) {
    bool changed = false;
    for (bool help : {false, true}) {
      size_t removed = 0;  // the most any copy of the table lost
      for (Bytes* slot : table_slots(cap, lang, help)) {
        perfdata::NameTable t;
        if (Status s = parse_table(*slot, lang, help, t); !s.ok()) return s;
        const uint32_t lo = help ? r.first_help : r.first_counter, hi = help ? r.last_help : r.last_counter;
        const size_t before = t.entries.size();
        std::erase_if(t.entries, [&](const perfdata::NameEntry& e) { return e.index >= lo && e.index <= hi; });
        removed = std::max(removed, before - t.entries.size());
        for (const perfdata::NameEntry& e : t.entries)
          if (e.index < lo) (help ? below_help : below_counter) = std::max(help ? below_help : below_counter, e.index);
        if (help)
          *slot = perfdata::build_names(t);
        else
          counters.emplace_back(slot, std::move(t));
      }
      rep.entries += removed;
      changed |= removed > 0;
    }
    if (changed) rep.languages.push_back(lang);
  }
  last_counter = perfdata::last_after_unlodctr(last_counter, r.last_counter, below_counter);
  last_help = perfdata::last_after_unlodctr(last_help, r.last_help, below_help);
  for (auto& [slot, t] : counters) {
    perfdata::set_declared_last(t, last_counter);
    *slot = perfdata::build_names(t);
  }
  const std::string key = performance_key(driver);
  for (const char* name : kRangeValues) remove_value(cap, key, name);
  remove_value(cap, key, "Object List");
  if (find_value(cap, kPerflibKey, "Last Counter"))
    set_value(cap, kPerflibKey, "Last Counter", windows::kRegDword, reg_dword(last_counter));
  if (find_value(cap, kPerflibKey, "Last Help"))
    set_value(cap, kPerflibKey, "Last Help", windows::kRegDword, reg_dword(last_help));
  rep.perflib_last_counter = last_counter;
  rep.perflib_last_help = last_help;
  cap_in = std::move(cap);
  if (report) *report = std::move(rep);
  return Status::Ok();
}

}  // namespace perfsim::lodctr
