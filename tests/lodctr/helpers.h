// Shared by the lodctr tests: a small synthetic host (with a French table next to the English
// one), name lookups in its tables, and paths of the test data and fixtures.
#pragma once
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "captures/capture.h"
#include "core/utf16.h"
#include "lodctr/install.h"
#include "perfdata/names.h"
#include "synth/synth.h"

namespace perfsim::lodctr::test {

inline std::string data(const std::string& name) {
  return std::string(PERFSIM_SOURCE_DIR) + "/tests/lodctr/data/" + name;
}
inline std::string fixture(const std::string& name) { return std::string(PERFSIM_FIXTURES_DIR) + "/lodctr/" + name; }
inline std::string example(const std::string& name) {
  return std::string(PERFSIM_SOURCE_DIR) + "/lodctr/examples/" + name;
}

inline Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, ByteView b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// A private scratch directory per test case.
inline std::string scratch(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("perfsim-lodctr-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Three ticks of a small 2016 host, plus a 00C table (a copy of 009, as on a French install).
inline const captures::Capture& host() {
  static const captures::Capture cap = [] {
    synth::Spec s;
    s.interval_ms = 15000;
    s.duration_s = 45;
    s.process_count = 4;
    s.threads_max = 3;
    captures::Capture c;
    REQUIRE(synth::synthesize(s, c).ok());
    captures::NameTable fr = c.names.at(0);
    fr.lang = "00C";
    c.names.push_back(fr);
    c.registry.push_back({std::string(kPerflibKey) + "\\00C", "Counter", 7, fr.counter});
    c.registry.push_back({std::string(kPerflibKey) + "\\00C", "Help", 7, fr.help});
    return c;
  }();
  return cap;
}

inline uint32_t dword(const captures::Capture& c, const std::string& key, const std::string& name) {
  const captures::RegistryValue* v = find_value(c, key, name);
  REQUIRE(v != nullptr);
  REQUIRE(v->data.size() == 4);
  return load_le32(v->data.data());
}

inline perfdata::NameTable table(const Bytes& b) {
  perfdata::NameTable t;
  REQUIRE(perfdata::parse_names(b, t).ok());
  return t;
}

// The table of `lang` the host serves for `Counter <lang>` (help: `Help <lang>`).
inline perfdata::NameTable served(const captures::Capture& c, const std::string& lang, bool help) {
  for (const captures::NameTable& t : c.names)
    if (t.lang == lang) return table(help ? t.help : t.counter);
  FAIL("no " << lang << " table");
  return {};
}

// The same table as HKLM Perflib\<lang> holds it.
inline perfdata::NameTable registry_table(const captures::Capture& c, const std::string& lang, bool help) {
  const captures::RegistryValue* v = find_value(c, std::string(kPerflibKey) + "\\" + lang, help ? "Help" : "Counter");
  REQUIRE(v != nullptr);
  return table(v->data);
}

inline std::string text_at(const perfdata::NameTable& t, uint32_t index) {
  const std::u16string* s = t.find(index);
  return s ? utf16_to_utf8(*s) : std::string("<none>");
}

// Registry and name tables equal (what lodctr may change).
inline bool same_names_and_registry(const captures::Capture& a, const captures::Capture& b) {
  if (a.registry.size() != b.registry.size() || a.names.size() != b.names.size() ||
      a.catalog.size() != b.catalog.size())
    return false;
  for (size_t i = 0; i < a.registry.size(); ++i)
    if (a.registry[i].key != b.registry[i].key || a.registry[i].name != b.registry[i].name ||
        a.registry[i].data != b.registry[i].data)
      return false;
  for (size_t i = 0; i < a.names.size(); ++i)
    if (a.names[i].counter != b.names[i].counter || a.names[i].help != b.names[i].help) return false;
  return true;
}

}  // namespace perfsim::lodctr::test
