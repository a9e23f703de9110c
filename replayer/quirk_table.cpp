#include "replayer/quirk_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/bytes.h"
#include "core/config.h"
#include "core/utf16.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"
#include "replayer/limits.h"
#include "replayer/quirk_engine.h"
#include "replayer/recording.h"

namespace perfsim::replayer {
namespace {

Status bad(const QuirkSetting& s, const std::string& why) {
  return Status::InvalidArgument("quirk " + s.name + ": " + why);
}

// Reads parameter `key` of `s` into `out` when present, within `b` (limits.h). Whole-number fields
// refuse fractions; every number is read as a double first, so 1e+15 (what a fleet file's number
// becomes) is refused for its range, not its form.
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

// probability and every: every = 0 would silently never fire, so it is refused with the range
// (limits.h) rather than read as "off".
Status read_chance(const QuirkSetting& s, Chance& c, double default_probability) {
  c = Chance{};
  if (!s.on) return Status::Ok();
  if (!s.params.count("probability") && !s.params.count("every")) c.probability = default_probability;
  if (Status st = read_param(s, "probability", c.probability, limits::kProbability); !st.ok()) return st;
  return read_param(s, "every", c.every, limits::kEvery);
}

std::string chance_text(const Chance& c) {
  std::string s;
  if (c.probability > 0) s += fmt::format("probability={}", c.probability);
  if (c.every) s += fmt::format("{}every={}", s.empty() ? "" : ",", c.every);
  return s;
}

// A switch without parameters: on or off, shown as NAME when on (or NAME=off when on is the default).
template <bool Quirks::*Field>
Status apply_switch(Quirks& q, const QuirkSetting& s) {
  q.*Field = s.on;
  return Status::Ok();
}

// ---- buffer policies: MS-RRP 3.1.5.17 is the fallback (rrp_exact), each row answers for its OS.

template <BufferPolicy P>
Status apply_policy(Quirks& q, const QuirkSetting& s) {
  q.buffer = s.on ? P : BufferPolicy::kRrpExact;
  return Status::Ok();
}

// Starts a buffer quirk's answer when `q` has policy `p`: the answer's type and Applied bit.
bool policy_on(const QuirkRow& self, const Quirks& q, BufferPolicy p, QuirkCall& c) {
  if (q.buffer != p) return false;
  c.answer = ValueAnswer{};
  c.answer.type = c.content.type;
  c.applied |= self.bit();
  return true;
}

// The answer carries the whole content.
bool answer_data(QuirkCall& c) {
  c.answer.size = uint32_t(c.content.data.size());
  c.answer.data = std::move(c.content.data);
  return true;
}

bool more_data(QuirkCall& c, uint32_t size) {
  c.answer.status = windows::kErrorMoreData;
  c.answer.size = size;
  return true;
}

// Win32 RegQueryValueEx: NULL or short buffer -> ERROR_MORE_DATA with no usable size.
bool win32_undefined(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!policy_on(self, q, BufferPolicy::kWin32Undefined, c)) return false;
  const BufferOffer o = c.offer;
  if (!o.has_buffer || o.size < c.content.data.size()) return more_data(c, 0);
  return answer_data(c);
}

// Needs about the whole Global answer plus overhead, whatever was asked; echoes the offer.
bool win2000_echo(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!policy_on(self, q, BufferPolicy::kWin2000Echo, c)) return false;
  const Recording& r = *c.recording;
  const uint64_t size = c.content.data.size();
  const uint64_t global = r.has_sample(c.position, Series::kGlobal) ? r.sample_size(c.position, Series::kGlobal) : size;
  const BufferOffer o = c.offer;
  if (!o.has_buffer || o.size < std::max<uint64_t>(global, size) + q.win2000_overhead)
    return more_data(c, o.has_buffer ? o.size : 0);
  return answer_data(c);
}

