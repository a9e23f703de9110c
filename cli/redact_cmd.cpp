#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <new>
#include <set>
#include <nlohmann/json.hpp>

#include "captures/redact.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "synth/profiles.h"
#include "synth/roles.h"

namespace perfsim::cli {
namespace {

struct RedactOptions {
  std::string in, out, map;
  std::vector<std::string> keep;
  std::vector<std::string> redact;
  bool check = false;
  uint32_t format_version = 2;
  bool json = false;
};

// Beside the output, named after it: `host-redacted.perfcap` -> `host-redacted.map.json`.
std::string default_map_path(const std::string& out) {
  return std::filesystem::path(out).replace_extension(".map.json").string();
}

// The object names Windows and well-known software serve (every built-in object, counter set and
// role object, English: the .NET CLR objects Windows includes from 2003 on are a role's, synth/roles.h):
// the ones --check does not list. A role that failed to parse adds nothing, so more is listed, never less.
std::set<std::string> ordinary_names() {
  std::set<std::string> out;
  const auto add = [&](const char* n) {
    std::string f = n ? n : "";
    for (char& c : f)
      if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    out.insert(f);
  };
  for (const synth::NameDef& n : synth::builtin_names()) add(n.name);
  for (const synth::CounterSet& set : synth::counter_sets()) add(set.name);
  for (const std::string& role : synth::role_names()) {
    const std::vector<synth::ObjectSpec>* objects = nullptr;
    if (synth::role_objects(role, objects).ok())
      for (const synth::ObjectSpec& o : *objects) add(o.name.c_str());
  }
  return out;
}

int run_redact(const RedactOptions& o) {
  captures::RedactOptions opt;
  opt.keep = o.keep;
  opt.redact = o.redact;
  opt.check = o.check;
  if (o.check) opt.ordinary = ordinary_names();
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
  nlohmann::json kept = nlohmann::json::array();
  for (const captures::KeptName& k : report.kept) kept.push_back({{"where", k.where}, {"name", k.text}});
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
                                                 {"out_bytes", report.out_bytes},
                                                 {"kept", kept}})));
  } else {
    fmt::print("{} -> {}: {} records, {} names replaced by tokens ({} instance names rewritten, {} registry values)\n",
               o.in, o.out, report.records, map.size(), report.instances_renamed, report.registry_values);
    fmt::print("map: {} (keep it: it turns the tokens back into names; do not send it)\n", map_path);
    if (o.check) {
      fmt::print("kept as they are ({}; --redact NAME or --redact /REGEX/ replaces one):\n", report.kept.size());
      for (const captures::KeptName& k : report.kept) fmt::print("  {}: {}\n", k.where, k.text);
    }
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
  c->add_option("--redact", r.redact,
                "A name replaced too (a product, a customer's word), or /REGEX/ in RE2's syntax (no backreferences "
                "or lookaround): every word it matches, case-insensitively (repeat for several)")
      ->check([](const std::string& a) {
        const Status s = captures::check_redact_pattern(a);
        return s.ok() ? std::string() : s.message() + "; write a name or /REGEX/, e.g. --redact '/acme[a-z]*/'";
      });
  c->add_flag("--check", r.check,
              "Also list every string left as it is that looks like a name (objects Windows does not serve, kept "
              "instances, registry text), so you see what leaves");
  add_format_option(c, r.format_version);
  c->add_flag("--json", r.json, "Machine-readable summary");
  c->callback([o, &rc] { rc = run_redact(*o); });
}

}  // namespace perfsim::cli
