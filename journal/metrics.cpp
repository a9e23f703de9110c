#include "journal/metrics.h"

#include <fmt/core.h>

#include <utility>
#include <vector>

#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::journal {
namespace {

constexpr std::array<uint32_t, kStatusSlots - 3> kStatuses = {
    windows::kErrorSuccess,       windows::kErrorFileNotFound,     windows::kErrorAccessDenied,
    windows::kErrorInvalidHandle, windows::kErrorInvalidParameter, windows::kErrorInsufficientBuffer,
    windows::kErrorBusy,          windows::kErrorMoreData,         windows::kErrorNoMoreItems};
constexpr size_t kClosed = kStatusSlots - 3, kOtherStatus = kStatusSlots - 2, kRpcFault = kStatusSlots - 1;

size_t status_slot(const CallEvent& e) {
  if (e.closed) return kClosed;  // no answer: its status is no WERROR the client saw
  if (e.rpc_fault) return kRpcFault;
  for (size_t i = 0; i < kStatuses.size(); ++i)
    if (kStatuses[i] == e.status) return i;
  return kOtherStatus;
}

std::string opnum_text(size_t slot) {
  if (slot == kOpnumSlots - 1) return "other";
  const char* n = winreg::opnum_name(uint16_t(slot));
  return n ? n : fmt::format("opnum_{}", slot);
}

// Label values: backslash, double quote and newline escaped, as the format requires.
std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

}  // namespace

const char* status_label(size_t slot) {
  static const std::array<const char*, kStatusSlots> names = {"WERR_OK",
                                                              "WERR_FILE_NOT_FOUND",
                                                              "WERR_ACCESS_DENIED",
                                                              "WERR_INVALID_HANDLE",
                                                              "WERR_INVALID_PARAMETER",
                                                              "WERR_INSUFFICIENT_BUFFER",
                                                              "WERR_BUSY",
                                                              "WERR_MORE_DATA",
                                                              "WERR_NO_MORE_ITEMS",
                                                              "closed",
                                                              "other",
                                                              "rpc_fault"};
  return slot < names.size() ? names[slot] : "other";
}

void HostMetrics::count(const CallEvent& e, uint32_t applied_mask) {
  calls[std::min<size_t>(e.opnum, kOpnumSlots - 1)][status_slot(e)].fetch_add(1, std::memory_order_relaxed);
  if (e.bytes) reply_bytes.fetch_add(e.bytes, std::memory_order_relaxed);
  size_t b = 0;
  while (b < kLatencyBuckets.size() && double(e.latency_us) > kLatencyBuckets[b] * 1e6) ++b;
  latency[b].fetch_add(1, std::memory_order_relaxed);
  latency_sum_us.fetch_add(e.latency_us, std::memory_order_relaxed);
  for (uint32_t m = applied_mask; m; m &= m - 1)
    applied[size_t(__builtin_ctz(m))].fetch_add(1, std::memory_order_relaxed);
}

void HostMetrics::session_opened(Transport t) {
  open[size_t(t)].fetch_add(1, std::memory_order_relaxed);
  total[size_t(t)].fetch_add(1, std::memory_order_relaxed);
}

void HostMetrics::session_closed(Transport t) { open[size_t(t)].fetch_sub(1, std::memory_order_relaxed); }

uint64_t HostMetrics::calls_total() const {
  uint64_t n = 0;
  for (const auto& row : calls)
    for (const auto& c : row) n += c.load(std::memory_order_relaxed);
  return n;
}

uint64_t HostMetrics::errors_total() const {
  uint64_t n = 0;
  for (const auto& row : calls)
    for (size_t st = 0; st < kStatusSlots; ++st)
      if (st >= kStatuses.size() ||
          (kStatuses[st] != windows::kErrorSuccess && kStatuses[st] != windows::kErrorMoreData &&
           kStatuses[st] != windows::kErrorNoMoreItems))
        n += row[st].load(std::memory_order_relaxed);
  return n;
}

