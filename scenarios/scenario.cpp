// Scenario files read with core/config.h (scenario.h).
#include "scenarios/scenario.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "replayer/faults.h"
#include "synth/spec.h"

namespace perfsim::scenarios {
namespace {

using config::Json;

// The part of `doc` under `path` as a document of its own, keeping the lines, so a synth spec
// inline in a scenario is read by synth's own reader and its errors still name the line.
config::Doc sub_doc(const config::Doc& doc, const std::string& path, const Json& tree) {
  config::Doc sub;
  sub.origin = doc.origin + " [" + path + "]";
  sub.root = tree;
  const std::string prefix = path + ".";
  for (const auto& [k, line] : doc.lines)
    if (k.rfind(prefix, 0) == 0) sub.lines[k.substr(prefix.size())] = line;
  return sub;
}

Status https_url(const config::Reader& r, const std::string& path, const std::string& url) {
  if (url.rfind("https://", 0) != 0 || url.size() <= 8)
    return r.fail(path, "expected an https:// URL of the public source, got \"" + url + "\"");
  return Status::Ok();
}

// [[diagnosis.call]] tables, in order.
Status read_calls(const config::Reader& r, const Json& d, std::vector<ExpectedCall>& out) {
  if (!d.contains("call")) return Status::Ok();
  const Json& calls = d["call"];
  if (!calls.is_array()) return r.type_error("diagnosis.call", "an array of tables ([[diagnosis.call]])", calls);
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string path = config::index("diagnosis.call", i);
    ExpectedCall c;
    Status s = r.keys(calls[i], path, {"op", "key", "value", "status", "max_bytes", "applied"});
    if (s.ok()) s = r.string(calls[i], path, "op", c.op);
    if (s.ok()) s = r.string(calls[i], path, "key", c.key);
    if (s.ok()) s = r.string(calls[i], path, "value", c.value);
    if (s.ok()) s = r.string(calls[i], path, "status", c.status);
    if (s.ok()) s = r.integer(calls[i], path, "max_bytes", c.max_bytes);
    if (s.ok()) s = r.string(calls[i], path, "applied", c.applied);
    if (!s.ok()) return s;
    out.push_back(std::move(c));
  }
  return Status::Ok();
}

// [diagnosis]: required of a built-in scenario (missing_keys), optional in a user's.
Status read_expected(const config::Reader& r, const Json& root, Expected& e) {
  if (!root.contains("diagnosis")) return Status::Ok();
  const Json& d = root["diagnosis"];
  Status s = r.keys(d, "diagnosis", {"text", "loop", "growth", "min_steps", "busy", "statuses", "call", "never_asked"});
  if (s.ok()) s = r.string(d, "diagnosis", "text", e.text);
  if (s.ok()) s = r.string(d, "diagnosis", "loop", e.loop);
  if (s.ok()) s = r.string(d, "diagnosis", "growth", e.growth);
  if (s.ok()) s = r.integer(d, "diagnosis", "min_steps", e.min_steps);
  if (s.ok()) s = r.boolean(d, "diagnosis", "busy", e.busy);
  if (s.ok()) s = r.strings(d, "diagnosis", "statuses", e.statuses);
  if (s.ok()) s = read_calls(r, d, e.calls);
  if (s.ok()) s = r.strings(d, "diagnosis", "never_asked", e.never_asked);
  static const char* const growths[] = {"", "fixed", "exact", "doubling", "plus-n", "mixed"};
  if (s.ok() && std::find(std::begin(growths), std::end(growths), e.growth) == std::end(growths))
    s = r.fail("diagnosis.growth", "expected one of fixed, exact, doubling, plus-n, mixed, got \"" + e.growth + "\"");
  return s;
}

// [expect]: optional; the keys it gives replace Handling's defaults.
Status read_handling(const config::Reader& r, const Json& root, Handling& h) {
  if (!root.contains("expect")) return Status::Ok();
  const Json& x = root["expect"];
  Status s = r.keys(x, "expect",
                    {"text", "data", "max_tries", "no_loop", "close_handles", "busy_backoff_ms", "max_busy_retries",
                     "values", "once", "exit", "no_diagnosis"});
  if (s.ok()) s = r.string(x, "expect", "text", h.text);
  if (s.ok()) s = r.boolean(x, "expect", "data", h.data);
  if (s.ok()) s = r.integer(x, "expect", "max_tries", h.max_tries);
  if (s.ok()) s = r.boolean(x, "expect", "no_loop", h.no_loop);
  if (s.ok()) s = r.boolean(x, "expect", "close_handles", h.close_handles);
  if (s.ok()) s = r.number(x, "expect", "busy_backoff_ms", h.busy_backoff_ms);
  if (s.ok()) s = r.integer(x, "expect", "max_busy_retries", h.max_busy_retries);
  if (s.ok()) s = r.strings(x, "expect", "values", h.values);
  if (s.ok()) s = r.strings(x, "expect", "once", h.once);
  if (s.ok()) s = r.string(x, "expect", "exit", h.exit);
  if (s.ok()) s = r.boolean(x, "expect", "no_diagnosis", h.no_diagnosis);
  if (s.ok()) {
    if (Status e = check_exit_expectation(h.exit); !e.ok()) s = r.fail("expect.exit", e.message());
  }
  return s;
}

// Every required key that is missing, in one error. A built-in scenario documents its bug (title,
// source, what the source says, the host's behaviour, the correct collector, the diagnosis); a
// user's needs only what serving and judging use: its name and hosts.
Status missing_keys(const config::Doc& doc) {
  const Json& root = doc.root;
  const bool builtin = doc.origin.rfind("builtin:", 0) == 0;
  std::vector<std::string> keys = {"name", "host"};
  if (builtin)
    keys.insert(keys.end(), {"title", "reproduces", "source", "source_says", "behaviour", "correct", "diagnosis"});
  std::string missing;
  for (const std::string& k : keys)
    if (!root.contains(k)) missing += (missing.empty() ? "" : ", ") + (k == "host" ? "[[host]]" : k);
  // A built-in scenario says what each table is about; a user's [expect] may give only the keys
  // that change (README.md: the others keep their defaults).
  for (const char* table : {"diagnosis", "expect"})
    if (builtin && root.contains(table) && root[table].is_object() && !root[table].contains("text"))
      missing += (missing.empty() ? "" : ", ") + std::string(table) + ".text";
  if (missing.empty()) return Status::Ok();
  return Status::InvalidArgument(
      fmt::format("{}: missing {} (required{})", doc.origin, missing,
                  builtin ? " of a built-in scenario" : ": the scenario's name and its hosts"));
}

Status read_host(const config::Reader& r, const config::Doc& doc, const Json& h, const std::string& path,
                 const BesideReader& beside, ScenarioHost& out) {
  Status s = r.keys(h, path,
                    {"listen", "capture", "spec", "synth", "timeline", "profile", "speed", "loop", "between", "quirks",
                     "event", "smb_allow", "smb_dialects"});
  out.fleet.listen = "127.0.0.1:0";
  if (s.ok()) s = r.string(h, path, "listen", out.fleet.listen);
  if (s.ok()) s = r.string(h, path, "timeline", out.fleet.timeline);
  if (s.ok()) s = r.string(h, path, "capture", out.capture);
  if (s.ok()) s = replayer::read_host_replay(r, h, path, out.fleet.replay);
  if (s.ok()) s = r.strings(h, path, "smb_allow", out.fleet.smb_allow);
  if (s.ok()) s = r.string(h, path, "smb_dialects", out.fleet.smb_dialects);
  if (!s.ok()) return s;
  const int sources = int(h.contains("capture")) + int(h.contains("spec")) + int(h.contains("synth"));
  if (sources != 1)
    return r.fail(path,
                  "needs exactly one of capture = \"FILE.perfcap\", spec = \"FILE.toml\" or a [host.synth] table");
  if (h.contains("synth")) {
    if (!h["synth"].is_object()) return r.type_error(config::join(path, "synth"), "a table (a synth spec)", h["synth"]);
    synth::Spec spec;
    if (Status st = synth::read_spec(sub_doc(doc, config::join(path, "synth"), h["synth"]), spec); !st.ok()) return st;
    out.spec = std::move(spec);
  } else if (h.contains("spec")) {
    std::string name, text, file;
    if (Status st = r.string(h, path, "spec", name); !st.ok()) return st;
    if (Status st = beside(name, text, file); !st.ok()) return r.fail(config::join(path, "spec"), st.message());
    config::Doc sd;
    const bool json = file.size() > 5 && file.substr(file.size() - 5) == ".json";
    Status st = json ? config::parse_json(text, file, sd) : config::parse_toml(text, file, sd);
    synth::Spec spec;
    if (st.ok()) st = synth::read_spec(sd, spec);
    if (!st.ok()) return st;
    out.spec = std::move(spec);
  }
  // A names file is the scenario's neighbour, read now (a built-in one has no file on disk).
  if (out.spec && !out.spec->names_file.empty()) {
    std::string file;
    if (Status st = beside(out.spec->names_file, out.spec->names_text, file); !st.ok())
      return r.fail(path, "names file: " + st.message());
    out.spec->names_file = file;
  }
  return Status::Ok();
}

}  // namespace

