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

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <string_view>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "core/subprocess.h"
#include "journal/recorder.h"
#include "scenarios/catalog.h"
#include "scenarios/verdict.h"
#include "serve/run.h"

namespace perfsim::cli {
namespace {

struct CheckOptions {
  std::string scenario;  // --scenario NAME, or
  std::string capture;   // --capture F: one host, the generic expectations
  std::vector<std::string> scenario_dirs;
  std::string smb;                    // --smb[=PORT]: "" off, "default" a free port
  bool smb_guest = false;             // --smb-guest, as perfsim serve's
  bool smb_anonymous_winreg = false;  // --smb-anonymous-winreg, as perfsim serve's
  std::string user;                   // --user NAME:PASSWORD: an account, and PERFSIM_USER/PERFSIM_PASSWORD
  double timeout_s = 60;
  bool json = false;
  std::string junit;                 // JUnit XML file
  std::string journal;               // also the run's journal as JSON lines (a CI artifact; perfsim journal FILE)
  std::vector<std::string> command;  // after --
};

// What the run gives the collector: the first host's endpoint, every endpoint, the account.
struct Endpoint {
  std::string addr, port, smb_port, endpoints, user, password;
};

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
                                  "PERFSIM_ENDPOINTS=" + e.endpoints};
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

// Runs the collector to its end or the timeout (then kills its process group): "" when it
// exited 0, else why the command failed.
std::string run_collector(const CheckOptions& o, const Endpoint& e) {
  subprocess::Options so;
  so.env = environment(e);
  so.new_session = true;                 // the timeout's kill reaches what the collector forked
  so.parent_death_signal = SIGTERM;      // and a killed perfsim check takes it along
  if (o.json) {                          // keep stdout for the verdicts
    so.out = subprocess::Stream::kFile;  // the collector's output goes to stderr
    so.out_path = "/proc/self/fd/2";
  }
  subprocess::Child child;
  if (Status s = subprocess::start(substitute(o.command, e), so, child); !s.ok()) return s.message();
  subprocess::ExitStatus st;
  const auto bound = std::chrono::milliseconds(int64_t(o.timeout_s * 1000));
  if (!subprocess::wait_for(child, bound, st)) {
    subprocess::stop(child, std::chrono::milliseconds(2000), true);
    return fmt::format("{} did not finish within {} s (killed)", o.command.front(), o.timeout_s);
  }
  return st.exited_ok() ? "" : fmt::format("{} ended with {}", o.command.front(), subprocess::describe(st));
}

serve::Config serve_config(const CheckOptions& o, const std::shared_ptr<journal::Recorder>& rec) {
  serve::Config c;
  c.scenario = o.scenario;
  c.scenario_dirs = o.scenario_dirs;
  if (!o.capture.empty()) {
    c.capture = o.capture;
    c.listen = {"127.0.0.1:0"};
  }
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
  double seconds = 0;
  bool passed() const {
    if (!command_failure.empty()) return false;
    for (const auto& v : verdicts)
      if (!v.handled()) return false;
    return true;
  }
};

void print(const CheckOptions& o, const Outcome& r, const std::string& expect) {
  size_t handled = 0;
  for (const auto& v : r.verdicts) handled += v.handled() ? 1 : 0;
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : r.verdicts) list.push_back(scenarios::to_json(v));
    fmt::print("{}\n", json_text(nlohmann::json{{"suite", r.suite},
                                                {"expect", expect},
                                                {"passed", r.passed()},
                                                {"command_failure", r.command_failure},
                                                {"sessions", std::move(list)},
                                                {"handled", handled},
                                                {"seconds", r.seconds}}));
    return;
  }
  fmt::print("perfsim check {}: a correct collector {}\n", r.suite, expect);
  for (const auto& v : r.verdicts) fmt::print("{}\n", scenarios::render_text(v));
  if (!r.command_failure.empty()) fmt::print("collector command: {}\n", r.command_failure);
  fmt::print("{}: {} of {} sessions handled it{}\n", r.passed() ? "PASS" : "FAIL", handled, r.verdicts.size(),
             r.command_failure.empty() ? "" : "; " + r.command_failure);
}

int run_check(const CheckOptions& o) {
  if (o.scenario.empty() == o.capture.empty())
    return fail("check", "give one of --scenario NAME or --capture F.perfcap, then -- COMMAND ARGS", kExitUsage);
  if (!(o.timeout_s > 0)) return fail("check", "--timeout must be above 0 seconds", kExitUsage);
  scenarios::Scenario sc;  // --capture: no scenario, Handling's defaults
  if (!o.scenario.empty())
    if (Status s = scenarios::find(o.scenario, o.scenario_dirs, sc); !s.ok())
      return fail("check", s.message(), kExitUsage);
  std::shared_ptr<journal::Recorder> rec;
  journal::RecorderOptions ro;
  ro.journal_size = 200000;  // every call of a looping collector's bounded run
  ro.journal_file = o.journal;
  if (Status s = journal::Recorder::create(ro, rec); !s.ok()) return fail("check", s.message());
  CheckOptions opts = o;
  if (opts.smb == "default") opts.smb = std::to_string(free_port());
  const auto t0 = std::chrono::steady_clock::now();
  Outcome r;
  r.suite = o.scenario.empty() ? o.capture : o.scenario;
  {
    serve::ServeRun run;
    if (serve::Failure f = run.run(serve_config(opts, rec)); !f.ok())
      return fail("check", f.message, f.usage ? kExitUsage : kExitFailure);
    r.command_failure = run_collector(opts, endpoint_of(run, opts));
    run.stop();  // the destructor joins the server: every call answered is journaled
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
    f << scenarios::junit_xml("perfsim check " + r.suite, r.verdicts, r.command_failure, r.seconds);
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
                               "collector session (exit 0 all handled it, 1 one did not)");
  c->add_option("--scenario", check.scenario, "The field-bug scenario to serve and judge against (perfsim scenarios)");
  c->add_option("--capture", check.capture, "Serve this capture instead, judged by the generic expectations")
      ->check(input_file());
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
              "Print the verdicts as JSON: {suite, passed, command_failure, sessions: [...]} (the collector's own "
              "output goes to stderr)");
  c->add_option("--junit", check.junit, "Also write the verdicts as JUnit XML to FILE (one testcase per session)");
  c->add_option("--journal", check.journal,
                "Also write every winreg call of the run to this JSON-lines file (perfsim journal FILE --scenario "
                "NAME reads it)");
  c->add_option("command", check.command,
                "After --: the collector and its arguments; {addr} {port} {smb_port} {endpoints} are replaced, and "
                "PERFSIM_ADDR, PERFSIM_PORT, PERFSIM_ENDPOINTS are in its environment")
      ->required();
  c->callback([o, &rc] { rc = run_check(*o); });
}

}  // namespace perfsim::cli
