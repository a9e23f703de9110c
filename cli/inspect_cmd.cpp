#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/inspect.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"

namespace perfsim::cli {
namespace {

struct InspectOptions {
  std::string path;
  bool json = false;
};

}  // namespace

int run_inspect(const InspectOptions& o) {
  captures::CaptureSummary s;
  if (Status st = captures::summarize(o.path, s); !st.ok())
    return fail("inspect", o.path + ": " + st.ToString() + " (is it a .perfcap file?)");
  if (o.json) {
    nlohmann::json j = s;
    fmt::print("{}\n", json_text(j, 2));
    return kExitOk;
  }
  fmt::print("host        {} (profile {}, {} {} build {}{})\n", s.host.name, s.host.profile, s.host.product_name,
             s.host.current_version, s.host.build_number, s.host.csd_version.empty() ? "" : " " + s.host.csd_version);
  fmt::print("perf freq   {} Hz, {} processors, interval {} ms\n", s.host.perf_freq, s.host.processors,
             s.host.interval_ms);
  fmt::print("samples     {} records over {} ticks ({}..{}), {:.0f} s\n", s.records, s.ticks, s.first_tick, s.last_tick,
             s.span_seconds);
  for (const auto& q : s.queries)
    fmt::print("  {:<20} {:>8} records {:>14} raw bytes\n", q.value_name, q.records, q.raw_bytes);
  fmt::print("registry    {} values, {} name tables, {} objects in catalog, fingerprint {}\n", s.registry_values,
             s.name_tables, s.catalog_objects, s.has_fingerprint ? "yes" : "no");
  fmt::print("size        {} bytes on disk, {} raw, ratio {:.1f}x, index {}\n", s.file_bytes, s.raw_bytes,
             s.compression_ratio, s.indexed ? "used" : "rebuilt by scanning");
  for (const auto& w : s.warnings) fmt::print(stderr, "warning: {}\n", w);
  return kExitOk;
}

void add_inspect(CLI::App& app, int& rc) {
  auto o = std::make_shared<InspectOptions>();
  InspectOptions& inspect = *o;
  auto* c_inspect = app.add_subcommand("inspect", "Summarise a capture: host, queries, ticks, sizes");
  c_inspect->add_option("file", inspect.path, "Capture file (.perfcap)")->required()->check(input_file());
  c_inspect->add_flag("--json", inspect.json, "Machine-readable output");
  c_inspect->callback([o, &rc] { rc = run_inspect(*o); });
}

}  // namespace perfsim::cli
