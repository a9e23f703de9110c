// Spec reading: one checked walk over the tree core/config.h makes of TOML or JSON.
#include "synth/spec.h"

#include <algorithm>
#include <filesystem>

#include <cctype>
#include <cstdio>

#include "core/config.h"
#include "perfdata/filetime.h"
#include "perfdata/limits.h"
#include "perfdata/model.h"
#include "perfdata/winperf.h"
#include "synth/profiles.h"
#include "synth/roles.h"
#include "synth/signal.h"
#include "windows/os.h"

namespace perfsim::synth {
namespace {

using json = config::Json;
using config::join;
using config::Reader;

// ---- synth's own value kinds over the shared checked reader (core/config.h) ------------------

// A name or help text within its bound (perfdata/limits.h), as every host Windows serves has it:
// a spec's names go into the name tables and every sample.
namespace limits = perfdata::limits;
Status bounded(const Reader& r, const std::string& path, const std::string& text, limits::Bound b) {
  if (limits::within(text, b)) return Status::Ok();
  return r.fail(path, limits::too_long(text, b));
}
Status bounded(const Reader& r, const std::string& path, const std::vector<std::string>& texts, limits::Bound b) {
  for (size_t i = 0; i < texts.size(); ++i)
    if (Status s = bounded(r, config::index(path, i), texts[i], b); !s.ok()) return s;
  return Status::Ok();
}
// An instance prefix has a serial number after it (synth/model.cpp): ten digits at most.
constexpr limits::Bound kInstancePrefix{limits::kInstanceName.max - 10,
                                        "PDH_MAX_INSTANCE_NAME, less a serial number's 10 digits"};

// Durations: a number of seconds or a string like "15s", "500ms", "1h30m", "2d".
Status duration_ms(const Reader& r, const json& obj, const std::string& path, const char* key, double& out_ms) {
  if (!obj.contains(key)) return Status::Ok();
  const json& v = obj[key];
  if (v.is_number()) {
    out_ms = v.get<double>() * 1000;
  } else if (v.is_string()) {
    if (Status s = config::parse_duration_ms(v.get<std::string>(), out_ms); !s.ok())
      return r.fail(join(path, key), s.message());
  } else {
    return r.type_error(join(path, key), "seconds or a duration string", v);
  }
  // Durations are kept as uint32 seconds (about 136 years).
  if (!(out_ms >= 0) || out_ms > 4294967295e3) return r.fail(join(path, key), "duration out of range");
  return Status::Ok();
}

Status generator_value(const Reader& r, const json& v, const std::string& path, GeneratorSpec& out);

Status generator(const Reader& r, const json& obj, const std::string& path, const char* key, GeneratorSpec& out) {
  if (!obj.contains(key)) return Status::Ok();
  return generator_value(r, obj[key], join(path, key), out);
}

Status generator_kind(const Reader& r, const json& v, const std::string& path, const std::string& kind,
                      GeneratorSpec& g) {
  using K = GeneratorSpec::Kind;
  Status s;
  if (kind == "constant") {
    g.kind = K::kConstant;
    s = r.keys(v, path, {"kind", "value", "noise", "floor", "ceiling"});
    if (s.ok()) s = r.number(v, path, "value", g.value);
  } else if (kind == "rate") {
    g.kind = K::kRate;
    s = r.keys(v, path, {"kind", "start", "per_second", "noise", "floor", "ceiling"});
    if (s.ok()) s = r.number(v, path, "start", g.start);
    if (s.ok()) s = r.number(v, path, "per_second", g.per_second);
  } else if (kind == "sine") {
    g.kind = K::kSine;
    s = r.keys(v, path, {"kind", "mean", "amplitude", "period", "phase", "noise", "floor", "ceiling"});
    if (s.ok()) s = r.number(v, path, "mean", g.mean);
    if (s.ok()) s = r.number(v, path, "amplitude", g.amplitude);
    double ms = g.period_s * 1000;
    if (s.ok()) s = duration_ms(r, v, path, "period", ms);
    g.period_s = ms / 1000;
    if (s.ok() && g.period_s <= 0) s = r.fail(join(path, "period"), "must be positive");
    if (s.ok()) s = r.number(v, path, "phase", g.phase);
  } else if (kind == "random_walk") {
    g.kind = K::kRandomWalk;
    s = r.keys(v, path, {"kind", "start", "step", "min", "max", "noise", "floor", "ceiling"});
    if (s.ok()) s = r.number(v, path, "start", g.start);
    if (s.ok()) s = r.number(v, path, "step", g.step);
    if (s.ok()) s = r.number(v, path, "min", g.min);
    if (s.ok()) s = r.number(v, path, "max", g.max);
  } else if (kind == "uniform") {
    g.kind = K::kUniform;
    s = r.keys(v, path, {"kind", "min", "max", "noise", "floor", "ceiling"});
    if (s.ok()) s = r.number(v, path, "min", g.min);
    if (s.ok()) s = r.number(v, path, "max", g.max);
    if (s.ok() && g.max < g.min) s = r.fail(join(path, "max"), "must not be below min");
  } else if (kind == "fraction") {
    g.kind = K::kFraction;
    s = r.keys(v, path, {"kind", "base", "ratio", "noise", "floor", "ceiling"});
    if (s.ok()) s = r.number(v, path, "base", g.base);
    if (s.ok() && !v.contains("ratio")) s = r.fail(join(path, "ratio"), "fraction needs a ratio (number or generator)");
    if (s.ok()) {
      g.ratio = std::make_shared<GeneratorSpec>();
      s = generator_value(r, v["ratio"], join(path, "ratio"), *g.ratio);
    }
  } else {
    return r.fail(join(path, "kind"),
                  "unknown generator \"" + kind + "\" (constant, rate, sine, random_walk, uniform, fraction)");
  }
  return s;
}

Status generator_value(const Reader& r, const json& v, const std::string& path, GeneratorSpec& out) {
  if (v.is_number()) {
    out = GeneratorSpec::constant(v.get<double>());
    return Status::Ok();
  }
  if (!v.is_object()) return r.type_error(path, "a number or a generator table", v);
  std::string kind = "constant";
  if (Status s = r.string(v, path, "kind", kind); !s.ok()) return s;
  GeneratorSpec g;
  Status s = generator_kind(r, v, path, kind, g);
  if (s.ok()) s = r.number(v, path, "noise", g.noise);
  if (s.ok()) s = r.number(v, path, "floor", g.floor);
  if (s.ok()) s = r.number(v, path, "ceiling", g.ceiling);
  if (!s.ok()) return s;
  out = g;
  return Status::Ok();
}

bool parse_time(const std::string& s, int64_t& filetime) {
  int y, mo, d, h = 0, mi = 0, sec = 0;
  char tail = 0;
  const int n = std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d%c", &y, &mo, &d, &h, &mi, &sec, &tail);
  // FILETIME spans 1601 to 30827 (int64 100 ns ticks); beyond that the product below overflows.
  if (n < 3 || y < 1601 || y > 30827 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      sec < 0 || sec > 60)
    return false;
  if (n == 7 && tail != 'Z') return false;
  perfdata::SystemTime t;
  t.year = uint16_t(y), t.month = uint16_t(mo), t.day = uint16_t(d);
  t.hour = uint16_t(h), t.minute = uint16_t(mi), t.second = uint16_t(sec);
  filetime = perfdata::filetime_of(t);
  return true;
}

Status read_detail(const Reader& r, const json& obj, const std::string& path, uint32_t& out) {
  if (!obj.contains("detail")) return Status::Ok();
  const json& v = obj["detail"];
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "novice")
      out = winperf::PERF_DETAIL_NOVICE;
    else if (s == "advanced")
      out = winperf::PERF_DETAIL_ADVANCED;
    else if (s == "expert")
      out = winperf::PERF_DETAIL_EXPERT;
    else if (s == "wizard")
      out = winperf::PERF_DETAIL_WIZARD;
    else
      return r.fail(join(path, "detail"), "expected novice, advanced, expert or wizard");
    return Status::Ok();
  }
  return r.integer(obj, path, "detail", out, 100, 400);
}

