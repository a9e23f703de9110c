// The perf-data answers each session received (Global, Costly, index lists answered WERR_OK), kept
// so `perfsim check` can compute the values a collector should report from exactly the answers it
// got (scenarios/values.h). Only a run that asks for it keeps any (RecorderOptions::keep_answers).
//
// Bounds: the last two answers per session and value (a rate needs two), and at most `max_bytes`
// in all: past that the other sessions' answers go first, oldest first, and are counted
// (`dropped_sessions`); a session alone over the cap loses its own older answers (never the newest).
// Answers are shared with the wire (SharedBytes), never copied. keep() takes a mutex: a check run
// serves one collector, so the journal's lock-free hot path is not needed here. keep() costs
// O(log n) in the answers kept (a value's answers are found by hash, a session's oldest by seq), so
// a session asking many distinct values stays linear.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/shared_bytes.h"

namespace perfsim::journal {

struct KeptAnswer {
  uint64_t seq = 0;     // the journal's seq of the call that got it
  int64_t time_us = 0;  // when the call arrived (wall clock, UTC us)
  std::string value;    // "Global", "Costly", "238 2"
  SharedBytes data;
};

struct SessionAnswers {
  uint64_t session = 0;
  std::string host;
  std::vector<KeptAnswer> answers;  // in seq order; at most two per value
};

class AnswerStore {
 public:
  inline static constexpr size_t kDefaultMaxBytes = size_t(512) << 20;
  explicit AnswerStore(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}
  void keep(uint64_t session, const std::string& host, KeptAnswer a);
  std::vector<SessionAnswers> sessions() const;  // by session id
  uint64_t dropped_sessions() const;

 private:
  mutable std::mutex mu_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  uint64_t dropped_ = 0;
  struct Session {
    std::string host;
    std::unordered_map<std::string, std::deque<KeptAnswer>> by_value;  // each at most two, oldest first
    std::map<uint64_t, std::string> by_seq;                            // seq -> value, of every answer kept
  };
  void drop(Session& s, uint64_t seq);  // the answer `seq` of s
  std::map<uint64_t, Session> by_session_;
};

}  // namespace perfsim::journal
