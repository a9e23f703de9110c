// Writer of the spec-defined objects: the raw values accumulated by step_custom, DWORDs wrapping.
#include "synth/model_state.h"

#include <algorithm>
#include <cmath>

#include "perfdata/winperf.h"

namespace perfsim::synth {

using namespace winperf;

void Model::State::write_custom(Custom& c, int64_t) {
  ObjState& o = objects[c.state];
  const CatalogObject& co = *o.cat;
  const InstancesSpec& is = co.custom->instances;
  const bool multi = co.desc.multi;
  if (multi && o.obj.instances.size() != c.instances.size() + (is.total ? 1 : 0)) {
    o.obj.instances.clear();
    for (const CustomInstance& ci : c.instances) o.add_instance(ci.name);
    if (is.total) o.add_instance("_Total");
  }
  std::vector<double> total(co.desc.counters.size(), 0.0);
  auto write = [&](Bytes& b, const std::vector<double>& acc) {
    for (size_t i = 0; i < co.desc.counters.size(); ++i) {
      double v = acc[i];
      if (co.desc.counters[i].size == 4) v = std::fmod(std::max(v, 0.0), 4294967296.0);  // DWORDs wrap
      perfdata::write_counter(b, o.obj.counters[i], uint64_t(std::max(v, 0.0)));
    }
  };
  for (size_t k = 0; k < c.instances.size(); ++k) {
    write(multi ? o.block(k) : o.obj.counter_block, c.instances[k].acc);
    for (size_t i = 0; i < total.size(); ++i) total[i] += c.instances[k].acc[i];
    if (!multi) break;
  }
  if (multi && is.total) {
    if (is.total_average && !c.instances.empty())
      for (double& t : total) t /= double(c.instances.size());  // every raw value and base alike
    for (size_t i = 0; i < total.size(); ++i)
      if (co.desc.counters[i].type == PERF_ELAPSED_TIME)
        total[i] = c.instances.empty() ? double(now) : c.instances[0].acc[i];
    write(o.block(c.instances.size()), total);
  }
}

}  // namespace perfsim::synth
