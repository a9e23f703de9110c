// Spec reading: TOML -> JSON tree (+ key path -> line), then one checked walk over the tree.
#include "synth/spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "perfdata/winperf.h"
#include "synth/profiles.h"
#include "windows/os.h"

namespace perfsim::synth {
namespace {

using json = nlohmann::json;
using LineMap = std::map<std::string, uint32_t>;

// ---- TOML to JSON --------------------------------------------------------------------------

std::string two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

json toml_to_json(const toml::node& n, const std::string& path, LineMap& lines) {
  if (n.source().begin.line) lines[path] = n.source().begin.line;
  if (const toml::table* t = n.as_table()) {
    json j = json::object();
    for (auto&& [k, v] : *t) {
      const std::string child = path.empty() ? std::string(k.str()) : path + "." + std::string(k.str());
      if (k.source().begin.line) lines[child] = k.source().begin.line;
      j[std::string(k.str())] = toml_to_json(v, child, lines);
      if (k.source().begin.line) lines[child] = k.source().begin.line;
    }
    return j;
  }
  if (const toml::array* a = n.as_array()) {
    json j = json::array();
    for (size_t i = 0; i < a->size(); ++i) j.push_back(toml_to_json((*a)[i], path + "[" + std::to_string(i) + "]", lines));
    return j;
  }
  if (auto v = n.value<bool>(); n.is_boolean()) return *v;
  if (n.is_integer()) return *n.value<int64_t>();
  if (n.is_floating_point()) return *n.value<double>();
  if (n.is_string()) return *n.value<std::string>();
  if (const auto* dt = n.as_date_time()) {
    const toml::date_time& d = dt->get();
    return std::to_string(d.date.year) + "-" + two(d.date.month) + "-" + two(d.date.day) + "T" + two(d.time.hour) +
           ":" + two(d.time.minute) + ":" + two(d.time.second) + "Z";
  }
  if (const auto* d = n.as_date()) {
    const toml::date& x = d->get();
    return std::to_string(x.year) + "-" + two(x.month) + "-" + two(x.day) + "T00:00:00Z";
  }
  return nullptr;
}

// ---- the checked walk ---------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(const LineMap* lines) : lines_(lines) {}

  Status fail(const std::string& path, const std::string& what) const {
    std::string where = "spec: " + (path.empty() ? std::string("(top level)") : path);
    if (uint32_t line = line_of(path)) where += " (line " + std::to_string(line) + ")";
    return Status::InvalidArgument(where + ": " + what);
  }