namespace {

// Each expectation --skip-expect can drop, and what dropping it leaves: the value that checks nothing.
struct Skippable {
  const char* name;
  void (*drop)(Handling&);
};
constexpr Skippable kSkippable[] = {
    {"data", [](Handling& h) { h.data = false; }},
    {"max_tries", [](Handling& h) { h.max_tries = 0; }},
    {"no_loop", [](Handling& h) { h.no_loop = false; }},
    {"close_handles", [](Handling& h) { h.close_handles = false; }},
    {"busy_backoff_ms", [](Handling& h) { h.busy_backoff_ms = 0; }},
    {"max_busy_retries", [](Handling& h) { h.max_busy_retries = 0; }},
    {"values", [](Handling& h) { h.values.clear(); }},
    {"once", [](Handling& h) { h.once.clear(); }},
    {"exit", [](Handling& h) { h.exit = "any"; }},
    {"no_diagnosis", [](Handling& h) { h.no_diagnosis = false; }},
};

}  // namespace

std::string expect_names() {
  std::string out;
  for (const Skippable& s : kSkippable) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

Status skip_expect(const std::string& name, Handling& h) {
  for (const Skippable& s : kSkippable)
    if (name == s.name) {
      s.drop(h);
      return Status::Ok();
    }
  return Status::InvalidArgument(fmt::format("no expectation '{}': one of {}", name, expect_names()));
}

Status check_exit_expectation(const std::string& exit) {
  if (exit == "zero" || exit == "nonzero" || exit == "any") return Status::Ok();
  return Status::InvalidArgument("expected \"zero\", \"nonzero\" or \"any\", got \"" + exit + "\"");
}

std::string exit_unmet(const std::string& exit, int code) {
  if (code < 0) return "it did not exit (killed by a signal)";
  if (exit == "zero" && code != 0) return "the scenario expects exit 0 (perfsim check --exit any accepts any)";
  if (exit == "nonzero" && code == 0) return "the scenario expects a non-zero exit";
  return "";
}

Status read_scenario(const config::Doc& doc, const BesideReader& beside, Scenario& out) {
  const config::Reader r(doc);
  const Json& root = doc.root;
  Scenario sc;
  sc.origin = doc.origin;
  Status s = r.keys(root, "",
                    {"name", "title", "reproduces", "source", "see_also", "source_says", "behaviour", "correct",
                     "clients", "smb", "host", "fault", "diagnosis", "expect"});
  if (s.ok()) s = missing_keys(doc);
  if (s.ok()) s = r.string(root, "", "name", sc.name);
  if (s.ok()) s = r.string(root, "", "title", sc.title);
  if (s.ok()) s = r.string(root, "", "reproduces", sc.reproduces);
  if (s.ok()) s = r.string(root, "", "source", sc.source);
  if (s.ok() && root.contains("source")) s = https_url(r, "source", sc.source);
  if (s.ok()) s = r.strings(root, "", "see_also", sc.see_also);
  for (size_t i = 0; s.ok() && i < sc.see_also.size(); ++i)
    s = https_url(r, config::index("see_also", i), sc.see_also[i]);
  if (s.ok()) s = r.string(root, "", "source_says", sc.source_says);
  if (s.ok()) s = r.string(root, "", "behaviour", sc.behaviour);
  if (s.ok()) s = r.string(root, "", "correct", sc.correct);
  if (s.ok()) s = r.boolean(root, "", "smb", sc.smb);
  if (!s.ok()) return s;
  if (sc.name.empty() || sc.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    return r.fail("name", "expected lower-case letters, digits and '-' (it is typed on the command line), got \"" +
                              sc.name + "\"");
  if (root.contains("clients")) {
    const Json& c = root["clients"];
    if (Status st = r.keys(c, "clients", {"python3-samba", "impacket", "typeperf", "get-counter", "perfsim"}); !st.ok())
      return st;
    for (auto it = c.begin(); it != c.end(); ++it)
      if (Status st = r.string(c, "clients", it.key().c_str(), sc.clients[it.key()]); !st.ok()) return st;
  }
  const Json& hosts = root.contains("host") ? root["host"] : Json::array();
  if (!hosts.is_array() || hosts.empty()) return r.fail("host", "no [[host]] tables (each needs a capture or a spec)");
  for (size_t i = 0; i < hosts.size(); ++i) {
    ScenarioHost h;
    if (Status st = read_host(r, doc, hosts[i], config::index("host", i), beside, h); !st.ok()) return st;
    sc.hosts.push_back(std::move(h));
  }
  if (root.contains("fault")) {
    // Checked now, with the file's lines, so a bad plan is found by `perfsim scenarios`, not by serve.
    config::Doc plan = doc;
    plan.root = {{"fault", root["fault"]}};
    std::shared_ptr<const replayer::FaultPlan> unused;
    if (Status st = replayer::fault_plan_of(plan, unused); !st.ok()) return st;
    sc.faults = root["fault"];
  }
  if (Status st = read_expected(r, root, sc.expected); !st.ok()) return st;
  if (Status st = read_handling(r, root, sc.handling); !st.ok()) return st;
  out = std::move(sc);
  return Status::Ok();
}

nlohmann::json to_json(const Handling& h) {
  nlohmann::json j = {{"text", h.text},
                      {"data", h.data},
                      {"max_tries", h.max_tries},
                      {"no_loop", h.no_loop},
                      {"close_handles", h.close_handles}};
  if (h.busy_backoff_ms > 0) j["busy_backoff_ms"] = h.busy_backoff_ms;
  if (h.max_busy_retries) j["max_busy_retries"] = h.max_busy_retries;
  if (!h.values.empty()) j["values"] = h.values;
  if (!h.once.empty()) j["once"] = h.once;
  j["exit"] = h.exit;
  if (h.no_diagnosis) j["no_diagnosis"] = true;
  return j;
}

std::string handling_text(const Handling& h) {
  std::string out = h.text.empty() ? "" : h.text + " (";
  std::string rules;
  const auto add = [&rules](const std::string& r) { rules += (rules.empty() ? "" : "; ") + r; };
  if (h.data) add("gets perf data");
  if (h.max_tries) add(fmt::format("past ERROR_MORE_DATA within {} tries", h.max_tries));
  if (h.no_loop) add("no loop on one size");
  if (h.close_handles) add("closes its handles");
  if (h.busy_backoff_ms > 0) add(fmt::format("retries ERROR_BUSY after >= {} ms", h.busy_backoff_ms));
  if (h.max_busy_retries) add(fmt::format("at most {} ERROR_BUSY retries", h.max_busy_retries));
  for (const std::string& v : h.values) add("asks " + v);
  for (const std::string& st : h.once) add(st + " at most once");
  if (h.exit != "any") add(h.exit == "zero" ? "exits 0" : "exits non-zero");
  if (h.no_diagnosis) add("does not show the bug ([diagnosis])");
  return out + rules + (h.text.empty() ? "" : ")");
}

nlohmann::json to_json(const Scenario& s) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const ScenarioHost& h : s.hosts) {
    nlohmann::json j = {{"listen", h.fleet.listen}};
    if (!h.capture.empty()) j["capture"] = h.capture;
    if (h.spec) j["synth"] = {{"name", synth::host_name(*h.spec)}, {"profile", h.spec->profile}};
    if (!h.fleet.replay.profile.empty()) j["profile"] = h.fleet.replay.profile;
    if (!h.fleet.timeline.empty()) j["timeline"] = h.fleet.timeline;
    nlohmann::json q = nlohmann::json::array();
    for (const replayer::QuirkSetting& qs : h.fleet.replay.quirks) {
      std::string t = qs.name + (qs.on ? "" : "=off");
      for (const auto& [k, v] : qs.params) t += (t.find(':') == std::string::npos ? ":" : ",") + k + "=" + v;
      q.push_back(t);
    }
    j["quirks"] = q;
    if (!h.fleet.replay.events.empty()) {
      nlohmann::json ev = nlohmann::json::array();
      for (const replayer::HostEvent& x : h.fleet.replay.events) ev.push_back(replayer::to_json(x));
      j["events"] = ev;
    }
    if (!h.fleet.smb_allow.empty()) j["smb_allow"] = h.fleet.smb_allow;
    hosts.push_back(j);
  }
  nlohmann::json e = {{"text", s.expected.text}};
  if (!s.expected.loop.empty()) e["loop"] = s.expected.loop;
  if (!s.expected.growth.empty()) e["growth"] = s.expected.growth;
  if (s.expected.min_steps) e["min_steps"] = s.expected.min_steps;
  if (s.expected.busy) e["busy"] = true;
  if (!s.expected.statuses.empty()) e["statuses"] = s.expected.statuses;
  if (!s.expected.never_asked.empty()) e["never_asked"] = s.expected.never_asked;
  for (const ExpectedCall& c : s.expected.calls)
    e["calls"].push_back({{"op", c.op},
                          {"key", c.key},
                          {"value", c.value},
                          {"status", c.status},
                          {"max_bytes", c.max_bytes},
                          {"applied", c.applied}});
  return {{"name", s.name},
          {"title", s.title},
          {"reproduces", s.reproduces},
          {"source", s.source},
          {"see_also", s.see_also},
          {"source_says", s.source_says},
          {"behaviour", s.behaviour},
          {"correct", s.correct},
          {"clients", s.clients},
          {"smb", s.smb},
          {"origin", s.origin},
          {"hosts", hosts},
          {"faults", s.faults.is_null() ? nlohmann::json::array() : s.faults},
          {"diagnosis", e},
          {"expect", to_json(s.handling)}};
}

