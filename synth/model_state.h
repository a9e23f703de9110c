// Internal to synth (not its public API): the simulated host's state, shared by the files that
// build it (model.cpp), move it (dynamics.cpp) and write it into perf objects (write_*.cpp).
// State's members are declared here, one block per file, so this is the index of who does what.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/utf16.h"
#include "perfdata/layout.h"
#include "perfdata/model.h"
#include "synth/model.h"

namespace perfsim::synth {

inline constexpr int64_t k100ns = 10000000;
inline constexpr uint64_t kMiB = 1024 * 1024;

// ---- object templates ----------------------------------------------------------------------

struct ObjState {
  const CatalogObject* cat = nullptr;
  perfdata::Object obj;
  // title index -> position of its first non-base counter. A map, not a vector indexed by title:
  // providers installed by lodctr carry indices far above the built-in ones.
  std::unordered_map<uint32_t, int32_t> pos;
  uint32_t data_bytes = 0;  // counter data after the block's ByteLength
  bool enabled = true;

  uint32_t index() const { return cat->desc.index; }
  // A counter set's counter by name (its index differs per profile); 0, which set() ignores, if absent.
  uint32_t idx(std::string_view name) const {
    for (const CounterDesc& c : cat->desc.counters)
      if (c.name && name == c.name) return c.index;
    return 0;
  }
  bool has(uint32_t i) const { return pos.count(i) != 0; }
  void set(Bytes& block, uint32_t i, uint64_t v, int nth = 0) const {
    if (has(i)) perfdata::write_counter(block, obj.counters[size_t(pos.at(i) + nth)], v);
  }
  void set_base(Bytes& block, uint32_t i, uint64_t v) const { set(block, i, v, 1); }
  void set_pair(Bytes& block, uint32_t i, uint64_t v, uint64_t base) const {
    set(block, i, v);
    set_base(block, i, base);
  }
  Bytes& block(size_t instance) { return obj.instances[instance].counter_block; }
  void add_instance(std::string_view name, uint32_t parent_index = 0, uint32_t parent_instance = 0) {
    obj.instances.push_back(perfdata::make_instance(utf8_to_utf16(name), data_bytes, parent_index, parent_instance));
  }
};

// Counter offsets by `layout` (perfdata/layout.h; nullptr: its rule without a lead counter).
ObjState make_state(const CatalogObject& co, const perfdata::CounterLayout* layout);
// The layout row of a catalog object on `p`'s version: what make_state wants for it (every host
// synth or import --perfmon writes is laid out by the one table).
const perfdata::CounterLayout* layout_of(const Catalog& catalog, const CatalogObject& co, const Profile& p);

// ---- entities ------------------------------------------------------------------------------

struct Cpu {
  uint64_t idle = 0, user = 0, priv = 0, intr = 0, dpc = 0, c1 = 0, c2 = 0, c3 = 0;
  uint64_t interrupts = 0, dpcs = 0, c1t = 0, c2t = 0, c3t = 0;
  uint32_t dpc_rate = 0;
  uint64_t busy_now = 0, idle_now = 0;  // this tick's share, for the processes
  // Processor Information's own counters (step_counter_sets; not drawn from the shared Rng).
  uint64_t low_prio = 0, clock_ints = 0, idle_breaks = 0, perf = 0, util = 0, priv_util = 0, last_priv = 0;
  uint32_t util_base = 0;  // milliseconds (a DWORD base, wrapping as Windows' does)
};

// Processor groups (Microsoft, Processor Groups: "a static set of up to 64 logical processors";
// the system "minimizes the number of groups", 128 processors make two groups of 64): how many
// processors each group of `n` holds, the groups as even as they can be (the remainder to the
// first ones: perfsim's choice, as whole NUMA nodes would make them on a two-socket host).
inline std::vector<size_t> processor_groups(size_t n) {
  const size_t groups = std::max<size_t>(1, (n + 63) / 64);
  std::vector<size_t> out(groups, n / groups);
  for (size_t g = 0; g < n % groups; ++g) ++out[g];
  return out;
}

struct Thread {
  uint32_t tid = 0;
  int64_t start = 0;
  uint64_t user = 0, priv = 0, cswitch = 0, start_addr = 0, user_pc = 0;
  uint32_t prio = 8, state = 5, wait = 6;
  double weight = 1;
};

struct Process {
  std::string name;
  uint32_t pid = 0, ppid = 0, prio = 8;
  int64_t start = 0;
  bool idle = false, pinned = false;
  double weight = 1, user_ratio = 0.7, io_rate = 1;
  std::vector<Thread> threads;
  uint64_t user = 0, priv = 0, faults = 0;
  uint64_t io_ops[3] = {}, io_bytes[3] = {};  // read, write, other
  double ws = 0, ws_init = 0, vb = 0, pool_p = 0, pool_np = 0, handles = 0;
  uint64_t ws_peak = 0, vb_peak = 0, pf_peak = 0;
  std::vector<std::string> images;
};

// Process's Private Bytes and Page File Bytes (its commit charge): a share of its working set.
inline uint64_t private_bytes(const Process& p) { return uint64_t(p.ws * 0.8); }

struct Volume {
  std::string name;
  uint32_t disk = 0;
  double share = 1, size_mb = 0, free_mb = 0, read_ms = 4, write_ms = 2;
  uint64_t reads = 0, writes = 0, rbytes = 0, wbytes = 0, rticks = 0, wticks = 0;
  uint64_t busy = 0, rbusy = 0, wbusy = 0, queue = 0, rqueue = 0, wqueue = 0, idle = 0, split = 0;
  uint32_t cur_queue = 0;
  double carry = 0;
};

struct DiskSums {  // one PhysicalDisk/LogicalDisk instance's values
  uint64_t reads = 0, writes = 0, rbytes = 0, wbytes = 0, rticks = 0, wticks = 0, busy = 0, rbusy = 0, wbusy = 0,
           queue = 0, rqueue = 0, wqueue = 0, idle = 0, split = 0, stamp = 0;
  uint32_t cur_queue = 0;
  double size_mb = 0, free_mb = 0;
  template <typename T>  // a Volume or another DiskSums
  void add(const T& v) {
    reads += v.reads, writes += v.writes, rbytes += v.rbytes, wbytes += v.wbytes, rticks += v.rticks;
    wticks += v.wticks, busy += v.busy, rbusy += v.rbusy, wbusy += v.wbusy, queue += v.queue, rqueue += v.rqueue;
    wqueue += v.wqueue, idle += v.idle, split += v.split, cur_queue += v.cur_queue, size_mb += v.size_mb;
    free_mb += v.free_mb;
  }
};

struct Nic {
  std::string name;
  double share = 1;
  uint64_t rbytes = 0, sbytes = 0, rucast = 0, rnucast = 0, sucast = 0, snucast = 0;
  uint32_t rdiscard = 0, rerrors = 0;
};

// The IP stack behind the adapters (TCPv4/v6, IPv4/v6, UDPv4/v6, ICMP, ICMPv6), [0] IPv4 and [1]
// IPv6, fed by the adapters' packets (step_counter_sets), so the protocols fit Network Interface.
struct NetStack {
  uint64_t last_rx = 0, last_tx = 0;  // the adapters' packet totals at the last step
  uint64_t ip_rx[2] = {}, ip_deliv[2] = {}, ip_tx[2] = {}, tcp_rx[2] = {}, tcp_tx[2] = {}, tcp_retx[2] = {};
  uint64_t udp_rx[2] = {}, udp_tx[2] = {}, udp_noport[2] = {}, icmp_rx[2] = {}, icmp_tx[2] = {};
  uint32_t estab[2] = {}, active[2] = {}, passive[2] = {}, failures[2] = {}, resets[2] = {};
  double carry[2] = {};
  bool ipv6 = true;  // whether the host counts IPv6 (Vista on); before, IPv4 carries every packet
};

// The file system cache's counters, accumulated from System's file reads and Memory's cache
// faults and page writes of each tick (write_cache), so Cache and Memory agree.
struct CacheState {
  uint64_t last_reads = 0, last_faults = 0, reads = 0, misses = 0;
};

struct CustomInstance {
  std::string name;
  std::vector<Signal> signals;  // one per spec counter
  std::vector<double> acc;      // per desc counter: cumulative raw value (exact in double up to 2^53)
  double scale = 1;             // this instance's share of the generators' values (instance_scale)
};

// An instance's scale: 1 for the only instance; with several, each its own in [0.6, 1.4) from
// the seed, so instances of one object do not read identical values (a constant, rate or sine
// generator gives every instance the same series otherwise; issue 30 item 10).
inline double instance_scale(uint64_t seed, uint32_t object, uint32_t serial, bool several) {
  if (!several) return 1;
  Rng r(mix_seed(seed, object, 0x5CA1E000u + serial));
  return 0.6 + 0.8 * r.uniform();
}
// Whether every instance drawing `g` reads the same series: constant, rate and sine draw nothing
// of their own (nor does a fraction of one of them); random walks and uniform draws do.
inline bool shared_series(const GeneratorSpec& g) {
  using K = GeneratorSpec::Kind;
  if (g.kind == K::kFraction) return g.ratio && shared_series(*g.ratio);
  return g.kind == K::kConstant || g.kind == K::kRate || g.kind == K::kSine;
}
// A generator's value for an instance of that scale: a shared series scaled and kept within the
// generator's floor and ceiling (a fraction also within its base); the others already differ by
// instance, within their bounds.
inline double scaled(const GeneratorSpec& g, double v, double scale) {
  if (scale == 1 || !shared_series(g)) return v;
  const double top = g.kind == GeneratorSpec::Kind::kFraction ? std::min(g.ceiling, g.base) : g.ceiling;
  return std::max(g.floor, std::min(v * scale, top));
}

struct Custom {
  size_t state = 0;  // index into State::objects
  std::vector<CustomInstance> instances;
  uint32_t serial = 0;
  double churn_carry = 0;
};

// System's PID on a Windows version (major * 100 + minor): 2 on NT 4.0, 8 on 2000, 4 after.
uint32_t system_pid(uint32_t version);

struct Model::State {
  Spec spec;
  const Profile* profile = nullptr;
  uint32_t version = 0;  // the profile's Windows version, major * 100 + minor (samba: 6.1)
  uint64_t seed = 1;     // value_seed(spec, profile): every value stream is drawn from it
  Rng rng{1};
  Rng xrng{1};  // counter sets and objects added after the first catalog: existing values stay as they were
  Signal cpu_sig, mem_sig, disk_sig, net_sig;
  std::vector<ObjState> objects;
  std::vector<Custom> customs;
  int64_t boot = 0, last = 0, now = 0;
  uint32_t next_cid = 8;
  bool procs_dirty = true;
  uint32_t procs_generation = 0, v2_generation = ~0u;  // Process V2 rebuilds its instances on a change

