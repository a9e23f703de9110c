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
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "synth/profiles.h"
#include "synth/roles.h"
#include "synth/synth.h"

namespace perfsim::names {
namespace {

// ASCII text as a real backup has it: each UTF-16 code unit little-endian, no BOM.
Bytes utf16le_no_bom(const std::string& ascii) {
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
std::vector<Entry> v1_strings(const std::string& profile, uint32_t& last) {
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

// A backup file: [Perflib], one [PERF_] section, [PerfStrings_009] (and extra sections, skipped).
Bytes windows_backup(const std::vector<Entry>& strings, uint32_t last, const std::string& extra = "") {
  std::string t = extra;
  t += "\r\n\r\n[Perflib]\r\nBase Index=1847\r\nLast Counter=" + std::to_string(last - 1) +
       "\r\nLast Help=" + std::to_string(last);
  t += "\r\n\r\n[PERF_PerfOS]\r\nFirst Counter=2\r\nFirst Help=3\r\nLast Counter=1846\r\nLast Help=1847";
  t += "\r\n\r\n[PerfStrings_009]\r\n1=" + std::to_string(last - 1);
  for (const Entry& e : strings) {
    t += "\r\n" + std::to_string(e.index) + "=" + e.text;
    for (const std::string& m : e.more) t += "\r\n" + m;
  }
  return utf16le_no_bom(t);
}

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

TEST_CASE("a V1 backup still has to name every V1 object the host serves", "[names]") {
  uint32_t last = 0;
  std::vector<Entry> strings = v1_strings("2016", last);
  for (Entry& e : strings)
    if (e.text == "Cache") e.text = "Cache (renamed)";  // a V1 object: nothing is invented for it
  std::unique_ptr<synth::Synthesizer> syn;
  const Status st = synth::Synthesizer::create(spec_with("2016", windows_backup(strings, last)), syn);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("object \"Cache\"") != std::string::npos);
}

}  // namespace
}  // namespace perfsim::names
