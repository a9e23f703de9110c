#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/reader.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "lodctr/install.h"
#include "lodctr/providers.h"

namespace perfsim::cli {
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
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

Status load(const std::string& path, captures::Capture& cap) {
  std::vector<std::string> warnings;
  Status s = captures::read_capture(path, cap, &warnings);
  // A damaged capture would be rewritten without its lost records: refuse instead.
  return s.ok() ? s : Status::Corruption(s.message() + " (repair or re-record the capture first)");
}

}  // namespace

int run_lodctr(const LodctrOptions& o) {
  lodctr::CounterIni ini;
  lodctr::Symbols symbols;
  if (Status s = lodctr::load_ini(o.ini, ini, symbols); !s.ok()) return fail("lodctr", s.message());
  lodctr::CollectSpec spec;
  if (!o.collect.empty())
    if (Status s = lodctr::load_collect_spec(o.collect, spec); !s.ok()) return fail("lodctr", s.message());
  captures::Capture cap;
  if (Status s = load(o.capture, cap); !s.ok()) return fail("lodctr", o.capture + ": " + s.ToString());
  lodctr::InstallReport rep;
  if (Status s = lodctr::install(cap, ini, symbols, &rep); !s.ok()) return fail("lodctr", o.ini + ": " + s.message());
  lodctr::ProviderReport prov;
  if (!o.collect.empty())
    if (Status s = lodctr::add_provider(cap, ini.driver, symbols, spec, &prov); !s.ok())
      return fail("lodctr", o.collect + ": " + s.message());
  if (Status s = lodctr::save_capture(o.capture, cap); !s.ok()) return fail("lodctr", o.capture + ": " + s.ToString());
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
  captures::Capture cap;
  if (Status s = load(o.capture, cap); !s.ok()) return fail("unlodctr", o.capture + ": " + s.ToString());
  lodctr::InstallReport rep;
  if (Status s = lodctr::uninstall(cap, o.driver, &rep); !s.ok()) return fail("unlodctr", s.message());
  if (Status s = lodctr::save_capture(o.capture, cap); !s.ok())
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

}  // namespace perfsim::cli
