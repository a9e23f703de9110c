// The load report, for people (a summary and a bounded host table) and for programs (--json).
#include <algorithm>
#include <fmt/core.h>

#include "load/run.h"

namespace perfsim::load {
namespace {

double ms(uint64_t us) { return double(us) / 1000.0; }

// null when no call was timed (every connect refused): no figure rather than a 0 that reads as fast.
nlohmann::json latency_json(const LatencyHistogram& h) {
  if (h.count() == 0) return nullptr;
  return {{"p50", ms(h.percentile_us(0.50))},
          {"p90", ms(h.percentile_us(0.90))},
          {"p99", ms(h.percentile_us(0.99))},
          {"max", ms(h.max_us())}};
}

nlohmann::json figures_json(const Figures& f, double elapsed_s) {
  return {{"calls", f.calls},
          {"calls_per_s", elapsed_s > 0 ? double(f.calls) / elapsed_s : 0.0},
          {"polls", f.polls},
          {"late_polls", f.late_polls},
          {"bytes", f.bytes},
          {"connects", f.connects},
          {"errors",
           {{"total", f.errors()},
            {"connect", f.connect_errors},
            {"call", f.call_errors},
            {"status", f.werr_errors},
            {"by_status", f.by_status}}},
          {"latency_ms", latency_json(f.latency)},
          {"first_error", f.first_error}};
}

std::string values_text(const LoadConfig& c) {
  if (c.values.empty()) return "Global";
  std::string out;
  for (const std::string& v : c.values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

std::string latency_cells(const LatencyHistogram& h) {
  if (h.count() == 0) return fmt::format("{:>8} {:>8} {:>8} {:>8}", "-", "-", "-", "-");
  return fmt::format("{:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}", ms(h.percentile_us(0.50)), ms(h.percentile_us(0.90)),
                     ms(h.percentile_us(0.99)), ms(h.max_us()));
}

}  // namespace

nlohmann::json report_json(const LoadConfig& c, const LoadReport& r) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostFigures& h : r.hosts) {
    nlohmann::json j = figures_json(h.f, r.elapsed_s);
    j["host"] = h.host.label();
    j["endpoint"] = h.host.endpoint();
    hosts.push_back(std::move(j));
  }
  return {{"hosts", r.hosts.size()},
          {"collectors", c.collectors},
          {"sessions", r.sessions},
          {"reconnect", c.reconnect},
          {"threads", r.threads},
          {"interval_s", c.interval_s},
          {"duration_s", c.duration_s},
          {"elapsed_s", r.elapsed_s},
          {"values", c.values.empty() ? std::vector<std::string>{"Global"} : c.values},
          {"overall", figures_json(r.overall, r.elapsed_s)},
          {"per_host", std::move(hosts)}};
}

std::string report_text(const LoadConfig& c, const LoadReport& r, size_t per_host_lines) {
  const Figures& o = r.overall;
  std::string out = fmt::format(
      "perfsim load: {} hosts x {} collectors = {} sessions ({}), {} threads, {}, {:.1f} s, values {}\n",
      r.hosts.size(), c.collectors, r.sessions, c.reconnect ? "a new one each poll" : "kept", r.threads,
      c.interval_s > 0 ? fmt::format("a poll every {:g} s", c.interval_s) : std::string("polls back to back"),
      c.duration_s, values_text(c));
  out += fmt::format(
      "overall: {} calls in {:.2f} s = {:.1f} calls/s; {} polls ({} late), {} value bytes, {} connects\n", o.calls,
      r.elapsed_s, r.elapsed_s > 0 ? double(o.calls) / r.elapsed_s : 0.0, o.polls, o.late_polls, o.bytes, o.connects);
  if (o.latency.count() > 0)
    out += fmt::format("latency ms: p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  max {:.3f}\n", ms(o.latency.percentile_us(0.5)),
                       ms(o.latency.percentile_us(0.9)), ms(o.latency.percentile_us(0.99)), ms(o.latency.max_us()));
  out += fmt::format("errors: {} (connect {}, call {}, status {}", o.errors(), o.connect_errors, o.call_errors,
                     o.werr_errors);
  for (const auto& [name, n] : o.by_status) out += fmt::format(", {} {}", name, n);
  out += ")\n";

  // The hosts a tester looks at first: those with errors, then the slowest.
  std::vector<const HostFigures*> order;
  for (const HostFigures& h : r.hosts) order.push_back(&h);
  std::stable_sort(order.begin(), order.end(), [](const HostFigures* a, const HostFigures* b) {
    if (a->f.errors() != b->f.errors()) return a->f.errors() > b->f.errors();
    return a->f.latency.percentile_us(0.99) > b->f.latency.percentile_us(0.99);
  });
  const size_t shown = std::min(order.size(), per_host_lines);
  out += fmt::format("{:<24} {:<22} {:>9} {:>10} {:>7} {:>8} {:>8} {:>8} {:>8}  {}\n", "host", "endpoint", "calls",
                     "calls/s", "errors", "p50 ms", "p90 ms", "p99 ms", "max ms", "first error");
  for (size_t i = 0; i < shown; ++i) {
    const HostFigures& h = *order[i];
    out += fmt::format("{:<24} {:<22} {:>9} {:>10.1f} {:>7} {}  {}\n", h.host.label(), h.host.endpoint(), h.f.calls,
                       r.elapsed_s > 0 ? double(h.f.calls) / r.elapsed_s : 0.0, h.f.errors(),
                       latency_cells(h.f.latency), h.f.first_error);
  }
  if (shown < order.size())
    out += fmt::format("... and {} more hosts (errors first, then the slowest p99; --json lists every host)\n",
                       order.size() - shown);
  return out;
}

}  // namespace perfsim::load
