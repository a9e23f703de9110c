// Acceptance: the localized host (localized_host.h) served over ncacn_ip_tcp to python3-samba and
// impacket collectors (localized_client.py). For a backup in each accepted encoding, every table
// they read back is byte-identical to the backup's, and a collector that resolves the German names through `Counter 007` (or
// `Counter CurrentLanguage`) formats the same values as one using English names through 009, within
// 1% of the spec's value generators (400 requests/s, 1234 connections).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../interop/support.h"
#include "localized_host.h"
#include "windows_backup.h"
#include "replayer/host.h"
#include "tests/common/served_host.h"

namespace perfsim::testing {
namespace {

using nlohmann::json;

std::string hex(const Bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) s += {d[c >> 4], d[c & 15]};
  return s;
}

json run_client(const std::string& client, const std::string& args, std::shared_ptr<replayer::SimulatedHost> host) {
  ServedHost srv(std::move(host));
  REQUIRE(srv.start().ok());
  const interop::CommandResult r =
      interop::run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " +
                           interop::shell_quote(std::string(NAMES_SCRIPTS_DIR) + "/localized_client.py") + " --port " +
                           std::to_string(srv.port()) + " --client " + client + " " + args);
  INFO(r.output);
  const size_t brace = r.output.rfind("{\"client\"");
  REQUIRE(brace != std::string::npos);
  json out = json::parse(r.output.substr(brace), nullptr, false);
  REQUIRE(!out.is_discarded());
  CHECK(out["errors"].empty());
  CHECK(r.exit_status == 0);
  return out;
}

std::shared_ptr<replayer::SimulatedHost> stepping_host(const captures::Capture& cap) {
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kStep, 0}, host).ok());
  return host;
}

// For each encoding a backup comes in: a host made from it, every language's tables read back.
void check_tables(const std::string& client) {
  const names::NameSet all = localized_names();
  for (const auto& [encoding, what] : kEncodings) {
    ScratchDir dir;
    const captures::Capture cap = localized_capture(dir, all, encoding);
    names::NameSet set;
    REQUIRE(names::parse_backup(encoded_backup(all, encoding), set).ok());
    REQUIRE(set.languages.size() >= (encoding == Encoding::kLatin1 ? 4u : 6u));  // 009 007 00A CurrentLanguage
    std::string args = "--tables";
    for (const names::Strings& s : set.languages) args += " 'Counter " + s.lang + "' 'Help " + s.lang + "'";
    const json out = run_client(client, args, stepping_host(cap));
    for (const names::Strings& s : set.languages) {
      INFO(client << " " << what << " " << s.lang);
      CHECK(out["tables"]["Counter " + s.lang] == hex(names::counter_table(s)));
      CHECK(out["tables"]["Help " + s.lang] == hex(names::help_table(s)));
      const names::Strings* original = all.find(s.lang);
      REQUIRE(original);
      CHECK(s.text == original->text);  // the encoding lost nothing
    }
  }
}

void check_values(const std::string& client) {
  ScratchDir dir;
  const captures::Capture cap = localized_capture(dir, localized_names());
  const Translation& de = kTranslations[0];
  const std::string args = std::string("--read 007 '") + de.object + "' '" + de.requests + "'" +
                           " --read CurrentLanguage '" + de.object + "' '" + de.connections + "'" +
                           " --read 009 'Web Service' 'Total Method Requests/sec'" +
                           " --read 009 'Web Service' 'Current Connections'";
  const json out = run_client(client, args, stepping_host(cap));
  REQUIRE(out["reads"].size() == 4);
  for (const json& r : out["reads"]) {
    INFO(client << " " << r.dump());
    CHECK(r["object_index"] == kWebService);  // both languages lead to the file's index
    CHECK(r["perf_times"][1].get<int64_t>() > r["perf_times"][0].get<int64_t>());  // two samples
  }
  const double german_rate = out["reads"][0]["value"], english_rate = out["reads"][2]["value"];
  const double german_raw = out["reads"][1]["value"], english_raw = out["reads"][3]["value"];
  CHECK(out["reads"][0]["counter_index"] == kRequests);
  CHECK(out["reads"][1]["counter_index"] == kConnections);
  CHECK(german_rate == Approx(400).epsilon(0.01));  // the spec's generator: value = 400
  CHECK(english_rate == Approx(german_rate).epsilon(0.01));
  CHECK(german_raw == Approx(1234).epsilon(0.01));
  CHECK(english_raw == Approx(german_raw).epsilon(0.01));
}

