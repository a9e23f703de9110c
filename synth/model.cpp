// The simulated host: Model's public methods, building the state (init) and the tick loop. The
// entities move in dynamics.cpp and each object family is written by its write_*.cpp; the state
// they share, and which file defines which of its functions, is model_state.h.
#include "synth/model.h"

#include <algorithm>
#include <cmath>

#include "perfdata/layout.h"
#include "perfdata/winperf.h"
#include "synth/model_state.h"

namespace perfsim::synth {

using namespace winperf;

// ---- object templates ----------------------------------------------------------------------

ObjState make_state(const CatalogObject& co, const perfdata::CounterLayout* layout) {
  ObjState s;
  s.cat = &co;
  perfdata::Object& o = s.obj;
  o.name_index = co.desc.index;
  o.help_index = co.desc.index + 1;
  o.detail_level = co.desc.detail;
  o.default_counter = co.desc.default_counter;
  o.num_instances = co.desc.multi ? 0 : PERF_NO_INSTANCES;
  std::vector<perfdata::CounterShape> shapes;
  for (const CounterDesc& c : co.desc.counters) shapes.push_back({c.index, c.size});
  const std::vector<uint32_t> offsets = perfdata::counter_offsets(layout, shapes);
  for (const CounterDesc& c : co.desc.counters) {
    perfdata::CounterDef d;
    d.name_index = c.index;
    d.help_index = c.index + 1;
    d.default_scale = c.scale;
    d.detail_level = c.detail;
    d.type = c.type;
    d.size = c.size;
    d.offset = offsets[o.counters.size()];  // where Windows puts it (perfdata/layout.h)
    if (!is_base_type(c.type)) s.pos.emplace(c.index, int32_t(o.counters.size()));  // keeps the first
    o.counters.push_back(d);
  }
  s.data_bytes = offsets.back() - kCounterBlockSize;
  if (!co.desc.multi) o.counter_block = perfdata::make_counter_block(s.data_bytes);
  o.num_counters = uint32_t(o.counters.size());
  return s;
}

// ---- construction --------------------------------------------------------------------------

// By its English name (counter sets' indices differ per host) and the profile's version (samba
// answers as 6.1).
const perfdata::CounterLayout* layout_of(const Catalog& catalog, const CatalogObject& co, const Profile& p) {
  auto it = std::lower_bound(catalog.names.begin(), catalog.names.end(), co.desc.index,
                             [](const auto& n, uint32_t i) { return n.first < i; });
  if (it == catalog.names.end() || it->first != co.desc.index) return nullptr;
  return perfdata::find_counter_layout(it->second, p.os->major * 100 + p.os->minor);
}

Model::Model(const Spec& spec, const Profile& profile, const Catalog& catalog) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.spec = spec;
  s.profile = &profile;
  s.version = profile.os->major * 100 + profile.os->minor;
  s.seed = value_seed(spec, profile.os->name);
  s.rng = Rng(mix_seed(s.seed, 0x686f7374));
  s.xrng = Rng(mix_seed(s.seed, 0x78747261));
  s.cpu_sig = Signal(spec.cpu, mix_seed(s.seed, 1));
  s.mem_sig = Signal(spec.memory, mix_seed(s.seed, 2));
  s.disk_sig = Signal(spec.disk_iops, mix_seed(s.seed, 3));
  s.net_sig = Signal(spec.network, mix_seed(s.seed, 4));
  for (const CatalogObject& co : catalog.objects) {
    s.objects.push_back(make_state(co, layout_of(catalog, co, profile)));
    ObjState& o = s.objects.back();
    if (co.desc.provider == "PerfProc" && catalog.process_v1_disabled) o.enabled = false;
    if (co.custom) s.customs.push_back(Custom{s.objects.size() - 1, {}, 0, 0});
  }
  s.init();
}

Model::~Model() = default;

