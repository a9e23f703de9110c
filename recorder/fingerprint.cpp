#include "recorder/fingerprint.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <set>

#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/select.h"
#include "perfdata/view.h"
#include "recorder/client.h"
#include "windows/constants.h"

namespace perfsim::recorder {
namespace {

bool is_perf_value(const Exchange& e) {
  if (!iequals(e.key, "HKPD")) return false;
  const perfdata::QueryKind k = perfdata::parse_query(e.value_name).kind;
  return k == perfdata::QueryKind::kGlobal || k == perfdata::QueryKind::kCostly ||
         k == perfdata::QueryKind::kIndexList || k == perfdata::QueryKind::kForeign;
}

bool is_name_table(const Exchange& e) {
  const perfdata::QueryKind k = perfdata::parse_query(e.value_name).kind;
  return k == perfdata::QueryKind::kCounter || k == perfdata::QueryKind::kHelp;
}

// What one value's answers say about the buffer it needs.
struct ValueSummary {
  const Exchange* last_ok = nullptr;  // the last success with a real buffer
  uint64_t min_ok = UINT64_MAX;       // smallest buffer that succeeded (with full data)
  uint64_t max_failed = 0;            // largest buffer answered ERROR_MORE_DATA
  // Successes with a bare PERF_DATA_BLOCK header: a truncation (samba-truncate) when this value
  // also brought back more, else the value's whole answer (a 2022 host's Costly: no objects).
  const Exchange* last_header_only = nullptr;
  uint64_t min_header_only = UINT64_MAX, max_header_only = 0;  // the buffers they were given
  uint32_t calls = 0;
  uint32_t last_status = 0, last_type = 0;
};

uint32_t percentile(std::vector<uint32_t> v, double p) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + ptrdiff_t(i), v.end());
  return v[i];
}