// Windows 2008 and later (windows/README.md): a short buffer gets ERROR_MORE_DATA with the size
// offered, a NULL one with 0, so a client that retries with the size said offers the same again;
// any buffer that holds the data succeeds, so a client growing its buffer gets there.
bool echo_offered(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!policy_on(self, q, BufferPolicy::kEchoOffered, c)) return false;
  const BufferOffer o = c.offer;
  if (!o.has_buffer || o.size < c.content.data.size()) return more_data(c, o.has_buffer ? o.size : 0);
  return answer_data(c);
}

// The needed size wanders by up to the jitter per call, so a retry loop may never settle.
bool nt4_unsettled(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!policy_on(self, q, BufferPolicy::kNt4Unsettled, c)) return false;
  const uint32_t needed =
      uint32_t(c.content.data.size()) + uint32_t(splitmix(c.seed ^ c.call) % (uint64_t(q.nt4_jitter) + 1));
  c.answer.size = needed;
  if (c.offer.has_buffer && c.offer.size < needed) return more_data(c, needed);
  return c.offer.has_buffer ? answer_data(c) : true;
}

// Samba's reg_perfcount.c: a short buffer (the exact size counts as short) gets the
// PERF_DATA_BLOCK header alone, with WERR_OK.
bool samba_truncate(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!policy_on(self, q, BufferPolicy::kSambaTruncate, c)) return false;
  const SharedBytes& d = c.content.data;
  const uint32_t size = uint32_t(d.size());
  c.answer.size = size;
  if (!c.offer.has_buffer) return true;
  if (c.offer.size > size || size < winperf::kDataBlockSize) return answer_data(c);
  // At least the fixed header, whatever a damaged recording's HeaderLength says: the cut rewrites
  // fields inside it.
  const uint32_t header =
      std::clamp(perfdata::block_field32(d.view(), winperf::data_block::kHeaderLength), winperf::kDataBlockSize, size);
  Bytes h(d.begin(), d.begin() + header);
  const perfdata::MutableBlock block{h.data()};
  block.set_total_byte_length(header);
  block.set_num_object_types(0);
  c.answer.data = std::move(h);
  c.answer.size = header;
  return true;
}

// With rrp-exact: the data outgrows the size just said, so the size learned is too small.
bool growth_between_calls(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (q.buffer != BufferPolicy::kRrpExact || !q.growth_bytes) return false;
  policy_on(self, q, BufferPolicy::kRrpExact, c);
  const uint32_t size = uint32_t(c.content.data.size());
  c.answer.size = size;
  if (c.offer.has_buffer && c.offer.size < uint64_t(size) + q.growth_bytes) return more_data(c, size);
  return c.offer.has_buffer ? answer_data(c) : true;
}

// ---- refusals, edits and delays

bool access_denied_query(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (c.key != PerfKey::kData || !q.access_denied_query) return false;
  c.answer.status = windows::kErrorAccessDenied;
  c.applied |= self.bit();
  return true;
}

bool busy(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!c.fires(q.busy, 0xB057)) return false;
  c.answer.status = windows::kErrorBusy;
  c.applied |= self.bit();
  return true;
}

// The other errors .NET's PerformanceMonitor.GetData retries with back-off besides ERROR_BUSY
// (dotnet/runtime PerformanceCounterLib.cs): ERROR_NOT_READY 21, ERROR_LOCK_FAILED 167, WAIT_TIMEOUT 258.
bool transient_error(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!c.fires(q.transient, 0x7A21)) return false;
  c.answer.status = q.transient_code;
  c.applied |= self.bit();
  return true;
}

bool empty_names(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (c.content.type != windows::kRegMultiSz || !c.fires(q.empty_names, 0xE111)) return false;
  c.content.data = Bytes(4, 0);
  c.applied |= self.bit();
  return true;
}

bool slow_global(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!q.slow_global_ms) return false;  // parsed only when on: this runs on every call
  const perfdata::QueryKind kind = perfdata::parse_query(c.value_name).kind;
  if (kind != perfdata::QueryKind::kGlobal && kind != perfdata::QueryKind::kCostly) return false;
  add_delay(c.answer, q.slow_global_ms);
  c.applied |= self.bit();
  return true;
}

