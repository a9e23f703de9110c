#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/fingerprint.h"
#include "captures/reader.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "perfdata/names.h"
#include "perfdata/validate.h"
#include "windows/constants.h"

namespace perfsim::cli {
namespace {

struct ValidateOptions {
  std::string path;  // a capture, or a raw PERF_DATA_BLOCK blob
  bool json = false;
  bool strict = false;                   // warnings fail too
  std::string min_severity = "warning";  // findings below it are counted, not listed
};

perfdata::Severity severity_of(const std::string& name) {
  return name == "info"    ? perfdata::Severity::kInfo
         : name == "error" ? perfdata::Severity::kError
                           : perfdata::Severity::kWarning;
}

}  // namespace
namespace {

bool is_perf_blob(const Bytes& b) {
  static const uint8_t sig[8] = {'P', 0, 'E', 0, 'R', 0, 'F', 0};
  return b.size() >= 8 && std::equal(sig, sig + 8, b.begin());
}

nlohmann::json finding_json(const perfdata::Finding& f) {
  return {{"severity", perfdata::severity_name(f.severity)},
          {"check", f.check},
          {"message", f.message},
          {"offset", f.offset}};
}

// Every finding is counted; those below --min-severity are not listed (a clean capture of a
// normal host has thousands of infos, e.g. duplicate process names).
struct Report {
  perfdata::Severity shown = perfdata::Severity::kWarning;
  nlohmann::json items = nlohmann::json::array();
  size_t errors = 0, warnings = 0, infos = 0, hidden = 0, blobs = 0;

