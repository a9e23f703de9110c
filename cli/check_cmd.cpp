// `perfsim check --scenario NAME|--capture F -- COMMAND ARGS...`: a collector's test in one
// command, for CI (issue 34). Serves the host(s) in this process (serve/run.h, as `perfsim serve`
// does) on free loopback ports, runs the collector with the endpoint in its environment and
// arguments, waits for it with a bound, then judges every collector session of the run's journal
// against the scenario's [expect] (scenarios/verdict.h). Exit 0: every session handled it; 1: one
// did not, no session was seen, or the command failed or ran out of time; 2: usage.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string_view>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "core/subprocess.h"
#include "journal/recorder.h"
#include "captures/samples.h"
#include "scenarios/catalog.h"
#include "scenarios/values.h"
#include "replayer/events.h"
#include "replayer/host.h"
#include "scenarios/verdict.h"
#include "serve/run.h"

namespace perfsim::cli {
namespace {

struct CheckOptions {
  std::string scenario;               // --scenario NAME, or
  std::vector<std::string> captures;  // --capture F (repeatable): a host each, the generic expectations, and/or
  std::string fleet;                  // --fleet F: its hosts (after the scenario's), as serve's
  std::vector<std::string> listen;    // --listen A:P: moves the scenario's hosts, or places the captures, in order
  std::vector<std::string> quirks;    // --quirk, as serve's: after a scenario host's own
  std::string faults;                 // --faults F: replaces the scenario's fault plan
  std::string exit;                   // --exit zero|nonzero|any: replaces [expect] exit
  std::vector<std::string> skip_expect;
  std::vector<std::string> scenario_dirs;
  std::string smb;                    // --smb[=PORT]: "" off, "default" a free port
  bool smb_guest = false;             // --smb-guest, as perfsim serve's
  bool smb_anonymous_winreg = false;  // --smb-anonymous-winreg, as perfsim serve's
  std::string user;                   // --user NAME:PASSWORD: an account, and PERFSIM_USER/PERFSIM_PASSWORD
  double timeout_s = 60;
  bool json = false;
  std::string junit;    // JUnit XML file
  std::string journal;  // also the run's journal as JSON lines (a CI artifact; perfsim journal FILE)
  // file: $PERFSIM_VALUES_OUT; stdout: the collector's value lines there; "" (not given): the file, if any
  std::string values_from;
  double tolerance_pct = scenarios::kDefaultTolerance * 100;
  std::optional<double> speed;       // --speed X: the hosts' realtime pace (a scenario's events come sooner)
  std::vector<std::string> command;  // after --
};

// Most of a collector's output kept (values read, JUnit's system-out): a runaway one is cut.
constexpr size_t kMaxOutputBytes = size_t(16) << 20;

// What the run gives the collector: the first host's endpoint, every endpoint, the account.
struct Endpoint {
  std::string addr, port, smb_port, endpoints, user, password;
  std::string values_out;  // PERFSIM_VALUES_OUT
};

// A directory of the run's own (the collector's output, its values file), removed at the end.
struct WorkDir {
  std::string path;
  WorkDir() {
    std::string t = (std::filesystem::temp_directory_path() / "perfsim-check-XXXXXX").string();
    if (::mkdtemp(t.data())) path = t;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// At most kMaxOutputBytes of `path` ("" when it is missing); `cut` says whether there was more.
std::string read_capped(const std::string& path, bool& cut) {
  std::ifstream f(path, std::ios::binary);
  std::string out(kMaxOutputBytes + 1, '\0');
  f.read(out.data(), std::streamsize(out.size()));
  out.resize(size_t(f.gcount()));
  cut = out.size() > kMaxOutputBytes;
  if (cut) out.resize(kMaxOutputBytes);
  return out;
}

// A port nothing listens on now, for smbd (which binds a port it is given, not 0).
uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// {addr} {port} {smb_port} {endpoints} in the collector's arguments.
std::vector<std::string> substitute(const std::vector<std::string>& args, const Endpoint& e) {
  std::vector<std::string> out;
  for (std::string a : args) {
    a = replace_all(a, "{addr}", e.addr);
    a = replace_all(a, "{port}", e.port);
    a = replace_all(a, "{smb_port}", e.smb_port);
    out.push_back(replace_all(a, "{endpoints}", e.endpoints));
  }
  return out;
}

std::vector<std::string> environment(const Endpoint& e) {
  std::vector<std::string> env = {"PERFSIM_ADDR=" + e.addr, "PERFSIM_PORT=" + e.port,
                                  "PERFSIM_ENDPOINTS=" + e.endpoints, "PERFSIM_VALUES_OUT=" + e.values_out};
  if (!e.smb_port.empty()) env.push_back("PERFSIM_SMB_PORT=" + e.smb_port);
  if (!e.user.empty()) {
    env.push_back("PERFSIM_USER=" + e.user);
    env.push_back("PERFSIM_PASSWORD=" + e.password);
  }
  return env;
}

Endpoint endpoint_of(const serve::ServeRun& run, const CheckOptions& o) {
  Endpoint e;
  for (const serve::BoundHost& b : run.bound()) {
    if (e.addr.empty()) {
      e.addr = b.address;
      e.port = std::to_string(b.port);
    }
    e.endpoints += (e.endpoints.empty() ? "" : " ") + b.endpoint;
  }
  if (!o.smb.empty()) e.smb_port = std::to_string(run.smb_port());
  if (const size_t colon = o.user.find(':'); colon != std::string::npos) {
    e.user = o.user.substr(0, colon);
    e.password = o.user.substr(colon + 1);
  }
  return e;
}

// What the collector did: why the command failed ("" when it exited 0) and its output.
struct CollectorRun {
  std::string failure;
  std::string out, err;  // its stdout and stderr (at most kMaxOutputBytes each)
};

// The collector as a person names it: the script an interpreter runs ("perf_collector.py"), not
// the interpreter ("/usr/bin/python3"); "sh -c" for inline code.
std::string script_name(const std::vector<std::string>& command) {
  static const std::vector<std::string> interpreters = {"python", "python3", "sh",   "bash", "dash",
                                                        "perl",   "ruby",    "node", "pwsh", "env"};
  const auto interpreter = [](const std::string& name) {
    return std::any_of(interpreters.begin(), interpreters.end(), [&](const std::string& i) {
      return name == i || (i == "python3" && name.rfind("python3.", 0) == 0);  // python3.11
    });
  };
  const std::string first = std::filesystem::path(command.front()).filename().string();
  if (!interpreter(first)) return first;
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string name = std::filesystem::path(command[i]).filename().string();
    if (command[i] == "-c") return first + " -c";
    if (!name.empty() && command[i].front() != '-' && !interpreter(name)) return name;  // env python3 x.py: x.py
  }
  return first;
}

// Runs the collector to its end or the timeout (then kills its process group): "" when it
// exited as `exit` expects, else why the command failed. Its stdout and stderr go to files in `dir`.
std::string run_collector(const CheckOptions& o, const std::string& exit, const Endpoint& e, const std::string& dir) {
  subprocess::Options so;
  so.env = environment(e);
  so.new_session = true;             // the timeout's kill reaches what the collector forked
  so.parent_death_signal = SIGTERM;  // and a killed perfsim check takes it along
  so.out = so.err = subprocess::Stream::kFile;
  so.out_path = dir + "/stdout";
  so.err_path = dir + "/stderr";
  subprocess::Child child;
  if (Status s = subprocess::start(substitute(o.command, e), so, child); !s.ok()) return s.message();
  subprocess::ExitStatus st;
  const auto bound = std::chrono::milliseconds(int64_t(o.timeout_s * 1000));
  if (!subprocess::wait_for(child, bound, st)) {
    subprocess::stop(child, std::chrono::milliseconds(2000), true);
    return fmt::format("{} did not finish within {} s (killed)", script_name(o.command), o.timeout_s);
  }
  const std::string why = scenarios::exit_unmet(exit, st.signal ? -1 : st.code);
  return why.empty() ? "" : fmt::format("{} ended with {}: {}", script_name(o.command), subprocess::describe(st), why);
}

// The last non-blank line of `text`, at most 200 bytes of it, not cut inside a UTF-8 sequence.
std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  size_t n = std::min<size_t>(end + 1 - start, 200);
  while (n < end + 1 - start && n > 0 && (uint8_t(text[start + n]) & 0xc0) == 0x80) --n;  // a continuation byte
  return text.substr(start, n);
}

// The collector's output, passed on after it ended: stdout to perfsim's (to stderr with --json,
// whose stdout is the verdicts), stderr to stderr.
CollectorRun collector_output(const CheckOptions& o, const std::string& dir, std::string failure) {
  CollectorRun r{std::move(failure), {}, {}};
  bool cut_out = false, cut_err = false;
  r.out = read_capped(dir + "/stdout", cut_out);
  r.err = read_capped(dir + "/stderr", cut_err);
  fmt::print(o.json ? stderr : stdout, "{}{}", r.out, cut_out ? "\n[collector stdout cut at 16 MiB]\n" : "");
  fmt::print(stderr, "{}{}", r.err, cut_err ? "\n[collector stderr cut at 16 MiB]\n" : "");
  std::fflush(stdout);
  // A failed collector's own last word (a Python traceback ends with the exception) names what it
  // tripped on where the journal cannot see it: a name table's content, its parser's mistake.
  if (const std::string last = last_line(r.err); !r.failure.empty() && !last.empty())
    r.failure += fmt::format("; its last line on stderr: {}", last);
  return r;
}

serve::Config serve_config(const CheckOptions& o, const std::shared_ptr<journal::Recorder>& rec) {
  serve::Config c;
  c.scenario = o.scenario;
  c.scenario_dirs = o.scenario_dirs;
  c.fleet = o.fleet;
  c.quirks = o.quirks;
  c.faults = o.faults;
  c.listen = o.listen;  // a scenario's hosts moved, in order
  if (!o.captures.empty()) {
    c.listen.clear();
    for (size_t i = 0; i < o.captures.size(); ++i)
      c.listen.push_back((i < o.listen.size() ? o.listen[i] : "127.0.0.1:0") + "=" + o.captures[i]);
  }
  c.speed = o.speed;
  c.smb = o.smb;
  c.smb_guest = o.smb_guest;
  c.smb_anonymous_winreg = o.smb_anonymous_winreg;
  if (!o.user.empty()) c.users = {o.user};
  c.recorder = rec;
  c.handle_signals = false;
  c.log = [](std::string_view) {};  // the verdicts are the output; per-connection lines are noise in CI
  return c;
}

struct Outcome {
  std::string suite;
  std::string command_failure;  // the command's, or "no collector session" when none was seen
  std::vector<scenarios::SessionVerdict> verdicts;
  std::string out, err;        // the collector's output
  std::string values_failure;  // the values could not be read (a bad line)
  std::vector<scenarios::ValueVerdict> values;
  std::vector<scenarios::EventVerdict> events;
  double seconds = 0;
  bool failed() const {
    if (!command_failure.empty() || !values_failure.empty()) return true;
    for (const auto& v : verdicts)
      if (!v.handled()) return true;
    for (const auto& v : values)
      if (!v.ok) return true;
    return false;
  }
  // The first event no session outlived, or null.
  const scenarios::EventVerdict* not_exercised() const {
    for (const auto& e : events)
      if (!e.exercised) return &e;
    return nullptr;
  }
  // FAIL before NOT EXERCISED: a failure is news whether or not the event came.
  std::string verdict() const { return failed() ? "FAIL" : not_exercised() ? "NOT EXERCISED" : "PASS"; }
  bool passed() const { return verdict() == "PASS"; }
};

// Each host's events and where its timeline stands, taken when the collector has ended (before
// the run stops), so each event's moment is known in wall-clock time whether it came or not.
struct HostEvents {
  std::string host;
  bool step = false;     // a step timeline: positions move with answers, not with time
  int64_t start_us = 0;  // realtime: when the timeline was at 0 (wall clock, UTC us)
  double speed = 1;
  int64_t now_100ns = 0;                                // the position now
  std::vector<std::pair<std::string, int64_t>> events;  // kind, position (recorded 100 ns)
};

std::vector<HostEvents> host_events(const serve::ServeRun& run) {
  std::vector<HostEvents> out;
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  for (const serve::PlannedHost& p : run.hosts()) {
    if (!p.host || !p.host->events() || p.host->options().mode == replayer::TimelineMode::kFrozen) continue;
    HostEvents h;
    h.host = p.host->name();
    h.step = p.host->options().mode == replayer::TimelineMode::kStep;
    h.speed = h.step ? 1 : p.host->timeline_speed();
    h.now_100ns = p.host->position_of(p.host->now());
    h.start_us = now_us - int64_t(double(h.now_100ns) / 10 / h.speed);
    for (const replayer::PreparedEvent& e : p.host->events()->events)
      h.events.emplace_back(std::string(replayer::event_row(e.event.kind).name), e.at_100ns);
    out.push_back(std::move(h));
  }
  return out;
}

// The realtime hosts' events in wall-clock time, so a wrong value whose answers span one is told so.
std::vector<scenarios::EventMoment> event_moments(const std::vector<HostEvents>& hosts) {
  std::vector<scenarios::EventMoment> out;
  for (const HostEvents& h : hosts)
    if (!h.step)
      for (const auto& [kind, at] : h.events)
        out.push_back({h.host, kind, h.start_us + int64_t(double(at) / 10 / h.speed), double(at) / 1e7 / h.speed});
  return out;
}

// Whether some session met each event: its host's calls came before it and at or after it.
std::vector<scenarios::EventVerdict> judge_events(const std::vector<HostEvents>& hosts,
                                                  const std::vector<journal::CallEvent>& calls) {
  std::vector<scenarios::EventVerdict> out;
  for (const HostEvents& h : hosts)
    for (size_t i = 0; i < h.events.size(); ++i) {
      const auto& [kind, at] = h.events[i];
      scenarios::EventVerdict v;
      if (h.step) {  // no clock to compare calls with: the timeline's own position says
        v = {h.host, kind, 0, double(at) / 1e7, at <= h.now_100ns, ""};
        if (!v.exercised)
          v.why = fmt::format(
              "the {} is at timeline position {:g} s (a step timeline moves one sample per answer); the "
              "collector's answers reached {:g} s: poll past it",
              kind, v.at_s, double(h.now_100ns) / 1e7);
      } else {
        v = scenarios::judge_event(h.host, kind, double(at) / 1e7 / h.speed, h.start_us, calls);
      }
      v.index = uint32_t(i + 1);
      out.push_back(std::move(v));
    }
  return out;
}

// The collector's reported values ($PERFSIM_VALUES_OUT, or its stdout's value lines), judged
// against the answers each session got; the names of each host from its capture (Counter 009).
void judge_values(const CheckOptions& o, const serve::ServeRun& run, const journal::AnswerStore& answers,
                  const std::string& values_file, const CollectorRun& c,
                  const std::vector<scenarios::EventMoment>& events, Outcome& r) {
  std::vector<scenarios::ReportedValue> reported;
  bool cut = false;
  const bool from_stdout = o.values_from == "stdout";
  const std::string text = from_stdout ? c.out : read_capped(values_file, cut);
  if (cut) {
    r.values_failure = "$PERFSIM_VALUES_OUT is over 16 MiB";
    return;
  }
  if (Status s =
          scenarios::parse_reported(text, from_stdout ? "stdout" : "$PERFSIM_VALUES_OUT", !from_stdout, reported);
      !s.ok()) {
    r.values_failure = s.message();
    return;
  }
  // Asked for values and given none: nothing was judged, which is no pass.
  if (reported.empty() && !o.values_from.empty()) {
    r.values_failure = scenarios::no_values(text, from_stdout ? "stdout" : "$PERFSIM_VALUES_OUT");
    return;
  }
  const auto names = [&run](const std::string& host) {
    for (const serve::PlannedHost& h : run.hosts())
      if (h.host && h.host->name() == host) return captures::counter_names(h.host->capture(), "009");
    return std::map<uint32_t, std::string>();
  };
  r.values = scenarios::judge_values(reported, answers.sessions(), names, o.tolerance_pct / 100, events);
}

void print(const CheckOptions& o, const Outcome& r, const std::string& expect) {
  size_t handled = 0;
  for (const auto& v : r.verdicts) handled += v.handled() ? 1 : 0;
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : r.verdicts) list.push_back(scenarios::to_json(v));
    nlohmann::json events = nlohmann::json::array();
    for (const auto& v : r.events) events.push_back(scenarios::to_json(v));
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : r.values) values.push_back(scenarios::to_json(v));
    fmt::print("{}\n", json_text(nlohmann::json{{"suite", r.suite},
                                                {"expect", expect},
                                                {"passed", r.passed()},
                                                {"verdict", r.verdict()},
                                                {"command_failure", r.command_failure},
                                                {"sessions", std::move(list)},
                                                {"values", std::move(values)},
                                                {"values_failure", r.values_failure},
                                                {"events", std::move(events)},
                                                {"handled", handled},
                                                {"seconds", r.seconds}}));
    return;
  }
  fmt::print("perfsim check {}: a correct collector {}\n", r.suite, expect);
  for (const auto& v : r.verdicts) fmt::print("{}\n", scenarios::render_text(v));
  size_t right = 0;
  for (const auto& v : r.values) {
    right += v.ok ? 1 : 0;
    fmt::print("{}\n", scenarios::render_text(v));
  }
  for (const auto& v : r.events) fmt::print("{}\n", scenarios::render_text(v));
  if (!r.values_failure.empty()) fmt::print("values: {}\n", r.values_failure);
  if (!r.command_failure.empty()) fmt::print("collector command: {}\n", r.command_failure);
  const std::string values = !r.values.empty()       ? fmt::format("; {} of {} values right", right, r.values.size())
                             : o.values_from.empty() ? ""
                                                     : "; 0 values found";
  const scenarios::EventVerdict* missed = r.not_exercised();
  fmt::print("{}: {} of {} sessions handled it{}{}{}\n", r.verdict(), handled, r.verdicts.size(), values,
             r.command_failure.empty() ? "" : "; " + r.command_failure, missed ? "; " + missed->why : "");
}