  std::vector<Cpu> cpus;
  std::vector<Process> procs;  // Idle, System, then the others in creation order
  std::vector<Volume> volumes;
  std::vector<Nic> nics;
  NetStack net;
  CacheState cache_state;
  // System and Memory accumulators.
  uint64_t file_ops[3] = {}, file_bytes[3] = {}, cswitch = 0, syscalls = 0, exceptions = 0, faults = 0;
  uint64_t write_copies = 0, transition = 0, cache_faults = 0, demand_zero = 0, page_reads = 0, pages_input = 0,
           page_writes = 0, pages_output = 0;
  double pagefile_mb = 0, pagefile_used = 0, pagefile_peak = 0;
  uint64_t cache_peak = 0;
  uint64_t available = 0;  // Memory's Available Bytes this tick (NUMA Node Memory shows it)

  ObjState* find(uint32_t index) {
    for (ObjState& o : objects)
      if (o.index() == index && o.enabled) return &o;
    return nullptr;
  }
  double ws_scale = 1;  // working sets drawn are scaled so all of them fit the host's memory (init)
  // A process's virtual size: a 32-bit host's processes have 2 GB of user address space.
  double max_virtual() const { return profile->host.large_counters ? 1e15 : double((2ull << 30) - 65536); }
  uint32_t new_cid() { return next_cid += 4 * uint32_t(1 + rng.below(6)); }
  uint64_t cap(uint64_t v, const ObjState& o, uint32_t index) const {
    // DWORD sizes on 32-bit profiles: clamp rather than wrap (a gauge never wraps).
    return o.has(index) && o.obj.counters[size_t(o.pos.at(index))].size == 4 ? std::min<uint64_t>(v, 0xFFFFFFFFu) : v;
  }

