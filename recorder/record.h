// Live recording: read a host through a WinregClient (TCP or SMB) and write a capture that
// replays it, fingerprint included.
//
// What record() does, in order:
//  1. HKLM: CurrentVersion (ProductName, CurrentVersion, CurrentBuildNumber, CSDVersion) and
//     Perflib (Last Counter, Last Help, Version, Disable Performance Counters) — the values a
//     collector reads; a host that refuses HKLM is still recorded (warning).
//  2. OpenHKPD (refused: an error saying which account rights are needed), then Counter/Help of
//     each language. A name table that does not come back as REG_MULTI_SZ is kept as the answer
//     it was (status, type, bytes), so the capture replays it exactly.
//  3. Fingerprint probes for each query, a few calls each: a NULL buffer, a short buffer, growth
//     to success, a search for the smallest buffer that works when success needed much more than
//     the data, and a buffer of exactly the data's size (fingerprint.h says what is kept).
//  4. Every interval, each query with a buffer that worked last time (grown on ERROR_MORE_DATA),
//     the final answer stored with when it arrived and how long it took; until `count` samples,
//     `duration`, or `stop` turns true.
// Guarantees: the capture file is created before the first sample and every record reaches the
// file in one write, synced at each new tick (captures/writer.h), so a recorder killed at any
// moment leaves a capture that reads up to the last whole record. A network error during
// sampling ends the recording with what was recorded (closed properly) and the error returned.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "captures/writer.h"
#include "core/status.h"
#include "recorder/client.h"
#include "recorder/fingerprint.h"

namespace perfsim::recorder {

struct RecordProgress {
  uint32_t samples = 0;  // ticks completed
  uint64_t bytes = 0;    // payload bytes received
  uint64_t errors = 0;   // answers other than WERR_OK
  uint32_t target = 0;   // samples asked for (0: open-ended)
};

struct RecordOptions {
  std::vector<std::string> queries = {"Global"};
  // Counter/Help tables to record; empty: 009 and every language Perflib's subkeys list (a German
  // host: 009, 007, CurrentLanguage), so the replay answers each table the host had.
  std::vector<std::string> languages;
  std::chrono::milliseconds interval{15000};
  uint32_t count = 0;                     // samples; 0 = no limit
  std::chrono::milliseconds duration{0};  // 0 = no limit
  std::string host_name;                  // used when the data names no system
  captures::WriterOptions writer = {32, captures::DeltaCodec::kXor, captures::SyncPolicy::kEveryTick};
  std::function<void(const RecordProgress&)> progress;  // after each sample
  const std::atomic<bool>* stop = nullptr;              // checked between calls and while waiting
};

struct RecordResult {
  uint32_t samples = 0;
  uint64_t file_bytes = 0;
  captures::HostInfo host;
  Fingerprint fingerprint;
  std::vector<std::string> languages;  // the Counter/Help tables recorded
  std::vector<std::string> warnings;
};

Status record(WinregClient& client, const std::string& path, const RecordOptions& opt, RecordResult& out);

}  // namespace perfsim::recorder