Status read_counter(const Reader& r, const json& v, const std::string& path, CounterSpec& c) {
  if (Status s =
          r.keys(v, path, {"name", "index", "help", "type", "detail", "scale", "value", "base", "ops_per_second"});
      !s.ok())
    return s;
  Status s = r.string(v, path, "name", c.name);
  if (s.ok() && c.name.empty()) s = r.fail(join(path, "name"), "every counter needs a name");
  if (s.ok()) s = bounded(r, join(path, "name"), c.name, limits::kCounterName);
  if (s.ok()) s = r.integer(v, path, "index", c.index, 2, 0x7FFFFFFE);
  if (s.ok() && c.index % 2) s = r.fail(join(path, "index"), "name indices are even (help is index + 1)");
  if (s.ok()) s = r.string(v, path, "help", c.help);
  if (s.ok()) s = bounded(r, join(path, "help"), c.help, limits::kHelpText);
  if (s.ok()) {
    if (!v.contains("type")) return r.fail(join(path, "type"), "every counter needs a type");
    const json& t = v["type"];
    std::optional<uint32_t> type;
    if (t.is_string())
      type = counter_type_by_name(t.get<std::string>());
    else if (t.is_number_unsigned()) {
      const uint32_t raw = uint32_t(t.get<uint64_t>());
      for (const char* n :
           {"PERF_COUNTER_COUNTER", "PERF_COUNTER_BULK_COUNT", "PERF_COUNTER_RAWCOUNT", "PERF_COUNTER_LARGE_RAWCOUNT",
            "PERF_COUNTER_RAWCOUNT_HEX", "PERF_COUNTER_LARGE_RAWCOUNT_HEX", "PERF_100NSEC_TIMER",
            "PERF_100NSEC_TIMER_INV", "PERF_COUNTER_TIMER", "PERF_COUNTER_TIMER_INV", "PERF_RAW_FRACTION",
            "PERF_LARGE_RAW_FRACTION", "PERF_AVERAGE_TIMER", "PERF_AVERAGE_BULK", "PERF_ELAPSED_TIME"})
        if (counter_type_by_name(n) == raw) type = raw;
    }
    if (!type)
      return r.fail(join(path, "type"),
                    "unsupported counter type (use a PERF_* name from the README's list; base counters are added "
                    "automatically)");
    c.type = *type;
  }
  if (s.ok()) s = read_detail(r, v, path, c.detail);
  if (s.ok()) s = r.integer(v, path, "scale", c.scale, -10, 10);
  if (s.ok()) s = generator(r, v, path, "value", c.value);
  if (s.ok()) s = r.number(v, path, "base", c.base);
  if (s.ok()) s = r.number(v, path, "ops_per_second", c.ops_per_second);
  if (s.ok() && (c.base <= 0 || c.ops_per_second < 0)) s = r.fail(path, "base must be > 0 and ops_per_second >= 0");
  return s;
}

