#include "replayer/quirks.h"

#include <cmath>

#include "core/config.h"
#include "core/utf16.h"
#include "replayer/limits.h"
#include "windows/os.h"

namespace perfsim::replayer {
namespace {

Status bad(const QuirkSetting& s, const std::string& why) {
  return Status::InvalidArgument("quirk " + s.name + ": " + why);
}

// Reads parameter `key` of `s` into `out` when present, within `b` (limits.h); parameters not read
// are reported by check_known. Whole-number fields refuse fractions; every number is read as a
// double first, so 1e+15 (what a fleet file's number becomes) is refused for its range, not its form.
template <class T>
Status read_param(const QuirkSetting& s, const char* key, T& out, config::Bounds b, std::string_view unit = {}) {
  auto it = s.params.find(key);
  if (it == s.params.end()) return Status::Ok();
  const std::string what = std::string("parameter ") + key;
  double v = 0;
  Status st = config::parse_double(it->second, what, v, b, unit);
  if (st.ok() && !std::is_floating_point_v<T> && v != std::floor(v))
    st = Status::InvalidArgument(what + ": expected a whole number, got \"" + it->second + "\"");
  if (!st.ok()) return bad(s, st.message());
  out = T(v);
  return Status::Ok();
}

Status check_known(const QuirkSetting& s, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : s.params) {
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok) return bad(s, "unknown parameter '" + k + "'");
  }
  return Status::Ok();
}

// probability and every (and hang's ms, `with_ms`): every = 0 would silently never fire, so it is
// refused with the range (limits.h) rather than read as "off".
Status read_chance(const QuirkSetting& s, Chance& c, double default_probability, bool with_ms = false) {
  const Status known =
      with_ms ? check_known(s, {"probability", "every", "ms"}) : check_known(s, {"probability", "every"});
  if (!known.ok()) return known;
  c = Chance{};
  if (!s.on) return Status::Ok();
  if (!s.params.count("probability") && !s.params.count("every")) c.probability = default_probability;
  if (Status st = read_param(s, "probability", c.probability, limits::kProbability); !st.ok()) return st;
  return read_param(s, "every", c.every, limits::kEvery);
}

Status set_buffer(Quirks& q, const QuirkSetting& s, BufferPolicy p) {
  q.buffer = s.on ? p : BufferPolicy::kRrpExact;
  return Status::Ok();
}

// Quirks that rewrite the served content (content_quirks.h).
const char* const kContentQuirks[] = {
    "duplicate-counter-defs", "duplicate-instances", "name-table-gaps", "counter-type-change", "perffreq",
    "localized-partial"};

bool is_content_quirk(const std::string& n) {
  for (const char* c : kContentQuirks)
    if (n == c) return true;
  return false;
}

Status apply_content_setting(ContentQuirks& c, const QuirkSetting& s) {
  const std::string& n = s.name;
  if (n == "duplicate-counter-defs") {
    if (Status st = check_known(s, {"object"}); !st.ok()) return st;
    c.duplicate_counter_object = s.on ? 238 : 0;
    return s.on ? read_param(s, "object", c.duplicate_counter_object, limits::kTitleIndex) : Status::Ok();
  }
  if (n == "duplicate-instances") {
    if (Status st = check_known(s, {"object", "count"}); !st.ok()) return st;
    c.duplicate_instances_object = s.on ? 230 : 0;
    if (!s.on) return Status::Ok();
    if (Status st = read_param(s, "object", c.duplicate_instances_object, limits::kTitleIndex); !st.ok()) return st;
    return read_param(s, "count", c.duplicate_instances_count, limits::kDuplicateCount);
  }
  if (n == "name-table-gaps") {
    c.name_table_gaps = s.on;
    return check_known(s, {});
  }
  if (n == "counter-type-change") {
    if (Status st = check_known(s, {"counter", "type"}); !st.ok()) return st;
    c.type_change_counter = 0;
    if (!s.on) return Status::Ok();
    if (!s.params.count("counter") || !s.params.count("type"))
      return bad(s, "needs counter = <title index> and type = <counter type, e.g. 0x00000100>");
    if (Status st = read_param(s, "counter", c.type_change_counter, limits::kTitleIndex); !st.ok()) return st;
    // winperf.h writes types in hex: accept 0x... as well as decimal.
    const Status st = config::parse_uint_as(s.params.at("type"), "type (e.g. 0x00000100)", c.type_change_type, 0);
    return st.ok() ? st : bad(s, st.message());
  }
  if (n == "perffreq") {
    if (Status st = check_known(s, {"hz"}); !st.ok()) return st;
    c.perf_freq = 0;
    if (!s.on) return Status::Ok();
    uint32_t hz = 3579545;  // the ACPI PM timer
    if (Status st = read_param(s, "hz", hz, limits::kPerfFreqHz); !st.ok()) return st;
    c.perf_freq = hz;
    return Status::Ok();
  }
  // localized-partial
  if (Status st = check_known(s, {"lang", "share"}); !st.ok()) return st;
  c.localized_lang.clear();
  if (!s.on) return Status::Ok();
  c.localized_lang = s.params.count("lang") ? s.params.at("lang") : "019";
  if (Status st = read_param(s, "share", c.localized_share, limits::kProbability); !st.ok()) return st;
  return c.localized_share > 0 && c.localized_share < 1 ? Status::Ok()
                                                        : bad(s, "share must be between 0 and 1, e.g. 0.5");
}

}  // namespace

