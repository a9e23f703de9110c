// A serve run's observers in one place: one Journal (optional) and one Metrics, and the per-session
// tap the server's handler feeds once per winreg call (server/winreg_handler.h).
//
// Contract: Recorder::create is called once per run (`perfsim serve` through
// server::make_recorder); open_session runs when a connection or pipe open gets its handler
// (not on the hot path: it finds the host's metrics under a lock); SessionTap::record is the
// hot path (atomics and the journal's slot, no lock, no I/O). A SessionTap counts its session as
// open until destroyed.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "journal/answers.h"
#include "journal/event.h"
#include "journal/journal.h"
#include "journal/metrics.h"

namespace perfsim::journal {

struct RecorderOptions {
  size_t journal_size = Journal::kDefaultCapacity;  // 0: no journal (metrics only)
  std::string journal_file;                         // JSON lines; empty: none
  FileLimits journal_limits;                        // its size cap and rotation
  std::vector<std::string> applied_names;           // Metrics' labels of the applied bits
  bool keep_answers = false;  // keep each session's perf-data answers (answers.h; needs a journal)
};

class Recorder;

class SessionTap {
 public:
  SessionTap(std::shared_ptr<Recorder> r, HostMetrics& m, SharedText host, SharedText peer, Transport t, uint64_t id);
  ~SessionTap();
  SessionTap(const SessionTap&) = delete;
  SessionTap& operator=(const SessionTap&) = delete;
  uint64_t id() const { return id_; }
  // Stamps the session's identity (host, peer, transport, session) on `e` and records it;
  // `answer` (the perf data it was answered, if any) goes to the answer store when there is one.
  void record(CallEvent&& e, uint32_t applied_mask, SharedBytes answer = {});
  // Journals an event of the session's host (CallEvent::host_event, `what_json`) that happened at
  // `time_us`: an entry of its own, no session's and counted in no call metric.
  void record_host_event(std::string what_json, int64_t time_us);

 private:
  std::shared_ptr<Recorder> rec_;  // keeps the journal and metrics alive as long as the session
  HostMetrics& metrics_;
  SharedText host_, peer_;
  Transport transport_;
  uint64_t id_;
};

class Recorder : public std::enable_shared_from_this<Recorder> {
 public:
  static Status create(const RecorderOptions& o, std::shared_ptr<Recorder>& out);
  const std::shared_ptr<Journal>& journal() const { return journal_; }  // null without a journal
  const std::shared_ptr<Metrics>& metrics() const { return metrics_; }
  const std::shared_ptr<AnswerStore>& answers() const { return answers_; }  // null unless keep_answers
  std::unique_ptr<SessionTap> open_session(const std::string& host, const std::string& peer, Transport t);

 private:
  friend class SessionTap;
  Recorder() = default;
  std::shared_ptr<Journal> journal_;
  std::shared_ptr<Metrics> metrics_;
  std::shared_ptr<AnswerStore> answers_;
  std::atomic<uint64_t> next_session_{1};
};

}  // namespace perfsim::journal