std::string render_text(const Scenario& s) {
  const nlohmann::json j = to_json(s);
  // A user's scenario need not document its bug: a field it leaves out gets no empty line.
  const auto field = [](const char* label, const std::string& text) {
    return text.empty() ? std::string() : fmt::format("{}: {}\n", label, text);
  };
  std::string out = s.title.empty() ? s.name + "\n" : fmt::format("{}: {}\n", s.name, s.title);
  std::string about = field("Reproduces", s.reproduces) + field("Source", s.source);
  for (const std::string& u : s.see_also) about += fmt::format("See also: {}\n", u);
  about += field("The source says", s.source_says);
  const std::string host = field("Host behaviour", s.behaviour) + field("A correct collector", s.correct) +
                           field("Journal diagnosis", s.expected.text);
  out += (about.empty() ? "" : "\n" + about) + (host.empty() ? "" : "\n" + host);
  out += fmt::format("Checked per session (perfsim check): {}\n", handling_text(s.handling));
  out += "\nHosts:\n";
  for (const nlohmann::json& h : j["hosts"]) out += "  " + h.dump() + "\n";
  if (!s.faults.is_null()) out += "Faults: " + s.faults.dump() + "\n";
  out += fmt::format("\nServe it: perfsim serve --scenario {}{}\n", s.name, s.smb ? " --smb (as root)" : "");
  for (const auto& [client, how] : s.clients) out += fmt::format("  {}: {}\n", client, how);
  return out;
}

}  // namespace perfsim::scenarios
