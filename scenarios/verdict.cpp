// Per-session verdicts against a scenario's [expect] (verdict.h).
#include "scenarios/verdict.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "scenarios/expect.h"
#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::scenarios {
namespace {

bool is_query(const journal::CallEvent& e) { return e.opnum == winreg::kQueryValue && e.rpc_fault == 0; }

// A perf-data answer with data: Global, Costly or an index list answered WERR_OK with bytes
// (not a name table, which a collector can read and still have no data).
bool got_data(const std::vector<journal::CallEvent>& events) {
  return std::any_of(events.begin(), events.end(), [](const journal::CallEvent& e) {
    const std::string kind = journal::value_kind(e.value_name);
    return is_query(e) && e.status == 0 && e.bytes > 0 &&
           (kind == "global" || kind == "costly" || kind == "index-list");
  });
}

// The longest run of ERROR_MORE_DATA answers to one value's calls (calls to other values between
// them do not end the run; an answer without MORE_DATA does), and the value.
std::pair<uint32_t, std::string> longest_more_data_run(const std::vector<journal::CallEvent>& events) {
  std::map<std::string, uint32_t> run;
  std::pair<uint32_t, std::string> longest{0, ""};
  for (const journal::CallEvent& e : events) {
    if (!is_query(e)) continue;
    uint32_t& n = run[e.value_name];
    n = e.status == windows::kErrorMoreData ? n + 1 : 0;
    if (n > longest.first) longest = {n, e.value_name};
  }
  return longest;
}

bool same_status(uint32_t status, const std::string& st) {
  const std::string name = windows::werror_name(status);  // "WERR_BUSY (170)"
  return name == st || name.rfind(st + " (", 0) == 0;
}

void busy_unmet(const Handling& h, const journal::SessionDiagnosis& d, std::vector<std::string>& out) {
  if (h.busy_backoff_ms > 0 && d.busy_answers > 0) {
    if (d.busy_retries == 0)
      out.push_back(fmt::format("{} ERROR_BUSY answer{} and no retry (ERROR_BUSY is transient: retry after a back-off)",
                                d.busy_answers, d.busy_answers == 1 ? "" : "s"));
    const auto shortest = std::min_element(d.busy_backoff_ms.begin(), d.busy_backoff_ms.end());
    if (shortest != d.busy_backoff_ms.end() && *shortest < h.busy_backoff_ms)
      out.push_back(fmt::format("retried ERROR_BUSY after {:.1f} ms (expected a back-off of >= {} ms)", *shortest,
                                h.busy_backoff_ms));
  }
  if (h.max_busy_retries && d.busy_retries > h.max_busy_retries)
    out.push_back(fmt::format("{} retries after ERROR_BUSY (expected <= {}, then give up the poll)", d.busy_retries,
                              h.max_busy_retries));
}

}  // namespace

std::vector<std::string> unmet(const Handling& h, const journal::SessionDiagnosis& d,
                               const std::vector<journal::CallEvent>& session_events) {
  std::vector<std::string> out;
  // A session the host closed at every call (a reboot's down time) had no data to get.
  if (h.data && d.closed < d.calls && !got_data(session_events))
    out.push_back("no perf data: no Global, Costly or index-list query answered WERR_OK with data");
  if (h.max_tries) {
    const auto [run, value] = longest_more_data_run(session_events);
    if (run >= h.max_tries)
      out.push_back(
          fmt::format("{} call{} in a row for {} answered ERROR_MORE_DATA (expected the data within {} tries)", run,
                      run == 1 ? "" : "s", value, h.max_tries));
  }
  if (h.no_loop)
    for (const journal::Loop& l : d.loops)
      out.push_back(fmt::format("a loop: offered {} bytes for {} {} times, each answered ERROR_MORE_DATA", l.size,
                                l.value, l.offers));
  // A connection the host closed (a reboot) took its handles with it: nothing left to close.
  if (h.close_handles && d.closed == 0 && d.handles_opened > d.handles_closed)
    out.push_back(
        fmt::format("left {} of {} handles open (no CloseKey)", d.handles_opened - d.handles_closed, d.handles_opened));
  busy_unmet(h, d, out);
  for (const std::string& v : h.values)
    if (!d.values.count(v)) out.push_back("never asked " + v);
  for (const std::string& st : h.once) {
    const auto n = std::count_if(session_events.begin(), session_events.end(), [&](const journal::CallEvent& e) {
      return e.rpc_fault == 0 && same_status(e.status, st);
    });
    if (n > 1) out.push_back(fmt::format("{} calls answered {} (expected at most one: do not retry it)", n, st));
  }
  return out;
}

