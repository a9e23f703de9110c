#include "journal/diagnosis.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::journal {
namespace {

bool iequals_prefix(const std::string& s, const char* p) {
  size_t i = 0;
  for (; p[i]; ++i)
    if (i >= s.size() || std::tolower(uint8_t(s[i])) != std::tolower(uint8_t(p[i]))) return false;
  return true;
}

bool is_open(uint16_t op) {
  return op == winreg::kOpenHKLM || op == winreg::kOpenHKPD || op == winreg::kOpenHKPT || op == winreg::kOpenHKPN ||
         op == winreg::kOpenKey;
}

// Per session while reading its events.
struct Reader {
  SessionDiagnosis d;
  struct Pending {
    uint32_t offered = 0, said = 0;
  };
  std::unordered_map<std::string, Pending> more_data;  // value -> its last ERROR_MORE_DATA
  std::unordered_map<std::string, int64_t> busy_end_us;
  std::unordered_map<std::string, int64_t> last_poll_us;
  std::vector<uint32_t> run_sizes;  // consecutive same-size MORE_DATA offers
  std::string run_value;

  void end_run() {
    if (run_sizes.size() >= 3) d.loops.push_back({run_value, run_sizes.front(), run_sizes.size()});
    run_sizes.clear();
  }

  void query_value(const CallEvent& e) {
    const std::string& v = e.value_name;
    ++d.values[v];
    ++d.kinds[value_kind(v)];
    if (auto b = busy_end_us.find(v); b != busy_end_us.end()) {
      ++d.busy_retries;
      d.busy_backoff_ms.push_back(double(e.time_us - b->second) / 1000.0);
      busy_end_us.erase(b);
    }
    if (e.rpc_fault) return;
    if (e.status == windows::kErrorBusy) {
      ++d.busy_answers;
      busy_end_us[v] = e.time_us + e.latency_us;
    }
    if (!e.has_buffer) return;
    if (auto p = more_data.find(v); p != more_data.end()) {
      d.steps.push_back({v, p->second.offered, p->second.said, e.offered});
      more_data.erase(p);
    }
    if (e.status == windows::kErrorMoreData) {
      ++d.more_data_answers;
      more_data[v] = {e.offered, e.size};
      if (run_sizes.empty() || run_value != v || run_sizes.back() != e.offered) {
        end_run();
        run_value = v;
      }
      run_sizes.push_back(e.offered);
    } else {
      end_run();
    }
    if (e.status == windows::kErrorSuccess && e.bytes > 0 && text(e.key_path) == "HKEY_PERFORMANCE_DATA") {
      if (auto l = last_poll_us.find(v); l != last_poll_us.end())
        d.poll_interval_ms.push_back(double(e.time_us - l->second) / 1000.0);
      last_poll_us[v] = e.time_us;
    }
  }

  void add(const CallEvent& e) {
    if (!d.calls) {
      d.session = e.session;
      d.host = text(e.host);
      d.peer = text(e.peer);
      d.transport = e.transport;
      d.first_us = e.time_us;
    }
    ++d.calls;
    d.last_us = e.time_us;
    if (e.closed) {  // no answer: nothing a collector did with it to judge
      ++d.closed;
      return;
    }
    const bool ok = !e.rpc_fault && e.status == windows::kErrorSuccess;
    if (is_open(e.opnum) && ok) ++d.handles_opened;
    if (e.opnum == winreg::kCloseKey && ok) ++d.handles_closed;
    if (e.opnum == winreg::kQueryValue) query_value(e);
  }

  SessionDiagnosis finish() {
    end_run();
    d.growth = classify_growth(d.steps, d.growth_n);
    std::map<std::string, std::vector<RetryStep>> by_value;
    for (const RetryStep& s : d.steps) by_value[s.value].push_back(s);
    for (const auto& [value, steps] : by_value) {
      SessionDiagnosis::ValueGrowth& g = d.value_growth[value];
      g.growth = classify_growth(steps, g.n);
    }
    return std::move(d);
  }
};

nlohmann::json summary_json(const std::vector<double>& ms) {
  const Summary s = summarize(ms);
  return {{"count", s.count}, {"min_ms", s.min}, {"median_ms", s.median}, {"max_ms", s.max}};
}

}  // namespace

