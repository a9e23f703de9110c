// bench_dashboard: the fleet view's own render time in headless chromium (Debian's `chromium`) at
// 3, 1,000 and 10,000 hosts (issue 35). Each size is a `perfsim serve --fleet` of its own (as
// tests/admin/dashboard_test.cpp makes them: WEB-0001.. frozen at sample 7, ephemeral ports, the
// admin API), all three running for the whole bench. A round loads the dashboard once per size, in
// a fresh chromium with a fresh profile (a cold load), driven over the DevTools protocol on
// --remote-debugging-pipe; the time is the page's own: the startTime of the `fleet-rendered`
// performance mark (admin/web/dashboard.js sets it once the totals and the first page of hosts are
// in the DOM), i.e. milliseconds from navigation start, read back with Runtime.evaluate. Bytes:
// the transferSize of the document and every resource the page had fetched by then (Resource
// Timing). Each size is reported as a ratio to the 3-host page of the same round (median and range
// over rounds; the sizes' order reversed every other round). The last round saves a screenshot per
// size (Page.captureScreenshot).
//   bench_dashboard --out DIR [--rounds N] [--sizes 3,1000,10000] [--perfsim PATH] [--chromium PATH]
#include <poll.h>
#include <unistd.h>

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/stats.h"
#include "core/subprocess.h"
#include "tests/common/perfsim_serve.h"
#include "tests/interop/support.h"

namespace {

namespace fs = std::filesystem;
using namespace perfsim;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

[[noreturn]] void die(const std::string& what) {
  fmt::print(stderr, "bench_dashboard: {}\n", what);
  std::exit(1);  // static destructors stop the fleets
}

// One `perfsim serve --fleet` of `hosts` hosts on 127.N.0.0/16 with its admin API.
struct Fleet {
  int hosts = 0;
  testing::PerfsimServe serve;
  uint16_t admin = 0;
};

void start_fleet(Fleet& f, const std::string& perfsim, const fs::path& dir, int net) {
  const fs::path toml = dir / fmt::format("fleet-{}.toml", f.hosts);
  std::ofstream(toml) << fmt::format(
      "[[host]]\naddresses = \"127.{}.0.0/16\"\ncount = {}\nname = \"WEB-{{n}}\"\ntimeline = \"frozen:7\"\n", net,
      f.hosts);
  testing::ServeStart how;
  how.timeout = 120s;
  how.err_path = (dir / fmt::format("serve-{}.err", f.hosts)).string();
  how.ready = [](const std::vector<std::string>& lines) {
    return !lines.empty() && json::parse(lines.back(), nullptr, false).value("event", "") == "admin";
  };
  if (Status s = f.serve.start(perfsim, "--fleet " + interop::shell_quote(toml.string()) + " --admin 127.0.0.1:0", how);
      !s.ok())
    die(fmt::format("{} hosts: {}", f.hosts, s.ToString()));
  f.admin = json::parse(f.serve.lines().back()).at("port").get<uint16_t>();
}

// chromium with the DevTools protocol on a pipe: JSON messages, each ended by a NUL, written to
// its fd 3 and read from its fd 4 (--remote-debugging-pipe). The shell hands it our stdin/stdout
// pipes as 3 and 4.
class Browser {
 public:
  Browser(const std::string& exe, const fs::path& profile) {
    subprocess::Options o;
    o.in = o.out = subprocess::Stream::kPipe;
    o.err = subprocess::Stream::kNull;
    o.parent_death_signal = 9;  // a crashed bench leaves no browser running
    o.new_session = true;       // stop() reaches its renderer and GPU processes too
    const std::string cmd = "exec " + interop::shell_quote(exe) +
                            " --headless --no-sandbox --disable-gpu --no-first-run --remote-debugging-pipe"
                            " --window-size=1200,1600 --user-data-dir=" +
                            interop::shell_quote(profile.string()) + " about:blank 3<&0 4>&1 </dev/null >/dev/null";
    if (Status s = subprocess::start({"/bin/sh", "-c", cmd}, o, child_); !s.ok()) die(s.ToString());
  }
  ~Browser() { subprocess::stop(child_, 5000ms, true); }

  // Sends a command (to the attached page when `on_page`) and waits for its answer; events met
  // on the way are kept by name.
  json call(const std::string& method, json params = json::object(), bool on_page = true) {
    json m = {{"id", ++id_}, {"method", method}, {"params", std::move(params)}};
    if (on_page) m["sessionId"] = session_;
    const std::string text = m.dump() + '\0';
    for (size_t at = 0; at < text.size();) {
      const ssize_t n = ::write(child_.in_fd, text.data() + at, text.size() - at);
      if (n <= 0 && errno != EINTR) die("chromium's pipe closed: " + method);
      at += size_t(std::max<ssize_t>(n, 0));
    }
    for (;;) {
      json r = next(method);
      if (r.value("id", 0) == id_) {
        if (r.contains("error")) die(method + ": " + r["error"].dump());
        return r["result"];
      }
      if (r.contains("method")) events_.push_back(r["method"]);
    }
  }
  // A page target, attached (flattened: commands carry its sessionId).
  void open_page() {
    const std::string target = call("Target.createTarget", {{"url", "about:blank"}}, false)["targetId"];
    session_ = call("Target.attachToTarget", {{"targetId", target}, {"flatten", true}}, false)["sessionId"];
    call("Page.enable");
  }
  void wait_event(const std::string& name) {
    while (std::find(events_.begin(), events_.end(), name) == events_.end()) {
      json r = next(name);
      if (r.contains("method")) events_.push_back(r["method"]);
    }
  }

