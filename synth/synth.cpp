// The tick-by-tick engine. Model holds the host's state (processors, processes and threads,
// volumes, adapters, memory, custom instances); each tick advances it by the elapsed time and
// writes counters into perfdata::Object templates whose instance lists are rebuilt only when
// instances come or go.
#include "synth/synth.h"

#include <algorithm>
#include <cmath>

#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/winperf.h"
#include "synth/catalog.h"
#include "synth/model.h"
#include "synth/placed.h"

namespace perfsim::synth {
namespace {

using namespace winperf;

perfdata::SystemTime to_system_time(int64_t filetime) {
  const int64_t ms_total = filetime / 10000;
  int64_t days = ms_total / 86400000;
  const int64_t ms_day = ms_total % 86400000;
  perfdata::SystemTime t;
  t.day_of_week = uint16_t((days + 1) % 7);  // 1601-01-01 was a Monday
  days -= 134774;                            // to days since 1970-01-01
  // civil_from_days (Howard Hinnant's algorithm).
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = unsigned(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  t.year = uint16_t(int64_t(yoe) + era * 400 + (m <= 2));
  t.month = uint16_t(m);
  t.day = uint16_t(d);
  t.hour = uint16_t(ms_day / 3600000);
  t.minute = uint16_t(ms_day / 60000 % 60);
  t.second = uint16_t(ms_day / 1000 % 60);
  t.ms = uint16_t(ms_day % 1000);
  return t;
}

}  // namespace

struct Synthesizer::Impl {
  Spec spec;
  const Profile* profile = nullptr;
  Catalog catalog;
  captures::Capture header;
  std::unique_ptr<Model> model;
  uint32_t ticks = 0;
  uint32_t tick = 0;
  Rng timing{1};
  std::u16string system_name;
  Renamer renamer;  // to the names file's indices (identity without one)

  captures::QueryRecord record(const char* value_name, int64_t now, const ModelClock& clock, bool costly) {
    perfdata::DataBlock block;
    block.system_time = to_system_time(now);
    block.perf_time = clock.perf_time;
    block.perf_freq = clock.perf_freq;
    block.perf_time_100ns = now;
    block.default_object = idx::kProcessor;
    perfdata::set_system_name(block, system_name);
    model->emit(costly, block);
    perfdata::fix_counts(block);
    captures::QueryRecord r;
    r.tick = tick;
    r.value_name = value_name;
    if (!renamer.empty()) renamer.apply(block);
    r.payload = perfdata::build(block);
    if (!renamer.empty()) renamer.undo(block);
    model->restore(costly, block);
    r.size = uint32_t(r.payload.size());
    // Latency grows with the answer, as collecting more instances takes longer.
    r.latency_us = uint32_t((costly ? 40000 : 15000) + r.payload.size() / 40 + timing.below(5000));
    r.time_100ns = now + int64_t(r.latency_us) * 10;
    return r;
  }
};

Synthesizer::Synthesizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Synthesizer::~Synthesizer() = default;

Status Synthesizer::create(const Spec& spec, std::unique_ptr<Synthesizer>& out) {
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  impl->profile = find_profile(spec.profile);
  if (!impl->profile) return Status::InvalidArgument("spec: unknown profile \"" + spec.profile + "\"");
  if (Status s = resolve_memory(*impl->profile, impl->spec); !s.ok()) return s;
  if (Status s = build_catalog(impl->spec, *impl->profile, impl->catalog); !s.ok()) return s;
  impl->header = build_header(impl->spec, *impl->profile, impl->catalog);
  if (Status s = apply_names_file(impl->spec, impl->catalog, impl->header, impl->renamer); !s.ok()) return s;
  impl->ticks = std::max<uint32_t>(1, uint32_t(uint64_t(spec.duration_s) * 1000 / spec.interval_ms));
  impl->timing = Rng(mix_seed(spec.seed, 0x74696d65));
  impl->system_name = utf8_to_utf16(host_name(spec));
  impl->model = std::make_unique<Model>(impl->spec, *impl->profile, impl->catalog);
  out.reset(new Synthesizer(std::move(impl)));
  return Status::Ok();
}

const captures::Capture& Synthesizer::header() const { return impl_->header; }
uint32_t Synthesizer::tick_count() const { return impl_->ticks; }
bool Synthesizer::done() const { return impl_->tick >= impl_->ticks; }

Status Synthesizer::next(std::vector<captures::QueryRecord>& out) {
  Impl& m = *impl_;
  if (done()) return Status::NotFound("synth: no ticks left");
  // Collectors never poll exactly on the interval: up to 30 ms late.
  const int64_t now = m.spec.start_100ns + int64_t(m.tick) * m.spec.interval_ms * 10000 +
                      (m.tick ? int64_t(m.timing.below(300000)) : 0);
  const ModelClock clock = m.model->advance(now);
  out.push_back(m.record("Global", now, clock, false));
  out.push_back(m.record("Costly", now, clock, true));
  ++m.tick;
  return Status::Ok();
}

Status synthesize(const Spec& spec, captures::Capture& header, const RecordSink& sink) {
  std::unique_ptr<Synthesizer> syn;
  if (Status s = Synthesizer::create(spec, syn); !s.ok()) return s;
  header = syn->header();
  std::vector<captures::QueryRecord> batch;
  while (!syn->done()) {
    batch.clear();
    if (Status s = syn->next(batch); !s.ok()) return s;
    for (captures::QueryRecord& r : batch)
      if (Status s = sink(std::move(r)); !s.ok()) return s;
  }
  return Status::Ok();
}

Status synthesize(const Spec& spec, captures::Capture& out) {
  return synthesize(spec, out, [&](captures::QueryRecord&& r) {
    out.records.push_back(std::move(r));
    return Status::Ok();
  });
}

}  // namespace perfsim::synth