// The scenario's name, else the captures' and the fleet's file names.
std::string suite_name(const CheckOptions& o) {
  if (!o.scenario.empty()) return o.scenario;
  std::string out;
  for (const std::string& c : o.captures)
    out += (out.empty() ? "" : " ") + std::filesystem::path(c).filename().string();
  if (!o.fleet.empty()) out += (out.empty() ? "" : " ") + std::filesystem::path(o.fleet).filename().string();
  return out;
}

int run_check(const CheckOptions& o) {
  if (!o.scenario.empty() && !o.captures.empty())
    return fail("check", "give --scenario NAME or --capture F.perfcap (repeatable), not both", kExitUsage);
  if (o.scenario.empty() && o.captures.empty() && o.fleet.empty())
    return fail("check", "give --scenario NAME, --capture F.perfcap or --fleet F.toml, then -- COMMAND ARGS",
                kExitUsage);
  if (!o.captures.empty() && o.listen.size() > o.captures.size())
    return fail("check",
                fmt::format("{} --listen for {} --capture: give at most one --listen per capture, in order",
                            o.listen.size(), o.captures.size()),
                kExitUsage);
  if (!(o.timeout_s > 0)) return fail("check", "--timeout must be above 0 seconds", kExitUsage);
  if (!(o.tolerance_pct >= 0))
    return fail("check", "--tolerance is a percentage >= 0 (0.01 is 0.01 % relative)", kExitUsage);
  scenarios::Scenario sc;  // --capture, --fleet: no scenario, Handling's defaults
  if (!o.scenario.empty())
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok())
      return fail("check", s.message(), kExitUsage);
  for (const std::string& name : o.skip_expect)
    if (Status s = scenarios::skip_expect(name, sc.handling); !s.ok())
      return fail("check", "--skip-expect: " + s.message(), kExitUsage);
  if (!o.exit.empty()) sc.handling.exit = o.exit;
  std::shared_ptr<journal::Recorder> rec;
  journal::RecorderOptions ro;
  ro.journal_size = 200000;  // every call of a looping collector's bounded run
  ro.journal_file = o.journal;
  ro.keep_answers = true;  // the values the collector reports are judged against them
  if (Status s = journal::Recorder::create(ro, rec); !s.ok()) return fail("check", s.message());
  CheckOptions opts = o;
  if (opts.smb == "default") opts.smb = std::to_string(free_port());
  const auto t0 = std::chrono::steady_clock::now();
  Outcome r;
  r.suite = suite_name(o);
  const WorkDir dir;
  if (dir.path.empty())
    return fail("check", "cannot make a work directory under " + std::filesystem::temp_directory_path().string());
  {
    serve::ServeRun run;
    if (serve::Failure f = run.run(serve_config(opts, rec)); !f.ok())
      return fail("check", f.message, f.usage ? kExitUsage : kExitFailure);
    Endpoint e = endpoint_of(run, opts);
    e.values_out = dir.path + "/values";
    const CollectorRun c = collector_output(o, dir.path, run_collector(opts, sc.handling.exit, e, dir.path));
    r.command_failure = c.failure;
    r.out = c.out;
    r.err = c.err;
    const std::vector<HostEvents> events = host_events(run);
    run.stop();  // every call answered is journaled, every answer kept
    r.events = judge_events(events, rec->journal()->query({}));
    judge_values(o, run, *rec->answers(), e.values_out, c, event_moments(events), r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.verdicts = scenarios::judge(sc.handling, sc.expected, rec->journal()->query({}));
  if (r.verdicts.empty() && r.command_failure.empty())
    r.command_failure = "no collector session reached the host(s)";
  else if (r.verdicts.empty())
    r.command_failure += "; no collector session reached the host(s)";
  print(o, r, scenarios::handling_text(sc.handling));
  if (!o.junit.empty()) {
    std::ofstream f(o.junit, std::ios::binary | std::ios::trunc);
    f << scenarios::junit_xml({r.suite, script_name(o.command), r.command_failure, r.out, r.err, r.verdicts, r.values,
                               r.values_failure, r.events, r.seconds});
    if (!f.flush()) return fail("check", "cannot write --junit " + o.junit);
  }
  return r.passed() ? kExitOk : kExitFailure;
}

}  // namespace

