// Serve-run metrics in the Prometheus text exposition format (version 0.0.4).
//
// Contract: counting is relaxed atomic increments on the host's own counters (HostMetrics, found
// once per session, not per call); only host() (a session opening) and rendering take the lock.
// Series, labelled by host when per_host() (the default; perfsim serve turns it off above
// kPerHostMetricsUpTo hosts unless --metrics-per-host on), else fleet-wide sums with the same names
// and the host label left out (a scrape's size then does not grow with the fleet):
//   perfsim_winreg_calls_total{host,opnum,status}      calls answered, status a WERROR name, rpc_fault or
//                                                      closed (the host closed the connection: no answer)
//   perfsim_winreg_reply_data_bytes_total{host}        value bytes returned
//   perfsim_winreg_call_duration_seconds{host}         histogram of call latency (handling + host delay)
//   perfsim_sessions_open{host,transport}              connections (tcp) / pipe opens (smb) now open
//   perfsim_sessions_total{host,transport}             ... since the start
//   perfsim_applied_total{host,name}                   quirks and faults applied to answers
//   perfsim_journal_drops_total                        events the journal file missed (writer behind, disk refused)
//   perfsim_journal_events_total                       events journaled
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/event.h"

namespace perfsim::journal {

inline constexpr size_t kOpnumSlots = 0x23 + 1;  // winreg opnums 0..0x22, then "other"
inline constexpr size_t kStatusSlots = 12;  // the WERRORs collectors meet, "closed" (no answer), "other", rpc_fault
inline constexpr std::array<double, 11> kLatencyBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                           0.01,   0.05,    0.1,    0.5,   1.0};
inline constexpr size_t kAppliedSlots = 32;
// perfsim serve's --metrics-per-host auto: per-host series up to this many served hosts (about 25
// series a host: 1,250 at most), fleet-wide sums above it.
inline constexpr size_t kPerHostMetricsUpTo = 50;

struct HostMetrics {
  std::string name;
  std::array<std::array<std::atomic<uint64_t>, kStatusSlots>, kOpnumSlots> calls{};
  std::atomic<uint64_t> reply_bytes{0};
  std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> latency{};  // last: +Inf
  std::atomic<uint64_t> latency_sum_us{0};
  std::array<std::atomic<int64_t>, 2> open{};  // by Transport
  std::array<std::atomic<uint64_t>, 2> total{};
  std::array<std::atomic<uint64_t>, kAppliedSlots> applied{};  // by bit of CallEvent's applied mask

  void count(const CallEvent& e, uint32_t applied_mask);
  void session_opened(Transport t);
  void session_closed(Transport t);
  uint64_t calls_total() const;
  // Calls answered with a failure: any status but WERR_OK, WERR_MORE_DATA (the buffer-growth
  // handshake) and WERR_NO_MORE_ITEMS (the end of an enumeration), and every rpc_fault and call
  // closed without an answer.
  uint64_t errors_total() const;
};

class Metrics {
 public:
  // applied_names[i]: the label of applied-mask bit i (empty: not reported).
  explicit Metrics(std::vector<std::string> applied_names = {});
  // The host's counters, made on first use; the reference stays valid for the Metrics' life.
  HostMetrics& host(const std::string& name);
  // Where perfsim_journal_drops_total / _events_total come from (the run's Journal); none: 0.
  void set_journal_counters(std::function<uint64_t()> drops, std::function<uint64_t()> events);
  // false: render_prometheus() sums every host's counters into series without a host label.
  void set_per_host(bool on) { per_host_.store(on, std::memory_order_relaxed); }
  bool per_host() const { return per_host_.load(std::memory_order_relaxed); }

  std::string render_prometheus() const;
  uint64_t calls(const std::string& host) const;  // 0 for a host never seen
  nlohmann::json calls_json() const;              // {"HOST": calls, ...}
  // {"HOST": {"calls": calls_total(), "errors": errors_total(), "sessions_open", "sessions_opened"}}:
  // the admin API's per-host figures and fleet totals (admin/README.md "Figures"), one snapshot
  // for all hosts seen.
  nlohmann::json health_json() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<HostMetrics>> hosts_;
  std::vector<std::string> applied_names_;
  std::function<uint64_t()> drops_, events_;
  std::atomic<bool> per_host_{true};
};

// The status label of a WERROR ("WERR_MORE_DATA"), "other" or "rpc_fault".
const char* status_label(size_t slot);

}  // namespace perfsim::journal