void Model::State::init() {
  const int64_t interval = int64_t(spec.interval_ms) * 10000;
  now = spec.start_100ns - interval;
  last = now;
  boot = spec.start_100ns - int64_t(spec.uptime_s) * k100ns;
  const double up_s = double(spec.uptime_s);
  net.ipv6 = std::any_of(counter_sets().begin(), counter_sets().end(),
                         [&](const CounterSet& s) { return s.family == Family::kIpV6 && serves(*profile, s); });
  cpus.resize(spec.processors);
  for (Cpu& c : cpus) {
    c.idle = uint64_t(up_s * 0.8 * k100ns);
    c.user = uint64_t(up_s * 0.13 * k100ns);
    c.priv = uint64_t(up_s * 0.07 * k100ns);
    c.intr = c.priv / 20, c.dpc = c.priv / 30;
    c.c1 = c.idle / 2, c.c2 = c.idle / 4, c.c3 = c.idle / 8;
    c.interrupts = uint64_t(std::min(up_s * 800, 1e9));
    c.dpcs = uint64_t(std::min(up_s * 80, 1e9));
    c.last_priv = c.priv;
    c.low_prio = c.idle + (c.user + c.priv) / 20;
    c.clock_ints = uint64_t(up_s * 64);
    c.idle_breaks = uint64_t(std::min(up_s * 300, 1e9));
    c.util_base = uint32_t(uint64_t(up_s * 1000) & 0xFFFFFFFFu);
    c.perf = uint64_t(c.util_base) * 100;
    c.util = (c.user + c.priv) / 100, c.priv_util = c.priv / 100;
  }
  Process idle;
  idle.name = "Idle";
  idle.idle = idle.pinned = true;
  idle.start = boot;
  idle.prio = 0;
  idle.ws = idle.ws_init = 8192;
  for (uint32_t k = 0; k < spec.processors; ++k) {
    Thread t;
    t.tid = 0;
    t.start = boot;
    t.prio = 0;
    t.state = 2;
    t.wait = 0;
    idle.threads.push_back(t);
  }
  procs.push_back(idle);
  procs.push_back(make_process("System", boot, std::max<uint32_t>(spec.threads_min, 4) + uint32_t(rng.below(60)), 0));
  procs.back().pid = system_pid(version), procs.back().pinned = true;
  make_processes();
  fit_working_sets();
  double total_share = 0;
  for (size_t i = 0; i < spec.volumes.size(); ++i) {
    Volume v;
    v.name = spec.volumes[i];
    v.disk = uint32_t(i % spec.physical_disks);
    v.share = i == 0 ? 1.0 : 0.5 / double(i);
    total_share += v.share;
    v.size_mb = spec.volume_size_gb * 1024;
    v.free_mb = v.size_mb * rng.uniform(0.2, 0.8);
    v.read_ms = rng.uniform(2, 8);
    v.write_ms = rng.uniform(0.5, 4);
    volumes.push_back(v);
  }
  for (Volume& v : volumes) v.share /= total_share;
  for (size_t i = 0; i < spec.adapters.size(); ++i)
    nics.push_back(Nic{spec.adapters[i], 1.0 / double(spec.adapters.size())});
  pagefile_mb = std::clamp<double>(double(spec.memory_mb), 1024, 32768);
  // A 32-bit (x86) host: Commit Limit (memory + paging file) stays below 4 GB, as NT 4.0's DWORD
  // counters need and as on Windows' other x86 rows here (resolve_memory, spec.cpp).
  if (!profile->host.large_counters) pagefile_mb = std::min(pagefile_mb, 4095.0 - double(spec.memory_mb));
  for (Custom& c : customs) {
    const ObjectSpec& os = *objects[c.state].cat->custom;
    const uint32_t n = os.instances.multi ? os.instances.count : 1;
    for (uint32_t i = 0; i < n; ++i) {
      CustomInstance ci;
      ci.name = i < os.instances.names.size() ? os.instances.names[i] : os.instances.prefix + std::to_string(c.serial);
      ++c.serial;
      for (size_t k = 0; k < os.counters.size(); ++k)
        ci.signals.emplace_back(os.counters[k].value, mix_seed(seed, objects[c.state].index(), k * 100003 + c.serial));
      ci.acc.assign(objects[c.state].cat->desc.counters.size(), 0.0);
      ci.scale = instance_scale(seed, objects[c.state].index(), c.serial, n > 1);
      c.instances.push_back(std::move(ci));
    }
  }
}