bool hang(const QuirkRow& self, const Quirks& q, QuirkCall& c) {
  if (!c.fires(q.hang, 0x4A46)) return false;
  add_delay(c.answer, q.hang_ms);
  c.applied |= self.bit();
  return true;
}

// ---- content quirks (content_quirks.h)

Status apply_type_change(Quirks& q, const QuirkSetting& s) {
  ContentQuirks& c = q.content;
  c.type_change_counter = 0;
  if (!s.on) return Status::Ok();
  if (!s.params.count("counter") || !s.params.count("type"))
    return bad(s, "needs counter = <title index> and type = <counter type, e.g. 0x00000100>");
  if (Status st = read_param(s, "counter", c.type_change_counter, limits::kTitleIndex); !st.ok()) return st;
  // winperf.h writes types in hex: accept 0x... as well as decimal.
  const Status st = config::parse_uint_as(s.params.at("type"), "type (e.g. 0x00000100)", c.type_change_type, 0);
  return st.ok() ? st : bad(s, st.message());
}

Status apply_localized_partial(Quirks& q, const QuirkSetting& s) {
  ContentQuirks& c = q.content;
  c.localized_lang.clear();
  if (!s.on) return Status::Ok();
  c.localized_lang = s.params.count("lang") ? s.params.at("lang") : "019";
  if (Status st = read_param(s, "share", c.localized_share, limits::kProbability); !st.ok()) return st;
  return c.localized_share > 0 && c.localized_share < 1 ? Status::Ok()
                                                        : bad(s, "share must be between 0 and 1, e.g. 0.5");
}

std::string on_or_empty(bool on, std::string_view name) { return on ? std::string(name) : std::string(); }