TEST_CASE("python3-samba reads every language's tables of a --names host byte for byte in every encoding",
          "[names][interop]") {
  check_tables("samba");
}

TEST_CASE("impacket reads every language's tables of a --names host byte for byte in every encoding",
          "[names][interop]") {
  check_tables("impacket");
}

TEST_CASE("python3-samba: German names through Counter 007 give the English path's values and the spec's",
          "[names][interop]") {
  check_values("samba");
}

TEST_CASE("impacket: German names through Counter 007 give the English path's values and the spec's",
          "[names][interop]") {
  check_values("impacket");
}

// A table a client received (hex of REG_MULTI_SZ bytes) as index -> text.
std::map<uint32_t, std::string> received(const json& hex_text) {
  REQUIRE(hex_text.is_string());
  const std::string h = hex_text.get<std::string>();
  Bytes b;
  for (size_t i = 0; i + 1 < h.size(); i += 2) b.push_back(uint8_t(std::stoi(h.substr(i, 2), nullptr, 16)));
  perfdata::NameTable t;
  REQUIRE(perfdata::parse_names(b, t).ok());
  return t.to_map();
}

// Every text of the backup's section is in the table received, at its index (the tables also hold
// the V2 counter sets' names, placed after the file's last index: names/README.md).
void check_has(const json& counter, const json& help, const names::Language& l) {
  const std::map<uint32_t, std::string> c = received(counter), h = received(help);
  for (const auto& [index, text] : l.text) {
    INFO(index);
    const std::map<uint32_t, std::string>& in = index % 2 ? h : c;
    REQUIRE(in.count(index));
    CHECK(in.at(index) == text);
  }
}

// A Vista-era host whose backup (UTF-16LE with a BOM) has [PerfStrings_0804], 0404, 0416, 0816 and
// 0C0A tables: a real client reads each under the name Windows gives it (Microsoft, "Retrieving
// Counter Names and Help Text": Chinese and Portuguese with their sublanguage, the others by
// their primary language) over HKEY_PERFORMANCE_DATA and Perflib\<LLL> over HKLM.
void check_sublanguages(const std::string& client) {
  uint32_t last = 0;
  const std::vector<names::Entry> strings = names::v1_strings("2008", last);
  synth::Spec spec;
  spec.profile = "2008";
  spec.duration_s = 15;
  spec.interval_ms = 15000;
  spec.process_count = 5;
  spec.names_file = "ZH-CN.INI";
  const Bytes file = names::localized_backup(strings, last, names::sublanguages(), true);
  spec.names_text.assign(file.begin(), file.end());
  captures::Capture cap;
  REQUIRE(synth::synthesize(spec, cap).ok());
  const std::map<std::string, std::string> served = {{"0804", "804"}, {"0404", "404"},
                                                     {"0416", "416"}, {"0816", "816"},
                                                     {"0C0A", "00A"}, {"CurrentLanguage", "CurrentLanguage"}};
  std::string args = "--tables 'Counter 0804' 'Help 0804'";
  for (const auto& [section, lang] : served) args += " 'Counter " + lang + "' 'Help " + lang + "'";
  args += " --perflib 804 CurrentLanguage";
  const json out = run_client(client, args, stepping_host(cap));
  for (const names::Language& l : names::sublanguages()) {
    const std::string lang = served.at(l.section);
    INFO(client << " [PerfStrings_" << l.section << "] as " << lang);
    check_has(out["tables"]["Counter " + lang], out["tables"]["Help " + lang], l);
    if (lang == "804" || lang == "CurrentLanguage")
      check_has(out["perflib"][lang]["Counter"], out["perflib"][lang]["Help"], l);
  }
  // The LANGID is read as a number: the backup's own spelling reads the same table.
  CHECK(out["tables"]["Counter 0804"] == out["tables"]["Counter 804"]);
  CHECK(out["tables"]["Help 0804"] == out["tables"]["Help 804"]);
}

TEST_CASE(
    "python3-samba reads a Vista host's 0804, 0404, 0416, 0816 and 0C0A tables as Counter 804, 404, 416, "
    "816, 00A and Perflib key 804",
    "[names][interop]") {
  check_sublanguages("samba");
}

TEST_CASE(
    "impacket reads a Vista host's 0804, 0404, 0416, 0816 and 0C0A tables as Counter 804, 404, 416, 816, "
    "00A and Perflib key 804",
    "[names][interop]") {
  check_sublanguages("impacket");
}

}  // namespace
}  // namespace perfsim::testing
