#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "captures/writer.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"

namespace perfsim::cli {
namespace {

struct ConvertOptions {
  std::string in, out;
  uint32_t format_version = 2;
  bool json = false;
};

}  // namespace

int run_convert(const ConvertOptions& o) {
  captures::WriterOptions opt;
  opt.version = o.format_version;
  uint64_t records = 0;
  if (Status s = captures::convert_capture(o.in, o.out, opt, &records); !s.ok()) {
    const bool damaged = s.code() == Status::Code::kCorruption;
    return fail("convert", o.in + " -> " + o.out + ": " + s.ToString() +
                               (damaged ? " (perfsim validate shows the damage; nothing was written)" : ""));
  }
  std::error_code ec;
  const uint64_t before = std::filesystem::file_size(o.in, ec), after = std::filesystem::file_size(o.out, ec);
  if (o.json) {
    fmt::print("{}\n", json_text(nlohmann::json({{"in", o.in},
                                                 {"out", o.out},
                                                 {"format_version", o.format_version},
                                                 {"records", records},
                                                 {"in_bytes", before},
                                                 {"out_bytes", after}})));
  } else {
    fmt::print("{} -> {} (format v{}): {} records, {} bytes -> {} bytes ({:.2f}x)\n", o.in, o.out, o.format_version,
               records, before, after, after ? double(before) / double(after) : 0.0);
  }
  return kExitOk;
}

void add_convert(CLI::App& app, int& rc) {
  auto o = std::make_shared<ConvertOptions>();
  ConvertOptions& convert = *o;
  auto* c_convert = app.add_subcommand(
      "convert", "Rewrite a capture in another format version (v1 -> v2: same records, exact bytes, smaller file)");
  c_convert->add_option("file", convert.in, "Capture to read (v1 or v2)")->required()->check(input_file());
  c_convert->add_option("--out,-o", convert.out, "Capture file to write")->required()->check(output_file());
  add_format_option(c_convert, convert.format_version);
  c_convert->add_flag("--json", convert.json, "Machine-readable summary");
  c_convert->callback([o, &rc] { rc = run_convert(*o); });
}

}  // namespace perfsim::cli