std::vector<SessionVerdict> judge(const Handling& h, const Expected& e, const std::vector<journal::CallEvent>& events) {
  std::vector<SessionVerdict> out;
  for (const journal::SessionDiagnosis& d : journal::diagnose(events)) {
    std::vector<journal::CallEvent> mine;
    for (const journal::CallEvent& ev : events)
      if (ev.session == d.session) mine.push_back(ev);
    SessionVerdict v;
    v.session = d.session;
    v.host = d.host;
    v.peer = d.peer;
    v.transport = journal::transport_name(d.transport);
    v.calls = d.calls;
    v.seconds = double(d.last_us - d.first_us) / 1e6;
    v.unmet = unmet(h, d, mine);
    v.diagnosis_lacks = e.text.empty() ? "the scenario gives no [diagnosis]" : diagnosis_lacks(e, d, mine);
    const auto last =
        std::find_if(mine.rbegin(), mine.rend(), [](const journal::CallEvent& ev) { return is_query(ev); });
    // The session ended on a MORE_DATA answer asking more than was offered (a loop on an echoed
    // size is a loop, reported as one, not silence).
    if (last != mine.rend() && last == mine.rbegin() && last->status == windows::kErrorMoreData &&
        last->size > last->offered)
      v.silent_after = fmt::format("{} bytes", last->size);
    v.shows_diagnosis = v.diagnosis_lacks.empty();
    // The bug first: it is the line a CI system shows (JUnit's failure message).
    if (h.no_diagnosis && v.shows_diagnosis) v.unmet.insert(v.unmet.begin(), "shows the bug: " + e.text);
    out.push_back(std::move(v));
  }
  return out;
}

nlohmann::json to_json(const SessionVerdict& v) {
  return {{"session", v.session},
          {"host", v.host},
          {"peer", v.peer},
          {"transport", v.transport},
          {"calls", v.calls},
          {"seconds", v.seconds},
          {"handled", v.handled()},
          {"unmet", v.unmet},
          {"shows_diagnosis", v.shows_diagnosis},
          {"diagnosis_lacks", v.diagnosis_lacks},
          {"silent_after_more_data", v.silent_after}};
}

EventVerdict judge_event(const std::string& host, const std::string& kind, double at_s, int64_t start_us,
                         const std::vector<journal::CallEvent>& events) {
  EventVerdict v{host, kind, 0, at_s, false, ""};
  const int64_t at_us = start_us + int64_t(at_s * 1e6);
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const journal::CallEvent& e : events)
    if (!e.is_host_event() && journal::text(e.host) == host) {
      first = std::min(first, e.time_us);
      last = std::max(last, e.time_us);
    }
  const auto s = [start_us](int64_t us) { return double(us - start_us) / 1e6; };
  if (first == INT64_MAX)
    v.why = fmt::format("the {} is at {:g} s; the collector made no call to {}", kind, at_s, host);
  else if (last < at_us)
    v.why = fmt::format("the {} is at {:g} s; the collector stopped at {:.1f} s: poll past it", kind, at_s, s(last));
  else if (first >= at_us)
    v.why = fmt::format("the {} is at {:g} s; the collector's first call was at {:.1f} s: start polling before it",
                        kind, at_s, s(first));
  v.exercised = v.why.empty();
  return v;
}

nlohmann::json to_json(const EventVerdict& v) {
  return {{"host", v.host}, {"kind", v.kind},           {"index", v.index},
          {"at_s", v.at_s}, {"exercised", v.exercised}, {"why", v.why}};
}

