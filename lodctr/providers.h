// Providers on a simulated host: what a provider DLL's Open/Collect (PM_OPEN_PROC /
// PM_COLLECT_PROC) would put into the host's answers, baked into the capture so the replayer keeps
// serving byte slices.
//
// A collect spec (TOML or JSON, README.md) names the driver's objects and counters by their
// symbols; counter types, instances and value generators follow synth's [[objects]] schema (the
// synth's generators produce the values). add_provider() needs the driver loaded (install.h) and:
//  - lays the objects out as CollectPerformanceData does: title indices First Counter/First Help +
//    symbol offset, counter sizes from their types, PERF_NO_INSTANCES for single-instance objects,
//    base counters right after their counter with title index 0 (or their `base_symbol`'s);
//  - appends them to every recorded answer that would hold them: `Global` (non-costly), `Costly`
//    (costly), and recorded index lists that select them; adds them to the catalog under the
//    driver's name, so an index query returns every object the provider owns and nothing else;
//  - writes Library/Open/Collect/Close under Services\<driver>\Performance;
//  - `disabled`: writes `Disable Performance Counters` = 1 and adds no objects (perflib does not
//    load the provider); `timeout`: in the ticks it names the provider overran its Collect time-out
//    and its objects are missing from that tick's answers; `bad`: the provider returns data that
//    fails the validator (perfdata/validate.h), one defect per mode.
// Records whose payload does not parse are left as they are (counted in the report). Errors leave
// `cap` unchanged.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "captures/writer.h"
#include "core/status.h"
#include "lodctr/ini.h"
#include "synth/spec.h"

namespace perfsim::lodctr {

enum class BadMode {
  kNone,
  kCounterOutsideBlock,  // a counter's offset points past its counter block (counter.outside-block)
  kSizeMismatch,         // a DWORD counter declares CounterSize 8 (counter.size-type)
  kMissingBase,          // a fraction/average counter without its base (counter.base-missing)
};
const char* bad_mode_name(BadMode m);

struct CollectSpec {
  std::string library, open, collect, close;  // defaults: <driver>.dll, Open<driver>PerformanceData, ...
  uint64_t seed = 1;
  bool disabled = false;
  std::vector<uint32_t> timeout_ticks;  // ticks whose Collect call timed out
  uint32_t timeout_every = 0;           // and every Nth tick (ticks N-1, 2N-1, ...); 0: never
  BadMode bad = BadMode::kNone;
  // synth objects: `name` holds the object's / counter's symbol; indices are left 0.
  std::vector<synth::ObjectSpec> objects;
  // Per object, per counter: the symbol naming its base counter ("" : title index 0).
  std::vector<std::vector<std::string>> base_symbols;

  bool timed_out(uint32_t tick) const;
};

Status parse_collect_spec_json(std::string_view text, CollectSpec& out);
Status parse_collect_spec_toml(std::string_view text, CollectSpec& out);
Status load_collect_spec(const std::string& path, CollectSpec& out);  // by extension: .toml / .json

struct ProviderReport {
  std::vector<uint32_t> objects;  // title indices
  size_t records_changed = 0;
  size_t records_unparsed = 0;  // payloads left alone because they did not parse
  size_t ticks_timed_out = 0;
};

// A provider added to a capture one record at a time, so a capture of any length streams through
// (`perfsim lodctr --collect`): prepare() checks the spec against the installed driver and edits
// the metadata (Performance key values, catalog); apply() then adds the provider's objects to each
// record, in the capture's order. A refused spec leaves `meta` unchanged.
class ProviderEdit {
 public:
  ProviderEdit();
  ~ProviderEdit();
  ProviderEdit(ProviderEdit&&) noexcept;
  ProviderEdit& operator=(ProviderEdit&&) noexcept;

  // `start_100ns`: the first sample's clock (first_sample_time), the host's start time if none.
  Status prepare(captures::Capture& meta, const std::string& driver, const Symbols& symbols, const CollectSpec& spec,
                 std::optional<int64_t> start_100ns);
  void apply(captures::QueryRecord& r);
  const ProviderReport& report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The clock a provider starts from when `r` is the capture's first parseable sample (nullopt if it
// is not one).
std::optional<int64_t> first_sample_time(const captures::QueryRecord& r);

// The same over a whole capture in memory.
Status add_provider(captures::Capture& cap, const std::string& driver, const Symbols& symbols, const CollectSpec& spec,
                    ProviderReport* report = nullptr);

// Takes the driver's objects out of the catalog of `meta` and returns what takes them out of each
// recorded answer (nullptr when the driver has none; unlodctr).
captures::RecordEdit provider_removal(captures::Capture& meta, const std::string& driver);
// The same over a whole capture in memory.
void remove_provider(captures::Capture& cap, const std::string& driver);

}  // namespace perfsim::lodctr
