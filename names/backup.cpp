#include "names/backup.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "captures/reader.h"
#include "captures/registry_values.h"
#include "core/file.h"
#include "core/ini.h"
#include "core/text.h"
#include "core/utf16.h"
#include "perfdata/limits.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "windows/constants.h"
#include "windows/registry_keys.h"

namespace perfsim::names {
namespace {

using windows::kPerflibKey;
const char kServices[] = "SYSTEM\\CurrentControlSet\\Services\\";
const char kPerformance[] = "\\Performance";
// Real multi-language backups reach tens of MiB in UTF-16; 64 MiB still refuses a runaway file.
constexpr size_t kMaxNamesFile = size_t(64) << 20;

bool starts_with_i(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(std::string_view(s).substr(0, prefix.size()), prefix);
}

bool parse_decimal(const std::string& s, uint32_t& v) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + uint64_t(c - '0');
  }
  if (x > 0xFFFFFFFFull) return false;
  v = uint32_t(x);
  return true;
}

void put_line(std::u16string& out, std::string_view line) {
  out += u"\r\n";
  out += utf8_to_utf16(line);
}

void put_values(std::u16string& out, const Values& values) {
  for (const auto& [key, v] : values) put_line(out, key + "=" + std::to_string(v));
}

Status read_file(const std::string& path, std::string_view what, Bytes& out) {
  std::string text;
  if (Status s = read_bounded_file(path, what, text, kMaxNamesFile); !s.ok()) return s;
  out.assign(text.begin(), text.end());
  return Status::Ok();
}

// Names at even indices (and 1, the Counter table's first), help texts at odd ones: each within
// its bound (perfdata/limits.h), which no Windows table exceeds.
perfdata::limits::Bound bound_of(uint32_t index) {
  return index % 2 == 0 || index == 1 ? perfdata::limits::kCounterName : perfdata::limits::kHelpText;
}

void merge_table(ByteView table, std::map<uint32_t, std::string>& into) {
  perfdata::NameTable t;
  if (!perfdata::parse_names(table, t).ok()) return;
  for (const auto& [index, text] : t.to_map()) into.emplace(index, text);
}

}  // namespace

std::optional<uint32_t> value_of(const Values& values, const std::string& key) {
  for (const auto& [k, v] : values)
    if (iequals(k, key)) return v;
  return std::nullopt;
}

const Strings* NameSet::find(const std::string& lang) const {
  for (const Strings& s : languages)
    if (iequals(s.lang, lang)) return &s;
  return nullptr;
}

const ServiceRange* NameSet::service(const std::string& name) const {
  for (const ServiceRange& s : services)
    if (iequals(s.service, name)) return &s;
  return nullptr;
}

std::optional<uint32_t> NameSet::perflib_value(const std::string& key) const { return value_of(perflib, key); }

Status to_perflib_languages(NameSet& set, bool vista_or_later, std::vector<std::string>* renamed) {
  std::map<std::string, std::string> taken;  // Perflib name -> section name
  for (Strings& s : set.languages) {
    const std::string name = perfdata::perflib_language(s.lang, vista_or_later);
    if (name.empty()) continue;  // not a LANGID: kept as written
    const auto [at, fresh] = taken.emplace(name, s.lang);
    if (!fresh)
      return Status::InvalidArgument("[PerfStrings_" + at->second + "] and [PerfStrings_" + s.lang +
                                     "] are one table on this Windows version (Perflib\\" + name + ")");
    if (name == s.lang) continue;
    if (renamed) renamed->push_back(s.lang + " -> " + name);
    s.lang = name;
  }
  return Status::Ok();
}

