// Collector diagnosis: what a collector did in one session (connection or pipe open), read from
// its calls. Pure functions over CallEvents, so the live journal (Journal::sessions) and an
// offline journal file (`perfsim journal FILE`) give the same answer.
//
// What is judged, per session:
//  - buffer growth: after each ERROR_MORE_DATA on a QueryValue with a buffer, the size the
//    collector offers next for the same value. Each step is one of: exact (the size the server
//    said), doubling, +N bytes, same size again, or other; the session's growth is the kind all
//    steps share (+N only with one N), else "mixed".
//  - loops: the same size offered after ERROR_MORE_DATA again and again (3 offers or more), e.g.
//    impacket's hBaseRegQueryValue against a host echoing the offered size (win2000).
//  - ERROR_BUSY: answers, retries (the next call for the same value) and their back-off.
//  - value names asked (QueryValue) and their kinds: global, costly, index-list, counter, help,
//    foreign, other.
//  - handles: successful opens (OpenHK*, OpenKey) against successful CloseKeys.
//  - time between polls: successful data answers for the same HKEY_PERFORMANCE_DATA value.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/event.h"

namespace perfsim::journal {

enum class StepKind { kExact, kDoubling, kPlus, kSame, kOther };
enum class Growth { kNone, kExact, kDoubling, kPlusN, kFixed, kMixed };
const char* growth_name(Growth g);  // "none", "exact", "doubling", "plus-n", "fixed", "mixed"
const char* step_name(StepKind k);  // "exact", "doubling", "plus", "same", "other"

// One retry after ERROR_MORE_DATA: offered `offered`, the server said `said`, then `next` was offered.
struct RetryStep {
  std::string value;
  uint32_t offered = 0;
  uint32_t said = 0;
  uint32_t next = 0;
};
StepKind classify_step(const RetryStep& s);
// The growth all steps share; `n` gets the +N step (kPlusN) or 0.
Growth classify_growth(const std::vector<RetryStep>& steps, int64_t& n);

struct Loop {
  std::string value;
  uint32_t size = 0;
  uint64_t offers = 0;  // times this size was offered in a row, each answered ERROR_MORE_DATA
};

struct Summary {  // of a list of milliseconds
  uint64_t count = 0;
  double min = 0, median = 0, max = 0;
};
Summary summarize(std::vector<double> ms);

struct SessionDiagnosis {
  uint64_t session = 0;
  std::string host, peer;
  Transport transport = Transport::kTcp;
  int64_t first_us = 0, last_us = 0;
  uint64_t calls = 0;
  uint64_t closed = 0;             // of them, closed without an answer (CallEvent::closed)
  uint64_t more_data_answers = 0;  // calls answered ERROR_MORE_DATA
  std::vector<RetryStep> steps;    // every retry after ERROR_MORE_DATA, in order
  Growth growth = Growth::kNone;   // over every value's steps
  int64_t growth_n = 0;
  struct ValueGrowth {
    Growth growth = Growth::kNone;
    int64_t n = 0;
  };
  std::map<std::string, ValueGrowth> value_growth;  // per value (a collector may grow each its own way)
  std::vector<Loop> loops;
  uint64_t busy_answers = 0, busy_retries = 0;
  std::vector<double> busy_backoff_ms;
  std::map<std::string, uint64_t> values;  // QueryValue names and how often
  std::map<std::string, uint64_t> kinds;   // their kinds
  uint64_t handles_opened = 0, handles_closed = 0;
  std::vector<double> poll_interval_ms;
};

// "global", "costly", "index-list" ("238 230"), "counter"/"help" ("Counter 009"), "foreign", "other".
const char* value_kind(const std::string& name);
// One diagnosis per session, in the order sessions first appear; events in seq order.
std::vector<SessionDiagnosis> diagnose(const std::vector<CallEvent>& events);
nlohmann::json to_json(const SessionDiagnosis& d);
// The same as text for a terminal, one block per session.
std::string render_text(const std::vector<SessionDiagnosis>& sessions);

}  // namespace perfsim::journal
