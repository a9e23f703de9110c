#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/json.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/values.h"
#include "core/config.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "recorder/client.h"
#include "windows/constants.h"

namespace perfsim::cli {
namespace {

struct QueryOptions {
  std::string endpoint;  // ADDR:PORT (ncacn_ip_tcp) or smb:HOST[:PORT] (cli/target.h)
  SmbOptions smb;
  std::vector<std::string> values;  // default: Global
  GrowthOptions growth;
  uint32_t count = 1;  // polls; from the second on, values are formatted
  double interval_s = 1;
  std::string object;
  double timeout_s = 10;
  bool json = false;
};

}  // namespace
namespace {

bool is_name_table(const std::string& v) {
  auto k = perfdata::parse_query(v).kind;
  return k == perfdata::QueryKind::kCounter || k == perfdata::QueryKind::kHelp || k == perfdata::QueryKind::kExplain;
}

}  // namespace

int run_query(const QueryOptions& o) {
  Target target;
  if (Status s = parse_target(o.endpoint, target); !s.ok()) return fail("query", s.message(), kExitUsage);
  recorder::Growth growth;
  if (Status s = parse_growth(o.growth, growth); !s.ok()) return fail("query", s.message(), kExitUsage);
  const std::vector<std::string> values = o.values.empty() ? std::vector<std::string>{"Global"} : o.values;

  std::unique_ptr<recorder::Channel> ch;
  if (Status s = connect_target(target, o.smb, std::chrono::milliseconds(int64_t(o.timeout_s * 1000)), ch); !s.ok())
    return fail("query", s.message(), s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  auto c = std::make_unique<recorder::WinregClient>(std::move(ch));
  winreg::PolicyHandle hkpd;
  if (Status s = c->open_hive(winreg::kOpenHKPD, hkpd); !s.ok()) return fail("query", "OpenHKPD: " + s.message());

  // Names for objects and counters, as a collector reads them first.
  std::map<uint32_t, std::string> names;
  recorder::ValueResult nv;
  if (c->query_value_growing(hkpd, "Counter 009", growth, nv).ok() && nv.status == 0) {
    perfdata::NameTable t;
    if (perfdata::parse_names(nv.data, t).ok()) names = t.to_map();
  }

  nlohmann::json jout = nlohmann::json::array();
  std::map<std::string, perfdata::DataBlock> prev;
  bool error_answer = false;  // a collector that got no data has failed, whatever it printed
  for (uint32_t poll = 0; poll < std::max<uint32_t>(o.count, 1); ++poll) {
    if (poll) std::this_thread::sleep_for(std::chrono::milliseconds(int64_t(o.interval_s * 1000)));
    for (const std::string& v : values) {
      recorder::ValueResult r;
      if (Status s = c->query_value_growing(hkpd, v, growth, r); !s.ok()) return fail("query", s.message());
      nlohmann::json jv = {{"value", v},         {"poll", poll},
                           {"status", r.status}, {"status_name", windows::werror_name(r.status)},
                           {"type", r.type},     {"bytes", r.data.size()},
                           {"tries", r.tries},   {"buffer", r.last_offered}};
      if (r.status != 0) {
        error_answer = true;
        if (o.json)
          jout.push_back(jv);
        else
          fmt::print("{}: {} after {} tries\n", v, windows::werror_name(r.status), r.tries);
        continue;
      }
      if (is_name_table(v)) {
        perfdata::NameTable t;
        const bool ok = perfdata::parse_names(r.data, t).ok();
        jv["entries"] = ok ? t.entries.size() : 0;
        if (o.json)
          jout.push_back(jv);
        else
          fmt::print("{}: {} bytes, {} entries, last index {}\n", v, r.data.size(), t.entries.size(),
                     t.declared_last());
        continue;
      }
      perfdata::DataBlock cur;
      if (Status s = perfdata::parse(r.data, cur); !s.ok())
        return fail("query", v + ": the host's answer does not parse: " + s.ToString());
      if (!o.json)
        fmt::print("# {}: {} bytes, {} objects, {} tries (final buffer {} bytes)\n", v, r.data.size(),
                   cur.objects.size(), r.tries, r.last_offered);
      auto it = prev.find(v);
      nlohmann::json jobjects = nlohmann::json::array();
      size_t shown = 0;
      ValuesView view{it == prev.end() ? nullptr : &it->second, &cur, &names, o.object};
      if (Status s = print_values(view, o.json ? &jobjects : nullptr, shown); !s.ok())
        return fail("query", s.ToString());
      if (o.json) {
        jv["objects"] = jobjects;
        jout.push_back(jv);
      }
      prev[v] = std::move(cur);
    }
  }
  uint32_t werr = 0;
  static_cast<void>(c->close_key(hkpd, werr));  // the values are printed; a failed close loses nothing
  if (o.json) fmt::print("{}\n", json_text(jout, 2));
  return error_answer ? kExitFailure : kExitOk;
}

void add_query(CLI::App& app, int& rc) {
  auto o = std::make_shared<QueryOptions>();
  QueryOptions& query = *o;
  auto* c_query =
      app.add_subcommand("query", "A small collector: OpenHKPD, QueryValue with a growing buffer, decode and print");
  c_query
      ->add_option("endpoint", query.endpoint,
                   "ADDR:PORT or tcp:ADDR:PORT (ncacn_ip_tcp); smb:HOST[:PORT] or \\\\HOST (\\PIPE\\winreg over SMB)")
      ->required();
  c_query->add_option("values", query.values,
                      "Value names: Global (default), Costly, \"238 230\", \"Counter 009\", ...");
  add_growth_options(c_query, query.growth);
  c_query->add_option("--count,-n", query.count, "Polls; values are formatted between consecutive polls")
      ->capture_default_str();
  c_query->add_option("--interval", query.interval_s, "Time between polls (seconds, or 500ms, 15s, 2m, 1h)")
      ->transform(duration())
      ->capture_default_str();
  c_query->add_option("--object", query.object, "Only this object (name or index)");
  c_query->add_option("--timeout", query.timeout_s, "Time to wait for the host on each step (seconds, or 500ms, 2m)")
      ->transform(duration())
      ->capture_default_str();
  add_smb_options(c_query, query.smb);
  c_query->add_flag("--json", query.json, "Machine-readable output");
  c_query->callback([o, &rc] { rc = run_query(*o); });
}

}  // namespace perfsim::cli
