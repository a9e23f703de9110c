// synth --names: a host whose tables come from a backup serves every language, places its objects
// at the file's indices, and exports back to the same strings.
#include <catch2/catch.hpp>
#include <set>

#include "localized_host.h"
#include "names/backup.h"
#include "names/diff.h"
#include "perfdata/model.h"
#include "replayer/host.h"

namespace perfsim::testing {
namespace {

std::set<uint32_t> objects_of(const Bytes& payload) {
  perfdata::DataBlock b;
  REQUIRE(perfdata::parse(payload, b).ok());
  std::set<uint32_t> out;
  for (const perfdata::Object& o : b.objects) out.insert(o.name_index);
  return out;
}

TEST_CASE("synth with a names backup serves every language and places objects at the file's indices", "[names]") {
  ScratchDir dir;
  const names::NameSet set = localized_names();
  const captures::Capture cap = localized_capture(dir, set);
  REQUIRE(cap.names.size() == set.languages.size());
  for (const names::Strings& s : set.languages) {
    const auto t = std::find_if(cap.names.begin(), cap.names.end(), [&](const auto& n) { return n.lang == s.lang; });
    REQUIRE(t != cap.names.end());
    CHECK(t->counter == names::counter_table(s));
    CHECK(t->help == names::help_table(s));
  }
  bool web = false;
  for (const captures::ObjectInfo& o : cap.catalog) web |= o.index == kWebService && o.provider == "WebService";
  CHECK(web);
  REQUIRE(!cap.records.empty());
  const std::set<uint32_t> global = objects_of(cap.records[0].payload);
  CHECK(global.count(kWebService));
  CHECK(global.count(238));
  CHECK_FALSE(global.count(synth_own_index("Web Service")));  // where the synth alone puts it
  perfdata::DataBlock b;
  REQUIRE(perfdata::parse(cap.records[0].payload, b).ok());
  for (const perfdata::Object& o : b.objects)
    if (o.name_index == kWebService) {
      CHECK(o.help_index == kWebService + 1);
      REQUIRE(o.counters.size() == 2);
      CHECK(o.counters[0].name_index == kRequests);
      CHECK(o.counters[1].name_index == kConnections);
      CHECK(o.counters[1].help_index == kConnections + 1);
    }
}

TEST_CASE("names export of a --names host gives back the backup's strings and values", "[names]") {
  ScratchDir dir;
  const names::NameSet set = localized_names();
  const captures::Capture cap = localized_capture(dir, set);
  const names::NameSet out = names::from_capture(cap);
  REQUIRE(out.languages.size() == set.languages.size());
  for (size_t i = 0; i < set.languages.size(); ++i) {
    CHECK(out.languages[i].lang == set.languages[i].lang);
    CHECK(out.languages[i].text == set.languages[i].text);
  }
  CHECK(out.perflib == set.perflib);
  const names::ServiceRange* web = out.service("WebService");
  REQUIRE(web);
  CHECK(names::value_of(web->values, "First Counter") == kWebService);
  CHECK(names::value_of(web->values, "Last Help") == kConnections + 1);
  const auto d = names::diff(set, out);
  for (const auto& line : d) UNSCOPED_INFO(names::to_line(line));
  CHECK(d.empty());  // values, [PERF_] ranges and every string
}

TEST_CASE("the replayer answers Counter/Help LLL and CurrentLanguage from the backup", "[names]") {
  ScratchDir dir;
  const names::NameSet set = localized_names();
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(localized_capture(dir, set), {replayer::TimelineMode::kFrozen, 1}, host).ok());
  for (const char* lang : {"009", "007", "00A", "804", "001", "CurrentLanguage", "currentlanguage"}) {
    INFO(lang);
    const names::Strings* s = set.find(lang);
    REQUIRE(s);
    const auto counter = host->content(replayer::PerfKey::kData, std::string("Counter ") + lang, 1);
    CHECK(counter.status == 0);
    CHECK(counter.data.to_bytes() == names::counter_table(*s));
    const auto help = host->content(replayer::PerfKey::kData, std::string("Help ") + lang, 1);
    CHECK(help.data.to_bytes() == names::help_table(*s));
  }
  CHECK(host->content(replayer::PerfKey::kData, "Counter 00C", 1).status == 2);  // a language the file lacks
}

// Microsoft, "Retrieving Counter Names and Help Text": a bare Counter/Help is English over
// HKEY_PERFORMANCE_DATA and HKEY_PERFORMANCE_TEXT, the user's UI language over
// HKEY_PERFORMANCE_NLSTEXT.
TEST_CASE("a bare Counter/Help is English over HKPD and HKPT, the UI language over HKPN", "[names]") {
  ScratchDir dir;
  const auto served = [&dir](const names::NameSet& set, replayer::PerfKey key, const char* value) {
    std::shared_ptr<replayer::SimulatedHost> host;
    REQUIRE(
        replayer::SimulatedHost::load(localized_capture(dir, set), {replayer::TimelineMode::kFrozen, 1}, host).ok());
    const auto c = host->content(key, value, 1);
    REQUIRE(c.status == 0);
    return c.data.to_bytes();
  };
  const auto keep = [](names::NameSet set, std::set<std::string> langs) {
    std::erase_if(set.languages, [&](const names::Strings& s) { return !langs.count(s.lang); });
    return set;
  };
  const names::NameSet all = localized_names();
  const names::Strings& en = *all.find("009");
  const names::Strings& de = *all.find("007");
  // A German host: CurrentLanguage (a copy of 007) is what HKPN answers.
  CHECK(served(all, replayer::PerfKey::kNlsText, "Counter") == names::counter_table(*all.find("CurrentLanguage")));
  CHECK(served(all, replayer::PerfKey::kNlsText, "Help") == names::help_table(*all.find("CurrentLanguage")));
  CHECK(served(all, replayer::PerfKey::kText, "Counter") == names::counter_table(en));
  CHECK(served(all, replayer::PerfKey::kData, "Counter") == names::counter_table(en));
  // No CurrentLanguage recorded (before Vista): the one localized table, and with several, English.
  CHECK(served(keep(all, {"009", "007"}), replayer::PerfKey::kNlsText, "Counter") == names::counter_table(de));
  CHECK(served(keep(all, {"009", "007", "00A"}), replayer::PerfKey::kNlsText, "Counter") == names::counter_table(en));
  CHECK(served(keep(all, {"009"}), replayer::PerfKey::kNlsText, "Help") == names::help_table(en));
}

TEST_CASE("names a file lacks are left out of the host, or with --strict-names refused, naming each", "[names]") {
  ScratchDir dir;
  names::NameSet set = localized_names();
  set.languages[0].text.erase(kRequests);  // Web Service's first counter: the file does not name it
  synth::Spec spec = localized_spec();
  spec.names_file = dir.file("partial.ini", names::write_backup(set));
  captures::Capture cap;
  const Status s = synth::synthesize(spec, cap);
  INFO(s.ToString());
  REQUIRE(s.ok());
  perfdata::DataBlock b;
  REQUIRE(cap.records.at(0).value_name == "Global");
  REQUIRE(perfdata::parse(cap.records.at(0).payload, b).ok());
  const perfdata::Object* web = b.find(kWebService);
  REQUIRE(web);
  REQUIRE(web->counters.size() == 1);  // Current Connections, with its own generator's value
  CHECK(web->counters[0].name_index == kConnections);
  const Bytes& block = web->instances.empty() ? web->counter_block : web->instances[0].counter_block;
  CHECK(perfdata::read_counter(block, web->counters[0]) == Approx(1234).epsilon(0.01));
  spec.strict_names = true;
  const Status strict = synth::synthesize(spec, cap);
  CHECK_FALSE(strict.ok());
  CHECK_THAT(strict.message(), Catch::Contains("partial.ini") && Catch::Contains("--strict-names") &&
                                   Catch::Contains("counter \"Total Method Requests/sec\" of \"Web Service\""));
  set.languages[0].text.erase(kWebService);
  spec.names_file = dir.file("partial.ini", names::write_backup(set));
  CHECK_THAT(synth::synthesize(spec, cap).message(), Catch::Contains("object \"Web Service\""));
}

TEST_CASE("synth reads raw perfc009.dat/perfh009.dat and takes Last Counter from the table", "[names]") {
  ScratchDir dir;
  const names::NameSet set = localized_names();
  const names::Strings& en = *set.find("009");
  dir.file("PERFC009.DAT", names::counter_table(en));
  dir.file("perfh009.dat", names::help_table(en));
  synth::Spec spec = localized_spec();
  spec.names_file = (dir.path / "perfh009.dat").string();
  captures::Capture cap;
  const Status s = synth::synthesize(spec, cap);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(cap.names.size() == 1);
  CHECK(cap.names[0].counter == names::counter_table(en));
  const names::NameSet out = names::from_capture(cap);
  CHECK(out.perflib_value("Last Counter") == kConnections);
  CHECK(out.perflib_value("Last Help") == kConnections + 1);
}

TEST_CASE("a spec's [host] names is read relative to the spec file", "[names]") {
  ScratchDir dir;
  dir.file("backup.ini", names::write_backup(localized_names()));
  const std::string spec_text =
      std::string(kLocalizedSpec).replace(std::string(kLocalizedSpec).find("profile"), 0, "names = \"backup.ini\"\n");
  const std::string path = dir.file("host.toml", Bytes(spec_text.begin(), spec_text.end()));
  synth::Spec spec;
  REQUIRE(synth::load_spec(path, spec).ok());
  CHECK(spec.names_file == (dir.path / "backup.ini").string());
}

}  // namespace
}  // namespace perfsim::testing

namespace perfsim::testing {
namespace {

TEST_CASE("a host built from its own English backup answers byte for byte as without it", "[names]") {
  ScratchDir dir;
  synth::Spec spec = localized_spec();
  spec.duration_s = 60;
  captures::Capture plain, named;
  REQUIRE(synth::synthesize(spec, plain).ok());
  spec.names_file = dir.file("self.ini", names::write_backup(names::from_capture(plain)));
  REQUIRE(synth::synthesize(spec, named).ok());
  REQUIRE(plain.records.size() == named.records.size());
  for (size_t i = 0; i < plain.records.size(); ++i) CHECK(plain.records[i].payload == named.records[i].payload);
  CHECK(plain.catalog.size() == named.catalog.size());
  CHECK(plain.fingerprint_json == named.fingerprint_json);
  REQUIRE(named.names.size() == 1);
  CHECK(named.names[0].counter == plain.names[0].counter);
  CHECK(named.names[0].help == plain.names[0].help);
}

}  // namespace
}  // namespace perfsim::testing