  Status keys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed) const {
    if (!obj.is_object()) return fail(path, "expected a table");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; })) {
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        return fail(join(path, it.key()), "unknown key (allowed: " + list + ")");
      }
    }
    return Status::Ok();
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  Status number(const json& obj, const std::string& path, const char* key, double& out) const {
    if (!obj.contains(key)) return Status::Ok();
    const json& v = obj[key];
    if (!v.is_number()) return fail(join(path, key), "expected a number");
    out = v.get<double>();
    if (!std::isfinite(out)) return fail(join(path, key), "expected a finite number");
    return Status::Ok();
  }

  template <typename T>
  Status integer(const json& obj, const std::string& path, const char* key, T& out, double lo, double hi) const {
    if (!obj.contains(key)) return Status::Ok();
    const json& v = obj[key];
    if (!v.is_number_integer()) return fail(join(path, key), "expected an integer");
    const double d = v.get<double>();
    if (d < lo || d > hi)
      return fail(join(path, key), "must be between " + fmt(lo) + " and " + fmt(hi) + ", got " + fmt(d));
    out = v.is_number_unsigned() ? T(v.get<uint64_t>()) : T(v.get<int64_t>());
    return Status::Ok();
  }

  Status string(const json& obj, const std::string& path, const char* key, std::string& out) const {
    if (!obj.contains(key)) return Status::Ok();
    if (!obj[key].is_string()) return fail(join(path, key), "expected a string");
    out = obj[key].get<std::string>();
    return Status::Ok();
  }

  Status boolean(const json& obj, const std::string& path, const char* key, bool& out) const {
    if (!obj.contains(key)) return Status::Ok();
    if (!obj[key].is_boolean()) return fail(join(path, key), "expected true or false");
    out = obj[key].get<bool>();
    return Status::Ok();
  }

  Status strings(const json& obj, const std::string& path, const char* key, std::vector<std::string>& out) const {
    if (!obj.contains(key)) return Status::Ok();
    const json& v = obj[key];
    if (!v.is_array()) return fail(join(path, key), "expected an array of strings");
    out.clear();
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) return fail(join(path, key) + "[" + std::to_string(i) + "]", "expected a string");
      out.push_back(v[i].get<std::string>());
    }
    return Status::Ok();
  }

  // Durations: a number of seconds or a string like "15s", "500ms", "1h30m", "2d".
  Status duration_ms(const json& obj, const std::string& path, const char* key, double& out_ms) const {
    if (!obj.contains(key)) return Status::Ok();
    const json& v = obj[key];
    if (v.is_number()) {
      out_ms = v.get<double>() * 1000;
    } else if (v.is_string()) {
      if (!parse_duration(v.get<std::string>(), out_ms))
        return fail(join(path, key), "bad duration \"" + v.get<std::string>() + "\" (e.g. \"15s\", \"500ms\", \"24h\")");
    } else {
      return fail(join(path, key), "expected seconds or a duration string");
    }
    if (!(out_ms >= 0) || out_ms > 1e13) return fail(join(path, key), "duration out of range");
    return Status::Ok();
  }

  Status generator(const json& obj, const std::string& path, const char* key, GeneratorSpec& out) const {
    if (!obj.contains(key)) return Status::Ok();
    return generator_value(obj[key], join(path, key), out);
  }

  Status generator_value(const json& v, const std::string& path, GeneratorSpec& out) const {
    if (v.is_number()) {
      out = GeneratorSpec::constant(v.get<double>());
      return Status::Ok();
    }
    if (!v.is_object()) return fail(path, "expected a number or a generator table");
    std::string kind = "constant";
    if (Status s = string(v, path, "kind", kind); !s.ok()) return s;
    GeneratorSpec g;
    using K = GeneratorSpec::Kind;
    Status s;
    if (kind == "constant") {
      g.kind = K::kConstant;
      s = keys(v, path, {"kind", "value", "noise", "floor", "ceiling"});
      if (s.ok()) s = number(v, path, "value", g.value);
    } else if (kind == "rate") {
      g.kind = K::kRate;
      s = keys(v, path, {"kind", "start", "per_second", "noise", "floor", "ceiling"});
      if (s.ok()) s = number(v, path, "start", g.start);
      if (s.ok()) s = number(v, path, "per_second", g.per_second);
    } else if (kind == "sine") {
      g.kind = K::kSine;
      s = keys(v, path, {"kind", "mean", "amplitude", "period", "phase", "noise", "floor", "ceiling"});
      if (s.ok()) s = number(v, path, "mean", g.mean);
      if (s.ok()) s = number(v, path, "amplitude", g.amplitude);
      double ms = g.period_s * 1000;
      if (s.ok()) s = duration_ms(v, path, "period", ms);
      g.period_s = ms / 1000;
      if (s.ok() && g.period_s <= 0) s = fail(join(path, "period"), "must be positive");
      if (s.ok()) s = number(v, path, "phase", g.phase);
    } else if (kind == "random_walk") {
      g.kind = K::kRandomWalk;
      s = keys(v, path, {"kind", "start", "step", "min", "max", "noise", "floor", "ceiling"});
      if (s.ok()) s = number(v, path, "start", g.start);
      if (s.ok()) s = number(v, path, "step", g.step);
      if (s.ok()) s = number(v, path, "min", g.min);
      if (s.ok()) s = number(v, path, "max", g.max);
    } else if (kind == "uniform") {
      g.kind = K::kUniform;
      s = keys(v, path, {"kind", "min", "max", "noise", "floor", "ceiling"});
      if (s.ok()) s = number(v, path, "min", g.min);
      if (s.ok()) s = number(v, path, "max", g.max);
      if (s.ok() && g.max < g.min) s = fail(join(path, "max"), "must not be below min");
    } else if (kind == "fraction") {
      g.kind = K::kFraction;
      s = keys(v, path, {"kind", "base", "ratio", "noise", "floor", "ceiling"});
      if (s.ok()) s = number(v, path, "base", g.base);
      if (s.ok() && !v.contains("ratio")) s = fail(join(path, "ratio"), "fraction needs a ratio (number or generator)");
      if (s.ok()) {
        g.ratio = std::make_shared<GeneratorSpec>();
        s = generator_value(v["ratio"], join(path, "ratio"), *g.ratio);
      }
    } else {
      return fail(join(path, "kind"),
                  "unknown generator \"" + kind + "\" (constant, rate, sine, random_walk, uniform, fraction)");
    }
    if (s.ok()) s = number(v, path, "noise", g.noise);
    if (s.ok()) s = number(v, path, "floor", g.floor);
    if (s.ok()) s = number(v, path, "ceiling", g.ceiling);
    if (!s.ok()) return s;
    out = g;
    return Status::Ok();
  }

  static bool parse_duration(const std::string& text, double& ms) {
    ms = 0;
    size_t i = 0;
    bool any = false;
    while (i < text.size()) {
      size_t j = i;
      while (j < text.size() && (std::isdigit(uint8_t(text[j])) || text[j] == '.')) ++j;
      if (j == i) return false;
      const double n = std::stod(text.substr(i, j - i));
      size_t k = j;
      while (k < text.size() && std::isalpha(uint8_t(text[k]))) ++k;
      const std::string unit = text.substr(j, k - j);
      const double scale = unit == "ms" ? 1 : unit == "s" ? 1e3 : unit == "m" ? 6e4 : unit == "h" ? 3.6e6 : unit == "d" ? 8.64e7 : -1;
      if (scale < 0) return false;
      ms += n * scale;
      any = true;
      i = k;
    }
    return any;
  }

  static std::string fmt(double d) {
    std::ostringstream o;
    o << d;
    return o.str();
  }

 private:
  uint32_t line_of(const std::string& path) const {
    if (!lines_) return 0;
    for (std::string p = path;;) {
      if (auto it = lines_->find(p); it != lines_->end()) return it->second;
      const size_t cut = p.find_last_of(".[");
      if (cut == std::string::npos) return 0;
      p.resize(cut);
    }
  }
  const LineMap* lines_;
};

