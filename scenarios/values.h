// Value verdicts (issue 47): does what a collector computed match what the answers it received
// give? The collector writes one value per line, a JSON object {"path": P, "value": V} or
// `PATH,VALUE` (PATH a PDH counter path, perfdata/series.h; the value after the last comma, as
// instance names may hold commas: "0,_Total"); perfsim computes the same path with perfdata's
// formulas (perfdata/counters.h, by counter type) from the last two answers of one session that
// hold the object (journal/answers.h), and compares within a relative tolerance.
//
// Contract: every reported value gets one verdict; one that cannot be judged (an unknown path, no
// session of its host, a rate with one answer) fails and says why. Nothing is invented: no value
// is compared against anything but the answers kept.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "journal/answers.h"

namespace perfsim::scenarios {

inline constexpr double kDefaultTolerance = 1e-4;  // 0.01 % relative
inline constexpr size_t kMaxReportedValues = 100000;

struct ReportedValue {
  std::string path;
  double value = 0;
  std::string where;  // "values.txt:3", for messages
};

// The value lines of `text` (from `source`, for messages). strict (a values file): every
// non-blank line must be one, else InvalidArgument naming the line and what to write; not strict
// (the collector's stdout): other lines are its output and are skipped. Over kMaxReportedValues:
// InvalidArgument.
Status parse_reported(std::string_view text, const std::string& source, bool strict, std::vector<ReportedValue>& out);
// Why `text` (from `source`: "stdout") gave no value: the value lines expected and the first
// lines it held (at most kQuotedLines, each cut at kQuotedLineChars), or that it was empty.
inline constexpr size_t kQuotedLines = 3, kQuotedLineChars = 120;
std::string no_values(std::string_view text, const std::string& source);

struct ValueVerdict {
  std::string path;  // as reported
  std::string where;
  double reported = 0;
  std::optional<double> expected;  // perfsim's; none when it cannot say (then `why`)
  std::string counter_type;        // "PERF_100NSEC_TIMER_INV"
  std::string host;
  uint64_t session = 0;
  std::vector<uint64_t> samples;   // the journal seqs of the answers used, oldest first
  std::vector<int64_t> sample_us;  // when their calls arrived (wall clock, UTC us)
  std::string value_name;          // the value they answered ("Global")
  bool ok = false;
  std::string why;  // empty when ok
};

// Title index -> name of the host named `host` (its Counter 009); empty when unknown.
using NamesOf = std::function<std::map<uint32_t, std::string>(const std::string& host)>;

// A scenario event of a host's realtime timeline, in wall-clock time: a wrong value whose answers
// span it is told so (the bug the scenario is about, not only "differs by").
struct EventMoment {
  std::string host, kind;  // "reboot", "wrap"
  int64_t wall_us = 0;
  double at_s = 0;  // seconds after the host started, for messages
};

// One verdict per reported value, against `sessions`' answers; |reported - expected| must be at
// most tolerance * max(|expected|, 1) (relative; absolute below 1, so a value of 0 is not judged
// by rounding noise).
std::vector<ValueVerdict> judge_values(const std::vector<ReportedValue>& reported,
                                       const std::vector<journal::SessionAnswers>& sessions, const NamesOf& names,
                                       double tolerance = kDefaultTolerance,
                                       const std::vector<EventMoment>& events = {});

nlohmann::json to_json(const ValueVerdict& v);
// "value \\H\Processor(_Total)\% Processor Time: collector 36.28, perfsim 37.7312 (PERF_100NSEC_TIMER_INV;
// session 1 on H, answers to "Global" seq 5 and 9): WRONG (differs by 1.4512 (tolerance 0.01 %))"
std::string render_text(const ValueVerdict& v);

}  // namespace perfsim::scenarios
