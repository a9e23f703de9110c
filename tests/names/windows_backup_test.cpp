// Backups as Windows writes them, made here byte by byte (not with write_backup): UTF-16LE without
// a BOM, CR LF, "\r\n\r\n[section]" headers and "\r\nINDEX=TEXT" lines as real `lodctr /s` backups
// have them (issue 30 item 8), V1 strings only, and, as in real XP-era backups, help texts that go on over further
// lines starting with blanks or commas. Each loads into the host of its version.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "names/backup.h"
#include "windows_backup.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "synth/profiles.h"
#include "synth/roles.h"
#include "synth/synth.h"

namespace perfsim::names {
namespace {

synth::Spec spec_with(const std::string& profile, const Bytes& backup) {
  synth::Spec s;
  s.profile = profile;
  s.duration_s = 15;
  s.interval_ms = 15000;
  s.process_count = 5;
  s.names_file = "BACKUP.INI";
  s.names_text.assign(backup.begin(), backup.end());
  return s;
}

std::map<std::string, uint32_t> index_of(const captures::Capture& c) {
  perfdata::NameTable t;
  REQUIRE(perfdata::parse_names(c.names[0].counter, t).ok());
  std::map<std::string, uint32_t> m;
  for (const auto& [i, name] : t.to_map()) m.try_emplace(name, i);
  return m;
}

std::set<uint32_t> objects_of(const captures::Capture& c) {
  perfdata::DataBlock b;
  REQUIRE(perfdata::parse(c.records.at(0).payload, b).ok());
  std::set<uint32_t> out;
  for (const perfdata::Object& o : b.objects) out.insert(o.name_index);
  return out;
}

size_t count_containing(const std::vector<std::string>& lines, const std::string& what) {
  size_t n = 0;
  for (const std::string& l : lines) n += l.find(what) != std::string::npos;
  return n;
}

TEST_CASE("an XP-era backup whose help texts go on over several lines loads and the lines are counted once",
          "[names]") {
  uint32_t last = 0;
  std::vector<Entry> strings = v1_strings("xp", last);
  // System's help (index 3) and Memory's (5) spill over: a blank-led line, a comma-led one, and one
  // holding an '=' whose key is no index.
  for (Entry& e : strings) {
    if (e.index == 3) e.more = {"    and the rest of the sentence,", ", as it went on"};
    if (e.index == 5) e.more = {"   where paging = hard faults"};
  }
  const Bytes file = windows_backup(strings, last, "[info]\r\ndrivername=PerfOS\r\n[languages]\r\n009=English");
  NameSet set;
  std::vector<std::string> warnings;
  REQUIRE(parse_backup(file, set, &warnings).ok());
  const Strings* en = set.find("009");
  REQUIRE(en);
  CHECK(en->text.at(2) == "System");
  CHECK(en->text.at(3) == strings[1].text);  // the first line only, as Windows' loader reads it
  CHECK(en->text.at(4) == "Memory");
  CHECK(count_containing(warnings, "3 lines skipped") == 1);
  CHECK(count_containing(warnings, "lines skipped") == 1);
  CHECK(count_containing(warnings, "[info]") == 1);  // not a backup's section: skipped, said
  // The host of its version takes it, saying what was skipped, once.
  std::unique_ptr<synth::Synthesizer> syn;
  const Status st = synth::Synthesizer::create(spec_with("xp", file), syn);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(count_containing(syn->notes(), "3 lines skipped") == 1);
  CHECK(count_containing(syn->notes(), "Perflib V2") == 0);  // XP has no V2 counter sets
}

TEST_CASE("a Windows 8+ backup without the V2 counter sets' names loads: they go after its last index", "[names]") {
  for (const char* profile : {"2012", "2016", "2022"}) {
    INFO(profile);
    uint32_t last = 0;
    const std::vector<Entry> strings = v1_strings(profile, last);
    const Bytes file = windows_backup(strings, last);
    synth::Spec spec = spec_with(profile, file);
    captures::Capture cap;
    std::unique_ptr<synth::Synthesizer> syn;
    const Status st = synth::Synthesizer::create(spec, syn);
    INFO(st.message());
    REQUIRE(st.ok());
    REQUIRE(count_containing(syn->notes(), "Perflib V2") == 1);
    CHECK(count_containing(syn->notes(), "Processor Information") == 1);
    CHECK(count_containing(syn->notes(), "Thermal Zone Information") == 1);
    REQUIRE(synth::synthesize(spec, cap).ok());
    const std::map<std::string, uint32_t> index = index_of(cap);
    const uint32_t pi = index.at("Processor Information");
    CHECK(pi == last + 1);  // the first even index after the file's last one (Last Help, odd)
    CHECK(index.at("Terminal Services") > last);
    CHECK(index.at("Processor") == 238);  // V1 objects stay where the file has them
    CHECK(objects_of(cap).count(pi));
    for (const captures::RegistryValue& v : cap.registry)
      if (v.name == "Last Counter" && v.key.find("Perflib") != std::string::npos &&
          v.key.find("Services") == std::string::npos)
        CHECK(load_le32(v.data.data()) > pi);
    // Or where the user says.
    spec.v2_index = 40000;
    captures::Capture at;
    REQUIRE(synth::synthesize(spec, at).ok());
    CHECK(index_of(at).at("Processor Information") == 40000);
    spec.v2_index = 238;  // inside the file's indices: refused, saying how to choose
    const Status clash = synth::Synthesizer::create(spec, syn);
    CHECK_FALSE(clash.ok());
    CHECK(clash.message().find("--v2-index") != std::string::npos);
  }
}

TEST_CASE("a 2008-era backup without Terminal Services loads into the 2008 host with Terminal Services placed",
          "[names]") {
  uint32_t last = 0;
  const std::vector<Entry> strings = v1_strings("2008", last);
  const Bytes file = windows_backup(strings, last);
  std::unique_ptr<synth::Synthesizer> syn;
  const Status st = synth::Synthesizer::create(spec_with("2008", file), syn);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(count_containing(syn->notes(), "(Terminal Services)") == 1);
}

TEST_CASE("a V1 object the backup does not name is left out of the host, or refused with --strict-names", "[names]") {
  uint32_t last = 0;
  std::vector<Entry> strings = v1_strings("2016", last);
  for (Entry& e : strings)
    if (e.text == "Cache") e.text = "Cache (renamed)";  // a V1 object: nothing is invented for it
  synth::Spec spec = spec_with("2016", windows_backup(strings, last));
  std::unique_ptr<synth::Synthesizer> syn;
  const Status st = synth::Synthesizer::create(spec, syn);
  INFO(st.message());
  REQUIRE(st.ok());
  REQUIRE(count_containing(syn->notes(), "left out: ") == 1);
  CHECK(count_containing(syn->notes(), "left out: Cache") == 1);
  captures::Capture cap, full;
  REQUIRE(synth::synthesize(spec, cap).ok());
  REQUIRE(synth::synthesize(spec_with("2016", windows_backup(v1_strings("2016", last), last)), full).ok());
  CHECK(cap.catalog.size() + 1 == full.catalog.size());  // Cache, and only Cache, is not served
  CHECK(objects_of(cap).size() + 1 == objects_of(full).size());
  spec.strict_names = true;
  const Status strict = synth::Synthesizer::create(spec, syn);
  CHECK_FALSE(strict.ok());
  CHECK(strict.message().find("object \"Cache\"") != std::string::npos);
  CHECK(strict.message().find("--strict-names") != std::string::npos);
}

// The eight traffic counters of Terminal Services Session (the ninth, Total Errors, is also RAS
// Total's name on a real host) and the .NET CLR objects, which five Windows 8+ backups and an
// XP x64 one lack (issue 45 section 3).
const std::set<std::string> kTraffic = {"Input Bytes",   "Output Bytes", "Total Bytes",  "Input Frames",
                                        "Output Frames", "Total Frames", "Input Errors", "Output Errors"};

std::set<std::string> counters_of(const captures::Capture& c, const std::string& object) {
  perfdata::NameTable t;
  REQUIRE(perfdata::parse_names(c.names[0].counter, t).ok());
  const std::map<uint32_t, std::string> name = t.to_map();
  perfdata::DataBlock b;
  REQUIRE(perfdata::parse(c.records.at(0).payload, b).ok());
  for (const perfdata::Object& o : b.objects)
    if (name.count(o.name_index) && name.at(o.name_index) == object) {
      std::set<std::string> out;
      for (const perfdata::CounterDef& d : o.counters) out.insert(name.at(d.name_index));
      return out;
    }
  return {};
}

TEST_CASE(
    "a Windows 8+ backup without Terminal Services Session's traffic counters and .NET CLR loads: "
    "the host lacks what the backup lacks, said in one line",
    "[names]") {
  std::set<std::string> drop = clr_names();
  drop.insert(kTraffic.begin(), kTraffic.end());
  for (const char* profile : {"2012", "2016", "2022"}) {
    INFO(profile);
    uint32_t last = 0;
    const std::vector<Entry> strings = without(v1_strings(profile, last), drop);
    synth::Spec spec = spec_with(profile, windows_backup(strings, last));
    std::unique_ptr<synth::Synthesizer> syn;
    const Status st = synth::Synthesizer::create(spec, syn);
    INFO(st.message());
    REQUIRE(st.ok());
    REQUIRE(count_containing(syn->notes(), "left out: ") == 1);
    CHECK(count_containing(syn->notes(), ".NET CLR Memory") == 1);
    // Windows 8 on have no traffic counters in the object at all: nothing of it is left out.
    CHECK(count_containing(syn->notes(), "Terminal Services Session") == 0);
    captures::Capture cap;
    REQUIRE(synth::synthesize(spec, cap).ok());
    const std::map<std::string, uint32_t> index = index_of(cap);
    CHECK(index.count(".NET CLR Memory") == 0);
    const std::set<std::string> session = counters_of(cap, "Terminal Services Session");
    CHECK(session.size() == 15);
    CHECK(session.count("Working Set") == 1);
    CHECK(session.count("Input Bytes") == 0);
    spec.strict_names = true;
    const Status strict = synth::Synthesizer::create(spec, syn);
    CHECK_FALSE(strict.ok());
    CHECK(strict.message().find("object \".NET CLR Memory\"") != std::string::npos);
  }
}

TEST_CASE("a 2008 R2 backup without the traffic counters: those counters are left out, counted in the line",
          "[names]") {
  uint32_t last = 0;
  const std::vector<Entry> strings = without(v1_strings("2008r2", last), kTraffic);
  synth::Spec spec = spec_with("2008r2", windows_backup(strings, last));
  std::unique_ptr<synth::Synthesizer> syn;
  const Status st = synth::Synthesizer::create(spec, syn);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(count_containing(syn->notes(), "left out: 8 counters of Terminal Services Session") == 1);
  captures::Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  const std::set<std::string> session = counters_of(cap, "Terminal Services Session");
  CHECK(session.size() == 16);  // the 15 Process counters and Total Errors, which the file names
  CHECK(session.count("Total Errors") == 1);
  CHECK(session.count("Output Bytes") == 0);
  // The host's own catalogue serves them on 2008 R2 (6.1) and 2008 (6.0).
  captures::Capture plain;
  synth::Spec own = spec_with("2008r2", {});
  own.names_file.clear();
  own.names_text.clear();
  REQUIRE(synth::synthesize(own, plain).ok());
  CHECK(counters_of(plain, "Terminal Services Session").size() == 24);
}

TEST_CASE("an XP x64 backup (the 2003 code base) without .NET CLR loads into the 2003 host without it", "[names]") {
  uint32_t last = 0;
  const std::vector<Entry> strings = without(v1_strings("2003", last), clr_names());
  std::unique_ptr<synth::Synthesizer> syn;
  const Status st = synth::Synthesizer::create(spec_with("2003", windows_backup(strings, last)), syn);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(count_containing(syn->notes(), "left out: .NET CLR") == 1);
}

TEST_CASE("a sub-language table [PerfStrings_0804] is the host's Perflib key 804 and Counter 804", "[names]") {
  for (bool bom : {false, true}) {
    INFO("BOM " << bom);
    uint32_t last = 0;
    const std::vector<Entry> strings = v1_strings("2008", last);
    synth::Spec spec = spec_with("2008", localized_backup(strings, last, sublanguages(), bom));
    captures::Capture cap;
    std::unique_ptr<synth::Synthesizer> syn;
    const Status st = synth::Synthesizer::create(spec, syn);
    INFO(st.message());
    REQUIRE(st.ok());
    CHECK(count_containing(syn->notes(), "0804 -> 804") == 1);
    REQUIRE(synth::synthesize(spec, cap).ok());
    std::set<std::string> langs, keys;
    for (const captures::NameTable& t : cap.names) langs.insert(t.lang);
    CHECK(langs == std::set<std::string>{"009", "804", "404", "416", "816", "00A", "CurrentLanguage"});
    for (const captures::RegistryValue& v : cap.registry)
      if (v.name == "Counter") keys.insert(v.key.substr(v.key.rfind('\\') + 1));
    CHECK(keys == langs);  // Perflib\804, not Perflib\0804
    for (const captures::NameTable& t : cap.names)
      if (t.lang == "804") {
        perfdata::NameTable nt;
        REQUIRE(perfdata::parse_names(t.counter, nt).ok());
        CHECK(nt.to_map().at(238) == "处理器");
      }
  }
  // Before Vista, Portuguese is its primary language's table (016): two Portuguese sections are one.
  uint32_t last = 0;
  const std::vector<Entry> strings = v1_strings("2003", last);
  std::vector<Language> pt = {{"0416", {{238, "Processador"}}}};
  captures::Capture xp;
  REQUIRE(synth::synthesize(spec_with("2003", localized_backup(strings, last, pt, true)), xp).ok());
  CHECK(xp.names.back().lang == "016");
  pt.push_back({"0816", {{238, "Processador (PT)"}}});
  std::unique_ptr<synth::Synthesizer> syn;
  const Status both = synth::Synthesizer::create(spec_with("2003", localized_backup(strings, last, pt, true)), syn);
  CHECK_FALSE(both.ok());
  CHECK(both.message().find("Perflib\\016") != std::string::npos);
}

}  // namespace
}  // namespace perfsim::names