Status read_object(const Reader& r, const json& v, const std::string& path, ObjectSpec& o) {
  if (Status s = r.keys(v, path, {"name", "index", "help", "provider", "costly", "instances", "counters"}); !s.ok())
    return s;
  Status s = r.string(v, path, "name", o.name);
  if (s.ok() && o.name.empty()) s = r.fail(join(path, "name"), "every object needs a name");
  if (s.ok()) s = bounded(r, join(path, "name"), o.name, limits::kCounterName);
  if (s.ok()) s = r.integer(v, path, "index", o.index, 2, 0x7FFFFFFE);
  if (s.ok() && o.index % 2) s = r.fail(join(path, "index"), "name indices are even (help is index + 1)");
  if (s.ok()) s = r.string(v, path, "help", o.help);
  if (s.ok()) s = bounded(r, join(path, "help"), o.help, limits::kHelpText);
  if (s.ok()) s = r.string(v, path, "provider", o.provider);
  if (s.ok()) s = r.boolean(v, path, "costly", o.costly);
  if (!s.ok()) return s;
  if (o.provider.empty())
    for (char ch : o.name)
      if (std::isalnum(uint8_t(ch))) o.provider += ch;
  if (v.contains("instances")) {
    const std::string ip = join(path, "instances");
    const json& iv = v["instances"];
    o.instances.multi = true;
    if (iv.is_number_integer()) {
      s = r.integer(v, path, "instances", o.instances.count, 0, 100000);
    } else {
      s = r.keys(iv, ip, {"count", "names", "prefix", "churn_per_hour", "total"});
      if (s.ok()) s = r.integer(iv, ip, "count", o.instances.count, 0, 100000);
      if (s.ok()) s = r.strings(iv, ip, "names", o.instances.names);
      if (s.ok()) s = bounded(r, join(ip, "names"), o.instances.names, limits::kInstanceName);
      if (s.ok()) s = r.string(iv, ip, "prefix", o.instances.prefix);
      if (s.ok()) s = bounded(r, join(ip, "prefix"), o.instances.prefix, kInstancePrefix);
      if (s.ok()) s = r.number(iv, ip, "churn_per_hour", o.instances.churn_per_hour);
      // total = true / "sum": _Total sums the instances (Process); "average": it averages them, as
      // per-processor objects' _Total does (Processor, Hyper-V Hypervisor Logical Processor).
      if (s.ok() && iv.contains("total") && iv["total"].is_string()) {
        const std::string t = iv["total"].get<std::string>();
        if (t != "sum" && t != "average")
          s = r.fail(join(ip, "total"), "expected true, false, \"sum\" or \"average\", got \"" + t + "\"");
        o.instances.total = true;
        o.instances.total_average = t == "average";
      } else if (s.ok()) {
        s = r.boolean(iv, ip, "total", o.instances.total);
      }
      if (s.ok() && o.instances.count < o.instances.names.size())
        o.instances.count = uint32_t(o.instances.names.size());
    }
    if (!s.ok()) return s;
  }
  if (!v.contains("counters") || !v["counters"].is_array() || v["counters"].empty())
    return r.fail(join(path, "counters"), "an object needs an array of at least one counter");
  for (size_t i = 0; i < v["counters"].size(); ++i) {
    CounterSpec c;
    if (Status cs = read_counter(r, v["counters"][i], join(path, "counters") + "[" + std::to_string(i) + "]", c);
        !cs.ok())
      return cs;
    o.counters.push_back(std::move(c));
  }
  return Status::Ok();
}

