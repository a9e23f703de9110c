// The quirk fingerprint of a host (quirks.md, last section), read from what it answered: the live
// recorder's probes or a pcap's exchanges. It is stored in the capture as JSON and replaying the
// capture reproduces the behaviours it names with no profile given (replayer/quirks.h,
// fingerprint_quirks reads more_data and params).
//
// What it holds (captures/fingerprint.h types it, FORMAT.md documents the JSON keys):
//   more_data   the buffer policy the answers fit: rrp-exact, win32-undefined,
//               win2000-echo-oversize, nt4-unsettled, samba-truncate; absent when nothing showed it
//   params      its parameters (win2000-echo-oversize: overhead; nt4-unsettled: jitter)
//   null_probe  what a NULL-buffer QueryValue of a perf value answered {status, size}
//   short_probe what the first short buffer answered {offered, status, size}
//   queries     per value name: {status, type, returned, min_buffer, objects, calls}; min_buffer is
//               the smallest buffer seen to succeed, returned the bytes that buffer brought back
//   errors      WERROR (other than 0 and 234) -> count
//   latency_us  {p50, p99, max} over perf-data answers
//   findings    what is odd about the host, one sentence each (also printed by record/import)
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "captures/fingerprint.h"
#include "recorder/exchange.h"

namespace perfsim::recorder {

// Counts a recorder keeps while sampling, so it need not keep every exchange of a long recording.
struct CallStats {
  std::map<uint32_t, uint64_t> errors;  // WERROR -> count (0 and 234 not counted)
  std::vector<uint32_t> latency_us;     // perf-data answers
  void add(const Exchange& e);
};

// The typed fingerprint a capture stores (captures/fingerprint.h: to_json gives its JSON). analyse()
// always sets queries, errors, latency_us and findings; more_data only when something showed it.
using Fingerprint = captures::Fingerprint;

// Analyses `exchanges` (with their data) plus `stats` of exchanges not kept. `exchanges` in time
// order; HKLM values are looked at for findings (e.g. a Last Counter of 0).
Fingerprint analyse(const std::vector<Exchange>& exchanges, const CallStats& stats);

// A PERF_DATA_BLOCK with no objects, only its header (what samba-truncate answers a short buffer).
bool header_only_answer(ByteView data);

// Object title indices of a PERF_DATA_BLOCK, in answer order (empty when it is not one).
std::vector<uint32_t> object_indices(ByteView data);

}  // namespace perfsim::recorder
