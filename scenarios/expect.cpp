// A journal against a scenario's expected diagnosis (expect.h).
#include "scenarios/expect.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "windows/constants.h"

namespace perfsim::scenarios {
namespace {

// Empty when `d` shows everything of `e` the sessions carry, else what it lacks.
std::string session_lacks(const Expected& e, const journal::SessionDiagnosis& d) {
  if (!e.loop.empty()) {
    bool looped = false;
    for (const journal::Loop& l : d.loops) looped |= l.value == e.loop;
    if (!looped) return "no loop on " + e.loop;
  }
  if (!e.growth.empty() && e.growth != journal::growth_name(d.growth))
    return fmt::format("growth {}, expected {}", journal::growth_name(d.growth), e.growth);
  if (d.steps.size() < e.min_steps)
    return fmt::format("{} retries after ERROR_MORE_DATA, expected >= {}", d.steps.size(), e.min_steps);
  if (e.busy && d.busy_answers == 0) return "no ERROR_BUSY answer";
  return "";
}

// A status named as in the diagnosis ("WERR_BUSY") against a call that returned it (a call closed
// without an answer, or a host event's entry, returned none).
bool returned(const journal::CallEvent& ev, const std::string& st) {
  const std::string name = windows::werror_name(ev.status);  // "WERR_BUSY (170)"
  return ev.rpc_fault == 0 && !ev.closed && !ev.is_host_event() && (name == st || name.rfind(st + " (", 0) == 0);
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// A value name against the diagnosis's: without case, and a trailing '*' matches any rest
// ("Counter*": Counter 007, Counter CurrentLanguage, Counter).
bool same_value(std::string_view asked, std::string_view pattern) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    return asked.size() >= pattern.size() && same_name(asked.substr(0, pattern.size()), pattern);
  }
  return same_name(asked, pattern);
}

// Whether the comma-separated `list` ("busy,event:reboot") names `name`.
bool lists(std::string_view list, std::string_view name) {
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find(',', at), list.size());
    if (list.substr(at, end - at) == name) return true;
    at = end + 1;
  }
  return false;
}

bool matches(const ExpectedCall& c, const journal::CallEvent& ev) {
  return !ev.is_host_event() && (c.op.empty() || journal::opnum_label(ev.opnum) == c.op) &&
         (c.key.empty() || same_name(journal::text(ev.key_path), c.key)) &&
         (c.value.empty() || same_value(ev.value_name, c.value)) && (c.status.empty() || returned(ev, c.status)) &&
         (c.max_bytes == 0 || ev.bytes <= c.max_bytes) && (c.applied.empty() || lists(ev.applied, c.applied));
}

std::string describe(const ExpectedCall& c) {
  std::string out = c.op.empty() ? "a call" : c.op;
  if (!c.key.empty()) out += " on " + c.key;
  if (!c.value.empty()) out += " \"" + c.value + "\"";
  if (!c.status.empty()) out += " answered " + c.status;
  if (c.max_bytes) out += fmt::format(" with at most {} bytes", c.max_bytes);
  if (!c.applied.empty()) out += " shaped by " + c.applied;
  return out;
}

// What of the diagnosis's statuses and calls (in order: each after the one before it) `events`
// (of `where`: "the journal", "the session") lack; "" when they show them all.
std::string events_lack(const Expected& e, const std::vector<journal::CallEvent>& events, const char* where) {
  for (const std::string& st : e.statuses) {
    bool seen = false;
    for (const journal::CallEvent& ev : events) seen |= returned(ev, st);
    if (!seen) return fmt::format("no call in {} returned {}", where, st);
  }
  size_t next = 0;
  for (size_t i = 0; i < e.calls.size(); ++i) {
    while (next < events.size() && !matches(e.calls[i], events[next])) ++next;
    if (next == events.size())
      return fmt::format("{} does not show call {} of the diagnosis, {}{}", where, i + 1, describe(e.calls[i]),
                         i ? ", after the ones before it" : "");
    ++next;
  }
  return "";
}

// Whether asking `asked` asks `wanted`: the same name, or an index list ("238 1848") naming it.
bool asks(const std::string& asked, const std::string& wanted) {
  if (same_name(asked, wanted)) return true;
  if (std::string_view(journal::value_kind(asked)) != "index-list") return false;
  for (size_t at = 0; at < asked.size();) {
    const size_t end = std::min(asked.find(' ', at), asked.size());
    if (end > at && asked.compare(at, end - at, wanted) == 0) return true;
    at = end + 1;
  }
  return false;
}

// What of e.never_asked the session asked ("" when none): then it did not fall for the bug.
std::string asked_instead(const Expected& e, const journal::SessionDiagnosis& d) {
  for (const std::string& wanted : e.never_asked)
    for (const auto& [asked, n] : d.values)
      if (asks(asked, wanted)) return fmt::format("the session also asked {}", asked);
  return "";
}

}  // namespace

std::string diagnosis_lacks(const Expected& e, const journal::SessionDiagnosis& d,
                            const std::vector<journal::CallEvent>& session_events) {
  if (std::string lacks = session_lacks(e, d); !lacks.empty()) return lacks;
  if (std::string lacks = events_lack(e, session_events, "the session"); !lacks.empty()) return lacks;
  return asked_instead(e, d);
}

Status check_expected(const Expected& e, const std::vector<journal::SessionDiagnosis>& sessions,
                      const std::vector<journal::CallEvent>& events) {
  if (!e.never_asked.empty()) {
    // What a session did not ask is the session's own: some one session shows it all.
    std::string why = "no session in the journal";
    for (const journal::SessionDiagnosis& d : sessions) {
      std::vector<journal::CallEvent> mine;
      for (const journal::CallEvent& ev : events)
        if (ev.session == d.session && !ev.is_host_event()) mine.push_back(ev);
      const std::string lacks = diagnosis_lacks(e, d, mine);
      if (lacks.empty()) return Status::Ok();
      why = fmt::format("session {}: {}", d.session, lacks);
    }
    return Status::NotFound("the journal does not show the scenario's diagnosis: " + why);
  }
  const bool per_session = !e.loop.empty() || !e.growth.empty() || e.min_steps || e.busy;
  if (per_session) {
    std::string why = "no session in the journal";
    bool found = false;
    for (const journal::SessionDiagnosis& d : sessions) {
      const std::string lacks = session_lacks(e, d);
      if (lacks.empty())
        found = true;
      else
        why = fmt::format("session {}: {}", d.session, lacks);
    }
    if (!found) return Status::NotFound("the journal does not show the scenario's diagnosis: " + why);
  }
  if (std::string lacks = events_lack(e, events, "the journal"); !lacks.empty()) return Status::NotFound(lacks);
  return Status::Ok();
}

}  // namespace perfsim::scenarios
