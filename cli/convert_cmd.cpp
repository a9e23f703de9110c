#include <fmt/core.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "captures/writer.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "core/json.h"

namespace perfsim::cli {

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

}  // namespace perfsim::cli
