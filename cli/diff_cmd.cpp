// `perfsim diff A B`: what differs between two captures (captures/compare.h), grouped by kind,
// counts first; `--json` the same report whole. Exit 0 same, 1 different (or an input that cannot
// be read, as every command), 2 usage: diff(1)'s convention. `perfsim names diff` compares the
// name tables themselves.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "captures/compare.h"
#include "captures/reader.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "replayer/quirks.h"
#include "replayer/serve_hosts.h"

namespace perfsim::cli {
namespace {

struct DiffOptions {
  std::string a, b;
  std::optional<uint32_t> sample;
  bool summary = false;
  std::string lang = "009";
  size_t limit = 10;
  bool json = false;
};

// The quirks `perfsim serve` would give a host of this capture with no --profile or --quirk (its
// fingerprint's, then its profile's), each as --quirk takes it, and where they come from.
std::vector<std::string> served_quirks(const captures::Capture& meta) {
  replayer::HostIdentity id;
  if (Status s = replayer::resolve_identity(replayer::HostReplay{}, "", meta, id); !s.ok())
    return {"unresolved: " + s.message()};
  std::vector<std::string> out = replayer::quirk_settings(id.base_quirks);
  out.push_back("profile=" + (id.quirk_profile.empty() ? std::string("none") : id.quirk_profile));
  return out;
}

nlohmann::json opt_text(const std::optional<std::string>& s) { return s ? nlohmann::json(*s) : nlohmann::json(); }

nlohmann::json changes_json(const std::vector<captures::Change>& v) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : v) j.push_back({{"what", c.what}, {"a", opt_text(c.a)}, {"b", opt_text(c.b)}});
  return j;
}

nlohmann::json stats_json(const captures::Stats& s) {
  if (!s.n) return {{"samples", 0}, {"min", nullptr}, {"mean", nullptr}, {"max", nullptr}};
  return {{"samples", s.n}, {"min", s.min}, {"mean", s.mean()}, {"max", s.max}};
}

nlohmann::json report_json(const DiffOptions& o, const captures::CompareReport& r) {
  const auto opt_num = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json values = nlohmann::json::array();
  for (const auto& v : r.values)
    values.push_back({{"path", v.path},
                      {"a", o.summary ? stats_json(v.sa) : opt_num(v.a)},
                      {"b", o.summary ? stats_json(v.sb) : opt_num(v.b)}});
  const auto pair = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return nlohmann::json{{"only_a", a}, {"only_b", b}};
  };
  return {{"a", o.a},
          {"b", o.b},
          {"same", r.same()},
          {"mode", o.summary ? "summary" : "sample"},
          {"sample", o.summary ? nlohmann::json() : nlohmann::json(o.sample.value_or(1))},
          {"host", changes_json(r.host)},
          {"quirks", changes_json(r.quirks)},
          {"fingerprint", changes_json(r.fingerprint)},
          {"registry", changes_json(r.registry)},
          {"objects", pair(r.objects_only_a, r.objects_only_b)},
          {"counters", pair(r.counters_only_a, r.counters_only_b)},
          {"definitions", changes_json(r.definitions)},
          {"instances", pair(r.instances_only_a, r.instances_only_b)},
          {"values", {{"compared", r.values_compared}, {"different", values}}}};
}

// ---- text ----

std::string side_text(const std::optional<std::string>& s) { return s ? *s : "(absent)"; }

std::string num_text(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : "(no value)"; }

std::string stats_text(const captures::Stats& s) {
  return s.n ? fmt::format("min {} mean {} max {} ({} intervals)", s.min, s.mean(), s.max, s.n) : "(no value)";
}

// Up to `limit` lines of `items` (0: all), then "... and N more".
template <class T, class Line>
void print_capped(const std::vector<T>& items, size_t limit, Line line) {
  const size_t shown = limit && items.size() > limit ? limit : items.size();
  for (size_t i = 0; i < shown; ++i) fmt::print("  {}\n", line(items[i]));
  if (shown < items.size()) fmt::print("  ... and {} more (--limit 0 or --json lists all)\n", items.size() - shown);
}

void print_changes(const char* title, const std::vector<captures::Change>& v, size_t limit) {
  if (v.empty()) return;
  fmt::print("{}: {} different\n", title, v.size());
  print_capped(v, limit, [](const captures::Change& c) {
    return fmt::format("{}: {} | {}", c.what, side_text(c.a), side_text(c.b));
  });
}