// Days since 1601-01-01 for a civil date (proleptic Gregorian).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = unsigned(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + int64_t(doe) - 719468 + 134774;  // 134774: days 1601-01-01 .. 1970-01-01
}

bool parse_time(const std::string& s, int64_t& filetime) {
  int y, mo, d, h = 0, mi = 0, sec = 0;
  char tail = 0;
  const int n = std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d%c", &y, &mo, &d, &h, &mi, &sec, &tail);
  if (n < 3 || y < 1601 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  if (n == 7 && tail != 'Z') return false;
  filetime = ((days_from_civil(y, unsigned(mo), unsigned(d)) * 86400) + h * 3600 + mi * 60 + sec) * 10000000;
  return true;
}

Status read_detail(const Reader& r, const json& obj, const std::string& path, uint32_t& out) {
  if (!obj.contains("detail")) return Status::Ok();
  const json& v = obj["detail"];
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "novice") out = winperf::PERF_DETAIL_NOVICE;
    else if (s == "advanced") out = winperf::PERF_DETAIL_ADVANCED;
    else if (s == "expert") out = winperf::PERF_DETAIL_EXPERT;
    else if (s == "wizard") out = winperf::PERF_DETAIL_WIZARD;
    else return r.fail(Reader::join(path, "detail"), "expected novice, advanced, expert or wizard");
    return Status::Ok();
  }
  return r.integer(obj, path, "detail", out, 100, 400);
}