std::vector<std::string> quirk_names() {
  std::vector<std::string> n = {"rrp-exact",
                                "win32-undefined",
                                "win2000-echo-oversize",
                                "nt4-unsettled",
                                "samba-truncate",
                                "growth-between-calls",
                                "busy",
                                "slow-global",
                                "provider-timeout",
                                "hang",
                                "empty-names-under-stress",
                                "pipe-not-available-first",
                                "access-denied",
                                "extra-objects",
                                "costly",
                                "object-count-lies",
                                "process-v1-disabled",
                                "restrict-remote-clients"};
  for (const char* c : kContentQuirks) n.push_back(c);
  return n;
}

Status apply_setting(Quirks& q, const QuirkSetting& s) {
  const std::string& n = s.name;
  if (n == "rrp-exact") {
    if (Status st = check_known(s, {}); !st.ok()) return st;
    return set_buffer(q, s, BufferPolicy::kRrpExact);
  }
  if (n == "win32-undefined") {
    if (Status st = check_known(s, {}); !st.ok()) return st;
    return set_buffer(q, s, BufferPolicy::kWin32Undefined);
  }
  if (n == "win2000-echo-oversize") {
    if (Status st = check_known(s, {"overhead"}); !st.ok()) return st;
    if (Status st = read_param(s, "overhead", q.win2000_overhead, limits::kQuirkBytes); !st.ok()) return st;
    return set_buffer(q, s, BufferPolicy::kWin2000Echo);
  }
  if (n == "nt4-unsettled") {
    if (Status st = check_known(s, {"jitter"}); !st.ok()) return st;
    if (Status st = read_param(s, "jitter", q.nt4_jitter, limits::kQuirkBytes); !st.ok()) return st;
    return set_buffer(q, s, BufferPolicy::kNt4Unsettled);
  }
  if (n == "samba-truncate") {
    if (Status st = check_known(s, {}); !st.ok()) return st;
    return set_buffer(q, s, BufferPolicy::kSambaTruncate);
  }
  if (n == "growth-between-calls") {
    if (Status st = check_known(s, {"bytes"}); !st.ok()) return st;
    q.growth_bytes = s.on ? 4096 : 0;
    return s.on ? read_param(s, "bytes", q.growth_bytes, limits::kQuirkBytes) : Status::Ok();
  }
  if (n == "busy") return read_chance(s, q.busy, 0.1);
  if (n == "slow-global") {
    if (Status st = check_known(s, {"ms"}); !st.ok()) return st;
    q.slow_global_ms = s.on ? 800 : 0;
    return s.on ? read_param(s, "ms", q.slow_global_ms, limits::kDelayMs, limits::kDelayUnit) : Status::Ok();
  }
  if (n == "hang") {
    if (Status st = read_chance(s, q.hang, 0.01, /*with_ms=*/true); !st.ok()) return st;
    return read_param(s, "ms", q.hang_ms, limits::kDelayMs, limits::kDelayUnit);
  }
  if (n == "empty-names-under-stress") return read_chance(s, q.empty_names, 0.5);
  if (n == "provider-timeout") {
    if (Status st = check_known(s, {"provider"}); !st.ok()) return st;
    q.timed_out_providers.clear();
    if (!s.on) return Status::Ok();
    auto it = s.params.find("provider");
    if (it == s.params.end() || it->second.empty()) return bad(s, "needs provider = \"<service name>\"");
    q.timed_out_providers = split_nonempty(it->second, ",");
    return Status::Ok();
  }
  if (n == "pipe-not-available-first") {
    q.pipe_not_available_first = s.on;
    return check_known(s, {});
  }
  if (n == "restrict-remote-clients") {
    q.restrict_remote_clients = s.on;
    return check_known(s, {});
  }
  if (n == "access-denied") {
    if (Status st = check_known(s, {"on"}); !st.ok()) return st;
    const std::string where = s.params.count("on") ? s.params.at("on") : "query";
    if (where != "query" && where != "open") return bad(s, "on must be query or open");
    q.access_denied_open = s.on && where == "open";
    q.access_denied_query = s.on && where == "query";
    return Status::Ok();
  }
  if (n == "extra-objects") {
    q.extra_objects = s.on;
    return check_known(s, {});
  }
  if (n == "costly") {
    q.costly = s.on;
    return check_known(s, {});
  }
  if (n == "object-count-lies") {
    if (Status st = check_known(s, {"extra"}); !st.ok()) return st;
    q.object_count_extra = s.on ? 2 : 0;
    return s.on ? read_param(s, "extra", q.object_count_extra, limits::kExtraObjects) : Status::Ok();
  }
  if (n == "process-v1-disabled") {
    q.process_v1_disabled = s.on;
    return check_known(s, {});
  }
  if (is_content_quirk(n)) return apply_content_setting(q.content, s);
  return Status::InvalidArgument("unknown quirk '" + n + "' (known: see replayer/README.md)");
}