 private:
  // The next message, within 120 s.
  json next(const std::string& waiting_for) {
    const auto deadline = Clock::now() + 120s;
    for (;;) {
      if (const size_t end = buf_.find('\0'); end != std::string::npos) {
        json m = json::parse(buf_.substr(0, end), nullptr, false);
        buf_.erase(0, end + 1);
        if (m.is_discarded()) die("chromium sent something that is not JSON");
        return m;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{child_.out_fd, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, int(left)) <= 0) die("no answer from chromium for " + waiting_for);
      char chunk[65536];
      const ssize_t n = ::read(child_.out_fd, chunk, sizeof chunk);
      if (n == 0) die("chromium exited while waiting for " + waiting_for);
      if (n > 0) buf_.append(chunk, size_t(n));
    }
  }

  subprocess::Child child_;
  std::string buf_, session_;
  std::vector<std::string> events_;
  int id_ = 0;
};

// Runs in the page once it has loaded: waits (bounded, 60 s) for the fleet view's first render
// and says when it was, what had been fetched by then, and what the DOM shows.
const char* const kReadRender = R"js(new Promise((resolve, reject) => {
  const started = performance.now();
  const look = () => {
    const m = performance.getEntriesByName('fleet-rendered')[0];
    if (!m) {
      if (performance.now() - started > 60000) reject(new Error('no fleet-rendered mark in 60 s'));
      else setTimeout(look, 10);
      return;
    }
    const fetched = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
                        .filter((e) => e.responseEnd <= m.startTime);
    resolve({render_ms: m.startTime,
             data_ms: Math.max(...fetched.map((e) => e.responseEnd)),
             dom_ms: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
             api_ms: fetched.filter((e) => e.name.includes('/api/fleet'))
                         .reduce((t, e) => Math.max(t, e.responseEnd - e.requestStart), 0),
             bytes: fetched.reduce((n, e) => n + e.transferSize, 0),
             names: fetched.map((e) => e.name.replace(location.origin, '') + ' ' + e.transferSize),
             hosts: Number(document.getElementById('total-hosts').dataset.value),
             rows: document.querySelectorAll('#hosts tr.host').length});
  };
  look();
}))js";

std::string base64_decode(const std::string& in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (const char c : in) {
    const char* const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* p = c ? std::strchr(alphabet, c) : nullptr;
    if (!p) continue;  // '=' padding
    acc = (acc << 6) | uint32_t(p - alphabet);
    if ((bits += 6) >= 8) out.push_back(char((acc >> (bits -= 8)) & 0xff));
  }
  return out;
}

struct Load {
  double render_ms = 0;  // navigation start to the fleet-rendered mark
  double data_ms = 0;    // ... to the last response fetched by then (the API answers in)
  double dom_ms = 0;     // ... to DOMContentLoaded's end
  double api_ms = 0;     // the /api/fleet request: sent to its last byte in (the server's share)
  double bytes = 0;      // transferSize of everything fetched by the mark
  std::string fetched;   // what: "PATH BYTES, ..."
};

// One cold load of the fleet's dashboard; with `screenshot`, the page as rendered is saved there.
Load load_once(const std::string& chromium, const Fleet& f, const fs::path& profile, const fs::path& screenshot) {
  fs::remove_all(profile);
  Browser b(chromium, profile);
  b.open_page();
  b.call("Page.navigate", {{"url", fmt::format("http://127.0.0.1:{}/", f.admin)}});
  b.wait_event("Page.loadEventFired");
  const json r =
      b.call("Runtime.evaluate", {{"expression", kReadRender}, {"awaitPromise", true}, {"returnByValue", true}});
  if (r.contains("exceptionDetails")) die(fmt::format("{} hosts: {}", f.hosts, r["exceptionDetails"].dump()));
  const json& v = r.at("result").at("value");
  // The render measured is the fleet's: its totals and one page of rows.
  if (v.at("hosts") != f.hosts || v.at("rows") != std::min(f.hosts, 50))
    die(fmt::format("{} hosts: the page shows {}", f.hosts, v.dump()));
  if (!screenshot.empty()) {
    const std::string png = base64_decode(b.call("Page.captureScreenshot", {{"format", "png"}})["data"]);
    std::ofstream(screenshot, std::ios::binary) << png;
  }
  Load l{v.at("render_ms"), v.at("data_ms"), v.at("dom_ms"), v.at("api_ms"), v.at("bytes"), ""};
  for (const json& n : v.at("names")) l.fetched += (l.fetched.empty() ? "" : ", ") + n.get<std::string>();
  return l;
}