GeneratorSpec bounded(GeneratorSpec g, double lo, double hi) {
  g.floor = lo;
  g.ceiling = hi;
  return g;
}

}  // namespace

Spec::Spec() {
  using K = GeneratorSpec::Kind;
  cpu.kind = K::kSine;
  cpu.mean = 35, cpu.amplitude = 20, cpu.period_s = 3600, cpu.noise = 0.15;
  cpu = bounded(cpu, 0, 100);
  memory.kind = K::kRandomWalk;
  memory.start = 55, memory.step = 0.5, memory.min = 20, memory.max = 90;
  disk_iops.kind = K::kSine;
  disk_iops.mean = 120, disk_iops.amplitude = 60, disk_iops.period_s = 7200, disk_iops.noise = 0.2;
  disk_iops = bounded(disk_iops, 0, 1e7);
  network.kind = K::kSine;
  network.mean = 2e6, network.amplitude = 1.5e6, network.period_s = 1800, network.noise = 0.2;
  network = bounded(network, 0, 1e11);
}

std::optional<uint32_t> counter_type_by_name(std::string_view name) {
  using namespace winperf;
  static const std::pair<const char*, uint32_t> kTypes[] = {
      {"PERF_COUNTER_COUNTER", PERF_COUNTER_COUNTER},
      {"PERF_COUNTER_BULK_COUNT", PERF_COUNTER_BULK_COUNT},
      {"PERF_COUNTER_RAWCOUNT", PERF_COUNTER_RAWCOUNT},
      {"PERF_COUNTER_LARGE_RAWCOUNT", PERF_COUNTER_LARGE_RAWCOUNT},
      {"PERF_COUNTER_RAWCOUNT_HEX", PERF_COUNTER_RAWCOUNT_HEX},
      {"PERF_COUNTER_LARGE_RAWCOUNT_HEX", PERF_COUNTER_LARGE_RAWCOUNT_HEX},
      {"PERF_100NSEC_TIMER", PERF_100NSEC_TIMER},
      {"PERF_100NSEC_TIMER_INV", PERF_100NSEC_TIMER_INV},
      {"PERF_COUNTER_TIMER", PERF_COUNTER_TIMER},
      {"PERF_COUNTER_TIMER_INV", PERF_COUNTER_TIMER_INV},
      {"PERF_RAW_FRACTION", PERF_RAW_FRACTION},
      {"PERF_LARGE_RAW_FRACTION", PERF_LARGE_RAW_FRACTION},
      {"PERF_AVERAGE_TIMER", PERF_AVERAGE_TIMER},
      {"PERF_AVERAGE_BULK", PERF_AVERAGE_BULK},
      {"PERF_ELAPSED_TIME", PERF_ELAPSED_TIME},
  };
  for (const auto& [n, t] : kTypes)
    if (name == n) return t;
  return std::nullopt;
}