Status read_counter(const Reader& r, const json& v, const std::string& path, CounterSpec& c) {
  if (Status s = r.keys(v, path, {"name", "index", "help", "type", "detail", "scale", "value", "base",
                                  "ops_per_second"}); !s.ok())
    return s;
  Status s = r.string(v, path, "name", c.name);
  if (s.ok() && c.name.empty()) s = r.fail(Reader::join(path, "name"), "every counter needs a name");
  if (s.ok()) s = r.integer(v, path, "index", c.index, 2, 0x7FFFFFFE);
  if (s.ok() && c.index % 2) s = r.fail(Reader::join(path, "index"), "name indices are even (help is index + 1)");
  if (s.ok()) s = r.string(v, path, "help", c.help);
  if (s.ok()) {
    if (!v.contains("type")) return r.fail(Reader::join(path, "type"), "every counter needs a type");
    const json& t = v["type"];
    std::optional<uint32_t> type;
    if (t.is_string()) type = counter_type_by_name(t.get<std::string>());
    else if (t.is_number_unsigned()) {
      const uint32_t raw = uint32_t(t.get<uint64_t>());
      for (const char* n : {"PERF_COUNTER_COUNTER", "PERF_COUNTER_BULK_COUNT", "PERF_COUNTER_RAWCOUNT",
                            "PERF_COUNTER_LARGE_RAWCOUNT", "PERF_COUNTER_RAWCOUNT_HEX",
                            "PERF_COUNTER_LARGE_RAWCOUNT_HEX", "PERF_100NSEC_TIMER", "PERF_100NSEC_TIMER_INV",
                            "PERF_COUNTER_TIMER", "PERF_COUNTER_TIMER_INV", "PERF_RAW_FRACTION",
                            "PERF_LARGE_RAW_FRACTION", "PERF_AVERAGE_TIMER", "PERF_AVERAGE_BULK", "PERF_ELAPSED_TIME"})
        if (counter_type_by_name(n) == raw) type = raw;
    }
    if (!type)
      return r.fail(Reader::join(path, "type"),
                    "unsupported counter type (use a PERF_* name from the README's list; base counters are added "
                    "automatically)");
    c.type = *type;
  }
  if (s.ok()) s = read_detail(r, v, path, c.detail);
  if (s.ok()) s = r.integer(v, path, "scale", c.scale, -10, 10);
  if (s.ok()) s = r.generator(v, path, "value", c.value);
  if (s.ok()) s = r.number(v, path, "base", c.base);
  if (s.ok()) s = r.number(v, path, "ops_per_second", c.ops_per_second);
  if (s.ok() && (c.base <= 0 || c.ops_per_second < 0)) s = r.fail(path, "base must be > 0 and ops_per_second >= 0");
  return s;
}

