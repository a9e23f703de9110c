#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/reader.h"
#include "captures/samples.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/values.h"
#include "core/utf16.h"

namespace perfsim::cli {
namespace {

struct DumpOptions {
  std::string path;
  uint32_t sample = 1;           // values between sample-1 and sample (raw only for sample 0)
  std::string query = "Global";  // which recorded value to show
  std::string object;            // name or index; empty = all
  std::string lang = "009";
  bool json = false;
};

}  // namespace
namespace {

Status read_sample(captures::Reader& r, uint32_t tick, const std::string& query, perfdata::DataBlock& out) {
  std::vector<captures::QueryRecord> recs;
  if (Status s = r.read_tick(tick, recs); !s.ok()) return s;
  for (const auto& q : recs) {
    if (!iequals(q.value_name, query)) continue;
    if (q.status != 0)
      return Status::NotFound(fmt::format("tick {}: '{}' was answered with error {}", tick, query, q.status));
    return perfdata::parse(q.payload, out);
  }
  return Status::NotFound(fmt::format("tick {} holds no '{}' record", tick, query));
}

}  // namespace

int run_dump(const DumpOptions& o) {
  std::unique_ptr<captures::Reader> r;
  if (Status s = captures::Reader::open(o.path, r); !s.ok()) return fail("dump", o.path + ": " + s.ToString());
  for (const auto& w : r->warnings()) fmt::print(stderr, "warning: {}\n", w);
  const std::map<uint32_t, std::string> names = captures::counter_names(r->metadata(), o.lang);
  perfdata::DataBlock cur, prev;
  if (Status s = read_sample(*r, o.sample, o.query, cur); !s.ok())
    return fail("dump", fmt::format("{}: sample {}: {} (see `perfsim inspect` for the ticks and queries held)", o.path,
                                    o.sample, s.ToString()));
  const bool have_prev = o.sample > 0 && read_sample(*r, o.sample - 1, o.query, prev).ok();
  nlohmann::json jobjects = nlohmann::json::array();
  size_t shown = 0;
  ValuesView view{have_prev ? &prev : nullptr, &cur, &names, o.object};
  if (Status s = print_values(view, o.json ? &jobjects : nullptr, shown); !s.ok()) return fail("dump", s.ToString());
  if (shown == 0 && !o.object.empty())
    return fail("dump", fmt::format("no object '{}' in sample {} of '{}'", o.object, o.sample, o.query));
  if (o.json) {
    nlohmann::json j = {{"host", utf16_to_utf8(cur.system_name())},
                        {"sample", o.sample},
                        {"query", o.query},
                        {"formatted", have_prev},
                        {"objects", jobjects}};
    fmt::print("{}\n", json_text(j, 2));
  }
  return kExitOk;
}

void add_dump(CLI::App& app, int& rc) {
  auto o = std::make_shared<DumpOptions>();
  DumpOptions& dump = *o;
  auto* c_dump = app.add_subcommand(
      "dump", "Print objects, instances and formatted counter values (as typeperf shows them) between two samples");
  c_dump->add_option("file", dump.path, "Capture file (.perfcap)")->required()->check(input_file());
  c_dump
      ->add_option("--sample,-k", dump.sample,
                   "Show values between sample K-1 and K (0: raw values of the first sample)")
      ->capture_default_str();
  c_dump->add_option("--query", dump.query, "Recorded value to show: Global, Costly, or a recorded index list")
      ->capture_default_str();
  c_dump->add_option("--object", dump.object, "Only this object (name like Processor, or index like 238)");
  c_dump->add_option("--lang", dump.lang, "Language of the name table used for names")->capture_default_str();
  c_dump->add_flag("--json", dump.json, "Machine-readable output");
  c_dump->callback([o, &rc] { rc = run_dump(*o); });
}

}  // namespace perfsim::cli
