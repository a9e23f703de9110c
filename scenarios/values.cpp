// Value verdicts: the collector's numbers against perfdata's formulas over its own answers (values.h).
#include "scenarios/values.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/suggest.h"
#include "core/utf16.h"
#include "perfdata/limits.h"
#include "perfdata/counters.h"
#include "perfdata/model.h"
#include "perfdata/series.h"

namespace perfsim::scenarios {
namespace {

constexpr std::string_view kValueForms =
    "write one value per line: {\"path\": \"\\\\\\\\HOST\\\\Processor(_Total)\\\\% Processor Time\", \"value\": 37.5} "
    "or \\\\HOST\\Processor(_Total)\\% Processor Time,37.5";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_number(std::string_view text, double& out) {
  const std::string s(trim(text));
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

// One line as a value: true when it is one (`out` filled), false when it is not; `error` says
// what is wrong with a line that looks like one (a JSON object with a path but no number).
// A reported path is at most PDH_MAX_COUNTER_PATH long, as any PDH path is: a longer one is refused
// before it is compared with the host's names (an edit distance per name, nearest_path).
bool within_path_bound(const std::string& path, std::string& error) {
  if (perfdata::limits::within(path, perfdata::limits::kCounterPath)) return true;
  error = "the path " + perfdata::limits::too_long(path, perfdata::limits::kCounterPath);
  return false;
}

bool parse_line(std::string_view line, ReportedValue& out, std::string& error) {
  if (line.front() == '{') {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("path")) return false;
    if (!j["path"].is_string() || !j.contains("value") || !j["value"].is_number()) {
      error = "a JSON line needs \"path\" (a string) and \"value\" (a number)";
      return false;
    }
    out.path = j["path"].get<std::string>();
    out.value = j["value"].get<double>();
    return std::isfinite(out.value) && within_path_bound(out.path, error);
  }
  const size_t comma = line.rfind(',');
  if (line.front() != '\\' || comma == std::string_view::npos) return false;
  out.path = std::string(trim(line.substr(0, comma)));
  if (!parse_number(line.substr(comma + 1), out.value)) {
    error = "the text after the last comma is not a number";
    return false;
  }
  return within_path_bound(out.path, error);
}

struct Parsed {
  const journal::KeptAnswer* answer = nullptr;
  perfdata::DataBlock block;
  std::string system;  // the block's system name
};

struct ParsedSession {
  const journal::SessionAnswers* s = nullptr;
  std::vector<Parsed> answers;  // perf data blocks only (a name table is no sample)
};

std::vector<ParsedSession> parse_sessions(const std::vector<journal::SessionAnswers>& sessions) {
  std::vector<ParsedSession> out;
  for (const journal::SessionAnswers& s : sessions) {
    ParsedSession ps{&s, {}};
    for (const journal::KeptAnswer& a : s.answers) {
      Parsed p;
      p.answer = &a;
      if (!perfdata::parse(a.data.view(), p.block).ok()) continue;
      p.system = utf16_to_utf8(p.block.system_name());
      ps.answers.push_back(std::move(p));
    }
    if (!ps.answers.empty()) out.push_back(std::move(ps));
  }
  return out;
}

bool session_of(const ParsedSession& ps, const std::string& machine) {
  return machine.empty() || iequals(machine, ps.s->host) || iequals(machine, ps.answers.back().system);
}

uint32_t counter_type(const perfdata::DataBlock& b, const perfdata::SeriesColumn& c) {
  for (const perfdata::Object& o : b.objects)
    if (o.name_index == c.object)
      for (const perfdata::CounterDef& d : o.counters)
        if (d.name_index == c.counter) return d.type;
  return 0;
}

// The existing path of `block` nearest to `path`: its nearest object, that object's nearest
// instance and counter, by English name. "" when the block holds no object.
std::string nearest_path(const perfdata::DataBlock& block, const std::string& machine,
                         const std::map<uint32_t, std::string>& names, const perfdata::CounterPath& path) {
  const auto name_of = [&names](uint32_t index) {
    const auto it = names.find(index);
    return it == names.end() ? std::to_string(index) : it->second;
  };
  std::vector<std::string> objects;
  for (const perfdata::Object& o : block.objects) objects.push_back(name_of(o.name_index));
  const std::string object = nearest_any(path.object, objects);
  if (object.empty()) return "";
  const perfdata::Object& o =
      block.objects[size_t(std::find(objects.begin(), objects.end(), object) - objects.begin())];
  std::vector<perfdata::InstanceValues> values;
  if (!perfdata::format_object(nullptr, block, o.name_index, values).ok() || values.empty()) return "";
  std::vector<std::string> instances, counters;
  for (const perfdata::InstanceValues& iv : values) instances.push_back(iv.name);
  for (const perfdata::CounterValue& cv : values.front().counters) counters.push_back(name_of(cv.name_index));
  const std::string instance = o.multi_instance() ? nearest_any(path.has_instance ? path.instance : "", instances) : "";
  return fmt::format("\\\\{}\\{}{}\\{}", machine, object, o.multi_instance() ? "(" + instance + ")" : "",
                     nearest_any(path.counter, counters));
}

// A path written with one leading backslash before the machine ("\HOST\Processor(_Total)\..."
// read as object "HOST\Processor"): the machine, when the part before the backslash names a host
// of `sessions`.
void machine_from_object(perfdata::CounterPath& path, const std::vector<ParsedSession>& sessions) {
  const size_t slash = path.object.find('\\');
  if (!path.machine.empty() || slash == std::string::npos) return;
  const std::string machine = path.object.substr(0, slash);
  for (const ParsedSession& ps : sessions)
    if (iequals(machine, ps.s->host) || iequals(machine, ps.answers.back().system)) {
      path.machine = machine;
      path.object = path.object.substr(slash + 1);
      return;
    }
}

// perfsim's value of `path` from one session's answers: the newest pair of one value that both
// hold it, else (for a type one sample gives) the newest answer. false: `why` says what is missing.
bool compute(const ParsedSession& ps, const perfdata::CounterPath& path, const std::map<uint32_t, std::string>& names,
             ValueVerdict& v, std::string& why) {
  const Parsed* best_prev = nullptr;
  const Parsed* best_cur = nullptr;
  std::vector<perfdata::SeriesColumn> cols;
  for (size_t i = ps.answers.size(); i-- > 0;) {
    const Parsed& cur = ps.answers[i];
    std::vector<perfdata::SeriesColumn> c;
    if (Status s = perfdata::resolve_columns({&cur.block}, names, {path}, c); !s.ok()) {
      if (why.empty()) why = s.message();
      continue;
    }
    if (c.size() != 1) {
      why = fmt::format("the path names {} counters: report one value per instance", c.size());
      return false;
    }
    if (!best_cur) {
      best_cur = &cur;
      cols = c;
    }
    for (size_t k = i; k-- > 0;)
      if (ps.answers[k].answer->value == cur.answer->value) {
        std::vector<perfdata::SeriesColumn> p;
        if (perfdata::resolve_columns({&ps.answers[k].block}, names, {path}, p).ok()) {
          best_prev = &ps.answers[k];
          best_cur = &cur;
          cols = c;
        }
        break;
      }
    if (best_prev) break;
  }
  if (!best_cur) return false;
  std::vector<std::optional<double>> values;
  // A 32-bit counter is differenced modulo 2^32, as the scenarios' correct collector does.
  perfdata::FormatOptions opt;
  opt.unwrap32 = true;
  perfdata::series_row({best_prev ? &best_prev->block : nullptr}, {&best_cur->block}, cols, values, opt);
  v.counter_type = perfdata::counter_type_name(counter_type(best_cur->block, cols[0]));
  v.value_name = best_cur->answer->value;
  if (best_prev) {
    v.samples.push_back(best_prev->answer->seq);
    v.sample_us.push_back(best_prev->answer->time_us);
  }
  v.samples.push_back(best_cur->answer->seq);
  v.sample_us.push_back(best_cur->answer->time_us);
  v.expected = values[0];
  if (!v.expected)
    why = best_prev ? "the formula gives no value between these answers (a counter went back, an instance went)"
                    : fmt::format(
                          "{} needs two answers and session {} got one that holds it: poll twice on one "
                          "connection",
                          v.counter_type, ps.s->session);
  return true;
}

// The scenario's event behind a value that failed, in words ("" when none): a wrap between its
// two answers, or a reboot between an earlier session's answers and its session's first.
std::string event_hint(const ValueVerdict& v, const std::vector<ParsedSession>& sessions,
                       const std::vector<EventMoment>& events) {
  const ParsedSession* mine = nullptr;
  for (const ParsedSession& ps : sessions)
    if (ps.s->session == v.session) mine = &ps;
  if (!mine) return "";
  for (const EventMoment& e : events) {
    if (!iequals(e.host, v.host)) continue;
    if (e.kind == "wrap" && v.sample_us.size() == 2 && v.sample_us[0] < e.wall_us && v.sample_us[1] >= e.wall_us)
      return fmt::format(
          "the wrap at {:g} s falls between its two answers: a 32-bit counter passed 2^32 there; difference 32-bit "
          "counters modulo 2^32 (an unsigned 32-bit subtraction), never as floats",
          e.at_s);
    if (e.kind != "reboot" || mine->s->answers.front().time_us < e.wall_us) continue;
    for (const ParsedSession& ps : sessions)
      if (ps.s->session != v.session && iequals(ps.s->host, v.host) && ps.answers.front().answer->time_us < e.wall_us)
        return fmt::format(
            "the host rebooted at {:g} s, after session {}'s answers and before session {}'s: a value differenced "
            "across a reboot is no rate; drop the pair that spans it and start from the new boot's answers",
            e.at_s, ps.s->session, v.session);
  }
  return "";
}

void judge_one(const ReportedValue& r, const std::vector<ParsedSession>& sessions, const NamesOf& names,
               double tolerance, const std::vector<EventMoment>& events, ValueVerdict& v) {
  v.path = r.path;
  v.where = r.where;
  v.reported = r.value;
  perfdata::CounterPath path;
  if (Status s = perfdata::parse_counter_path(r.path, path); !s.ok()) {
    v.why = s.message();
    return;
  }
  machine_from_object(path, sessions);
  std::string why;
  for (auto it = sessions.rbegin(); it != sessions.rend(); ++it) {  // the newest session first
    if (!session_of(*it, path.machine)) continue;
    v.host = it->s->host;
    v.session = it->s->session;
    if (compute(*it, path, names(it->s->host), v, why)) break;
  }
  if (v.host.empty()) {
    std::string hosts;
    for (const ParsedSession& ps : sessions) hosts += (hosts.empty() ? "" : ", ") + ps.s->host;
    v.why = fmt::format("no session of host '{}' got perf data (hosts that did: {})", path.machine,
                        hosts.empty() ? "none" : hosts);
    return;
  }
  if (!v.expected && v.counter_type.empty()) {
    // Nothing of the path in any session: say where it looked and the nearest path there.
    const std::string in_first = " in the first sample";  // resolve_columns' words for a series
    if (why.size() > in_first.size() && why.compare(why.size() - in_first.size(), in_first.size(), in_first) == 0)
      why.resize(why.size() - in_first.size());
    why += fmt::format(" in session {}'s answers from {}", v.session, v.host);
    // One leading backslash before a name that is no host of the run: the object took the machine.
    if (path.machine.empty() && path.object.find('\\') != std::string::npos)
      why += fmt::format("; a machine name takes two leading backslashes: \\{}", r.path);
    for (const ParsedSession& ps : sessions)
      if (ps.s->session == v.session)
        if (const std::string near =
                nearest_path(ps.answers.back().block, ps.answers.back().system, names(ps.s->host), path);
            !near.empty())
          why += "; the nearest path they hold: " + near;
  }
  if (!v.expected) {
    v.why = why;
  } else {
    const double diff = std::fabs(r.value - *v.expected);
    v.ok = diff <= tolerance * std::max(std::fabs(*v.expected), 1.0);
    // In the tolerance's unit: percent of perfsim's value (of 1 below 1, where it is absolute).
    const double scale = std::max(std::fabs(*v.expected), 1.0);
    if (!v.ok)
      v.why =
          fmt::format("differs by {:.6g} % of {} ({:.6g}; tolerance {:.6g} %)", 100 * diff / scale,
                      std::fabs(*v.expected) < 1 ? "1 (absolute below 1)" : "perfsim's value", diff, tolerance * 100);
  }
  if (!v.ok)
    if (const std::string hint = event_hint(v, sessions, events); !hint.empty()) v.why = hint + "; " + v.why;
}

}  // namespace

Status parse_reported(std::string_view text, const std::string& source, bool strict, std::vector<ReportedValue>& out) {
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    ReportedValue v;
    std::string error;
    if (!parse_line(line, v, error)) {
      if (!strict && error.empty()) continue;
      return Status::InvalidArgument(fmt::format("{}:{}: not a value line ({}): {}", source, line_no,
                                                 error.empty() ? "neither JSON nor PATH,VALUE" : error, kValueForms));
    }
    if (out.size() >= kMaxReportedValues)
      return Status::InvalidArgument(fmt::format("{}: more than {} values", source, kMaxReportedValues));
    v.where = fmt::format("{}:{}", source, line_no);
    out.push_back(std::move(v));
  }
  return Status::Ok();
}