std::string host_name(const Spec& spec) {
  if (!spec.host_name.empty()) return spec.host_name;
  std::string name = "SYNTH-" + spec.profile + "-" + std::to_string(spec.seed);
  std::transform(name.begin(), name.end(), name.begin(), [](char c) { return char(std::toupper(uint8_t(c))); });
  return name;
}

uint64_t value_seed(const Spec& spec, std::string_view os_name) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  const auto mix = [&h](char c) { h = (h ^ uint8_t(c)) * 1099511628211ull; };
  for (const char c : host_name(spec)) mix(char(std::toupper(uint8_t(c))));  // names compare without case
  mix('/');
  for (const char c : os_name) mix(c);
  return mix_seed(spec.seed, h);
}

Status read_spec(const config::Doc& doc, Spec& out) {
  const Reader r(doc);
  const json& root = doc.root;
  Spec spec;
  if (Status s = r.keys(root, "", {"host", "load", "processes", "disks", "network", "costly", "objects"}); !s.ok())
    return s;
  const json empty = json::object();
  auto section = [&](const char* name) -> const json& { return root.contains(name) ? root[name] : empty; };

  const json& h = section("host");
  Status s = r.keys(h, "host",
                    {"name", "profile", "seed", "start", "duration", "interval", "processors", "memory_mb", "uptime",
                     "process_v1_disabled", "names", "strict_names", "roles", "v2_index"});
  if (s.ok()) s = r.string(h, "host", "name", spec.host_name);
  if (s.ok() && h.contains("name") && (spec.host_name.empty() || spec.host_name.size() > 63))
    s = r.fail("host.name", "1 to 63 characters");
  if (s.ok()) s = r.string(h, "host", "profile", spec.profile);
  if (s.ok() && !find_profile(spec.profile)) s = r.fail("host.profile", windows::check_os_name(spec.profile).message());
  if (s.ok()) s = r.integer(h, "host", "seed", spec.seed, 0, INT64_MAX);
  if (s.ok() && h.contains("start")) {
    if (!h["start"].is_string() || !parse_time(h["start"].get<std::string>(), spec.start_100ns))
      s = r.fail("host.start", "expected a UTC time like 2024-01-01T00:00:00Z");
  }
  // Each value is converted only once it is known to fit: a float-to-integer cast out of range is
  // undefined behaviour (found by fuzz_config: interval = "143336m").
  double ms = spec.duration_s * 1000.0;
  if (s.ok()) s = duration_ms(r, h, "host", "duration", ms);
  if (s.ok()) spec.duration_s = uint32_t(ms / 1000);
  ms = spec.interval_ms;
  if (s.ok()) s = duration_ms(r, h, "host", "interval", ms);
  if (s.ok() && (ms < 100 || ms > 86400000.0)) s = r.fail("host.interval", "must be between 100 ms and 1 day");
  if (s.ok()) spec.interval_ms = uint32_t(ms);
  ms = spec.uptime_s * 1000.0;
  if (s.ok()) s = duration_ms(r, h, "host", "uptime", ms);
  if (s.ok()) spec.uptime_s = uint32_t(ms / 1000);
  if (s.ok()) s = r.integer(h, "host", "processors", spec.processors, 1, 256);
  if (s.ok()) s = r.integer(h, "host", "v2_index", spec.v2_index, 2, 0x7FFFFFFE);
  if (s.ok() && spec.v2_index % 2)
    s = r.fail("host.v2_index", "an even index (names are at even indices, help texts at the odd one after)");
  if (s.ok()) s = r.integer(h, "host", "memory_mb", spec.memory_mb, 64, 64ull * 1024 * 1024);
  if (s.ok() && h.contains("process_v1_disabled")) {
    bool b = false;
    s = r.boolean(h, "host", "process_v1_disabled", b);
    spec.process_v1_disabled = b;
  }
  if (s.ok()) s = r.string(h, "host", "names", spec.names_file);
  if (s.ok()) s = r.boolean(h, "host", "strict_names", spec.strict_names);
  if (s.ok()) s = r.strings(h, "host", "roles", spec.roles);
  if (s.ok()) {
    if (Status rs = check_roles(spec.roles); !rs.ok()) s = r.fail("host.roles", rs.message());
  }
  if (!s.ok()) return s;

  const json& l = section("load");
  s = r.keys(l, "load", {"cpu", "memory", "disk_iops", "network"});
  if (s.ok()) s = generator(r, l, "load", "cpu", spec.cpu);
  if (s.ok()) s = generator(r, l, "load", "memory", spec.memory);
  if (s.ok()) s = generator(r, l, "load", "disk_iops", spec.disk_iops);
  if (s.ok()) s = generator(r, l, "load", "network", spec.network);

  const json& p = section("processes");
  if (s.ok()) s = r.keys(p, "processes", {"count", "threads_min", "threads_max", "churn_per_hour", "names"});
  if (s.ok()) s = r.integer(p, "processes", "count", spec.process_count, 0, 100000);
  if (s.ok()) s = r.integer(p, "processes", "threads_min", spec.threads_min, 1, 10000);
  if (s.ok()) s = r.integer(p, "processes", "threads_max", spec.threads_max, 1, 10000);
  if (s.ok() && spec.threads_max < spec.threads_min) s = r.fail("processes.threads_max", "must be >= threads_min");
  if (s.ok()) s = r.number(p, "processes", "churn_per_hour", spec.process_churn_per_hour);
  if (s.ok() && spec.process_churn_per_hour < 0) s = r.fail("processes.churn_per_hour", "must be >= 0");
  if (s.ok()) s = r.strings(p, "processes", "names", spec.process_names);
  if (s.ok()) s = bounded(r, "processes.names", spec.process_names, limits::kInstanceName);

  const json& d = section("disks");
  if (s.ok()) s = r.keys(d, "disks", {"physical", "volumes", "volume_size_gb"});
  if (s.ok()) s = r.integer(d, "disks", "physical", spec.physical_disks, 1, 64);
  if (s.ok()) s = r.strings(d, "disks", "volumes", spec.volumes);
  if (s.ok()) s = bounded(r, "disks.volumes", spec.volumes, limits::kInstanceName);
  if (s.ok() && spec.volumes.empty()) s = r.fail("disks.volumes", "needs at least one volume");
  if (s.ok()) s = r.number(d, "disks", "volume_size_gb", spec.volume_size_gb);
  if (s.ok() && spec.volume_size_gb <= 0) s = r.fail("disks.volume_size_gb", "must be positive");

  const json& n = section("network");
  if (s.ok()) s = r.keys(n, "network", {"adapters", "bandwidth"});
  if (s.ok()) s = r.strings(n, "network", "adapters", spec.adapters);
  if (s.ok()) s = bounded(r, "network.adapters", spec.adapters, limits::kInstanceName);
  if (s.ok()) s = r.integer(n, "network", "bandwidth", spec.bandwidth_bps, 0, UINT32_MAX);

  const json& c = section("costly");
  if (s.ok()) s = r.keys(c, "costly", {"images_per_process", "thread_details"});
  if (s.ok()) s = r.integer(c, "costly", "images_per_process", spec.images_per_process, 0, 1000);
  if (s.ok()) s = r.boolean(c, "costly", "thread_details", spec.thread_details);
  if (!s.ok()) return s;

  if (root.contains("objects")) {
    if (!root["objects"].is_array()) return r.fail("objects", "expected an array of tables ([[objects]])");
    for (size_t i = 0; i < root["objects"].size(); ++i) {
      ObjectSpec o;
      if (Status os = read_object(r, root["objects"][i], "objects[" + std::to_string(i) + "]", o); !os.ok()) return os;
      spec.objects.push_back(std::move(o));
    }
  }
  out = std::move(spec);
  return Status::Ok();
}