  void add(const std::string& where, const std::vector<perfdata::Finding>& fs, bool json, bool blob = true) {
    blobs += blob;
    for (const auto& f : fs) {
      if (f.severity == perfdata::Severity::kError) ++errors;
      if (f.severity == perfdata::Severity::kWarning) ++warnings;
      if (f.severity == perfdata::Severity::kInfo) ++infos;
      if (f.severity < shown) {
        ++hidden;
        continue;
      }
      if (json) {
        nlohmann::json j = finding_json(f);
        j["where"] = where;
        items.push_back(j);
      } else {
        fmt::print("{}: {}\n", where, perfdata::to_string(f));
      }
    }
  }
};

// What `perfsim serve` does not replay as recorded: it plays the recorded ticks back to back, so
// a gap in the tick numbers (a missed poll, or a damaged or crafted huge tick) is not waited out;
// a capture without samples is refused.
void serve_findings(const captures::Reader& r, Report& rep, const ValidateOptions& o) {
  const auto& recs = r.records();
  if (recs.empty()) {
    rep.add(o.path,
            {{perfdata::Severity::kError, "capture.no-samples", "no query records: perfsim serve refuses it", 0}},
            o.json, false);
    return;
  }
  for (size_t i = 1; i < recs.size(); ++i) {
    if (recs[i].tick <= recs[i - 1].tick + 1) continue;
    const std::string where = fmt::format("record {} (tick {}, {})", i, recs[i].tick, r.queries()[recs[i].query]);
    rep.add(where,
            {{perfdata::Severity::kWarning, "capture.tick-gap",
              fmt::format("ticks {}..{} hold no records; perfsim serve plays tick {} right after tick {}",
                          recs[i - 1].tick + 1, recs[i].tick - 1, recs[i].tick, recs[i - 1].tick),
              size_t(recs[i].offset)}},
            o.json, false);
  }
}

// What the reader skipped (a record that does not check out or decode: its offset in the message;
// what was intact is read on) and a fingerprint `serve` would refuse (not JSON, nested too deep).
void metadata_findings(const captures::Reader& r, Report& rep, const ValidateOptions& o) {
  if (!r.damage().ok())
    rep.add(o.path, {{perfdata::Severity::kError, "capture.damage", r.damage().message(), 0}}, o.json, false);
  for (const captures::Reader::LeftOut& l : r.left_out())
    rep.add("name table", {{perfdata::Severity::kWarning, "capture.name-length", l.message, size_t(l.offset)}}, o.json,
            false);
  captures::Fingerprint fp;
  if (Status s = captures::from_json(r.metadata().fingerprint_json, fp); !s.ok())
    rep.add("fingerprint record", {{perfdata::Severity::kError, "capture.fingerprint", s.message(), 0}}, o.json, false);
}

}  // namespace

int run_validate(const ValidateOptions& o) {
  std::ifstream in(o.path, std::ios::binary);
  if (!in) return fail("validate", o.path + ": cannot open (check the path and permissions)");
  Bytes head(8);
  in.read(reinterpret_cast<char*>(head.data()), 8);
  head.resize(size_t(in.gcount()));
  Report rep;
  rep.shown = severity_of(o.min_severity);
  if (is_perf_blob(head)) {
    in.seekg(0);
    Bytes blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    rep.add(o.path, perfdata::validate(blob), o.json);
  } else {
    std::unique_ptr<captures::Reader> r;
    if (Status s = captures::Reader::open(o.path, r); !s.ok())
      return fail("validate", o.path + ": neither a PERF_DATA_BLOCK blob nor a readable capture: " + s.ToString());
    for (const auto& w : r->warnings()) fmt::print(stderr, "warning: {}\n", w);
    metadata_findings(*r, rep, o);
    for (size_t i = 0; i < r->records().size(); ++i) {
      captures::QueryRecord q;
      const std::string where =
          fmt::format("record {} (tick {}, {})", i, r->records()[i].tick, r->queries()[r->records()[i].query]);
      if (Status s = r->read_record(i, q); !s.ok()) {
        rep.add(where, {{perfdata::Severity::kError, "capture.record", s.ToString(), size_t(r->records()[i].offset)}},
                o.json);
        continue;
      }
      if (q.status == 0 && q.reg_type == windows::kRegMultiSz) {  // a name table answer, as recorded
        const bool help = q.value_name.rfind("Help", 0) == 0 || q.value_name.rfind("Explain", 0) == 0;
        std::vector<perfdata::Finding> long_names;
        for (const perfdata::LongName& n :
             perfdata::long_names(q.payload, help ? perfdata::limits::kHelpText : perfdata::limits::kCounterName))
          long_names.push_back({perfdata::Severity::kWarning, "capture.name-length",
                                n.message + " (Windows serves none: perfdata/limits.h)", n.offset});
        rep.add(where, long_names, o.json, false);
      }
      if (q.status != 0 || !is_perf_blob(q.payload)) continue;  // name tables, errors: not perf data
      rep.add(where, perfdata::validate(q.payload), o.json);
    }
    serve_findings(*r, rep, o);
  }
  const bool failed = rep.errors > 0 || (o.strict && rep.warnings > 0);
  if (o.json) {
    nlohmann::json j = {{"path", o.path},           {"blobs", rep.blobs}, {"errors", rep.errors},
                        {"warnings", rep.warnings}, {"infos", rep.infos}, {"min_severity", o.min_severity},
                        {"not_shown", rep.hidden},  {"ok", !failed},      {"findings", rep.items}};
    fmt::print("{}\n", json_text(j, 2));
  } else {
    fmt::print("{}: {}, {} blob(s) checked, {} error(s), {} warning(s), {} info(s){}\n", o.path, failed ? "FAIL" : "ok",
               rep.blobs, rep.errors, rep.warnings, rep.infos,
               rep.hidden
                   ? fmt::format(" ({} below {} not shown; --min-severity info lists them)", rep.hidden, o.min_severity)
                   : "");
  }
  return failed ? kExitFailure : kExitOk;
}

void add_validate(CLI::App& app, int& rc) {
  auto o = std::make_shared<ValidateOptions>();
  ValidateOptions& validate = *o;
  auto* c_validate = app.add_subcommand(
      "validate",
      "Check a capture's perf-data payloads, or a raw PERF_DATA_BLOCK blob, with perflib's checks and more");
  c_validate->add_option("file", validate.path, "Capture file or raw blob")->required()->check(input_file());
  c_validate->add_flag("--strict", validate.strict, "Fail on warnings too");
  c_validate
      ->add_option("--min-severity", validate.min_severity,
                   "List findings of this severity and worse: info, warning or error (the others are counted)")
      ->check(CLI::IsMember({"info", "warning", "error"}))
      ->capture_default_str();
  c_validate->add_flag("--json", validate.json, "Machine-readable output");
  c_validate->callback([o, &rc] { rc = run_validate(*o); });
}

}  // namespace perfsim::cli