const char* growth_name(Growth g) {
  switch (g) {
    case Growth::kNone:
      return "none";
    case Growth::kExact:
      return "exact";
    case Growth::kDoubling:
      return "doubling";
    case Growth::kPlusN:
      return "plus-n";
    case Growth::kFixed:
      return "fixed";
    case Growth::kMixed:
      return "mixed";
  }
  return "?";
}

const char* step_name(StepKind k) {
  switch (k) {
    case StepKind::kExact:
      return "exact";
    case StepKind::kDoubling:
      return "doubling";
    case StepKind::kPlus:
      return "plus";
    case StepKind::kSame:
      return "same";
    case StepKind::kOther:
      return "other";
  }
  return "?";
}

// The same size first: an echoing host (said == offered) makes "exact" and "same" coincide, and
// what the collector does wrong there is repeating itself.
StepKind classify_step(const RetryStep& s) {
  if (s.next == s.offered) return StepKind::kSame;
  if (s.next == s.said && s.said > s.offered) return StepKind::kExact;
  if (uint64_t(s.next) == 2ull * s.offered) return StepKind::kDoubling;
  if (s.next > s.offered) return StepKind::kPlus;
  return StepKind::kOther;
}

// The first growth every step fits, so 64K -> 128K -> 192K (whose first step is also a doubling)
// is +64K, and an echoing host's repeated size is "fixed", not "exact".
Growth classify_growth(const std::vector<RetryStep>& steps, int64_t& n) {
  n = 0;
  if (steps.empty()) return Growth::kNone;
  auto all = [&](auto pred) { return std::all_of(steps.begin(), steps.end(), pred); };
  if (all([](const RetryStep& s) { return s.next == s.offered; })) return Growth::kFixed;
  if (all([](const RetryStep& s) { return s.next == s.said && s.said > s.offered; })) return Growth::kExact;
  if (all([](const RetryStep& s) { return uint64_t(s.next) == 2ull * s.offered && s.offered; }))
    return Growth::kDoubling;
  const int64_t d = int64_t(steps.front().next) - steps.front().offered;
  if (d > 0 && all([&](const RetryStep& s) { return int64_t(s.next) - s.offered == d; })) {
    n = d;
    return Growth::kPlusN;
  }
  return Growth::kMixed;
}

Summary summarize(std::vector<double> ms) {
  Summary s;
  s.count = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.min = ms.front();
  s.max = ms.back();
  s.median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  return s;
}

const char* value_kind(const std::string& name) {
  if (iequals_prefix(name, "Global") && name.size() == 6) return "global";
  if (iequals_prefix(name, "Costly") && name.size() == 6) return "costly";
  if (iequals_prefix(name, "Counter")) return "counter";
  if (iequals_prefix(name, "Help")) return "help";
  if (iequals_prefix(name, "Foreign")) return "foreign";
  bool digits = false;
  for (char c : name) {
    if (std::isdigit(uint8_t(c)))
      digits = true;
    else if (c != ' ')
      return "other";
  }
  return digits ? "index-list" : "other";
}

std::vector<SessionDiagnosis> diagnose(const std::vector<CallEvent>& events) {
  std::vector<Reader> readers;
  std::unordered_map<uint64_t, size_t> index;
  for (const CallEvent& e : events) {
    if (e.is_host_event()) continue;  // no session's: `perfsim journal` lists them apart
    auto [it, fresh] = index.emplace(e.session, readers.size());
    if (fresh) readers.emplace_back();
    readers[it->second].add(e);
  }
  std::vector<SessionDiagnosis> out;
  for (Reader& r : readers) out.push_back(r.finish());
  return out;
}