// The processes' working sets together at most 15% of the host's memory (they vary within 0.5x-2x
// of their start, so at most 30%): Memory's used bytes and Committed Bytes hold them (write_memory).
void Model::State::fit_working_sets() {
  double sum = 0;
  for (const Process& p : procs) sum += p.ws;
  const double room = 0.15 * double(spec.memory_mb * kMiB);
  if (sum <= room) return;
  ws_scale = room / sum;
  for (Process& p : procs) {
    if (p.idle) continue;
    p.ws = p.ws_init = std::max(4096.0, std::floor(p.ws * ws_scale));
    p.vb = std::max(p.vb * ws_scale, p.ws * 2);
  }
}

// ---- the tick loop ------------------------------------------------------------------------

ModelClock Model::advance(int64_t now_100ns) {
  State& s = *s_;
  const int64_t dt = std::max<int64_t>(now_100ns - s.now, 1);
  s.last = s.now;
  s.now = now_100ns;
  s.step(dt);
  s.write_all();
  ModelClock clock;
  clock.perf_freq = s.profile->host.perf_freq;
  const int64_t span = s.now - s.boot;
  clock.perf_time = span / k100ns * clock.perf_freq + span % k100ns * clock.perf_freq / k100ns;
  for (ObjState& o : s.objects) {
    if (o.cat->desc.object_timer) {
      o.obj.perf_time = s.now;  // object timer: the 100 ns clock, as Windows' Process/Thread/System
      o.obj.perf_freq = k100ns;
    } else {
      o.obj.perf_time = clock.perf_time;
      o.obj.perf_freq = clock.perf_freq;
    }
  }
  return clock;
}

void Model::State::step(int64_t dt) {
  const double t = double(now - spec.start_100ns) / k100ns;
  if (now > spec.start_100ns) churn(dt);
  step_cpu(dt, t);
  step_processes(dt);
  step_disks(dt, t);
  step_network(dt, t);
  for (Custom& c : customs) step_custom(c, dt, t);
  step_counter_sets(dt);
}

// One case per built-in object, each writer in its family's write_*.cpp. Catalog order: System
// and Memory draw from rng, so the order is part of the capture's bytes.
void Model::State::write_all() {
  if (procs_dirty) rebuild_process_instances();
  for (ObjState& o : objects) {
    if (o.cat->custom || !o.enabled) continue;
    if (o.cat->desc.family != Family::kStandard) {
      write_counter_set(o);
      continue;
    }
    switch (o.index()) {
      case idx::kSystem:
        write_system(o);
        break;
      case idx::kMemory:
        write_memory(o);
        break;
      case idx::kProcessor:
        write_processor(o);
        break;
      case idx::kProcess:
        write_process(o);
        break;
      case idx::kThread:
        write_thread(o);
        break;
      case idx::kPhysicalDisk:
        write_disks(o, false);
        break;
      case idx::kLogicalDisk:
        write_disks(o, true);
        break;
      case idx::kNetworkInterface:
        write_network(o);
        break;
      case idx::kPagingFile:
        write_paging(o);
        break;
      case idx::kObjects:
        write_objects(o);
        break;
      default:
        break;
    }
  }
  write_costly(find(idx::kProcessAddressSpace), find(idx::kImage), find(idx::kThreadDetails));
  for (Custom& c : customs) write_custom(c, now - last);
}

// ---- lending objects to a query ------------------------------------------------------------

void Model::emit(bool costly, perfdata::DataBlock& block) {
  for (ObjState& o : s_->objects)
    if (o.enabled && o.cat->desc.costly == costly) block.objects.push_back(std::move(o.obj));
}

void Model::restore(bool costly, perfdata::DataBlock& block) {
  size_t k = 0;
  for (ObjState& o : s_->objects)
    if (o.enabled && o.cat->desc.costly == costly && k < block.objects.size()) o.obj = std::move(block.objects[k++]);
  block.objects.clear();
}

}  // namespace perfsim::synth
