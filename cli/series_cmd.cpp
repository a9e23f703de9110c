// `perfsim series`: counters' formatted values sample after sample, in the CSV layout relog and
// typeperf write (so a capture opens in the tools support engineers use), or as JSON.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "captures/reader.h"
#include "captures/registry_values.h"
#include "captures/system_values.h"
#include "captures/writer.h"
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
  std::string out;  // -o FILE: written whole or not at all; empty: stdout
  bool local_time = false;
  bool json = false;
};

// The zone times are shown in: UTC, or with --local-time the capture's (an imported log's).
struct Zone {
  std::string name = "Coordinated Universal Time";
  int32_t bias = 0;  // minutes: UTC = local + bias
};

// The capture's TimeZoneInformation (captures/system_values.h); NotFound when it has none.
Status capture_zone(const captures::Capture& meta, Zone& z) {
  const captures::RegistryValue* bias = captures::find_value(meta, captures::kTimeZoneKey, "Bias");
  if (!bias || bias->data.size() != 4)
    return Status::NotFound(
        "it holds no time zone (TimeZoneInformation\\Bias: a capture imported from a perfmon "
        "log has its header's); its times are UTC");
  z.bias = int32_t(uint32_t(bias->data[0]) | uint32_t(bias->data[1]) << 8 | uint32_t(bias->data[2]) << 16 |
                   uint32_t(bias->data[3]) << 24);
  const captures::RegistryValue* name = captures::find_value(meta, captures::kTimeZoneKey, "TimeZoneKeyName");
  z.name = name ? captures::reg_sz_text(name->data) : fmt::format("UTC{:+}", -z.bias / 60.0);
  return Status::Ok();
}

perfdata::SystemTime in_zone(const perfdata::SystemTime& utc, const Zone& z) {
  return perfdata::system_time_of(perfdata::filetime_of(utc) - int64_t(z.bias) * 60 * 10000000);
}

// ISO 8601 with the zone's offset ("Z" for UTC).
std::string iso_time(const perfdata::SystemTime& t, int32_t bias) {
  const int32_t off = -bias;
  const std::string zone =
      bias == 0 ? "Z" : fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', std::abs(off) / 60, std::abs(off) % 60);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{}", t.year, t.month, t.day, t.hour, t.minute, t.second,
                     t.ms, zone);
}

// The series to `f`; errors are said on stderr (the exit code returned).
int emit_series(const SeriesOptions& o, std::FILE* f) {
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
  Zone zone;
  if (o.local_time)
    if (Status s = capture_zone(r->metadata(), zone); !s.ok()) return fail("series", o.path + ": " + s.message());
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
    std::vector<std::string> header{o.local_time ? perfdata::pdh_csv::header_cell(zone.name, zone.bias)
                                                 : std::string(perfdata::pdh_csv::kUtcHeader)};
    for (const auto& c : columns) header.push_back(c.path);
    fmt::print(f, "{}\n", perfdata::pdh_csv::write_row(header));
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
      rows.push_back(
          {{"tick", ticks[i]}, {"time", iso_time(in_zone(when->system_time, zone), zone.bias)}, {"values", v}});
      continue;
    }
    // A value the formula has none for (the first sample of a rate) is " ", as relog writes it.
    std::vector<std::string> line{perfdata::pdh_csv::format_time(in_zone(when->system_time, zone))};
    for (const auto& x : values) line.push_back(perfdata::pdh_csv::format_value(x));
    fmt::print(f, "{}\n", perfdata::pdh_csv::write_row(line));
  }
  if (o.json) {
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& c : columns) cols.push_back(c.path);
    fmt::print(f, "{}\n", json_text(nlohmann::json{{"columns", cols}, {"rows", rows}}, 2));
  }
  return kExitOk;
}

// To stdout, or with -o to a temporary file renamed over FILE when whole (captures/writer.h), as
// redact writes: an error or a kill leaves no half series under FILE's name.
int run_series(const SeriesOptions& o) {
  if (o.out.empty()) return emit_series(o, stdout);
  if (Status s = captures::check_replaceable(o.out); !s.ok()) return fail("series", s.message(), kExitUsage);
  int rc = kExitOk;
  const Status s = captures::write_replacing(o.out, [&](const std::string& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return Status::IOError(tmp + ": " + std::strerror(errno));
    rc = emit_series(o, f);
    const bool bad = std::ferror(f) != 0;
    const int err = errno;
    if (std::fclose(f) != 0 || bad) return Status::IOError(o.out + ": cannot write it: " + std::strerror(err));
    return rc == kExitOk ? Status::Ok() : Status::InvalidArgument("not written");
  });
  if (rc != kExitOk) return rc;
  if (!s.ok()) return fail("series", s.message());
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
  c->add_flag("--local-time", o->local_time,
              "Times in the capture's time zone (an imported perfmon log's header zone), not UTC");
  c->add_option("--out,-o", o->out, "Write the series to FILE (whole or not at all) instead of stdout")
      ->check(output_file());
  c->add_flag("--json", o->json, "{\"columns\": [...], \"rows\": [{\"tick\", \"time\", \"values\"}]} instead of CSV");
  c->callback([o, &rc] { rc = run_series(*o); });
}

}  // namespace perfsim::cli
