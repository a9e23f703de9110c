// The tick-by-tick engine. Model holds the host's state (processors, processes and threads,
// volumes, adapters, memory, custom instances); each tick advances it by the elapsed time and
// writes counters into perfdata::Object templates whose instance lists are rebuilt only when
// instances come or go.
#include "synth/synth.h"

#include <algorithm>
#include <cmath>

#include "core/utf16.h"
#include "perfdata/filetime.h"
#include "perfdata/model.h"
#include "perfdata/winperf.h"
#include "synth/catalog.h"
#include "synth/model.h"
#include "synth/placed.h"

namespace perfsim::synth {
namespace {

using namespace winperf;

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
  std::vector<std::string> notes;

  captures::QueryRecord record(const char* value_name, int64_t now, const ModelClock& clock, bool costly) {
    perfdata::DataBlock block;
    block.system_time = perfdata::system_time_of(now);
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
  const bool named = !spec.names_file.empty() || !spec.names_text.empty();
  names::NameSet names;
  if (named) {
    if (Status s = load_names_file(impl->spec, *impl->profile, names, impl->notes); !s.ok()) return s;
    if (Status s = leave_out_unnamed(impl->spec, names, impl->catalog, impl->notes); !s.ok()) return s;
  }
  impl->header = build_header(impl->spec, *impl->profile, impl->catalog);
  if (named) {
    Status s = apply_names_file(impl->spec, std::move(names), impl->catalog, impl->header, impl->renamer, impl->notes);
    if (!s.ok()) return s;
  }
  impl->ticks = std::max<uint32_t>(1, uint32_t(uint64_t(spec.duration_s) * 1000 / spec.interval_ms));
  impl->timing = Rng(mix_seed(value_seed(spec, impl->profile->os->name), 0x74696d65));
  impl->system_name = utf8_to_utf16(host_name(spec));
  impl->model = std::make_unique<Model>(impl->spec, *impl->profile, impl->catalog);
  out.reset(new Synthesizer(std::move(impl)));
  return Status::Ok();
}

const captures::Capture& Synthesizer::header() const { return impl_->header; }
const std::vector<std::string>& Synthesizer::notes() const { return impl_->notes; }
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
