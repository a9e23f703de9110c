#include "journal/metrics.h"

#include <fmt/core.h>

#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::journal {
namespace {

constexpr std::array<uint32_t, kStatusSlots - 2> kStatuses = {
    windows::kErrorSuccess,       windows::kErrorFileNotFound,     windows::kErrorAccessDenied,
    windows::kErrorInvalidHandle, windows::kErrorInvalidParameter, windows::kErrorInsufficientBuffer,
    windows::kErrorBusy,          windows::kErrorMoreData,         windows::kErrorNoMoreItems};
constexpr size_t kOtherStatus = kStatusSlots - 2, kRpcFault = kStatusSlots - 1;

size_t status_slot(const CallEvent& e) {
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

std::string Metrics::render_prometheus() const {
  std::lock_guard<std::mutex> l(mu_);
  std::string o;
  auto head = [&](const char* name, const char* type, const char* help) {
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  head("perfsim_winreg_calls_total", "counter", "winreg calls answered, by host, opnum and status returned.");
  for (const auto& [name, h] : hosts_)
    for (size_t op = 0; op < kOpnumSlots; ++op)
      for (size_t st = 0; st < kStatusSlots; ++st)
        if (uint64_t n = h->calls[op][st].load(std::memory_order_relaxed))
          o += fmt::format("perfsim_winreg_calls_total{{host=\"{}\",opnum=\"{}\",status=\"{}\"}} {}\n", esc(name),
                           opnum_text(op), status_label(st), n);
  head("perfsim_winreg_reply_data_bytes_total", "counter", "Value bytes returned to clients, by host.");
  for (const auto& [name, h] : hosts_)
    o += fmt::format("perfsim_winreg_reply_data_bytes_total{{host=\"{}\"}} {}\n", esc(name),
                     h->reply_bytes.load(std::memory_order_relaxed));
  head("perfsim_winreg_call_duration_seconds", "histogram",
       "winreg call latency: handling time plus the delay the host imposed, by host.");
  for (const auto& [name, h] : hosts_) {
    uint64_t cum = 0;
    for (size_t b = 0; b <= kLatencyBuckets.size(); ++b) {
      cum += h->latency[b].load(std::memory_order_relaxed);
      const std::string le = b < kLatencyBuckets.size() ? fmt::format("{}", kLatencyBuckets[b]) : "+Inf";
      o += fmt::format("perfsim_winreg_call_duration_seconds_bucket{{host=\"{}\",le=\"{}\"}} {}\n", esc(name), le, cum);
    }
    o += fmt::format("perfsim_winreg_call_duration_seconds_sum{{host=\"{}\"}} {}\n", esc(name),
                     double(h->latency_sum_us.load(std::memory_order_relaxed)) / 1e6);
    o += fmt::format("perfsim_winreg_call_duration_seconds_count{{host=\"{}\"}} {}\n", esc(name), cum);
  }
  head("perfsim_sessions_open", "gauge", "Connections (tcp) and pipe opens (smb) now open, by host.");
  for (const auto& [name, h] : hosts_)
    for (size_t t = 0; t < 2; ++t)
      o += fmt::format("perfsim_sessions_open{{host=\"{}\",transport=\"{}\"}} {}\n", esc(name),
                       transport_name(Transport(t)), h->open[t].load(std::memory_order_relaxed));
  head("perfsim_sessions_total", "counter", "Connections (tcp) and pipe opens (smb) since the start, by host.");
  for (const auto& [name, h] : hosts_)
    for (size_t t = 0; t < 2; ++t)
      o += fmt::format("perfsim_sessions_total{{host=\"{}\",transport=\"{}\"}} {}\n", esc(name),
                       transport_name(Transport(t)), h->total[t].load(std::memory_order_relaxed));
  head("perfsim_applied_total", "counter", "Quirks and injected faults applied to answers, by host and name.");
  for (const auto& [name, h] : hosts_)
    for (size_t b = 0; b < kAppliedSlots; ++b)
      if (uint64_t n = h->applied[b].load(std::memory_order_relaxed); n && !applied_names_[b].empty())
        o += fmt::format("perfsim_applied_total{{host=\"{}\",name=\"{}\"}} {}\n", esc(name), esc(applied_names_[b]), n);
  head("perfsim_journal_drops_total", "counter",
       "Journal events the journal file missed: overwritten before its writer got them, or refused by the disk.");
  o += fmt::format("perfsim_journal_drops_total {}\n", drops_ ? drops_() : 0);
  head("perfsim_journal_events_total", "counter", "winreg calls journaled.");
  o += fmt::format("perfsim_journal_events_total {}\n", events_ ? events_() : 0);
  return o;
}

}  // namespace perfsim::journal