Status parse_backup(ByteView file, NameSet& out, std::vector<std::string>* warnings) {
  NameSet set;
  enum class In { kPerflib, kService, kStrings, kOther } in = In::kOther;
  std::vector<IniLine> lines;
  IniSkipped skipped;
  if (Status s = read_ini(file, IniOptions{}, lines, skipped); !s.ok()) return s;
  for (const IniLine& l : lines) {
    const std::string where = "line " + std::to_string(l.line);
    if (l.section) {
      const std::string& name = l.key;
      if (iequals(name, "Perflib")) {
        in = In::kPerflib;
      } else if (starts_with_i(name, "PERF_") && name.size() > 5) {
        in = In::kService;
        set.services.push_back({name.substr(5), {}});
      } else if (starts_with_i(name, "PerfStrings_") && name.size() > 12) {
        in = In::kStrings;
        const std::string lang = name.substr(12);
        if (set.find(lang))
          return Status::InvalidArgument(where + ": " + quote_input("[" + name + "]") + " appears twice");
        set.languages.push_back({lang, {}});
      } else {
        in = In::kOther;
        if (warnings)
          warnings->push_back(where + ": section " + quote_input("[" + name + "]") +
                              " is not a name backup's; skipped");
      }
      continue;
    }
    if (in == In::kOther) continue;
    if (in == In::kStrings) {
      // A key that is no decimal index is no string (a help text's continuation holding a '=');
      // counted with the lines without one.
      uint32_t index = 0;
      if (!parse_decimal(l.key, index)) {
        skipped.add(l.line);
        continue;
      }
      if (const perfdata::limits::Bound b = bound_of(index); !perfdata::limits::within(l.raw_value, b))
        return Status::InvalidArgument(where + ": the text of index " + std::to_string(index) + ", " +
                                       perfdata::limits::too_long(l.raw_value, b) +
                                       ": no Windows name table holds one");
      if (!set.languages.back().text.emplace(index, l.raw_value).second && warnings)
        warnings->push_back(where + ": index " + std::to_string(index) + " repeated in [PerfStrings_" +
                            set.languages.back().lang + "]; the first text is kept");
      continue;
    }
    uint32_t v = 0;
    if (!parse_decimal(l.value, v))
      return Status::InvalidArgument(where + ": " + quote_input(l.key + "=" + l.value, kQuoteChars, '"') +
                                     " is not KEY=NUMBER (a decimal value)");
    (in == In::kPerflib ? set.perflib : set.services.back().values).emplace_back(l.key, v);
  }
  if (set.languages.empty())
    return Status::InvalidArgument(
        "no [PerfStrings_LLL] section: not a `lodctr /s` backup (its strings are in "
        "[PerfStrings_009] etc.)");
  if (warnings && skipped.count)
    warnings->push_back(skipped.warning(
        "not INDEX=TEXT, as the continuation lines of a help text that spans several lines are; Windows' "
        "loader reads no string from them either"));
  out = std::move(set);
  return Status::Ok();
}

Bytes write_backup(const NameSet& set) {
  std::u16string text;
  if (!set.perflib.empty()) {
    text += u"\r\n\r\n[Perflib]";
    put_values(text, set.perflib);
  }
  for (const ServiceRange& s : set.services) {
    text += u"\r\n\r\n";
    text += utf8_to_utf16("[PERF_" + s.service + "]");
    put_values(text, s.values);
  }
  for (const Strings& s : set.languages) {
    text += u"\r\n\r\n";
    text += utf8_to_utf16("[PerfStrings_" + s.lang + "]");
    for (const auto& [index, t] : s.text) put_line(text, std::to_string(index) + "=" + t);
  }
  text += u"\r\n";
  Bytes out{0xFF, 0xFE};
  put_utf16le(out, text);
  return out;
}

Status parse_dat(ByteView counter, ByteView help, const std::string& lang, Strings& out) {
  Strings s;
  s.lang = lang;
  for (auto [bytes, what] : {std::pair{counter, "perfc"}, std::pair{help, "perfh"}}) {
    perfdata::NameTable t;
    if (Status st = perfdata::parse_names(bytes, t); !st.ok())
      return Status::InvalidArgument(std::string(what) + lang + ".dat: " + st.message());
    size_t at = 0;  // byte offset of the entry's text
    for (const perfdata::NameEntry& e : t.entries) {
      at += (e.index_text.size() + 1) * 2;
      std::string text = utf16_to_utf8(e.text);
      if (const perfdata::limits::Bound b = bound_of(e.index); !perfdata::limits::within(text, b))
        return Status::InvalidArgument(std::string(what) + lang + ".dat: at offset " + std::to_string(at) +
                                       ": the text of index " + std::to_string(e.index) + ", " +
                                       perfdata::limits::too_long(text, b) + ": no Windows name table holds one");
      at += (e.text.size() + 1) * 2;
      s.text.emplace(e.index, std::move(text));
    }
  }
  out = std::move(s);
  return Status::Ok();
}

Status load_names(const std::string& path, NameSet& out, std::vector<std::string>* warnings) {
  namespace fs = std::filesystem;
  const std::string file = fs::path(path).filename().string();
  // perfcLLL.dat / perfhLLL.dat: REG_MULTI_SZ tables of one language.
  if (file.size() >= 9 && (starts_with_i(file, "perfc") || starts_with_i(file, "perfh")) &&
      iequals(file.substr(file.size() - 4), ".dat")) {
    const std::string lang = file.substr(5, file.size() - 9);
    const fs::path dir = fs::path(path).parent_path();
    std::string paths[2];  // counter, help
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir.empty() ? "." : dir, ec))
      for (int k = 0; k < 2; ++k)
        if (iequals(e.path().filename().string(), std::string(k ? "perfh" : "perfc") + lang + ".dat"))
          paths[k] = e.path().string();
    for (int k = 0; k < 2; ++k)
      if (paths[k].empty())
        return Status::NotFound(path + ": " + (k ? "perfh" : "perfc") + lang +
                                ".dat not found next to it (raw tables come in pairs: perfc = names, perfh = help)");
    Bytes c, h;
    if (Status s = read_file(paths[0], "name table", c); !s.ok()) return s;
    if (Status s = read_file(paths[1], "help table", h); !s.ok()) return s;
    NameSet set;
    set.languages.emplace_back();
    if (Status s = parse_dat(c, h, lang, set.languages.back()); !s.ok())
      return Status::InvalidArgument(path + ": " + s.message());
    out = std::move(set);
    return Status::Ok();
  }
  Bytes data;
  if (Status s = read_file(path, "lodctr /s backup", data); !s.ok()) return s;
  std::vector<std::string> w;
  if (Status s = parse_backup(data, out, &w); !s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  if (warnings)
    for (std::string& x : w) warnings->push_back(path + ": " + x);
  return Status::Ok();
}