std::vector<QuirkRow> make_table() {
  using S = QuirkStage;
  std::vector<QuirkRow> t;
  // Buffer policies: one is in force; each shows itself only then.
  t.push_back({"rrp-exact", S::kBuffer, "", {}, apply_policy<BufferPolicy::kRrpExact>, [](const Quirks& q) {
                 return on_or_empty(q.buffer == BufferPolicy::kRrpExact, "rrp-exact");
               }});
  t.push_back(
      {"win32-undefined",
       S::kBuffer,
       "",
       {},
       apply_policy<BufferPolicy::kWin32Undefined>,
       [](const Quirks& q) { return on_or_empty(q.buffer == BufferPolicy::kWin32Undefined, "win32-undefined"); },
       1,
       win32_undefined});
  t.push_back({"win2000-echo-oversize",
               S::kBuffer,
               "`overhead` (65536)",
               {"overhead"},
               [](Quirks& q, const QuirkSetting& s) {
                 if (Status st = read_param(s, "overhead", q.win2000_overhead, limits::kQuirkBytes); !st.ok())
                   return st;
                 return apply_policy<BufferPolicy::kWin2000Echo>(q, s);
               },
               [](const Quirks& q) {
                 return q.buffer == BufferPolicy::kWin2000Echo
                            ? fmt::format("win2000-echo-oversize:overhead={}", q.win2000_overhead)
                            : std::string();
               },
               2,
               win2000_echo});
  t.push_back({"echo-offered",
               S::kBuffer,
               "",
               {},
               apply_policy<BufferPolicy::kEchoOffered>,
               [](const Quirks& q) { return on_or_empty(q.buffer == BufferPolicy::kEchoOffered, "echo-offered"); },
               11,
               echo_offered});
  t.push_back({"nt4-unsettled",
               S::kBuffer,
               "`jitter` (16384)",
               {"jitter"},
               [](Quirks& q, const QuirkSetting& s) {
                 if (Status st = read_param(s, "jitter", q.nt4_jitter, limits::kQuirkBytes); !st.ok()) return st;
                 return apply_policy<BufferPolicy::kNt4Unsettled>(q, s);
               },
               [](const Quirks& q) {
                 return q.buffer == BufferPolicy::kNt4Unsettled ? fmt::format("nt4-unsettled:jitter={}", q.nt4_jitter)
                                                                : std::string();
               },
               3,
               nt4_unsettled});
  t.push_back({"samba-truncate",
               S::kBuffer,
               "",
               {},
               apply_policy<BufferPolicy::kSambaTruncate>,
               [](const Quirks& q) { return on_or_empty(q.buffer == BufferPolicy::kSambaTruncate, "samba-truncate"); },
               4,
               samba_truncate});
  t.push_back({"growth-between-calls",
               S::kBuffer,
               "`bytes` (4096)",
               {"bytes"},
               [](Quirks& q, const QuirkSetting& s) {
                 q.growth_bytes = s.on ? 4096 : 0;
                 return s.on ? read_param(s, "bytes", q.growth_bytes, limits::kQuirkBytes) : Status::Ok();
               },
               [](const Quirks& q) {
                 return q.growth_bytes ? fmt::format("growth-between-calls:bytes={}", q.growth_bytes) : std::string();
               },
               0,
               growth_between_calls});
  t.push_back({"access-denied",
               S::kRefuse,
               "`on` = `query` (default) or `open`",
               {"on"},
               [](Quirks& q, const QuirkSetting& s) {
                 const std::string where = s.params.count("on") ? s.params.at("on") : "query";
                 if (where != "query" && where != "open") return bad(s, "on must be query or open");
                 q.access_denied_open = s.on && where == "open";
                 q.access_denied_query = s.on && where == "query";
                 return Status::Ok();
               },
               [](const Quirks& q) {
                 return q.access_denied_open    ? std::string("access-denied:on=open")
                        : q.access_denied_query ? std::string("access-denied:on=query")
                                                : std::string();
               },
               6,
               access_denied_query});
  t.push_back({"busy",
               S::kRefuse,
               "`probability` (0.1), `every`",
               {"probability", "every"},
               [](Quirks& q, const QuirkSetting& s) { return read_chance(s, q.busy, 0.1); },
               [](const Quirks& q) { return q.busy.active() ? "busy:" + chance_text(q.busy) : std::string(); },
               5,
               busy});
  t.push_back({"transient-error",
               S::kRefuse,
               "`code` (21), `probability` (0.05), `every`",
               {"code", "probability", "every"},
               [](Quirks& q, const QuirkSetting& s) {
                 if (Status st = read_chance(s, q.transient, 0.05); !st.ok()) return st;
                 q.transient_code = 21;
                 if (Status st = read_param(s, "code", q.transient_code, config::Bounds{1, 0xFFFF}); !st.ok())
                   return st;
                 return q.transient_code == 21 || q.transient_code == 167 || q.transient_code == 258
                            ? Status::Ok()
                            : bad(s,
                                  "code must be 21 (ERROR_NOT_READY), 167 (ERROR_LOCK_FAILED) or 258 (WAIT_TIMEOUT)");
               },
               [](const Quirks& q) {
                 return q.transient.active()
                            ? fmt::format("transient-error:code={},{}", q.transient_code, chance_text(q.transient))
                            : std::string();
               },
               10,
               transient_error});
  t.push_back({"slow-global",
               S::kDelay,
               "`ms` (800)",
               {"ms"},
               [](Quirks& q, const QuirkSetting& s) {
                 q.slow_global_ms = s.on ? 800 : 0;
                 return s.on ? read_param(s, "ms", q.slow_global_ms, limits::kDelayMs, limits::kDelayUnit)
                             : Status::Ok();
               },
               [](const Quirks& q) {
                 return q.slow_global_ms ? fmt::format("slow-global:ms={}", q.slow_global_ms) : std::string();
               },
               8,
               slow_global});
  t.push_back({"provider-timeout",
               S::kSelection,
               "`provider` (\"PerfDisk,...\")",
               {"provider"},
               [](Quirks& q, const QuirkSetting& s) {
                 q.timed_out_providers.clear();
                 if (!s.on) return Status::Ok();
                 auto it = s.params.find("provider");
                 if (it == s.params.end() || it->second.empty()) return bad(s, "needs provider = \"<service name>\"");
                 q.timed_out_providers = split_nonempty(it->second, ",");
                 return Status::Ok();
               },
               [](const Quirks& q) {
                 std::string p;
                 for (const std::string& s : q.timed_out_providers) p += (p.empty() ? "" : ",") + s;
                 return p.empty() ? p : "provider-timeout:provider=" + p;
               }});
  t.push_back({"hang",
               S::kDelay,
               "`probability` (0.01), `every`, `ms` (120000)",
               {"probability", "every", "ms"},
               [](Quirks& q, const QuirkSetting& s) {
                 if (Status st = read_chance(s, q.hang, 0.01); !st.ok()) return st;
                 return read_param(s, "ms", q.hang_ms, limits::kDelayMs, limits::kDelayUnit);
               },
               [](const Quirks& q) {
                 return q.hang.active() ? fmt::format("hang:{},ms={}", chance_text(q.hang), q.hang_ms) : std::string();
               },
               9,
               hang});
  t.push_back({"empty-names-under-stress",
               S::kAnswer,
               "`probability` (0.5), `every`",
               {"probability", "every"},
               [](Quirks& q, const QuirkSetting& s) { return read_chance(s, q.empty_names, 0.5); },
               [](const Quirks& q) {
                 return q.empty_names.active() ? "empty-names-under-stress:" + chance_text(q.empty_names)
                                               : std::string();
               },
               7,
               empty_names});
  t.push_back({"pipe-not-available-first",
               S::kTransport,
               "",
               {},
               apply_switch<&Quirks::pipe_not_available_first>,
               [](const Quirks& q) { return on_or_empty(q.pipe_not_available_first, "pipe-not-available-first"); }});
  t.push_back({"restrict-remote-clients",
               S::kTransport,
               "",
               {},
               apply_switch<&Quirks::restrict_remote_clients>,
               [](const Quirks& q) { return on_or_empty(q.restrict_remote_clients, "restrict-remote-clients"); }});
  // SMB1 removed by an admin, as Microsoft urges (windows/os.cpp's sources): a host whose OS row
  // starts at NT1 (2008-2016) starts at SMB2_02 (server/smb_serve.cpp, smbd's dialect range).
  t.push_back({"smb1-disabled", S::kTransport, "", {}, apply_switch<&Quirks::smb1_disabled>, [](const Quirks& q) {
                 return on_or_empty(q.smb1_disabled, "smb1-disabled");
               }});
  t.push_back({"extra-objects", S::kSelection, "", {}, apply_switch<&Quirks::extra_objects>, [](const Quirks& q) {
                 return std::string(q.extra_objects ? "extra-objects" : "extra-objects=off");
               }});
  t.push_back({"costly", S::kSelection, "", {}, apply_switch<&Quirks::costly>, [](const Quirks& q) {
                 return std::string(q.costly ? "costly" : "costly=off");
               }});
  t.push_back({"object-count-lies",
               S::kSelection,
               "`extra` (2)",
               {"extra"},
               [](Quirks& q, const QuirkSetting& s) {
                 q.object_count_extra = s.on ? 2 : 0;
                 return s.on ? read_param(s, "extra", q.object_count_extra, limits::kExtraObjects) : Status::Ok();
               },
               [](const Quirks& q) {
                 return q.object_count_extra ? fmt::format("object-count-lies:extra={}", q.object_count_extra)
                                             : std::string();
               }});
  t.push_back(
      {"process-v1-disabled", S::kSelection, "", {}, apply_switch<&Quirks::process_v1_disabled>, [](const Quirks& q) {
         return on_or_empty(q.process_v1_disabled, "process-v1-disabled");
       }});
  t.push_back({"duplicate-counter-defs",
               S::kContent,
               "`object` (238)",
               {"object"},
               [](Quirks& q, const QuirkSetting& s) {
                 q.content.duplicate_counter_object = s.on ? 238 : 0;
                 return s.on ? read_param(s, "object", q.content.duplicate_counter_object, limits::kTitleIndex)
                             : Status::Ok();
               },
               [](const Quirks& q) {
                 const uint32_t o = q.content.duplicate_counter_object;
                 return o ? fmt::format("duplicate-counter-defs:object={}", o) : std::string();
               }});
  t.push_back({"duplicate-instances",
               S::kContent,
               "`object` (230), `count` (2)",
               {"object", "count"},
               [](Quirks& q, const QuirkSetting& s) {
                 ContentQuirks& c = q.content;
                 c.duplicate_instances_object = s.on ? 230 : 0;
                 if (!s.on) return Status::Ok();
                 if (Status st = read_param(s, "object", c.duplicate_instances_object, limits::kTitleIndex); !st.ok())
                   return st;
                 return read_param(s, "count", c.duplicate_instances_count, limits::kDuplicateCount);
               },
               [](const Quirks& q) {
                 const ContentQuirks& c = q.content;
                 return c.duplicate_instances_object
                            ? fmt::format("duplicate-instances:object={},count={}", c.duplicate_instances_object,
                                          c.duplicate_instances_count)
                            : std::string();
               }});
  t.push_back({"name-table-gaps",
               S::kContent,
               "",
               {},
               [](Quirks& q, const QuirkSetting& s) {
                 q.content.name_table_gaps = s.on;
                 return Status::Ok();
               },
               [](const Quirks& q) { return on_or_empty(q.content.name_table_gaps, "name-table-gaps"); }});
  t.push_back({"counter-type-change",
               S::kContent,
               "`counter`, `type` (e.g. `0x00000100`)",
               {"counter", "type"},
               apply_type_change,
               [](const Quirks& q) {
                 const ContentQuirks& c = q.content;
                 return c.type_change_counter ? fmt::format("counter-type-change:counter={},type=0x{:08x}",
                                                            c.type_change_counter, c.type_change_type)
                                              : std::string();
               }});
  t.push_back({"perffreq",
               S::kContent,
               "`hz` (3579545)",
               {"hz"},
               [](Quirks& q, const QuirkSetting& s) {
                 q.content.perf_freq = 0;
                 if (!s.on) return Status::Ok();
                 uint32_t hz = 3579545;  // the ACPI PM timer
                 if (Status st = read_param(s, "hz", hz, limits::kPerfFreqHz); !st.ok()) return st;
                 q.content.perf_freq = hz;
                 return Status::Ok();
               },
               [](const Quirks& q) {
                 return q.content.perf_freq ? fmt::format("perffreq:hz={}", q.content.perf_freq) : std::string();
               }});
  t.push_back({"localized-partial",
               S::kContent,
               "`lang` (019), `share` (0.5)",
               {"lang", "share"},
               apply_localized_partial,
               [](const Quirks& q) {
                 const ContentQuirks& c = q.content;
                 return c.localized_lang.empty()
                            ? std::string()
                            : fmt::format("localized-partial:lang={},share={}", c.localized_lang, c.localized_share);
               }});
  return t;
}

}  // namespace

std::string_view stage_name(QuirkStage s) {
  switch (s) {
    case QuirkStage::kBuffer:
      return "buffer";
    case QuirkStage::kRefuse:
      return "refuse";
    case QuirkStage::kAnswer:
      return "answer";
    case QuirkStage::kDelay:
      return "delay";
    case QuirkStage::kSelection:
      return "selection";
    case QuirkStage::kContent:
      return "content";
    case QuirkStage::kTransport:
      return "transport";
  }
  return "";
}

const std::vector<QuirkRow>& quirk_table() {
  static const std::vector<QuirkRow> table = make_table();
  return table;
}

const QuirkRow* find_quirk(std::string_view name) {
  for (const QuirkRow& r : quirk_table())
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace perfsim::replayer