nlohmann::json to_json(const SessionDiagnosis& d) {
  nlohmann::json steps = nlohmann::json::array(), loops = nlohmann::json::array();
  nlohmann::json offers = nlohmann::json::array();
  for (const RetryStep& s : d.steps) {
    steps.push_back({{"value", s.value},
                     {"offered", s.offered},
                     {"said", s.said},
                     {"next", s.next},
                     {"kind", step_name(classify_step(s))}});
    offers.push_back(s.next);
  }
  for (const Loop& l : d.loops) loops.push_back({{"value", l.value}, {"size", l.size}, {"offers", l.offers}});
  nlohmann::json per_value = nlohmann::json::object();
  for (const auto& [value, g] : d.value_growth) per_value[value] = {{"growth", growth_name(g.growth)}, {"n", g.n}};
  const Summary backoff = summarize(d.busy_backoff_ms);
  return {
      {"session", d.session},
      {"host", d.host},
      {"peer", d.peer},
      {"transport", transport_name(d.transport)},
      {"first_us", d.first_us},
      {"last_us", d.last_us},
      {"calls", d.calls},
      {"closed", d.closed},
      {"more_data_answers", d.more_data_answers},
      {"more_data_offers", offers},
      {"retry_steps", steps},
      {"growth", growth_name(d.growth)},
      {"growth_n", d.growth_n},
      {"value_growth", per_value},
      {"loops", loops},
      {"busy",
       {{"answers", d.busy_answers},
        {"retries", d.busy_retries},
        {"backoff",
         {{"count", backoff.count}, {"min_ms", backoff.min}, {"median_ms", backoff.median}, {"max_ms", backoff.max}}}}},
      {"values", d.values},
      {"value_kinds", d.kinds},
      {"handles",
       {{"opened", d.handles_opened},
        {"closed", d.handles_closed},
        {"all_closed", d.handles_opened == d.handles_closed}}},
      {"poll_interval", summary_json(d.poll_interval_ms)}};
}

std::string render_text(const std::vector<SessionDiagnosis>& sessions) {
  std::string out;
  for (const SessionDiagnosis& d : sessions) {
    out += fmt::format("session {}  host {}  peer {} ({})  {} call{} over {:.3f} s\n", d.session, d.host, d.peer,
                       transport_name(d.transport), d.calls, d.calls == 1 ? "" : "s",
                       double(d.last_us - d.first_us) / 1e6);
    if (d.closed)
      out += fmt::format("  closed without an answer: {} call{} (the host closed the connection: a reboot, a reset)\n",
                         d.closed, d.closed == 1 ? "" : "s");
    std::string offers;
    for (size_t i = 0; i < d.steps.size() && i < 12; ++i) offers += (i ? " " : "") + std::to_string(d.steps[i].next);
    if (d.steps.size() > 12) offers += fmt::format(" ... ({} in all)", d.steps.size());
    if (d.steps.empty() && d.more_data_answers == 0)
      out += "  buffer growth: none needed (no ERROR_MORE_DATA answer)\n";
    else if (d.steps.empty())
      out += fmt::format("  buffer growth: no retry after ERROR_MORE_DATA ({} answer{})\n", d.more_data_answers,
                         d.more_data_answers == 1 ? "" : "s");
    else if (d.growth == Growth::kPlusN)
      out += fmt::format("  buffer growth: +{} bytes  (offers after ERROR_MORE_DATA: {})\n", d.growth_n, offers);
    else
      out += fmt::format("  buffer growth: {}  (offers after ERROR_MORE_DATA: {})\n", growth_name(d.growth), offers);
    if (d.value_growth.size() > 1)
      for (const auto& [value, g] : d.value_growth)
        out += g.growth == Growth::kPlusN ? fmt::format("    {}: +{} bytes\n", value, g.n)
                                          : fmt::format("    {}: {}\n", value, growth_name(g.growth));
    for (const Loop& l : d.loops)
      out += fmt::format("  LOOP: {} offered {} bytes {} times in a row, each answered ERROR_MORE_DATA\n", l.value,
                         l.size, l.offers);
    if (d.busy_answers || d.busy_retries) {
      const Summary b = summarize(d.busy_backoff_ms);
      out += fmt::format("  ERROR_BUSY: {} answers, {} retries, back-off min {:.1f} / median {:.1f} / max {:.1f} ms\n",
                         d.busy_answers, d.busy_retries, b.min, b.median, b.max);
    }
    std::string vals;
    for (const auto& [name, n] : d.values) vals += fmt::format("{}{} x{}", vals.empty() ? "" : ", ", name, n);
    if (!vals.empty()) out += "  values asked: " + vals + "\n";
    out += fmt::format("  handles: {} opened, {} closed{}\n", d.handles_opened, d.handles_closed,
                       d.handles_opened == d.handles_closed ? "" : "  (NOT all closed)");
    if (!d.poll_interval_ms.empty()) {
      const Summary p = summarize(d.poll_interval_ms);
      out += fmt::format("  time between polls: min {:.1f} / median {:.1f} / max {:.1f} ms ({} intervals)\n", p.min,
                         p.median, p.max, p.count);
    }
  }
  return out;
}

}  // namespace perfsim::journal