  // model.cpp
  void init();
  void fit_working_sets();
  void step(int64_t dt);
  void write_all();
  // dynamics.cpp
  Process make_process(const std::string& name, int64_t start, uint32_t threads, uint32_t ppid);
  // process_tree.cpp
  void make_processes();
  std::string filler_name(uint64_t k) const;
  uint32_t pid_of(std::string_view name) const;
  uint32_t service_parent(std::string_view name) const;
  void step_cpu(int64_t dt, double t);
  void step_processes(int64_t dt);
  void step_disks(int64_t dt, double t);
  void step_network(int64_t dt, double t);
  void churn(int64_t dt);
  void step_custom(Custom& c, int64_t dt, double t);
  void step_counter_sets(int64_t dt);
  void step_ip_stack(int64_t dt);
  // write_os.cpp
  void write_system(ObjState& o);
  void write_memory(ObjState& o);
  void write_paging(ObjState& o);
  void write_objects(ObjState& o);
  // write_cpu.cpp
  void write_processor(ObjState& o);
  // write_process.cpp
  void rebuild_process_instances();
  void write_process(ObjState& o);
  void write_process_total(ObjState& o);
  void write_thread(ObjState& o);
  void write_costly(ObjState* pas, ObjState* image, ObjState* details);
  // write_storage.cpp
  void write_disks(ObjState& o, bool logical);
  // write_network.cpp
  void write_network(ObjState& o);
  // write_counter_sets.cpp
  void write_counter_set(ObjState& o);  // by the object's family
  void write_processor_information(ObjState& o);
  void write_protocol(ObjState& o);
  void write_network_adapter(ObjState& o);
  void write_process_v2(ObjState& o);
  void write_sessions(ObjState& o);  // Terminal Services Session
  void write_jobs(ObjState& o);      // Job Object
  // write_services.cpp
  void write_cache(ObjState& o);
  void write_server(ObjState& o, bool queues);
  void write_redirector(ObjState& o);
  void write_browser(ObjState& o);
  void write_small_sets(ObjState& o);  // Terminal Services, Thermal Zone, NUMA Node Memory, Print Queue
  // write_custom.cpp
  void write_custom(Custom& c, int64_t dt);
};

}  // namespace perfsim::synth