void print_names(const std::string& title, const std::vector<std::string>& v, size_t limit) {
  if (v.empty()) return;
  fmt::print("{}: {}\n", title, v.size());
  print_capped(v, limit, [](const std::string& s) { return s; });
}

void print_report(const DiffOptions& o, const captures::CompareReport& r) {
  fmt::print("A: {}\nB: {}\n", o.a, o.b);
  print_changes("host", r.host, o.limit);
  print_changes("quirks", r.quirks, o.limit);
  print_changes("fingerprint", r.fingerprint, o.limit);
  print_changes("registry values", r.registry, o.limit);
  print_names("objects only in A", r.objects_only_a, o.limit);
  print_names("objects only in B", r.objects_only_b, o.limit);
  print_names("counters only in A", r.counters_only_a, o.limit);
  print_names("counters only in B", r.counters_only_b, o.limit);
  print_changes("definitions", r.definitions, o.limit);
  print_names("instances only in A", r.instances_only_a, o.limit);
  print_names("instances only in B", r.instances_only_b, o.limit);
  const std::string when = o.summary ? "over every interval" : fmt::format("at sample {}", o.sample.value_or(1));
  if (!r.values.empty()) {
    fmt::print("values {}: {} of {} different\n", when, r.values.size(), r.values_compared);
    print_capped(r.values, o.limit, [&](const captures::ValueChange& v) {
      return o.summary ? fmt::format("{}: {} | {}", v.path, stats_text(v.sa), stats_text(v.sb))
                       : fmt::format("{}: {} | {}", v.path, num_text(v.a), num_text(v.b));
    });
  }
  fmt::print("{} ({} counter values compared {})\n", r.same() ? "same" : "different", r.values_compared, when);
}

int run_diff(const DiffOptions& o) {
  std::unique_ptr<captures::Reader> a, b;
  // Pages leave the process once read: a 24 h capture's summary holds one sample at a time.
  captures::ReaderOptions ro;
  ro.drop_pages = true;
  if (Status s = captures::Reader::open(o.a, a, ro); !s.ok()) return fail("diff", o.a + ": " + s.ToString());
  if (Status s = captures::Reader::open(o.b, b, ro); !s.ok()) return fail("diff", o.b + ": " + s.ToString());
  for (const auto& w : a->warnings()) fmt::print(stderr, "warning: {}: {}\n", o.a, w);
  for (const auto& w : b->warnings()) fmt::print(stderr, "warning: {}: {}\n", o.b, w);
  captures::CompareOptions co;
  co.summary = o.summary;
  co.sample = o.sample.value_or(1);
  co.lang = o.lang;
  captures::CompareReport r;
  if (Status s = captures::compare_captures(*a, *b, co, r); !s.ok())
    return fail("diff", s.message() + " (perfsim inspect lists a capture's ticks)");
  r.quirks = captures::compare_settings(served_quirks(a->metadata()), served_quirks(b->metadata()));
  if (o.json)
    fmt::print("{}\n", json_text(report_json(o, r), 2));
  else
    print_report(o, r);
  return r.same() ? kExitOk : kExitFailure;
}

}  // namespace

void add_diff(CLI::App& app, int& rc) {
  auto o = std::make_shared<DiffOptions>();
  auto* c = app.add_subcommand(
      "diff",
      "What differs between two captures: host, quirks, fingerprint, registry, objects, counters, instances, "
      "values (exit 0 same, 1 different); `names diff` compares name tables");
  c->add_option("a", o->a, "First capture (A, .perfcap)")->required()->check(input_file());
  c->add_option("b", o->b, "Second capture (B, .perfcap)")->required()->check(input_file());
  auto* sample = c->add_option("--sample,-k", o->sample,
                               "Compare values between sample K-1 and K, and the objects of sample K (default 1; 0: "
                               "raw values of the first sample)");
  c->add_flag("--summary", o->summary, "Compare min/mean/max of every interval's values over the whole capture instead")
      ->excludes(sample);
  c->add_option("--lang", o->lang, "Language of the name tables objects and counters are matched by")
      ->capture_default_str();
  c->add_option("--limit", o->limit, "Lines listed per section (0: all); --json lists all")->capture_default_str();
  c->add_flag("--json", o->json, "The whole report as JSON (schema: cli/README.md)");
  c->callback([o, &rc] { rc = run_diff(*o); });
}

}  // namespace perfsim::cli
