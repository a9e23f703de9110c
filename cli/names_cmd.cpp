#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "names/backup.h"
#include "names/diff.h"

namespace perfsim::cli {
namespace {

struct NamesExportOptions {
  std::string capture;
  std::string out;
};

// Exit 0 when the two sets are the same, 1 when they differ (as diff(1)), 2 usage.
struct NamesDiffOptions {
  std::string a, b;
  bool json = false;
};

}  // namespace

int run_names_export(const NamesExportOptions& o) {
  names::NameSet set;
  std::vector<std::string> warnings;
  if (Status s = names::load_any(o.capture, set, &warnings); !s.ok())
    return fail("names export", o.capture + ": " + s.message());
  for (const std::string& w : warnings) std::fprintf(stderr, "perfsim names export: warning: %s\n", w.c_str());
  if (set.languages.empty())
    return fail("names export",
                o.capture + ": holds no name tables (record it with --lang 009, or add them with synth --names)");
  const Bytes b = names::write_backup(set);
  std::FILE* f = std::fopen(o.out.c_str(), "wb");
  const bool ok = f && std::fwrite(b.data(), 1, b.size(), f) == b.size();
  if (f && std::fclose(f) != 0) return fail("names export", o.out + ": write failed (disk full?)");
  if (!ok) return fail("names export", o.out + ": cannot write (check the directory exists and is writable)");
  size_t strings = 0;
  std::vector<std::string_view> langs;
  for (const names::Strings& s : set.languages) {
    strings += s.text.size();
    langs.push_back(s.lang);
  }
  fmt::print("{}: {} languages ({}), {} strings, {} services, {} bytes\n", o.out, set.languages.size(),
             fmt::join(langs, ", "), strings, set.services.size(), b.size());
  return kExitOk;
}

int run_names_diff(const NamesDiffOptions& o) {
  names::NameSet a, b;
  std::vector<std::string> warnings;
  if (Status s = names::load_any(o.a, a, &warnings); !s.ok()) return fail("names diff", o.a + ": " + s.message());
  if (Status s = names::load_any(o.b, b, &warnings); !s.ok()) return fail("names diff", o.b + ": " + s.message());
  for (const std::string& w : warnings) std::fprintf(stderr, "perfsim names diff: warning: %s\n", w.c_str());
  const std::vector<names::Difference> d = names::diff(a, b);
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const names::Difference& x : d)
      list.push_back({{"section", x.section},
                      {"key", x.key},
                      {"a", x.a ? nlohmann::json(*x.a) : nlohmann::json()},
                      {"b", x.b ? nlohmann::json(*x.b) : nlohmann::json()}});
    fmt::print("{}\n", json_text(nlohmann::json({{"a", o.a}, {"b", o.b}, {"differences", list}})));
  } else {
    fmt::print("A: {}\nB: {}\n", o.a, o.b);
    for (const names::Difference& x : d) fmt::print("{}\n", names::to_line(x));
    fmt::print("{} difference(s)\n", d.size());
  }
  return d.empty() ? kExitOk : kExitFailure;
}

void add_names(CLI::App& app, int& rc) {
  auto* c_names = app.add_subcommand("names", "Name tables as lodctr /s backups: export a capture's, compare two");
  c_names->require_subcommand(1);
  auto export_o = std::make_shared<NamesExportOptions>();
  NamesExportOptions& names_export = *export_o;
  auto* c_export = c_names->add_subcommand(
      "export", "Write a capture's name tables (every language) and Perflib/Services values as a lodctr /s backup");
  c_export->add_option("capture", names_export.capture, "Capture (.perfcap)")->required()->check(input_file());
  c_export->add_option("--out,-o", names_export.out, "Backup file to write (UTF-16LE, as lodctr /s writes it)")
      ->required();
  c_export->callback([export_o, &rc] { rc = run_names_export(*export_o); });
  auto diff_o = std::make_shared<NamesDiffOptions>();
  NamesDiffOptions& names_diff = *diff_o;
  auto* c_diff = c_names->add_subcommand(
      "diff", "List what differs between two name sets: captures, lodctr /s backups or perfcLLL.dat files");
  c_diff->add_option("a", names_diff.a, "First (A): .perfcap, backup .ini or perfcLLL.dat")
      ->required()
      ->check(input_file());
  c_diff->add_option("b", names_diff.b, "Second (B)")->required()->check(input_file());
  c_diff->add_flag("--json", names_diff.json, "Machine-readable list");
  c_diff->callback([diff_o, &rc] { rc = run_names_diff(*diff_o); });
}

}  // namespace perfsim::cli