void add_check(CLI::App& app, int& rc) {
  auto o = std::make_shared<CheckOptions>();
  CheckOptions& check = *o;
  auto* c = app.add_subcommand("check",
                               "Test a collector: serve a scenario's host(s), run COMMAND against them, judge every "
                               "collector session (exit 0 PASS; 1 FAIL or NOT EXERCISED; 2 usage)");
  // What the last line's verdict means, with an example of each (scenarios/README.md, "Verdicts").
  c->footer(
      "Verdicts (the last line; exit 0 for PASS only):\n"
      "  PASS: every session handled it, every value reported is right, and the collector polled across every\n"
      "  event of the scenario (a reboot, a wrap, ...):\n"
      "    PASS: 1 of 1 sessions handled it; 1 of 1 values right\n"
      "  FAIL: a session missed an expectation or shows the bug the scenario catches, a value is wrong, values\n"
      "  were asked (--values-from) and none was found, no session reached a host, or the command failed:\n"
      "    session 1 (APP-GROUPS01, 127.0.0.1:50712, tcp, 5 calls): NOT handled: shows the bug: reads only the\n"
      "    legacy Processor object (238), ...\n"
      "    FAIL: 0 of 1 sessions handled it; 1 of 1 values right\n"
      "  NOT EXERCISED: nothing failed, but no session outlived one of the scenario's events, so how the\n"
      "  collector handles it was not seen (--speed 10 brings it ten times closer):\n"
      "    NOT EXERCISED: 1 of 1 sessions handled it; the reboot is at 10 s; the collector stopped at 0.3 s: poll\n"
      "    past it");
  c->add_option("--scenario", check.scenario, "The field-bug scenario to serve and judge against (perfsim scenarios)");
  c->add_option("--capture", check.captures,
                "Serve this capture instead (repeatable: a host each), judged by the generic expectations")
      ->check(input_file());
  c->add_option("--fleet", check.fleet, "Also serve a fleet file's hosts (perfsim serve --fleet), after the scenario's")
      ->check(input_file());
  c->add_option("--listen", check.listen,
                "ADDR:PORT (repeatable, port 0: a free one): moves the scenario's hosts, or places the captures, in "
                "order");
  c->add_option("--quirk", check.quirks,
                "NAME[=on|off][:PARAM=VALUE,...] for every host, as perfsim serve's; after a scenario host's own "
                "(--quirk slow-global:ms=5 shortens a scenario)");
  c->add_option("--faults", check.faults, "A fault plan (TOML) replacing the scenario's, as perfsim serve's")
      ->check(input_file());
  c->add_option("--exit", check.exit,
                "The collector's exit a correct one gives: zero, nonzero or any (default: the scenario's [expect] "
                "exit, else zero)")
      ->check(CLI::IsMember({"zero", "nonzero", "any"}));
  c->add_option("--skip-expect", check.skip_expect,
                "Drop one expectation of the scenario's [expect] (repeatable): " + scenarios::expect_names());
  c->add_option("--scenario-dir", check.scenario_dirs, "A directory of your own scenario files (repeatable)")
      ->check(input_dir());
  c->add_option("--smb", check.smb,
                "Also serve the hosts over SMB through a private smbd (root only) on PORT (a free one without a "
                "value): PERFSIM_SMB_PORT, {smb_port}")
      ->expected(0, 1)
      ->default_str("default");
  c->add_flag("--smb-guest", check.smb_guest,
              "With --smb: enable every host's Guest account (perfsim serve --smb-guest)");
  c->add_flag("--smb-anonymous-winreg", check.smb_anonymous_winreg,
              "With --smb: let null sessions open \\PIPE\\winreg (perfsim serve --smb-anonymous-winreg; Windows "
              "refuses them by default)");
  c->add_option("--user", check.user,
                "NAME:PASSWORD: an account on the hosts, given to the collector as PERFSIM_USER and PERFSIM_PASSWORD");
  c->add_option("--timeout", check.timeout_s,
                "How long the collector may run (\"90\", \"90s\", \"2m\"); then it is killed and the check fails")
      ->transform(duration())
      ->capture_default_str();
  c->add_flag("--json", check.json,
              "Print the verdicts as JSON: {suite, passed, verdict (PASS, FAIL, NOT EXERCISED), command_failure, "
              "sessions: [...], values: [...], values_failure, events: [...]} (the collector's own output goes to "
              "stderr)");
  c->add_option("--junit", check.junit,
                "Also write the verdicts as JUnit XML to FILE (testcases: the collector with its output, each session "
                "as HOST session N, each value)");
  c->add_option("--journal", check.journal,
                "Also write every winreg call of the run to this JSON-lines file (perfsim journal FILE --scenario "
                "NAME reads it)");
  c->add_option("--values-from", check.values_from,
                "Where the collector's computed values are: file (default: the file named by $PERFSIM_VALUES_OUT) "
                "or stdout (its value lines there); given, no value line is a failure; each line {\"path\": "
                "\"\\\\HOST\\Object(Inst)\\Counter\", "
                "\"value\": V} or PATH,VALUE, compared with perfsim's value from the last two answers its session got")
      ->check(CLI::IsMember({"file", "stdout"}));
  c->add_option("--speed", check.speed,
                "Recorded seconds per real second of the hosts' realtime timelines (as perfsim serve's): a "
                "scenario's events come sooner (--speed 10: reset-after-reboot's reboot at 1 s, its 5 s down 0.5 s)");
  c->add_option("--tolerance", check.tolerance_pct,
                "How far a reported value may be from perfsim's, in percent of it (absolute below 1)")
      ->capture_default_str();
  c->add_option("command", check.command,
                "After --: the collector and its arguments; {addr} {port} {smb_port} {endpoints} are replaced, and "
                "PERFSIM_ADDR, PERFSIM_PORT, PERFSIM_ENDPOINTS are in its environment")
      ->required();
  c->callback([o, &rc] { rc = run_check(*o); });
}

}  // namespace perfsim::cli