std::string no_values(std::string_view text, const std::string& source) {
  std::string seen;
  size_t quoted = 0;
  while (!text.empty() && quoted < kQuotedLines) {
    const size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    const bool cut = line.size() > kQuotedLineChars;
    if (cut) line = line.substr(0, kQuotedLineChars);
    seen += fmt::format("{}\"{}{}\"", quoted++ ? ", " : "", line, cut ? "..." : "");
  }
  return fmt::format("no value line in the collector's {} ({}); {}", source, kValueForms,
                     quoted ? fmt::format("its first line{}: {}", quoted == 1 ? "" : "s", seen) : "it was empty");
}

std::vector<ValueVerdict> judge_values(const std::vector<ReportedValue>& reported,
                                       const std::vector<journal::SessionAnswers>& sessions, const NamesOf& names,
                                       double tolerance, const std::vector<EventMoment>& events) {
  const std::vector<ParsedSession> parsed = parse_sessions(sessions);
  std::vector<ValueVerdict> out(reported.size());
  for (size_t i = 0; i < reported.size(); ++i) judge_one(reported[i], parsed, names, tolerance, events, out[i]);
  return out;
}

nlohmann::json to_json(const ValueVerdict& v) {
  return {{"path", v.path},
          {"where", v.where},
          {"collector", v.reported},
          {"perfsim", v.expected ? nlohmann::json(*v.expected) : nlohmann::json()},
          {"counter_type", v.counter_type},
          {"host", v.host},
          {"session", v.session},
          {"value", v.value_name},
          {"samples", v.samples},
          {"ok", v.ok},
          {"why", v.why}};
}

std::string render_text(const ValueVerdict& v) {
  std::string samples;
  for (const uint64_t s : v.samples) samples += (samples.empty() ? " seq " : " and ") + std::to_string(s);
  // Nothing computed (an unknown path): no counter type, no answers to name.
  const std::string from = v.host.empty() ? ""
                           : v.counter_type.empty()
                               ? fmt::format(" (session {} on {})", v.session, v.host)
                               : fmt::format(" ({}; session {} on {}, answers to \"{}\"{})", v.counter_type, v.session,
                                             v.host, v.value_name, samples);
  const std::string perfsim = v.expected ? fmt::format("{:.10g}", *v.expected) : "none";
  return fmt::format("value {}: collector {:.10g}, perfsim {}{}: {}{}", v.path, v.reported, perfsim, from,
                     v.ok ? "ok" : "WRONG", v.ok ? "" : " (" + v.why + ")");
}

}  // namespace perfsim::scenarios
