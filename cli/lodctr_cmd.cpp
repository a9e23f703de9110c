#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/reader.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "lodctr/install.h"
#include "lodctr/providers.h"

namespace perfsim::cli {
namespace {

struct LodctrOptions {
  std::string capture;  // HOST.perfcap, rewritten in place (atomically)
  std::string ini;      // the counter INI; its symbol file is looked up next to it
  std::string collect;  // optional collect spec: the provider's objects join the host's answers
  bool json = false;
};

struct UnlodctrOptions {
  std::string capture;
  std::string driver;
  bool json = false;
};

}  // namespace
namespace {

nlohmann::json report_json(const std::string& capture, const lodctr::InstallReport& r) {
  return {{"capture", capture},
          {"driver", r.range.driver},
          {"first_counter", r.range.first_counter},
          {"last_counter", r.range.last_counter},
          {"first_help", r.range.first_help},
          {"last_help", r.range.last_help},
          {"perflib_last_counter", r.perflib_last_counter},
          {"perflib_last_help", r.perflib_last_help},
          {"languages", r.languages},
          {"skipped_languages", r.skipped_languages},
          {"entries", r.entries}};
}

std::string join(const std::vector<std::string>& v) {
  return v.empty() ? "none" : fmt::format("{}", fmt::join(v, ", "));
}

// Opens the capture to stream it: its metadata now, its records one at a time when saved (the
// reader drops each record's pages once read, so a capture of any length fits).
Status open(const std::string& path, std::unique_ptr<captures::Reader>& r) {
  if (Status s = captures::Reader::open(path, r, captures::ReaderOptions{true, true}); !s.ok()) return s;
  // A damaged capture would be rewritten without its lost records: refuse instead.
  const Status d = r->damage();
  return d.ok() ? d : Status::Corruption(d.message() + " (repair or re-record the capture first)");
}

// The first sample's clock, for a provider starting with the capture.
std::optional<int64_t> first_sample_time(captures::Reader& r) {
  captures::QueryRecord rec;
  for (size_t i = 0; i < r.records().size(); ++i)
    if (r.read_record(i, rec).ok())
      if (auto t = lodctr::first_sample_time(rec)) return t;
  return std::nullopt;
}

}  // namespace

int run_lodctr(const LodctrOptions& o) {
  lodctr::CounterIni ini;
  lodctr::Symbols symbols;
  if (Status s = lodctr::load_ini(o.ini, ini, symbols); !s.ok()) return fail("lodctr", s.message());
  for (const std::string& w : ini.warnings)
    std::fprintf(stderr, "perfsim lodctr: warning: %s: %s\n", o.ini.c_str(), w.c_str());
  lodctr::CollectSpec spec;
  if (!o.collect.empty())
    if (Status s = lodctr::load_collect_spec(o.collect, spec); !s.ok()) return fail("lodctr", s.message());
  std::unique_ptr<captures::Reader> reader;
  if (Status s = open(o.capture, reader); !s.ok()) return fail("lodctr", o.capture + ": " + s.ToString());
  captures::Capture meta = reader->metadata();
  lodctr::InstallReport rep;
  if (Status s = lodctr::install(meta, ini, symbols, &rep); !s.ok()) return fail("lodctr", o.ini + ": " + s.message());
  lodctr::ProviderEdit provider;
  if (!o.collect.empty())
    if (Status s = provider.prepare(meta, ini.driver, symbols, spec, first_sample_time(*reader)); !s.ok())
      return fail("lodctr", o.collect + ": " + s.message());
  const captures::RecordEdit edit =
      o.collect.empty() ? captures::RecordEdit{} : [&](captures::QueryRecord& r) { provider.apply(r); };
  if (Status s = lodctr::save_capture(o.capture, *reader, meta, edit); !s.ok())
    return fail("lodctr", o.capture + ": " + s.ToString());
  const lodctr::ProviderReport prov = o.collect.empty() ? lodctr::ProviderReport{} : provider.report();
  if (o.json) {
    nlohmann::json j = report_json(o.capture, rep);
    j["object_list"] = rep.objects;
    if (!o.collect.empty())
      j["provider"] = {{"objects", prov.objects},
                       {"disabled", spec.disabled},
                       {"records_changed", prov.records_changed},
                       {"records_unparsed", prov.records_unparsed},
                       {"ticks_timed_out", prov.ticks_timed_out},
                       {"bad", lodctr::bad_mode_name(spec.bad)}};
    fmt::print("{}\n", json_text(j));
    return kExitOk;
  }
  fmt::print("{}: loaded {}: counters {}..{}, help {}..{}; Perflib Last Counter {}, Last Help {}; languages {}",
             o.capture, rep.range.driver, rep.range.first_counter, rep.range.last_counter, rep.range.first_help,
             rep.range.last_help, rep.perflib_last_counter, rep.perflib_last_help, join(rep.languages));
  if (!rep.skipped_languages.empty()) fmt::print(" (not on this host, skipped: {})", join(rep.skipped_languages));
  fmt::print("\n");
  if (!o.collect.empty()) {
    if (spec.disabled)
      fmt::print("provider {}: disabled (Disable Performance Counters = 1), in no answer\n", ini.driver);
    else
      fmt::print("provider {}: {} objects in {} recorded answers ({} ticks timed out, {} payloads left as they were)\n",
                 ini.driver, prov.objects.size(), prov.records_changed, prov.ticks_timed_out, prov.records_unparsed);
  }
  return kExitOk;
}

int run_unlodctr(const UnlodctrOptions& o) {
  std::unique_ptr<captures::Reader> reader;
  if (Status s = open(o.capture, reader); !s.ok()) return fail("unlodctr", o.capture + ": " + s.ToString());
  captures::Capture meta = reader->metadata();
  lodctr::InstallReport rep;
  // The records' edit first: it needs the provider's objects still in the catalog.
  const captures::RecordEdit edit = lodctr::provider_removal(meta, o.driver);
  if (Status s = lodctr::uninstall(meta, o.driver, &rep); !s.ok()) return fail("unlodctr", s.message());
  if (Status s = lodctr::save_capture(o.capture, *reader, meta, edit); !s.ok())
    return fail("unlodctr", o.capture + ": " + s.ToString());
  if (o.json) {
    fmt::print("{}\n", json_text(report_json(o.capture, rep)));
    return kExitOk;
  }
  fmt::print("{}: removed {} (counters {}..{}, {} texts); Perflib Last Counter {}, Last Help {}\n", o.capture,
             rep.range.driver, rep.range.first_counter, rep.range.last_counter, rep.entries, rep.perflib_last_counter,
             rep.perflib_last_help);
  return kExitOk;
}

void add_lodctr(CLI::App& app, int& rc) {
  auto o = std::make_shared<LodctrOptions>();
  LodctrOptions& lodctr = *o;
  auto* c_lodctr = app.add_subcommand("lodctr",
                                      "Install extensible counters (LodCtr INI + symbol file) on a simulated host, "
                                      "optionally with a provider serving them");
  c_lodctr->add_option("capture", lodctr.capture, "Host capture (.perfcap), rewritten in place")
      ->required()
      ->check(input_file());
  c_lodctr->add_option("ini", lodctr.ini, "Counter INI ([info] drivername/symbolfile, [languages], [text])")
      ->required()
      ->check(input_file());
  c_lodctr
      ->add_option("--collect", lodctr.collect,
                   "Collect spec (.toml/.json): the provider's objects appear in the host's answers (lodctr/README.md)")
      ->check(input_file());
  c_lodctr->add_flag("--json", lodctr.json, "Machine-readable summary");
  c_lodctr->callback([o, &rc] { rc = run_lodctr(*o); });
}

void add_unlodctr(CLI::App& app, int& rc) {
  auto o = std::make_shared<UnlodctrOptions>();
  UnlodctrOptions& unlodctr = *o;
  auto* c_unlodctr = app.add_subcommand(
      "unlodctr",
      "Remove a driver's extensible counters (names, registry values, provider objects) from a simulated host");
  c_unlodctr->add_option("capture", unlodctr.capture, "Host capture (.perfcap), rewritten in place")
      ->required()
      ->check(input_file());
  c_unlodctr->add_option("driver", unlodctr.driver, "Driver name (the INI's drivername; case-insensitive)")->required();
  c_unlodctr->add_flag("--json", unlodctr.json, "Machine-readable summary");
  c_unlodctr->callback([o, &rc] { rc = run_unlodctr(*o); });
}

}  // namespace perfsim::cli