Status parse_spec_toml(std::string_view text, Spec& out) {
  config::Doc doc;
  if (Status s = config::parse_toml(text, "spec", doc); !s.ok()) return s;
  return read_spec(doc, out);
}

Status parse_spec_json(std::string_view text, Spec& out) {
  config::Doc doc;
  if (Status s = config::parse_json(text, "spec", doc); !s.ok()) return s;
  return read_spec(doc, out);
}

Status load_spec(const std::string& path, Spec& out) {
  config::Doc doc;
  if (Status s = config::load_file(path, doc, "synth spec"); !s.ok()) return s;
  if (Status s = read_spec(doc, out); !s.ok()) return s;
  // A relative names file is the spec's neighbour, wherever perfsim runs from.
  if (!out.names_file.empty() && std::filesystem::path(out.names_file).is_relative())
    out.names_file = (std::filesystem::path(path).parent_path() / out.names_file).string();
  return Status::Ok();
}

// The profile's memory size unless the spec names one. A 32-bit (x86) row's host has at most 4 GB:
// NT 4.0's memory counters are DWORDs (KB 262330), and Windows 2000 Server and Server 2003 Standard
// x86 address 4 GB (Microsoft, "Memory Limits for Windows and Windows Server Releases"), so more is
// refused rather than served as 4294967295 (issue 30).
Status resolve_memory(const Profile& p, Spec& spec) {
  if (!spec.memory_mb) spec.memory_mb = p.host.memory_mb;
  if (!p.host.large_counters && spec.memory_mb >= 4096)
    return Status::InvalidArgument("spec: host.memory_mb = " + std::to_string(spec.memory_mb) + ": a " +
                                   std::string(p.os->name) + " host is a 32-bit (x86) one; give at most 4095 (MB)");
  return Status::Ok();
}

}  // namespace perfsim::synth
