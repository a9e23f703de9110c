// What a simulated host answers for one perf value: the value's content, the caller's buffer and
// the answer after the quirk engine (quirk_engine.h) and injected faults shaped it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/shared_bytes.h"
#include "windows/constants.h"

namespace perfsim::replayer {

enum class PerfKey { kData, kText, kNlsText };  // HKPD, HKPT, HKPN

struct ValueContent {
  uint32_t status = windows::kErrorSuccess;  // kFileNotFound for a missing value
  uint32_t type = windows::kRegBinary;
  SharedBytes data;  // recorded bytes are shared with the Recording, not copied
};

// The caller's buffer: data pointer NULL (has_buffer false) or a buffer of `size` bytes.
struct BufferOffer {
  bool has_buffer = false;
  uint32_t size = 0;
};

struct ValueAnswer {
  uint32_t status = windows::kErrorSuccess;
  uint32_t type = windows::kRegBinary;
  uint32_t size = 0;             // data_size reported back
  SharedBytes data;              // bytes returned (status kOk with a buffer only)
  uint32_t delay_ms = 0;         // how long the host takes before this answer leaves (slow-global, hang)
  uint32_t rpc_fault = 0;        // non-zero: answer with this DCE/RPC fault instead (faults)
  bool drop_connection = false;  // close the connection without answering (faults)
  uint32_t applied = 0;          // Applied bits: which quirks and faults shaped this answer (observers)
};

// What shaped an answer, for observers above the host (the journal names them, metrics count
// them): one bit per quirk (its quirk_table.h row's applied_bit) or fault kind (kAppliedFaultBase
// + FaultKind), set when the answer is made (quirks can change while serving), so the hot path
// only ORs; `applied_names` spells them out.
inline constexpr uint32_t kAppliedBits = 32;
inline constexpr uint32_t kAppliedFaultBase = 16;
// Counters moved between two recorded samples (host.h, Between::kInterpolate): "between:interpolate".
inline constexpr uint32_t kAppliedBetween = 24;
// Host events (events.h) in force for the answer, one bit per event_table() row: "event:reboot"
// (counters re-based on a reboot, or the call refused while the host was down), "event:wrap",
// "event:clock-jump", "event:churn", ... "event:unlodctr" (bits 25 to 31: the table's seven rows fill
// the mask; events.cpp checks it).
inline constexpr int kAppliedEventBase = 25;
// The quirk or fault name of one Applied bit ("busy", "win2000-echo-oversize", "fault:latency");
// empty for an unused bit.
std::string_view applied_name(uint32_t bit);
// Comma-separated names of every bit in `mask`.
std::string applied_names(uint32_t mask);

// MS-RRP 3.1.5.17 (rrp-exact): NULL data -> success + needed size; short buffer -> ERROR_MORE_DATA
// + needed size; otherwise the data.
ValueAnswer rrp_exact(ValueContent content, BufferOffer offer);

}  // namespace perfsim::replayer