std::string render_text(const EventVerdict& v) {
  return fmt::format("event {} on {} ({} at {:g} s): {}", v.index, v.host, v.kind, v.at_s,
                     v.exercised ? "exercised" : "NOT EXERCISED: " + v.why);
}

namespace {

// Why a session stopped, when it stopped right after MORE_DATA: a client that packs the buffer it
// is offered byte by byte (impacket in Python) never sends the next call of a large value.
std::string silence(const SessionVerdict& v) {
  if (v.silent_after.empty()) return "";
  return fmt::format(
      "the collector went silent after a MORE_DATA answer offering {} (no next call: a client that packs an "
      "N-byte buffer itself takes minutes; send lpData empty with lpcbLen 0, scenarios/README.md)",
      v.silent_after);
}

}  // namespace

std::string render_text(const SessionVerdict& v) {
  std::string out = fmt::format("session {} ({}, {}, {}, {} call{}): ", v.session, v.host, v.peer, v.transport, v.calls,
                                v.calls == 1 ? "" : "s");
  if (v.handled()) return out + "handled";
  out += "NOT handled";
  for (size_t i = 0; i < v.unmet.size(); ++i) out += (i ? "; " : ": ") + v.unmet[i];
  if (const std::string why = silence(v); !why.empty()) out += "; " + why;
  return out;
}

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, LF and CR.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

struct JunitCase {
  std::string name;
  double seconds = 0;
  std::string failure, detail;  // failure empty: passed
  std::string out, err;         // <system-out>, <system-err> when not empty
};

std::string junit_case(const std::string& suite, const JunitCase& c) {
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(suite),
                                xml_escape(c.name), c.seconds);
  std::string body;
  if (!c.failure.empty())
    body += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(c.failure), xml_escape(c.detail));
  if (!c.out.empty()) body += fmt::format("      <system-out>{}</system-out>\n", xml_escape(c.out));
  if (!c.err.empty()) body += fmt::format("      <system-err>{}</system-err>\n", xml_escape(c.err));
  if (body.empty()) return out + "/>\n";
  return out + ">\n" + body + "    </testcase>\n";
}

JunitCase session_case(const SessionVerdict& v) {
  std::string why;
  for (const std::string& u : v.unmet) why += (why.empty() ? "" : "\n") + u;
  if (const std::string s = silence(v); !s.empty() && !v.handled()) why += "\n" + s;
  return {fmt::format("{} session {}", v.host, v.session),
          v.seconds,
          v.handled() ? "" : fmt::format("not handled: {}", v.unmet.front()),
          why,
          "",
          ""};
}

JunitCase value_case(const ValueVerdict& v) {
  return {"value " + v.path, 0, v.ok ? "" : fmt::format("wrong value: {}", v.why), render_text(v), "", ""};
}

}  // namespace

std::string junit_xml(const JunitRun& run) {
  const std::string suite = "perfsim check " + run.suite;
  std::vector<JunitCase> cases;
  const std::string failure =
      run.command_failure + (run.values_failure.empty() ? ""
                                                        : (run.command_failure.empty() ? "" : "; ") +
                                                              std::string("values: ") + run.values_failure);
  cases.push_back({"collector " + run.command, run.seconds, failure, failure, run.out, run.err});
  for (const SessionVerdict& v : run.verdicts) cases.push_back(session_case(v));
  for (const ValueVerdict& v : run.values) cases.push_back(value_case(v));
  for (const EventVerdict& v : run.events)
    cases.push_back({fmt::format("{} event {} {}", v.host, v.index, v.kind), 0,
                     v.exercised ? "" : "not exercised: " + v.why, render_text(v), "", ""});
  size_t failures = 0;
  std::string text;
  for (const JunitCase& c : cases) {
    failures += c.failure.empty() ? 0 : 1;
    text += junit_case(suite, c);
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites tests=\"{0}\" failures=\"{1}\" time=\"{2:.3f}\">\n"
      "  <testsuite name=\"{3}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" time=\"{2:.3f}\">\n{4}"
      "  </testsuite>\n</testsuites>\n",
      cases.size(), failures, run.seconds, xml_escape(suite), text);
}

}  // namespace perfsim::scenarios