Metrics::Metrics(std::vector<std::string> applied_names) : applied_names_(std::move(applied_names)) {
  applied_names_.resize(kAppliedSlots);
}

HostMetrics& Metrics::host(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  std::unique_ptr<HostMetrics>& h = hosts_[name];
  if (!h) {
    h = std::make_unique<HostMetrics>();
    h->name = name;
  }
  return *h;
}

void Metrics::set_journal_counters(std::function<uint64_t()> drops, std::function<uint64_t()> events) {
  std::lock_guard<std::mutex> l(mu_);
  drops_ = std::move(drops);
  events_ = std::move(events);
}

uint64_t Metrics::calls(const std::string& host) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = hosts_.find(host);
  return it == hosts_.end() ? 0 : it->second->calls_total();
}

nlohmann::json Metrics::calls_json() const {
  std::lock_guard<std::mutex> l(mu_);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, h] : hosts_) out[name] = h->calls_total();
  return out;
}

nlohmann::json Metrics::health_json() const {
  std::lock_guard<std::mutex> l(mu_);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, h] : hosts_)
    out[name] = {
        {"calls", h->calls_total()},
        {"errors", h->errors_total()},
        {"sessions_open",
         std::max<int64_t>(0, h->open[0].load(std::memory_order_relaxed) + h->open[1].load(std::memory_order_relaxed))},
        {"sessions_opened", h->total[0].load(std::memory_order_relaxed) + h->total[1].load(std::memory_order_relaxed)}};
  return out;
}

namespace {

// One host's counters read once (or several hosts' summed), so a family's lines come from one
// snapshot and per-host and fleet-wide output share one renderer.
struct Counts {
  std::array<std::array<uint64_t, kStatusSlots>, kOpnumSlots> calls{};
  uint64_t reply_bytes = 0;
  std::array<uint64_t, kLatencyBuckets.size() + 1> latency{};
  uint64_t latency_sum_us = 0;
  std::array<int64_t, 2> open{};
  std::array<uint64_t, 2> total{};
  std::array<uint64_t, kAppliedSlots> applied{};