std::string join(const std::vector<uint32_t>& v) {
  std::string s;
  for (uint32_t x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

}  // namespace

void CallStats::add(const Exchange& e) {
  if (e.status != 0 && e.status != windows::kErrorMoreData) ++errors[e.status];
  if (is_perf_value(e)) latency_us.push_back(e.latency_us);
}

bool header_only_answer(ByteView data) {
  if (data.size() < winperf::kDataBlockSize) return false;
  namespace db = winperf::data_block;
  return perfdata::block_field32(data, db::kNumObjectTypes) == 0 &&
         perfdata::block_field32(data, db::kHeaderLength) == data.size();
}

std::vector<uint32_t> object_indices(ByteView data) {
  perfdata::DataBlock d;
  std::vector<uint32_t> out;
  if (!perfdata::parse(data, d).ok()) return out;
  for (const perfdata::Object& o : d.objects) out.push_back(o.name_index);
  return out;
}

Fingerprint analyse(const std::vector<Exchange>& exchanges, const CallStats& stats) {
  Fingerprint fp;
  std::string more_data;  // the buffer policy found; "" when nothing showed it
  std::vector<std::string> findings;
  CallStats all = stats;
  std::map<std::string, ValueSummary> values;  // perf values and name tables, by name as sent
  bool echo = false, undefined = false, exact = false;
  std::optional<captures::FingerprintProbe> header_probe;  // the first header-only success
  uint32_t unsettled = 0, jitter = 0;
  std::map<std::string, uint32_t> said;  // the size the last ERROR_MORE_DATA of a value asked for

  for (const Exchange& e : exchanges) {
    all.add(e);
    if (!is_perf_value(e) && !(is_name_table(e) && on_perf_key(e))) continue;
    ValueSummary& v = values[e.value_name];
    ++v.calls;
    v.last_status = e.status;
    v.last_type = e.type;
    if (!is_perf_value(e)) {
      if (!e.null_data) v.last_ok = &e;
      continue;
    }
    if (e.null_data) {
      if (!fp.null_probe) fp.null_probe = captures::FingerprintProbe{e.status, e.size, std::nullopt};
      continue;
    }
    if (e.status == windows::kErrorMoreData) {
      if (!fp.short_probe) fp.short_probe = captures::FingerprintProbe{e.status, e.size, e.offered};
      if (e.offered > 0 && e.size == e.offered)
        echo = true;
      else if (e.size == 0)
        undefined = true;
      else
        exact = true;
      auto it = said.find(e.value_name);
      if (it != said.end() && e.offered >= it->second && e.size > e.offered)
        ++unsettled;  // the size it said was not enough
      said[e.value_name] = e.size;
      v.max_failed = std::max<uint64_t>(v.max_failed, e.offered);
      continue;
    }
    if (e.status != 0) continue;
    if (header_only_answer(e.data)) {  // a truncation only if this value also brought back more (below)
      if (!header_probe) header_probe = captures::FingerprintProbe{e.status, e.size, e.offered};
      v.last_header_only = &e;
      v.min_header_only = std::min<uint64_t>(v.min_header_only, e.offered);
      v.max_header_only = std::max<uint64_t>(v.max_header_only, e.offered);
      continue;
    }
    v.last_ok = &e;
    v.min_ok = std::min<uint64_t>(v.min_ok, e.offered);
    if (auto it = said.find(e.value_name); it != said.end() && it->second > e.data.size())
      jitter = std::max<uint32_t>(jitter, it->second - uint32_t(e.data.size()));
  }

  uint64_t global_bytes = 0;
  for (const auto& [name, v] : values)
    if (v.last_ok && perfdata::parse_query(name).kind == perfdata::QueryKind::kGlobal)
      global_bytes = v.last_ok->data.size();
  // A header-only success means truncation only when the same value also brought back more: a
  // value whose every answer is a bare header has no objects on this host (a 2022 host's Costly,
  // PerfProc being off), and another value's larger answer says nothing of it.
  bool truncate = false;
  for (auto& [name, v] : values) {
    if (!v.last_header_only) continue;
    if (v.last_ok && v.last_ok->data.size() > v.last_header_only->data.size()) {
      truncate = true;
      v.max_failed = std::max(v.max_failed, v.max_header_only);
    } else if (!v.last_ok) {
      v.last_ok = v.last_header_only;
      v.min_ok = v.min_header_only;
    }
  }
  if (truncate && !fp.short_probe) fp.short_probe = header_probe;

  if (truncate)
    more_data = "samba-truncate";
  else if (echo)
    more_data = "win2000-echo-oversize";
  else if (unsettled >= 2)
    more_data = "nt4-unsettled";
  else if (undefined)
    more_data = "win32-undefined";
  else if (exact)
    more_data = "rrp-exact";
  else if (fp.null_probe && fp.null_probe->status == 0 && fp.null_probe->size != 0)
    more_data = "rrp-exact";

  std::map<std::string, captures::FingerprintQuery> queries;
  uint64_t overhead = UINT64_MAX;
  bool oversize = false;  // an echoing host refused a buffer that held the value's data
  bool fits = false;      // ... or took one Windows 2000 would have refused (data + 64 KB, Zenoss)
  for (const auto& [name, v] : values) {
    captures::FingerprintQuery q{v.calls, v.last_status, v.last_type, {}, {}, {}, {}};
    if (v.last_ok) {
      q.returned = v.last_ok->data.size();
      q.type = v.last_ok->type;
      q.status = v.last_ok->status;
    }
    if (v.min_ok != UINT64_MAX) q.min_buffer = v.min_ok;
    if (v.max_failed) q.max_failed_buffer = v.max_failed;
    if (v.last_ok && is_perf_value(*v.last_ok)) {
      const std::vector<uint32_t> objs = object_indices(v.last_ok->data);
      q.objects = objs;
      // win2000-echo-oversize needs (Global or this answer) + overhead; the largest buffer that
      // failed bounds it from below, so what failed when recorded fails when replayed.
      if (echo && v.max_failed) {
        oversize = oversize || v.max_failed >= v.last_ok->data.size();
        const uint64_t base = std::max<uint64_t>(global_bytes, v.last_ok->data.size());
        fits = fits || (v.min_ok != UINT64_MAX && v.min_ok < base + 65536);
        if (v.max_failed + 1 > base) overhead = std::min<uint64_t>(overhead, v.max_failed + 1 - base);
      }
      const perfdata::Query pq = perfdata::parse_query(name);
      if (pq.kind == perfdata::QueryKind::kIndexList) {
        std::vector<uint32_t> extra;
        for (uint32_t o : objs)
          if (std::find(pq.indices.begin(), pq.indices.end(), o) == pq.indices.end()) extra.push_back(o);
        if (!extra.empty())
          findings.push_back(fmt::format(
              "'{}' also brought back objects {} (the rest of their providers: extra-objects)", name, join(extra)));
      }
      if (v.last_ok->data.empty() && v.last_ok->status == 0)
        findings.push_back(
            fmt::format("'{}' answered WERR_OK with 0 bytes of type {}: the host serves no performance data "
                        "(Samba's rpcd_winreg does this)",
                        name, v.last_ok->type));
    } else if (v.last_ok) {
      if (v.last_ok->status != 0)
        findings.push_back(fmt::format("'{}' answered {}", name, windows::werror_name(v.last_ok->status)));
      else if (v.last_ok->type != windows::kRegMultiSz)
        findings.push_back(fmt::format("'{}' answered type {} with {} bytes, not REG_MULTI_SZ name texts", name,
                                       v.last_ok->type, v.last_ok->data.size()));
    }
    queries[name] = std::move(q);
  }
  // An echo with success as soon as the data fits is the 2008-and-later answer, not Windows 2000's;
  // answers that cannot tell the two apart stay Windows 2000's.
  if (more_data == "win2000-echo-oversize" && !oversize && fits) more_data = "echo-offered";
  if (more_data == "win2000-echo-oversize" && overhead != UINT64_MAX) fp.params["overhead"] = std::to_string(overhead);
  if (more_data == "nt4-unsettled") fp.params["jitter"] = std::to_string(std::max<uint32_t>(jitter, 1));

  // Findings on the buffer policy, in words a support engineer can compare with the collector's log.
  if (more_data == "win2000-echo-oversize")
    findings.push_back(
        fmt::format("short buffers get ERROR_MORE_DATA echoing the size offered, and success needs about "
                    "{} bytes more than the Global data (win2000-echo-oversize)",
                    fp.params.count("overhead") ? fp.params["overhead"] : "?"));
  else if (more_data == "echo-offered")
    findings.push_back(
        "short buffers get ERROR_MORE_DATA echoing the size offered, not the size needed: collectors that "
        "retry with the size said loop, growing ones succeed (echo-offered)");
  else if (more_data == "win32-undefined")
    findings.push_back(
        "ERROR_MORE_DATA answers carry no usable size (0): collectors must grow blindly (win32-undefined)");
  else if (more_data == "samba-truncate")
    findings.push_back("a short buffer gets WERR_OK with only the PERF_DATA_BLOCK header (samba-truncate)");
  else if (more_data == "nt4-unsettled")
    findings.push_back(fmt::format("the size needed changed between calls {} times (nt4-unsettled)", unsettled));
  if (fp.null_probe && fp.null_probe->status == windows::kErrorMoreData)
    findings.push_back("a NULL-buffer size probe gets ERROR_MORE_DATA with size 0, not the size needed");

  for (const Exchange& e : exchanges)
    if (!on_perf_key(e) && iequals(e.value_name, "Last Counter") && e.status == 0 && e.type == windows::kRegDword &&
        e.data.size() >= 4 && load_le32(e.data.data()) == 0) {
      findings.push_back("Perflib's 'Last Counter' is 0: no counter names are registered");
      break;
    }

  std::map<std::string, uint64_t> errors;
  for (const auto& [code, n] : all.errors) {
    errors[std::to_string(code)] = n;
    if (code != windows::kErrorFileNotFound)
      findings.push_back(fmt::format("{} answered {} times", windows::werror_name(code), n));
  }
  if (!more_data.empty()) fp.more_data = more_data;
  fp.queries = std::move(queries);
  fp.errors = std::move(errors);
  fp.latency_us = captures::FingerprintLatency{
      percentile(all.latency_us, 0.5), percentile(all.latency_us, 0.99),
      all.latency_us.empty() ? 0u : *std::max_element(all.latency_us.begin(), all.latency_us.end())};
  fp.findings = std::move(findings);
  return fp;
}

}  // namespace perfsim::recorder
