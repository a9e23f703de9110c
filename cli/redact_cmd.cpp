#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>

#include "captures/redact.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"

namespace perfsim::cli {
namespace {

struct RedactOptions {
  std::string in, out, map;
  std::vector<std::string> keep;
  uint32_t format_version = 2;
  bool json = false;
};

// Beside the output, named after it: `host-redacted.perfcap` -> `host-redacted.map.json`.
std::string default_map_path(const std::string& out) {
  return std::filesystem::path(out).replace_extension(".map.json").string();
}

int run_redact(const RedactOptions& o) {
  captures::RedactOptions opt;
  opt.keep = o.keep;
  opt.writer.version = o.format_version;
  const std::string map_path = o.map.empty() ? default_map_path(o.out) : o.map;
  captures::TokenMap map;
  captures::RedactReport report;
  Status s;
  try {  // out of memory all the same: an error, no temp file left (write_replacing removes it)
    s = captures::redact_capture(o.in, o.out, map_path, opt, map, &report);
  } catch (const std::bad_alloc&) { return fail("redact", o.in + ": out of memory (nothing was written)"); }
  if (!s.ok()) {
    const int code = s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
    return fail("redact", o.in + ": " + s.ToString() + " (nothing was written)", code);
  }
  if (o.json) {
    nlohmann::json tokens = nlohmann::json::object();
    for (size_t k = 0; k < size_t(captures::TokenKind::kCount); ++k)
      if (const size_t n = map.count(captures::TokenKind(k)))
        tokens[captures::token_kind_name(captures::TokenKind(k))] = n;
    fmt::print("{}\n", json_text(nlohmann::json({{"in", o.in},
                                                 {"out", o.out},
                                                 {"map", map_path},
                                                 {"records", report.records},
                                                 {"instances_renamed", report.instances_renamed},
                                                 {"registry_values", report.registry_values},
                                                 {"tokens", tokens},
                                                 {"in_bytes", report.in_bytes},
                                                 {"out_bytes", report.out_bytes}})));
  } else {
    fmt::print("{} -> {}: {} records, {} names replaced by tokens ({} instance names rewritten, {} registry values)\n",
               o.in, o.out, report.records, map.size(), report.instances_renamed, report.registry_values);
    fmt::print("map: {} (keep it: it turns the tokens back into names; do not send it)\n", map_path);
  }
  return kExitOk;
}

}  // namespace

void add_redact(CLI::App& app, int& rc) {
  auto o = std::make_shared<RedactOptions>();
  RedactOptions& r = *o;
  auto* c = app.add_subcommand(
      "redact",
      "Replace the names that identify a host (host, domain, users, instances, free-text registry values) with "
      "tokens, so a capture can be sent; the mapping stays in a separate file");
  c->add_option("file", r.in, "Capture to redact")->required()->check(input_file());
  c->add_option("--out,-o", r.out, "Redacted capture to write")->required()->check(output_file());
  c->add_option("--map", r.map,
                "Where to write the mapping of names to tokens (JSON; default: beside the output, "
                "OUT with .map.json for its extension)")
      ->check(output_file());
  c->add_option("--keep", r.keep, "A name left as it is (repeat for several; compared case-insensitively)");
  add_format_option(c, r.format_version);
  c->add_flag("--json", r.json, "Machine-readable summary");
  c->callback([o, &rc] { rc = run_redact(*o); });
}

}  // namespace perfsim::cli