Status read_object(const Reader& r, const json& v, const std::string& path, ObjectSpec& o) {
  if (Status s = r.keys(v, path, {"name", "index", "help", "provider", "costly", "instances", "counters"}); !s.ok())
    return s;
  Status s = r.string(v, path, "name", o.name);
  if (s.ok() && o.name.empty()) s = r.fail(Reader::join(path, "name"), "every object needs a name");
  if (s.ok()) s = r.integer(v, path, "index", o.index, 2, 0x7FFFFFFE);
  if (s.ok() && o.index % 2) s = r.fail(Reader::join(path, "index"), "name indices are even (help is index + 1)");
  if (s.ok()) s = r.string(v, path, "help", o.help);
  if (s.ok()) s = r.string(v, path, "provider", o.provider);
  if (s.ok()) s = r.boolean(v, path, "costly", o.costly);
  if (!s.ok()) return s;
  if (o.provider.empty())
    for (char ch : o.name)
      if (std::isalnum(uint8_t(ch))) o.provider += ch;
  if (v.contains("instances")) {
    const std::string ip = Reader::join(path, "instances");
    const json& iv = v["instances"];
    if (iv.is_number_integer()) {
      s = r.integer(v, path, "instances", o.instances.count, 0, 100000);
    } else {
      s = r.keys(iv, ip, {"count", "names", "prefix", "churn_per_hour", "total"});
      if (s.ok()) s = r.integer(iv, ip, "count", o.instances.count, 0, 100000);
      if (s.ok()) s = r.strings(iv, ip, "names", o.instances.names);
      if (s.ok()) s = r.string(iv, ip, "prefix", o.instances.prefix);
      if (s.ok()) s = r.number(iv, ip, "churn_per_hour", o.instances.churn_per_hour);
      if (s.ok()) s = r.boolean(iv, ip, "total", o.instances.total);
      if (s.ok() && o.instances.count < o.instances.names.size()) o.instances.count = uint32_t(o.instances.names.size());
    }
    if (!s.ok()) return s;
  }
  if (!v.contains("counters") || !v["counters"].is_array() || v["counters"].empty())
    return r.fail(Reader::join(path, "counters"), "an object needs an array of at least one counter");
  for (size_t i = 0; i < v["counters"].size(); ++i) {
    CounterSpec c;
    if (Status cs = read_counter(r, v["counters"][i], Reader::join(path, "counters") + "[" + std::to_string(i) + "]", c);
        !cs.ok())
      return cs;
    o.counters.push_back(std::move(c));
  }
  return Status::Ok();
}

