// `perfsim series`: counters' formatted values sample after sample, in the CSV layout relog and
// typeperf write (so a capture opens in the tools support engineers use), or as JSON.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "captures/reader.h"
#include "captures/samples.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "core/utf16.h"
#include "perfdata/pdh_csv.h"
#include "perfdata/series.h"

namespace perfsim::cli {
namespace {

struct SeriesOptions {
  std::string path;
  std::vector<std::string> counters;
  std::string lang = "009";
  bool json = false;
};

std::string iso_time(const perfdata::SystemTime& t) {
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.year, t.month, t.day, t.hour, t.minute, t.second,
                     t.ms);
}

int run_series(const SeriesOptions& o) {
  std::vector<perfdata::CounterPath> asked;
  for (const std::string& text : o.counters) {
    perfdata::CounterPath p;
    if (Status s = perfdata::parse_counter_path(text, p); !s.ok()) return fail("series", s.message(), kExitUsage);
    asked.push_back(std::move(p));
  }
  std::unique_ptr<captures::Reader> r;
  if (Status s = captures::Reader::open(o.path, r); !s.ok()) return fail("series", o.path + ": " + s.ToString());
  for (const auto& w : r->warnings()) fmt::print(stderr, "warning: {}\n", w);
  const std::map<uint32_t, std::string> names = captures::counter_names(r->metadata(), o.lang);
  const std::vector<uint32_t> ticks = captures::sample_ticks(*r);
  if (ticks.empty()) return fail("series", o.path + ": no samples");
  captures::Samples prev, cur;
  if (Status s = captures::read_samples(*r, ticks[0], cur); !s.ok())
    return fail("series", o.path + ": " + s.ToString());
  std::vector<perfdata::SeriesColumn> columns;
  if (Status s = perfdata::resolve_columns(captures::sample_pointers(cur), names, asked, columns); !s.ok())
    return fail("series", fmt::format("{}: {} (perfsim dump {} lists the objects, instances and counters)", o.path,
                                      s.message(), o.path));
  nlohmann::json rows = nlohmann::json::array();
  if (!o.json) {
    std::vector<std::string> header{std::string(perfdata::pdh_csv::kUtcHeader)};
    for (const auto& c : columns) header.push_back(c.path);
    fmt::print("{}\n", perfdata::pdh_csv::write_row(header));
  }
  std::vector<std::optional<double>> values;
  for (size_t i = 0; i < ticks.size(); ++i) {
    if (i > 0) {
      prev = std::move(cur);
      if (Status s = captures::read_samples(*r, ticks[i], cur); !s.ok())
        return fail("series", fmt::format("{}: tick {}: {}", o.path, ticks[i], s.ToString()));
    }
    perfdata::series_row(i ? captures::sample_pointers(prev)
                           : std::vector<const perfdata::DataBlock*>(captures::kSampleSourceCount, nullptr),
                         captures::sample_pointers(cur), columns, values);
    const perfdata::DataBlock* when = nullptr;
    for (const auto& b : cur)
      if (b && !when) when = &*b;
    if (!when) continue;  // nothing recorded this tick
    if (o.json) {
      nlohmann::json v = nlohmann::json::array();
      for (const auto& x : values) v.push_back(x ? nlohmann::json(*x) : nlohmann::json());
      rows.push_back({{"tick", ticks[i]}, {"time", iso_time(when->system_time)}, {"values", v}});
      continue;
    }
    // A value the formula has none for (the first sample of a rate) is " ", as relog writes it.
    std::vector<std::string> line{perfdata::pdh_csv::format_time(when->system_time)};
    for (const auto& x : values) line.push_back(perfdata::pdh_csv::format_value(x));
    fmt::print("{}\n", perfdata::pdh_csv::write_row(line));
  }
  if (o.json) {
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& c : columns) cols.push_back(c.path);
    fmt::print("{}\n", json_text(nlohmann::json{{"columns", cols}, {"rows", rows}}, 2));
  }
  return kExitOk;
}

}  // namespace

void add_series(CLI::App& app, int& rc) {
  auto o = std::make_shared<SeriesOptions>();
  auto* c = app.add_subcommand(
      "series", "Counters' formatted values sample after sample, as relog -f csv writes them (or --json)");
  c->add_option("file", o->path, "Capture file (.perfcap)")->required()->check(input_file());
  c->add_option("--counter,-c", o->counters,
                "A counter path as perfmon writes it: '\\Processor(_Total)\\% Processor Time', "
                "'\\Process(*)\\Working Set' (repeatable; names or title indices)")
      ->required();
  c->add_option("--lang", o->lang, "Language of the name table the names are looked up in")->capture_default_str();
  c->add_flag("--json", o->json, "{\"columns\": [...], \"rows\": [{\"tick\", \"time\", \"values\"}]} instead of CSV");
  c->callback([o, &rc] { rc = run_series(*o); });
}

}  // namespace perfsim::cli
