// ObjectSource runs the synth Model over a catalog that holds only the spec's custom objects.
// Their indices are swapped for private ones while the catalog is built, so a provider's indices
// may collide with the built-in name table (a recorded host's Last Counter can be lower than
// the synth's), and swapped back on the way out.
#include "synth/objects.h"

#include <algorithm>

#include "perfdata/winperf.h"
#include "synth/catalog.h"
#include "synth/model.h"

namespace perfsim::synth {
namespace {
constexpr uint32_t kPrivateBase = 0x70000000;  // far above any real title index
}

struct ObjectSource::Impl {
  Spec spec;
  Profile profile;
  Catalog catalog;
  std::unique_ptr<Model> model;
  std::vector<uint32_t> real;  // private index -> real index, by (private - kPrivateBase) / 2
  std::vector<perfdata::Object> out;
  std::vector<bool> costly;

  uint32_t swap_in(uint32_t index) {
    real.push_back(index);
    return kPrivateBase + 2 * uint32_t(real.size() - 1);
  }
  uint32_t swap_out(uint32_t index) const {
    if (index < kPrivateBase) return index;
    const size_t k = (index - kPrivateBase) / 2;
    return k < real.size() ? real[k] + (index - kPrivateBase) % 2 : index;
  }
};

ObjectSource::ObjectSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ObjectSource::~ObjectSource() = default;

Status ObjectSource::create(const Spec& spec, int64_t perf_freq, std::unique_ptr<ObjectSource>& out) {
  auto m = std::make_unique<Impl>();
  const Profile* p = find_profile(spec.profile);
  if (!p) return Status::InvalidArgument("spec: unknown profile \"" + spec.profile + "\"");
  m->profile = *p;
  m->profile.host.perf_freq = perf_freq > 0 ? perf_freq : p->host.perf_freq;
  m->spec = spec;
  if (Status s = resolve_memory(*p, m->spec); !s.ok()) return s;
  // Nothing of the built-in host beyond what the model cannot do without.
  m->spec.process_count = 0;
  m->spec.process_churn_per_hour = 0;
  m->spec.volumes.clear();
  m->spec.adapters.clear();
  m->spec.images_per_process = 0;
  m->spec.thread_details = false;
  for (ObjectSpec& o : m->spec.objects) {
    if (o.index == 0) return Status::InvalidArgument("object source: object \"" + o.name + "\" has no title index");
    o.index = m->swap_in(o.index);
    for (CounterSpec& c : o.counters) {
      if (c.index == 0) return Status::InvalidArgument("object source: counter \"" + c.name + "\" has no title index");
      c.index = m->swap_in(c.index);
    }
    m->costly.push_back(o.costly);
  }
  Catalog cat;
  if (Status s = build_catalog(m->spec, m->profile, cat); !s.ok()) return s;
  // The spec's objects only: not the built-in host's, nor the roles' its OS comes with (the .NET
  // CLR objects of a profile with the framework, roles.h host_roles), which a provider DLL does
  // not return.
  std::erase_if(cat.objects, [&](const CatalogObject& o) {
    return std::none_of(m->spec.objects.begin(), m->spec.objects.end(),
                        [&](const ObjectSpec& mine) { return o.custom == &mine; });
  });
  m->catalog = std::move(cat);
  m->model = std::make_unique<Model>(m->spec, m->profile, m->catalog);
  out.reset(new ObjectSource(std::move(m)));
  return Status::Ok();
}

bool ObjectSource::costly(size_t object) const { return object < impl_->costly.size() && impl_->costly[object]; }

const std::vector<perfdata::Object>& ObjectSource::advance(int64_t now_100ns, int64_t perf_time, int64_t perf_freq) {
  Impl& m = *impl_;
  m.model->advance(now_100ns);
  m.out.clear();
  perfdata::DataBlock block;
  for (bool costly : {false, true}) {
    m.model->emit(costly, block);
    for (const perfdata::Object& o : block.objects) m.out.push_back(o);
    m.model->restore(costly, block);
  }
  // emit() groups by costliness; put the objects back in spec order.
  std::vector<perfdata::Object> ordered;
  for (const CatalogObject& co : m.catalog.objects)
    for (perfdata::Object& o : m.out)
      if (o.name_index == co.desc.index) ordered.push_back(std::move(o));
  m.out = std::move(ordered);
  for (perfdata::Object& o : m.out) {
    bool object_timer = false;
    for (perfdata::CounterDef& c : o.counters) {
      object_timer |= c.type == winperf::PERF_ELAPSED_TIME;
      c.name_index = m.swap_out(c.name_index);
      c.help_index = m.swap_out(c.help_index);
    }
    o.name_index = m.swap_out(o.name_index);
    o.help_index = m.swap_out(o.help_index);
    if (!object_timer) o.perf_time = perf_time, o.perf_freq = perf_freq;
  }
  return m.out;
}

}  // namespace perfsim::synth