Status read_spec(const json& root, const LineMap* lines, Spec& out) {
  Reader r(lines);
  Spec spec;
  if (Status s = r.keys(root, "", {"host", "load", "processes", "disks", "network", "costly", "objects"}); !s.ok())
    return s;
  const json empty = json::object();
  auto section = [&](const char* name) -> const json& { return root.contains(name) ? root[name] : empty; };

  const json& h = section("host");
  Status s = r.keys(h, "host", {"name", "profile", "seed", "start", "duration", "interval", "processors", "memory_mb",
                                "uptime", "process_v1_disabled"});
  if (s.ok()) s = r.string(h, "host", "name", spec.host_name);
  if (s.ok() && (spec.host_name.empty() || spec.host_name.size() > 63)) s = r.fail("host.name", "1 to 63 characters");
  if (s.ok()) s = r.string(h, "host", "profile", spec.profile);
  if (s.ok() && !find_profile(spec.profile)) s = r.fail("host.profile", windows::check_os_name(spec.profile).message());
  if (s.ok()) s = r.integer(h, "host", "seed", spec.seed, 0, 9.2e18);
  if (s.ok() && h.contains("start")) {
    if (!h["start"].is_string() || !parse_time(h["start"].get<std::string>(), spec.start_100ns))
      s = r.fail("host.start", "expected a UTC time like 2024-01-01T00:00:00Z");
  }
  double ms = spec.duration_s * 1000.0;
  if (s.ok()) s = r.duration_ms(h, "host", "duration", ms);
  spec.duration_s = uint32_t(ms / 1000);
  ms = spec.interval_ms;
  if (s.ok()) s = r.duration_ms(h, "host", "interval", ms);
  if (s.ok() && (ms < 100 || ms > 86400000.0)) s = r.fail("host.interval", "must be between 100 ms and 1 day");
  spec.interval_ms = uint32_t(ms);
  ms = spec.uptime_s * 1000.0;
  if (s.ok()) s = r.duration_ms(h, "host", "uptime", ms);
  spec.uptime_s = uint32_t(ms / 1000);
  if (s.ok()) s = r.integer(h, "host", "processors", spec.processors, 1, 256);
  if (s.ok()) s = r.integer(h, "host", "memory_mb", spec.memory_mb, 64, 64.0 * 1024 * 1024);
  if (s.ok() && h.contains("process_v1_disabled")) {
    bool b = false;
    s = r.boolean(h, "host", "process_v1_disabled", b);
    spec.process_v1_disabled = b;
  }
  if (!s.ok()) return s;

  const json& l = section("load");
  s = r.keys(l, "load", {"cpu", "memory", "disk_iops", "network"});
  if (s.ok()) s = r.generator(l, "load", "cpu", spec.cpu);
  if (s.ok()) s = r.generator(l, "load", "memory", spec.memory);
  if (s.ok()) s = r.generator(l, "load", "disk_iops", spec.disk_iops);
  if (s.ok()) s = r.generator(l, "load", "network", spec.network);

  const json& p = section("processes");
  if (s.ok()) s = r.keys(p, "processes", {"count", "threads_min", "threads_max", "churn_per_hour", "names"});
  if (s.ok()) s = r.integer(p, "processes", "count", spec.process_count, 0, 100000);
  if (s.ok()) s = r.integer(p, "processes", "threads_min", spec.threads_min, 1, 10000);
  if (s.ok()) s = r.integer(p, "processes", "threads_max", spec.threads_max, 1, 10000);
  if (s.ok() && spec.threads_max < spec.threads_min) s = r.fail("processes.threads_max", "must be >= threads_min");
  if (s.ok()) s = r.number(p, "processes", "churn_per_hour", spec.process_churn_per_hour);
  if (s.ok() && spec.process_churn_per_hour < 0) s = r.fail("processes.churn_per_hour", "must be >= 0");
  if (s.ok()) s = r.strings(p, "processes", "names", spec.process_names);

  const json& d = section("disks");
  if (s.ok()) s = r.keys(d, "disks", {"physical", "volumes", "volume_size_gb"});
  if (s.ok()) s = r.integer(d, "disks", "physical", spec.physical_disks, 1, 64);
  if (s.ok()) s = r.strings(d, "disks", "volumes", spec.volumes);
  if (s.ok() && spec.volumes.empty()) s = r.fail("disks.volumes", "needs at least one volume");
  if (s.ok()) s = r.number(d, "disks", "volume_size_gb", spec.volume_size_gb);
  if (s.ok() && spec.volume_size_gb <= 0) s = r.fail("disks.volume_size_gb", "must be positive");

  const json& n = section("network");
  if (s.ok()) s = r.keys(n, "network", {"adapters", "bandwidth"});
  if (s.ok()) s = r.strings(n, "network", "adapters", spec.adapters);
  if (s.ok()) s = r.integer(n, "network", "bandwidth", spec.bandwidth_bps, 0, 4294967295.0);

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

Status parse_spec_toml(std::string_view text, Spec& out) {
  toml::table tbl;
  try {
    tbl = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument("spec: TOML syntax error (line " + std::to_string(e.source().begin.line) +
                                   ", column " + std::to_string(e.source().begin.column) + "): " +
                                   std::string(e.description()));
  }
  LineMap lines;
  const json root = toml_to_json(tbl, "", lines);
  return read_spec(root, &lines, out);
}

Status parse_spec_json(std::string_view text, Spec& out) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    // Re-parse with exceptions only to learn where it broke; the message carries the byte position.
    try {
      const json ignored = json::parse(text);
      (void)ignored;
    } catch (const json::parse_error& e) {
      const size_t at = std::min<size_t>(e.byte, text.size());
      const auto line = 1 + std::count(text.begin(), text.begin() + long(at), '\n');
      return Status::InvalidArgument("spec: JSON syntax error (line " + std::to_string(line) + "): " + e.what());
    }
    return Status::InvalidArgument("spec: JSON syntax error");
  }
  return read_spec(root, nullptr, out);
}

Status load_spec(const std::string& path, Spec& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open spec " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const bool is_json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  Status s = is_json ? parse_spec_json(text, out) : parse_spec_toml(text, out);
  if (!s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  return s;
}

}  // namespace perfsim::synth