Status profile_quirks(std::string_view profile, Quirks& q) {
  if (profile == "rrp-exact") return Status::Ok();  // no OS: plain MS-RRP, the defaults
  const windows::OsProfile* os = windows::find_os(profile);
  if (!os)
    return Status::NotFound("unknown profile '" + std::string(profile) + "'; known: " + windows::os_name_list() +
                            ", rrp-exact");
  if (Status st = apply_setting(q, QuirkSetting{std::string(os->more_data), true, {}}); !st.ok()) return st;
  for (std::string_view name : os->quirks)
    if (Status st = apply_setting(q, QuirkSetting{std::string(name), true, {}}); !st.ok()) return st;
  return Status::Ok();
}

Status fingerprint_quirks(const captures::Fingerprint& fp, Quirks& q) {
  // A fingerprint that names what perfsim does not know is refused, not half applied.
  const auto named = [](const Status& s) { return Status::InvalidArgument("capture fingerprint: " + s.message()); };
  if (fp.profile) {
    if (Status st = profile_quirks(*fp.profile, q); !st.ok()) return named(st);
  }
  if (fp.more_data) {
    if (Status st = apply_setting(q, QuirkSetting{*fp.more_data, true, fp.params}); !st.ok()) return named(st);
  }
  if (fp.process_v1_disabled) {
    if (Status st = apply_setting(q, QuirkSetting{"process-v1-disabled", *fp.process_v1_disabled, {}}); !st.ok())
      return named(st);
  }
  if (fp.pipe_not_available_first) {
    if (Status st = apply_setting(q, QuirkSetting{"pipe-not-available-first", *fp.pipe_not_available_first, {}});
        !st.ok())
      return named(st);
  }
  return Status::Ok();
}

Status fingerprint_quirks(const std::string& json, Quirks& q) {
  captures::Fingerprint fp;
  if (Status s = captures::from_json(json, fp); !s.ok()) return s;
  return fingerprint_quirks(fp, q);
}

}  // namespace perfsim::replayer
