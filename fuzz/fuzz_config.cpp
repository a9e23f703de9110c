// Configuration text through core/config.h's checked reader: the first byte picks the reader.
//   0 TOML / 1 JSON into the tree; 2 synth spec TOML / 3 synth spec JSON; 4 fleet file;
//   5 fault plan; 6 lodctr collect spec TOML / 7 JSON; 8 a --quirk argument; 9 a --timeline.
#include <memory>
#include <string>
#include <string_view>

#include "core/config.h"
#include "fuzz/fuzz_input.h"
#include "lodctr/providers.h"
#include "replayer/faults.h"
#include "replayer/fleet_file.h"
#include "synth/spec.h"

using namespace perfsim;

namespace {

// Fleet entries are expanded only up to this many hosts (a count is the user's to choose).
constexpr uint64_t kMaxExpandedHosts = 1000;

void fleet(std::string_view text) {
  config::Doc doc;
  if (!config::parse_toml(text, "fleet.toml", doc).ok()) return;
  std::vector<replayer::FleetHost> hosts;
  if (!replayer::parse_fleet(doc, hosts).ok()) return;
  uint64_t total = 0;
  for (const replayer::FleetHost& h : hosts) total += h.replay.count;
  if (total <= kMaxExpandedHosts) replayer::expand_fleet(hosts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t which = in.u8() % 10;
  const ByteView rest = in.rest();
  const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());
  config::Doc doc;
  synth::Spec spec;
  lodctr::CollectSpec collect;
  switch (which) {
    case 0:
      (void)config::parse_toml(text, "fuzz.toml", doc);
      break;
    case 1:
      (void)config::parse_json(text, "fuzz.json", doc);
      break;
    case 2:
      (void)synth::parse_spec_toml(text, spec);
      break;
    case 3:
      (void)synth::parse_spec_json(text, spec);
      break;
    case 4:
      fleet(text);
      break;
    case 5: {
      std::shared_ptr<const replayer::FaultPlan> plan;
      (void)replayer::parse_fault_plan(text, "faults.toml", plan);
      break;
    }
    case 6:
      (void)lodctr::parse_collect_spec_toml(text, collect);
      break;
    case 7:
      (void)lodctr::parse_collect_spec_json(text, collect);
      break;
    case 8: {
      replayer::QuirkSetting q;
      (void)replayer::parse_quirk_arg(std::string(text), q);
      break;
    }
    default: {
      replayer::HostOptions opt;
      (void)replayer::parse_timeline(std::string(text), opt);
      break;
    }
  }
  return 0;
}
