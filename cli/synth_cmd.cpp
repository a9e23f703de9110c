#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/writer.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "synth/profiles.h"
#include "synth/roles.h"
#include "synth/spec.h"
#include "synth/synth.h"
#include "windows/os.h"

namespace perfsim::cli {
namespace {

struct SynthOptions {
  std::string spec;     // TOML/JSON spec file, or empty with `profile`
  std::string profile;  // build from a built-in profile without a spec
  std::string out;
  std::optional<uint64_t> seed;
  std::string host_name;  // overrides the spec's
  std::optional<double> duration_s;
  std::optional<double> interval_s;
  std::string names;                 // lodctr /s backup or perfcLLL.dat; overrides the spec's [host] names
  std::vector<std::string> roles;    // added to the spec's [host] roles
  std::optional<uint32_t> v2_index;  // first index of V2 counter set names the names file lacks
  bool strict_names = false;         // refuse objects and counters the names file lacks
  uint32_t format_version = 2;       // capture format: 1 for perfsim before v2
  bool json = false;
};

}  // namespace

int run_synth(const SynthOptions& o) {
  synth::Spec spec;
  if (!o.spec.empty()) {
    if (Status s = synth::load_spec(o.spec, spec); !s.ok()) return fail("synth", s.message(), kExitUsage);
  }
  if (!o.profile.empty()) {
    if (!synth::find_profile(o.profile)) return fail("synth", windows::check_os_name(o.profile).message(), kExitUsage);
    spec.profile = o.profile;
  }
  if (!o.names.empty()) spec.names_file = o.names;
  if (o.strict_names) spec.strict_names = true;
  if (o.v2_index) {
    if (*o.v2_index % 2 || *o.v2_index < 2)
      return fail("synth", "--v2-index must be an even index (a name's; its help text takes the odd one after)",
                  kExitUsage);
    spec.v2_index = *o.v2_index;
  }
  for (const std::string& r : o.roles)
    if (std::find(spec.roles.begin(), spec.roles.end(), r) == spec.roles.end()) spec.roles.push_back(r);
  if (Status s = synth::check_roles(spec.roles); !s.ok()) return fail("synth", "--role: " + s.message(), kExitUsage);
  if (o.seed) spec.seed = *o.seed;
  if (!o.host_name.empty()) spec.host_name = o.host_name;
  if (o.duration_s) spec.duration_s = uint32_t(*o.duration_s);
  if (o.interval_s) {
    if (*o.interval_s <= 0) return fail("synth", "--interval must be positive (seconds between samples)", kExitUsage);
    spec.interval_ms = uint32_t(*o.interval_s * 1000);
  }

  std::unique_ptr<synth::Synthesizer> gen;
  if (Status s = synth::Synthesizer::create(spec, gen); !s.ok()) return fail("synth", s.message(), kExitUsage);
  const captures::Capture& head = gen->header();
  for (const std::string& n : gen->notes()) std::fprintf(stderr, "perfsim synth: %s\n", n.c_str());
  std::unique_ptr<captures::Writer> w;
  captures::WriterOptions wopt;
  wopt.version = o.format_version;
  if (Status s = captures::Writer::create(o.out, head.host, wopt, w); !s.ok())
    return fail("synth", o.out + ": " + s.ToString() + " (check the directory exists and is writable)");
  Status st = captures::add_metadata(*w, head);

  Progress bar("synth", gen->tick_count());
  uint32_t ticks = 0;
  uint64_t records = 0;
  std::vector<captures::QueryRecord> batch;
  while (st.ok() && !gen->done()) {
    batch.clear();
    st = gen->next(batch);
    for (const auto& r : batch)
      if (st.ok()) {
        st = w->append(r);
        ++records;
      }
    bar.update(++ticks);
  }
  bar.finish();
  if (Status c = w->close(); st.ok()) st = c;
  if (!st.ok()) return fail("synth", o.out + ": " + st.ToString());
  if (o.json) {
    fmt::print("{}\n", json_text(nlohmann::json({{"out", o.out},
                                                 {"host", head.host.name},
                                                 {"profile", head.host.profile},
                                                 {"ticks", ticks},
                                                 {"records", records},
                                                 {"raw_bytes", w->raw_payload_bytes()},
                                                 {"file_bytes", w->file_bytes()}})));
  } else {
    fmt::print("{}: host {} (profile {}), {} samples, {} records, {} bytes raw -> {} bytes on disk ({:.1f}x)\n", o.out,
               head.host.name, head.host.profile, ticks, records, w->raw_payload_bytes(), w->file_bytes(),
               w->file_bytes() ? double(w->raw_payload_bytes()) / double(w->file_bytes()) : 0.0);
  }
  return kExitOk;
}

void add_synth(CLI::App& app, int& rc) {
  auto o = std::make_shared<SynthOptions>();
  SynthOptions& synth = *o;
  auto* c_synth =
      app.add_subcommand("synth", "Build a capture of a synthetic host from a TOML/JSON spec or a built-in OS profile");
  c_synth->add_option("spec", synth.spec, "Spec file (.toml or .json); see synth/README.md")->check(input_file());
  c_synth->add_option("--profile,-p", synth.profile,
                      "OS profile (" + perfsim::windows::os_name_list() + "); overrides the spec's");
  c_synth->add_option("--out,-o", synth.out, "Capture file to write")->required();
  c_synth->add_option("--seed", synth.seed, "Seed for the value generators (same seed, same bytes)");
  c_synth->add_option("--host-name", synth.host_name,
                      "System name the host reports (default: the spec's, else SYNTH-PROFILE-SEED)");
  c_synth->add_option("--duration", synth.duration_s, "Time the samples span (seconds, or 10m, 1h, 7d)")
      ->transform(duration());
  c_synth->add_option("--interval", synth.interval_s, "Time between samples (seconds, or 500ms, 15s, 1m)")
      ->transform(duration());
  c_synth
      ->add_option("--names", synth.names,
                   "Name tables from a `lodctr /s` backup or perfcLLL.dat (names/README.md); overrides [host] names")
      ->check(input_file());
  c_synth->add_option("--v2-index", synth.v2_index,
                      "With --names: first index for the Perflib V2 counter set names the file lacks (default: after "
                      "its last index)");
  c_synth->add_flag("--strict-names", synth.strict_names,
                    "With --names: refuse (exit 2) a host whose objects or counters the file does not name, instead "
                    "of leaving them out of it (one warning lists what was left out); [host] strict_names");
  c_synth->add_option("--role", synth.roles,
                      "Server role whose objects the host also serves (repeatable): " +
                          perfsim::synth::role_name_list() + "; added to [host] roles");
  add_format_option(c_synth, synth.format_version);
  c_synth->add_flag("--json", synth.json, "Machine-readable summary");
  c_synth->callback([o, &rc] {
    if (o->spec.empty() && o->profile.empty()) {
      std::fprintf(
          stderr,
          "perfsim synth: give a spec file or --profile NAME (e.g. perfsim synth --profile 2016 --out host.perfcap)\n");
      rc = kExitUsage;
      return;
    }
    rc = run_synth(*o);
  });
}

}  // namespace perfsim::cli
