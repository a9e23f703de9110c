// The localized host both names test executables use: a 2016 synth host with one custom object,
// whose names come from a `lodctr /s` backup this file makes: the synth's own English table (what
// `perfsim names export` of a plain synth host gives) with the custom object moved to indices of
// its own (5000...), plus German (007), Spanish (00A), Chinese (804), Arabic (001) tables and a
// CurrentLanguage copy of the German one, as on a German Windows.
#pragma once
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "captures/capture.h"
#include "core/text.h"
#include "core/utf16.h"
#include "names/backup.h"
#include "perfdata/names.h"
#include "synth/spec.h"
#include "synth/synth.h"

namespace perfsim::testing {

inline const char* kLocalizedSpec = R"(
[host]
name = "BERLIN01"
profile = "2016"
duration = "5m"
interval = "15s"
[processes]
count = 6
threads_max = 3
[[objects]]
name = "Web Service"
help = "Requests served by the web server."
[[objects.counters]]
name = "Total Method Requests/sec"
help = "Requests per second."
type = "PERF_COUNTER_COUNTER"
value = 400
[[objects.counters]]
name = "Current Connections"
help = "Open connections."
type = "PERF_COUNTER_RAWCOUNT"
value = 1234
)";

constexpr uint32_t kWebService = 5000, kRequests = 5002, kConnections = 5004;

struct Translation {
  const char* lang;
  const char* object;
  const char* requests;
  const char* connections;
  const char* processor;
};
// Texts as the localized Windows tables have them for Processor; the web names are this test's.
inline const Translation kTranslations[] = {
    {"007", "Webdienst", "Methodenanforderungen gesamt/s", "Aktuelle Verbindungen", "Prozessor"},
    {"00A", "Servicio Web", "Total de solicitudes de método/s", "Conexiones actuales", "Procesador"},
    {"804", "Web 服务", "请求总数/秒", "当前连接", "处理器"},
    {"001", "خدمة ويب", "إجمالي طلبات الأسلوب/ثانية", "الاتصالات الحالية", "المعالج"},
};

inline synth::Spec localized_spec() {
  synth::Spec spec;
  REQUIRE(synth::parse_spec_toml(kLocalizedSpec, spec).ok());
  return spec;
}

// The index the synth gives `name` in the spec's 009 table without a names file.
inline uint32_t synth_own_index(const std::string& name) {
  captures::Capture plain;
  synth::Spec spec = localized_spec();
  spec.duration_s = 15;
  REQUIRE(synth::synthesize(spec, plain).ok());
  REQUIRE(!plain.names.empty());
  perfdata::NameTable t;
  REQUIRE(perfdata::parse_names(plain.names[0].counter, t).ok());
  for (const perfdata::NameEntry& e : t.entries)
    if (e.text == utf8_to_utf16(name)) return e.index;
  FAIL("no " << name << " in the synth's own table");
  return 0;
}

// The backup: English from the plain synth header, the custom object at 5000.., the translations.
inline names::NameSet localized_names() {
  captures::Capture plain;
  synth::Spec spec = localized_spec();
  spec.duration_s = 15;
  REQUIRE(synth::synthesize(spec, plain).ok());
  names::NameSet set = names::from_capture(plain);
  REQUIRE(set.languages.size() == 1);
  names::Strings& en = set.languages[0];
  // Drop the synth's own indices for the custom object (names and their help texts; the profile's
  // counter sets above Base Index stay) and put the object at 5000.
  std::vector<uint32_t> custom;
  for (const auto& [i, text] : en.text)
    if (i % 2 == 0 && (text == "Web Service" || text == "Total Method Requests/sec" || text == "Current Connections"))
      custom.push_back(i);
  for (uint32_t i : custom) {
    en.text.erase(i);
    en.text.erase(i + 1);
  }
  en.text[kWebService] = "Web Service";
  en.text[kWebService + 1] = "Requests served by the web server.";
  en.text[kRequests] = "Total Method Requests/sec";
  en.text[kRequests + 1] = "Requests per second.";
  en.text[kConnections] = "Current Connections";
  en.text[kConnections + 1] = "Open connections.";
  en.text[1] = std::to_string(kConnections);
  set.perflib = {{"Base Index", 1847}, {"Last Counter", kConnections}, {"Last Help", kConnections + 1}};
  set.services.erase(std::remove_if(set.services.begin(), set.services.end(),
                                    [](const names::ServiceRange& s) { return s.service == "WebService"; }),
                     set.services.end());
  set.services.push_back({"WebService",
                          {{"First Counter", kWebService},
                           {"First Help", kWebService + 1},
                           {"Last Counter", kConnections},
                           {"Last Help", kConnections + 1}}});
  for (const Translation& t : kTranslations) {
    names::Strings s;
    s.lang = t.lang;
    s.text = {{1, std::to_string(kConnections)}, {238, t.processor},
              {kWebService, t.object},           {kWebService + 1, std::string(t.object) + " (help)"},
              {kRequests, t.requests},           {kConnections, t.connections}};
    set.languages.push_back(s);
    if (std::string(t.lang) == "007") {
      s.lang = "CurrentLanguage";
      set.languages.push_back(s);
    }
  }
  return set;
}

// A scratch directory under the build tree's temp, removed with the object.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    path = std::filesystem::temp_directory_path() /
           ("perfsim-names-" + std::to_string(::getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name, const Bytes& data) const {
    const std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
    return p;
  }
};

// The encodings a backup arrives in: as Windows writes it and as people re-save it.
enum class Encoding { kUtf16LeBom, kUtf16Le, kUtf8Bom, kUtf8, kLatin1 };
inline const std::pair<Encoding, const char*> kEncodings[] = {
    {Encoding::kUtf16LeBom, "UTF-16LE with BOM"},
    {Encoding::kUtf16Le, "UTF-16LE without BOM"},
    {Encoding::kUtf8Bom, "UTF-8 with BOM"},
    {Encoding::kUtf8, "UTF-8"},
    {Encoding::kLatin1, "Latin-1"},
};

// write_backup's bytes in `e`; Latin-1 holds only the languages whose texts fit in it.
inline Bytes encoded_backup(names::NameSet set, Encoding e) {
  if (e == Encoding::kLatin1)
    std::erase_if(set.languages, [](const names::Strings& s) {
      for (const auto& [i, t] : s.text)
        for (char16_t c : utf8_to_utf16(t))
          if (c > 0xFF) return true;
      return false;
    });
  const Bytes utf16 = names::write_backup(set);  // UTF-16LE with a BOM
  const std::string text = decode_text(utf16);
  Bytes out;
  switch (e) {
    case Encoding::kUtf16LeBom:
      return utf16;
    case Encoding::kUtf16Le:
      return Bytes(utf16.begin() + 2, utf16.end());
    case Encoding::kUtf8Bom:
      out = {0xEF, 0xBB, 0xBF};
      [[fallthrough]];
    case Encoding::kUtf8:
      out.insert(out.end(), text.begin(), text.end());
      return out;
    case Encoding::kLatin1:
      for (char16_t c : utf8_to_utf16(text)) out.push_back(uint8_t(c));
      return out;
  }
  return out;
}

// The localized host: synthesize the spec with the backup written to `dir` in `e`.
inline captures::Capture localized_capture(const ScratchDir& dir, const names::NameSet& set,
                                           Encoding e = Encoding::kUtf16LeBom) {
  synth::Spec spec = localized_spec();
  spec.names_file = dir.file("backup.ini", encoded_backup(set, e));
  captures::Capture cap;
  const Status s = synth::synthesize(spec, cap);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return cap;
}

}  // namespace perfsim::testing