std::vector<int> parse_sizes(const std::string& s) {
  std::vector<int> out;
  for (size_t at = 0; at <= s.size();) {
    const size_t comma = std::min(s.find(',', at), s.size());
    out.push_back(std::atoi(s.substr(at, comma - at).c_str()));
    if (out.back() < 1 || out.back() > 65000) die("--sizes: each size 1..65000 (one /16 a fleet)");
    at = comma + 1;
  }
  return out;
}

std::vector<double> ratios(const std::vector<double>& v, const std::vector<double>& base) {
  std::vector<double> r;
  for (size_t i = 0; i < v.size(); ++i) r.push_back(v[i] / base[i]);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, perfsim = PERFSIM_EXE, chromium = "/usr/bin/chromium", sizes_arg = "3,1000,10000";
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--out")
      out = value();
    else if (a == "--rounds")
      rounds = std::max(1, std::atoi(value().c_str()));
    else if (a == "--sizes")
      sizes_arg = value();
    else if (a == "--perfsim")
      perfsim = value();
    else if (a == "--chromium")
      chromium = value();
    else
      die("usage: bench_dashboard --out DIR [--rounds N] [--sizes 3,1000,10000] [--perfsim PATH] [--chromium PATH]");
  }
  if (out.empty()) die("--out DIR is required: the screenshots go there");
  fs::create_directories(out);
  const std::vector<int> sizes = parse_sizes(sizes_arg);

  char tmpl[] = "/tmp/bench-dashboard-XXXXXX";
  if (!::mkdtemp(tmpl)) die("mkdtemp failed");
  const fs::path work = tmpl;
  std::vector<std::unique_ptr<Fleet>> fleets;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const auto t0 = Clock::now();
    fleets.push_back(std::make_unique<Fleet>());
    fleets.back()->hosts = sizes[k];
    start_fleet(*fleets.back(), perfsim, work, 77 + int(k));
    fmt::print("{} hosts: admin on 127.0.0.1:{}, ready in {:.1f} s\n", sizes[k], fleets.back()->admin,
               std::chrono::duration<double>(Clock::now() - t0).count());
  }

  std::vector<std::vector<double>> ms(sizes.size()), own_ms(sizes.size()), dom_ms(sizes.size()), api_ms(sizes.size()),
      bytes(sizes.size());
  std::vector<std::string> fetched(sizes.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const size_t k = r % 2 ? sizes.size() - 1 - i : i;  // every other round largest first
      const fs::path shot = r + 1 == rounds ? fs::path(out) / fmt::format("dashboard-{}.png", sizes[k]) : fs::path();
      const Load l = load_once(chromium, *fleets[k], work / "profile", shot);
      ms[k].push_back(l.render_ms);
      own_ms[k].push_back(l.render_ms - l.data_ms);
      dom_ms[k].push_back(l.dom_ms);
      api_ms[k].push_back(l.api_ms);
      bytes[k].push_back(l.bytes);
      fetched[k] = l.fetched;
    }
    fmt::print("round {}:", r + 1);
    for (size_t k = 0; k < sizes.size(); ++k) fmt::print(" {} hosts {:.0f} ms,", sizes[k], ms[k].back());
    fmt::print("\n");
  }

  fmt::print(
      "\n{} rounds, a cold load each; median (min-max). render: navigation start to the fleet-rendered mark; "
      "after data: render minus the last response fetched by then; DCL: DOMContentLoaded's end; "
      "/api/fleet: its request sent to its answer in\n",
      rounds);
  // Ratios are to the first size (3 hosts by default) of the same round.
  const std::string base = fmt::format("/ {} hosts", sizes[0]);
  fmt::print("{:>6} | {:>22} | {:>18} | {:>20} | {:>20} | {:>20} | {:>18} | {:>26} | {}\n", "hosts", "render ms",
             "render " + base, "after data ms", "DCL ms", "/api/fleet ms", "/api/fleet " + base, "first-load bytes",
             "bytes " + base);
  for (size_t k = 0; k < sizes.size(); ++k)
    fmt::print("{:>6} | {:>22} | {:>18} | {:>20} | {:>20} | {:>20} | {:>18} | {:>26} | {}\n", sizes[k],
               bench::median_range(ms[k], "%.1f"), bench::median_range(ratios(ms[k], ms[0]), "%.2f"),
               bench::median_range(own_ms[k], "%.1f"), bench::median_range(dom_ms[k], "%.1f"),
               bench::median_range(api_ms[k], "%.1f"), bench::median_range(ratios(api_ms[k], api_ms[0]), "%.1f"),
               bench::median_range(bytes[k], "%.0f"), bench::median_range(ratios(bytes[k], bytes[0]), "%.3f"));
  for (size_t k = 0; k < sizes.size(); ++k) fmt::print("{} hosts, last round fetched: {}\n", sizes[k], fetched[k]);
  fmt::print("screenshots: {}/dashboard-N.png\n", out);
  fleets.clear();
  std::error_code ec;
  fs::remove_all(work, ec);
  return 0;
}