  void add(const HostMetrics& h) {
    constexpr auto r = std::memory_order_relaxed;
    for (size_t op = 0; op < kOpnumSlots; ++op)
      for (size_t st = 0; st < kStatusSlots; ++st) calls[op][st] += h.calls[op][st].load(r);
    reply_bytes += h.reply_bytes.load(r);
    for (size_t b = 0; b < latency.size(); ++b) latency[b] += h.latency[b].load(r);
    latency_sum_us += h.latency_sum_us.load(r);
    for (size_t t = 0; t < 2; ++t) {
      open[t] += h.open[t].load(r);
      total[t] += h.total[t].load(r);
    }
    for (size_t b = 0; b < kAppliedSlots; ++b) applied[b] += h.applied[b].load(r);
  }
};

// `labels` of each row: "" (fleet-wide) or `host="NAME",`; every family's samples stay together.
void render(std::string& o, const std::vector<std::pair<std::string, Counts>>& rows,
            const std::vector<std::string>& applied_names, bool per_host) {
  const char* by_host = per_host ? ", by host" : " (fleet-wide: the sum over hosts)";
  auto head = [&](const char* name, const char* type, const std::string& help) {
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  // `{host="A",x="y"}`, `{x="y"}` or nothing.
  auto braces = [](const std::string& host, const std::string& rest) {
    std::string in = host + rest;
    if (!in.empty() && in.back() == ',') in.pop_back();
    return in.empty() ? std::string() : "{" + in + "}";
  };
  head("perfsim_winreg_calls_total", "counter",
       fmt::format("winreg calls answered, by opnum and status returned{}.", by_host));
  for (const auto& [host, c] : rows)
    for (size_t op = 0; op < kOpnumSlots; ++op)
      for (size_t st = 0; st < kStatusSlots; ++st)
        if (uint64_t n = c.calls[op][st])
          o +=
              fmt::format("perfsim_winreg_calls_total{} {}\n",
                          braces(host, fmt::format("opnum=\"{}\",status=\"{}\"", opnum_text(op), status_label(st))), n);
  head("perfsim_winreg_reply_data_bytes_total", "counter", fmt::format("Value bytes returned to clients{}.", by_host));
  for (const auto& [host, c] : rows)
    o += fmt::format("perfsim_winreg_reply_data_bytes_total{} {}\n", braces(host, ""), c.reply_bytes);
  head("perfsim_winreg_call_duration_seconds", "histogram",
       fmt::format("winreg call latency: handling time plus the delay the host imposed{}.", by_host));
  for (const auto& [host, c] : rows) {
    uint64_t cum = 0;
    for (size_t b = 0; b <= kLatencyBuckets.size(); ++b) {
      cum += c.latency[b];
      const std::string le = b < kLatencyBuckets.size() ? fmt::format("{}", kLatencyBuckets[b]) : "+Inf";
      o += fmt::format("perfsim_winreg_call_duration_seconds_bucket{} {}\n", braces(host, fmt::format("le=\"{}\"", le)),
                       cum);
    }
    o += fmt::format("perfsim_winreg_call_duration_seconds_sum{} {}\n", braces(host, ""),
                     double(c.latency_sum_us) / 1e6);
    o += fmt::format("perfsim_winreg_call_duration_seconds_count{} {}\n", braces(host, ""), cum);
  }
  head("perfsim_sessions_open", "gauge", fmt::format("Connections (tcp) and pipe opens (smb) now open{}.", by_host));
  for (const auto& [host, c] : rows)
    for (size_t t = 0; t < 2; ++t)
      o += fmt::format("perfsim_sessions_open{} {}\n",
                       braces(host, fmt::format("transport=\"{}\"", transport_name(Transport(t)))), c.open[t]);
  head("perfsim_sessions_total", "counter",
       fmt::format("Connections (tcp) and pipe opens (smb) since the start{}.", by_host));
  for (const auto& [host, c] : rows)
    for (size_t t = 0; t < 2; ++t)
      o += fmt::format("perfsim_sessions_total{} {}\n",
                       braces(host, fmt::format("transport=\"{}\"", transport_name(Transport(t)))), c.total[t]);
  head("perfsim_applied_total", "counter",
       fmt::format("Quirks and injected faults applied to answers, by name{}.", by_host));
  for (const auto& [host, c] : rows)
    for (size_t b = 0; b < kAppliedSlots; ++b)
      if (uint64_t n = c.applied[b]; n && !applied_names[b].empty())
        o += fmt::format("perfsim_applied_total{} {}\n",
                         braces(host, fmt::format("name=\"{}\"", esc(applied_names[b]))), n);
}

}  // namespace

std::string Metrics::render_prometheus() const {
  std::lock_guard<std::mutex> l(mu_);
  const bool by_host = per_host();
  std::vector<std::pair<std::string, Counts>> rows;
  if (by_host) {
    rows.reserve(hosts_.size());
    for (const auto& [name, h] : hosts_) {
      rows.emplace_back(fmt::format("host=\"{}\",", esc(name)), Counts{});
      rows.back().second.add(*h);
    }
  } else {
    rows.emplace_back("", Counts{});
    for (const auto& [name, h] : hosts_) rows.back().second.add(*h);
  }
  std::string o;
  render(o, rows, applied_names_, by_host);
  auto head = [&](const char* name, const char* type, const char* help) {
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  head("perfsim_journal_drops_total", "counter",
       "Journal events the journal file missed: overwritten before its writer got them, or refused by the disk.");
  o += fmt::format("perfsim_journal_drops_total {}\n", drops_ ? drops_() : 0);
  head("perfsim_journal_events_total", "counter", "winreg calls journaled.");
  o += fmt::format("perfsim_journal_events_total {}\n", events_ ? events_() : 0);
  return o;
}

}  // namespace perfsim::journal
