// Fingerprint <-> JSON. Reading is strict per key: a value of another shape than this struct's is
// kept as it was in `other`, so nothing read is ever rewritten differently.
#include "core/json.h"
#include "captures/fingerprint.h"

#include <limits>
#include <type_traits>

namespace perfsim::captures {
namespace {

using Json = nlohmann::json;

template <class T>
bool take_compound(const Json& v, std::vector<T>& out);
template <class T>
bool take_compound(const Json& v, std::map<std::string, T>& out);
bool take_compound(const Json& v, FingerprintProbe& p);
bool take_compound(const Json& v, FingerprintQuery& q);
bool take_compound(const Json& v, FingerprintLatency& l);

template <class T>
bool take(const Json& v, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return false;
    out = v.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return false;
    out = v.get<std::string>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) return false;
    if (v.is_number_unsigned()
            ? v.get<uint64_t>() > uint64_t(std::numeric_limits<T>::max())
            : v.get<int64_t>() < int64_t(std::numeric_limits<T>::min()) ||
                  (v.get<int64_t>() > 0 && uint64_t(v.get<int64_t>()) > uint64_t(std::numeric_limits<T>::max())))
      return false;
    out = v.is_number_unsigned() ? T(v.get<uint64_t>()) : T(v.get<int64_t>());
  } else {
    return take_compound(v, out);
  }
  return true;
}

template <class T>
bool take_compound(const Json& v, std::vector<T>& out) {
  if (!v.is_array()) return false;
  out.assign(v.size(), T{});
  for (size_t i = 0; i < v.size(); ++i)
    if (!take(v[i], out[i])) return false;
  return true;
}

template <class T>
bool take_compound(const Json& v, std::map<std::string, T>& out) {
  if (!v.is_object()) return false;
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!take(*it, out[it.key()])) return false;
  return true;
}

bool take_compound(const Json& v, FingerprintProbe& p) {
  if (!v.is_object() || !v.contains("status") || !v.contains("size")) return false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const bool ok = it.key() == "status" ? take(*it, p.status)
                    : it.key() == "size" ? take(*it, p.size)
                                         : it.key() == "offered" && take(*it, p.offered.emplace());
    if (!ok) return false;
  }
  return true;
}

bool take_compound(const Json& v, FingerprintQuery& q) {
  if (!v.is_object() || !v.contains("calls") || !v.contains("status") || !v.contains("type")) return false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& k = it.key();
    const bool ok = k == "calls"               ? take(*it, q.calls)
                    : k == "status"            ? take(*it, q.status)
                    : k == "type"              ? take(*it, q.type)
                    : k == "returned"          ? take(*it, q.returned.emplace())
                    : k == "min_buffer"        ? take(*it, q.min_buffer.emplace())
                    : k == "max_failed_buffer" ? take(*it, q.max_failed_buffer.emplace())
                                               : k == "objects" && take(*it, q.objects.emplace());
    if (!ok) return false;
  }
  return true;
}

bool take_compound(const Json& v, FingerprintLatency& l) {
  if (!v.is_object() || v.size() != 3 || !v.contains("p50") || !v.contains("p99") || !v.contains("max")) return false;
  return take(v["p50"], l.p50) && take(v["p99"], l.p99) && take(v["max"], l.max);
}

template <class T>
bool take_optional(const Json& v, std::optional<T>& out) {
  T t{};
  if (!take(v, t)) return false;
  out = std::move(t);
  return true;
}

// One top-level key into its field; false: unknown key or another shape (the caller keeps it).
bool take_key(const std::string& k, const Json& v, Fingerprint& fp) {
  if (k == "more_data") return take_optional(v, fp.more_data);
  if (k == "params") {
    std::map<std::string, std::string> m;
    if (v.empty() || !take(v, m)) return false;  // an empty table was never written: keep it as read
    fp.params = std::move(m);
    return true;
  }
  if (k == "profile") return take_optional(v, fp.profile);
  if (k == "null_probe") return take_optional(v, fp.null_probe);
  if (k == "short_probe") return take_optional(v, fp.short_probe);
  if (k == "queries") return take_optional(v, fp.queries);
  if (k == "errors") return take_optional(v, fp.errors);
  if (k == "latency_us") return take_optional(v, fp.latency_us);
  if (k == "findings") return take_optional(v, fp.findings);
  if (k == "source") return take_optional(v, fp.source);
  if (k == "seed") return take_optional(v, fp.seed);
  if (k == "perf_freq") return take_optional(v, fp.perf_freq);
  if (k == "pipe_not_available_first") return take_optional(v, fp.pipe_not_available_first);
  if (k == "process_v1_disabled") return take_optional(v, fp.process_v1_disabled);
  if (k == "large_memory_counters") return take_optional(v, fp.large_memory_counters);
  if (k == "counter_type_change") return take_optional(v, fp.counter_type_change);
  if (k == "costly_objects") return take_optional(v, fp.costly_objects);
  return false;
}

template <class T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

Json probe_json(const FingerprintProbe& p) {
  Json j = {{"status", p.status}, {"size", p.size}};
  put(j, "offered", p.offered);
  return j;
}

Json query_json(const FingerprintQuery& q) {
  Json j = {{"calls", q.calls}, {"status", q.status}, {"type", q.type}};
  put(j, "returned", q.returned);
  put(j, "min_buffer", q.min_buffer);
  put(j, "max_failed_buffer", q.max_failed_buffer);
  put(j, "objects", q.objects);
  return j;
}

void put_recorded(Json& j, const Fingerprint& fp) {
  if (fp.null_probe) j["null_probe"] = probe_json(*fp.null_probe);
  if (fp.short_probe) j["short_probe"] = probe_json(*fp.short_probe);
  if (fp.queries) {
    Json q = Json::object();
    for (const auto& [name, v] : *fp.queries) q[name] = query_json(v);
    j["queries"] = std::move(q);
  }
  if (fp.errors) j["errors"] = Json(*fp.errors);
  if (fp.latency_us)
    j["latency_us"] = {{"p50", fp.latency_us->p50}, {"p99", fp.latency_us->p99}, {"max", fp.latency_us->max}};
  put(j, "findings", fp.findings);
}

void put_synth(Json& j, const Fingerprint& fp) {
  put(j, "source", fp.source);
  put(j, "seed", fp.seed);
  put(j, "perf_freq", fp.perf_freq);
  put(j, "pipe_not_available_first", fp.pipe_not_available_first);
  put(j, "process_v1_disabled", fp.process_v1_disabled);
  put(j, "large_memory_counters", fp.large_memory_counters);
  put(j, "counter_type_change", fp.counter_type_change);
  put(j, "costly_objects", fp.costly_objects);
}

}  // namespace

std::string to_json(const Fingerprint& fp) {
  Json j = fp.other.is_object() ? fp.other : Json::object();
  put(j, "more_data", fp.more_data);
  if (!fp.params.empty()) j["params"] = fp.params;
  put(j, "profile", fp.profile);
  put_recorded(j, fp);
  put_synth(j, fp);
  return json_text(j);
}

Status from_json(std::string_view text, Fingerprint& out) {
  Fingerprint fp;
  if (!text.empty()) {
    Json j;
    if (const JsonRead r = parse_json_text(text, j); r == JsonRead::kTooDeep)
      return Status::InvalidArgument(json_read_error(text, "fingerprint", r));
    if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("fingerprint is not a JSON object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!take_key(it.key(), *it, fp)) fp.other[it.key()] = *it;  // fields are set only when whole
    }
  }
  out = std::move(fp);
  return Status::Ok();
}

}  // namespace perfsim::captures