Status load_any(const std::string& path, NameSet& out, std::vector<std::string>* warnings) {
  char magic[8] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(magic, sizeof magic);
  if (f.gcount() == 8 && std::string_view(magic, 8) == "PSIMCAP1") {
    std::unique_ptr<captures::Reader> r;
    if (Status s = captures::Reader::open(path, r); !s.ok()) return s;
    if (warnings)  // damage, and names left out for their length
      for (const std::string& w : r->warnings()) warnings->push_back(path + ": " + w);
    out = from_capture(r->metadata());
    return Status::Ok();
  }
  return load_names(path, out, warnings);
}

NameSet from_capture(const captures::Capture& cap) {
  NameSet set;
  for (const char* key : {"Base Index", "Last Counter", "Last Help"})
    for (const captures::RegistryValue& v : cap.registry)
      if (iequals(v.key, kPerflibKey) && iequals(v.name, key) && v.data.size() >= 4) {
        set.perflib.emplace_back(key, load_le32(v.data.data()));
        break;
      }
  const std::string prefix = kServices;
  for (const captures::RegistryValue& v : cap.registry) {
    if (!starts_with_i(v.key, prefix) || v.key.size() <= prefix.size() + 12 ||
        !iequals(v.key.substr(v.key.size() - 12), kPerformance) || v.data.size() < 4 || v.type != windows::kRegDword)
      continue;
    const std::string svc = v.key.substr(prefix.size(), v.key.size() - prefix.size() - 12);
    const bool range = iequals(v.name, "First Counter") || iequals(v.name, "First Help") ||
                       iequals(v.name, "Last Counter") || iequals(v.name, "Last Help") ||
                       iequals(v.name, "Disable Performance Counters");
    if (!range || svc.find('\\') != std::string::npos) continue;
    auto it = std::find_if(set.services.begin(), set.services.end(),
                           [&](const ServiceRange& s) { return iequals(s.service, svc); });
    if (it == set.services.end()) it = set.services.insert(set.services.end(), {svc, {}});
    it->values.emplace_back(v.name, load_le32(v.data.data()));
  }
  // Only services with strings loaded (a First Counter), as BackupPerfRegistryToFile lists them.
  std::erase_if(set.services, [](const ServiceRange& s) { return !value_of(s.values, "First Counter"); });
  for (const captures::NameTable& t : cap.names) {
    Strings s;
    s.lang = t.lang;
    merge_table(t.counter, s.text);
    merge_table(t.help, s.text);
    set.languages.push_back(std::move(s));
  }
  return set;
}

Bytes counter_table(const Strings& s) {
  std::vector<std::pair<uint32_t, std::string>> pairs;
  if (auto it = s.text.find(1); it != s.text.end()) pairs.emplace_back(1, it->second);
  for (const auto& [index, text] : s.text)
    if (index % 2 == 0) pairs.emplace_back(index, text);
  return perfdata::build_names(perfdata::make_names(pairs));
}

Bytes help_table(const Strings& s) {
  std::vector<std::pair<uint32_t, std::string>> pairs;
  for (const auto& [index, text] : s.text)
    if (index % 2 == 1 && index > 1) pairs.emplace_back(index, text);
  return perfdata::build_names(perfdata::make_names(pairs));
}

void to_capture(const NameSet& set, captures::Capture& cap) {
  const std::string sub = std::string(kPerflibKey) + "\\";
  std::erase_if(cap.registry, [&](const captures::RegistryValue& v) {
    return starts_with_i(v.key, sub) && v.key.find('\\', sub.size()) == std::string::npos &&
           (iequals(v.name, "Counter") || iequals(v.name, "Help"));
  });
  cap.names.clear();
  for (const Strings& s : set.languages) {
    captures::NameTable t{s.lang, counter_table(s), help_table(s)};
    cap.registry.push_back({sub + s.lang, "Counter", windows::kRegMultiSz, t.counter});
    cap.registry.push_back({sub + s.lang, "Help", windows::kRegMultiSz, t.help});
    cap.names.push_back(std::move(t));
  }
  for (const auto& [key, v] : set.perflib)
    captures::set_value(cap, kPerflibKey, key, windows::kRegDword, captures::reg_dword(v));
  for (const ServiceRange& s : set.services)
    for (const auto& [key, v] : s.values)
      captures::set_value(cap, kServices + s.service + kPerformance, key, windows::kRegDword, captures::reg_dword(v));
}

}  // namespace perfsim::names
