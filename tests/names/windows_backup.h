// Backups as Windows writes them, made byte by byte (not with names::write_backup), for the names
// tests of both executables: UTF-16LE (without a BOM as the real backups of issue 30 item 8, or
// with one, as later tools save them), CR LF, "\r\n\r\n[section]" headers and "\r\nINDEX=TEXT"
// lines, V1 strings only.
#pragma once
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/utf16.h"
#include "synth/profiles.h"
#include "synth/roles.h"
#include "synth/spec.h"

namespace perfsim::names {

// ASCII text as a real backup has it: each UTF-16 code unit little-endian, no BOM.
inline Bytes utf16le_no_bom(const std::string& ascii) {
  Bytes b;
  for (char c : ascii) {
    REQUIRE(uint8_t(c) < 0x80);
    b.push_back(uint8_t(c));
    b.push_back(0);
  }
  return b;
}

struct Entry {
  uint32_t index;
  std::string text;
  std::vector<std::string> more;  // lines the text spills onto
};

// The V1 strings a host of `profile` has: the names (and helps) of its V1 objects and their
// counters at the synth's English indices, then those of the extensible counters its OS comes
// with (the .NET Framework's CLR objects, synth/roles.h host_roles) after them, as LodCtr
// registered them. V2 counter sets' names are what no backup holds.
inline std::vector<Entry> v1_strings(const std::string& profile, uint32_t& last) {
  const synth::Profile* p = synth::find_profile(profile);
  REQUIRE(p);
  std::map<uint32_t, std::pair<std::string, std::string>> all;
  for (const synth::NameDef& n : synth::profile_names(*p)) all[n.index] = {n.name, n.help};
  std::set<uint32_t> v1;
  for (const synth::ObjectDesc& o : synth::builtin_objects(*p)) {
    if (o.perflib != synth::Perflib::kV1) continue;
    v1.insert(o.index);
    for (const synth::CounterDesc& c : o.counters) v1.insert(c.index);
  }
  std::vector<Entry> out;
  last = 0;
  for (uint32_t i : v1) {
    out.push_back({i, all.at(i).first, {}});
    out.push_back({i + 1, all.at(i).second, {}});
    last = std::max(last, i + 1);
  }
  synth::Spec plain;
  plain.profile = profile;
  uint32_t next = last + 1;
  auto add = [&](const std::string& name, const std::string& help) {
    out.push_back({next, name, {}});
    out.push_back({next + 1, help.empty() ? name : help, {}});
    last = next + 1;
    next += 2;
  };
  for (const std::string& role : synth::host_roles(plain, *p)) {
    const std::vector<synth::ObjectSpec>* objects = nullptr;
    REQUIRE(synth::role_objects(role, objects).ok());
    for (const synth::ObjectSpec& o : *objects) {
      add(o.name, o.help);
      for (const synth::CounterSpec& c : o.counters) add(c.name, c.help);
    }
  }
  return out;
}

// A backup file's text: [Perflib], one [PERF_] section, [PerfStrings_009] (and extra sections, skipped).
inline std::string windows_text(const std::vector<Entry>& strings, uint32_t last, const std::string& extra = "") {
  std::string t = extra;
  t += "\r\n\r\n[Perflib]\r\nBase Index=1847\r\nLast Counter=" + std::to_string(last - 1) +
       "\r\nLast Help=" + std::to_string(last);
  t += "\r\n\r\n[PERF_PerfOS]\r\nFirst Counter=2\r\nFirst Help=3\r\nLast Counter=1846\r\nLast Help=1847";
  t += "\r\n\r\n[PerfStrings_009]\r\n1=" + std::to_string(last - 1);
  for (const Entry& e : strings) {
    t += "\r\n" + std::to_string(e.index) + "=" + e.text;
    for (const std::string& m : e.more) t += "\r\n" + m;
  }
  return t;
}

// The backup file as Windows writes it: UTF-16LE, no BOM.
inline Bytes windows_backup(const std::vector<Entry>& strings, uint32_t last, const std::string& extra = "") {
  return utf16le_no_bom(windows_text(strings, last, extra));
}

// `strings` without the names in `drop` (and their help texts, at the index after).
inline std::vector<Entry> without(std::vector<Entry> strings, const std::set<std::string>& drop) {
  std::set<uint32_t> gone;
  for (const Entry& e : strings)
    if (e.index % 2 == 0 && drop.count(e.text)) gone.insert(e.index);
  std::erase_if(strings, [&](const Entry& e) { return gone.count(e.index - e.index % 2) != 0; });
  return strings;
}

// The .NET CLR objects' and counters' names (the role a 2003-on host has from its framework).
inline std::set<std::string> clr_names() {
  const std::vector<synth::ObjectSpec>* objects = nullptr;
  REQUIRE(synth::role_objects("dotnet", objects).ok());
  std::set<std::string> out;
  for (const synth::ObjectSpec& o : *objects) {
    out.insert(o.name);
    for (const synth::CounterSpec& c : o.counters) out.insert(c.name);
  }
  return out;
}

// A language section as a localized host's backup has it: [PerfStrings_<section>], index=text.
struct Language {
  std::string section;                   // as the file writes it: "0804", "CurrentLanguage"
  std::map<uint32_t, std::string> text;  // UTF-8
};

// windows_backup with `languages` after the English section, any text (UTF-16LE of UTF-8), with a
// BOM or without one.
inline Bytes localized_backup(const std::vector<Entry>& strings, uint32_t last, const std::vector<Language>& languages,
                              bool bom) {
  std::string t = windows_text(strings, last);
  for (const Language& l : languages) {
    t += "\r\n\r\n[PerfStrings_" + l.section + "]\r\n1=" + std::to_string(last - 1);
    for (const auto& [index, text] : l.text) t += "\r\n" + std::to_string(index) + "=" + text;
  }
  const std::u16string units = (bom ? std::u16string(1, u'\xFEFF') : std::u16string()) + utf8_to_utf16(t);
  Bytes out;
  out.reserve(units.size() * 2);
  for (char16_t u : units) {
    out.push_back(uint8_t(u & 0xFF));
    out.push_back(uint8_t(u >> 8));
  }
  return out;
}

// A Vista-era host's backup with sub-language tables, as `lodctr /s` names them: [PerfStrings_0804]
// and the like, CurrentLanguage the user interface language's (Chinese) table.
inline std::vector<Language> sublanguages() {
  return {{"0804", {{2, "系统"}, {3, "系统帮助"}, {238, "处理器"}, {239, "处理器帮助"}}},
          {"0404", {{2, "系統"}, {3, "系統說明"}, {238, "處理器"}, {239, "處理器說明"}}},
          {"0416", {{2, "Sistema"}, {3, "Ajuda (BR)"}, {238, "Processador"}, {239, "Ajuda do processador (BR)"}}},
          {"0816", {{2, "Sistema"}, {3, "Ajuda (PT)"}, {238, "Processador (PT)"}, {239, "Ajuda do processador (PT)"}}},
          {"0C0A", {{2, "Sistema"}, {3, "Ayuda"}, {238, "Procesador"}, {239, "Ayuda del procesador"}}},
          {"CurrentLanguage", {{2, "系统"}, {3, "系统帮助"}, {238, "处理器"}, {239, "处理器帮助"}}}};
}

}  // namespace perfsim::names
