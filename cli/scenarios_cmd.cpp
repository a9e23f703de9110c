// `perfsim scenarios` and `perfsim scenarios show NAME`: the field-bug scenarios (scenarios/).
#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "core/json.h"
#include "scenarios/catalog.h"

namespace perfsim::cli {
namespace {

// `perfsim scenarios` (list) and `perfsim scenarios show NAME`.
struct ScenariosOptions {
  std::string show;  // empty: list them
  std::vector<std::string> dirs;
  bool json = false;
};

}  // namespace

int run_scenarios(const ScenariosOptions& o) {
  std::vector<scenarios::Scenario> all;
  if (Status s = scenarios::load_all(o.dirs, all); !s.ok())
    return fail("scenarios", s.message(), s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
  if (!o.show.empty()) {
    for (const scenarios::Scenario& sc : all) {
      if (sc.name != o.show) continue;
      fmt::print("{}", o.json ? json_text(scenarios::to_json(sc), 2) + "\n" : scenarios::render_text(sc));
      return kExitOk;
    }
    return fail("scenarios", "no scenario \"" + o.show + "\"; known: " + scenarios::name_list(all), kExitUsage);
  }
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const scenarios::Scenario& sc : all)
      list.push_back({{"name", sc.name},
                      {"title", sc.title},
                      {"source", sc.source},
                      {"smb", sc.smb},
                      {"hosts", sc.hosts.size()},
                      {"origin", sc.origin}});
    fmt::print("{}\n", json_text(list, 2));
    return kExitOk;
  }
  size_t width = 0;
  for (const scenarios::Scenario& sc : all) width = std::max(width, sc.name.size());
  for (const scenarios::Scenario& sc : all)
    fmt::print("{:<{}}  {}{}\n", sc.name, width, sc.title, sc.smb ? " (SMB)" : "");
  fmt::print(
      "\n`perfsim scenarios show NAME` says what each reproduces and its source; "
      "`perfsim serve --scenario NAME` serves it.\n");
  return kExitOk;
}

void add_scenarios(CLI::App& app, int& rc) {
  auto o = std::make_shared<ScenariosOptions>();
  ScenariosOptions& scen = *o;
  auto* c_scen = app.add_subcommand(
      "scenarios", "List the field-bug scenarios: known collector failures, each served in one command");
  c_scen->add_option("--scenario-dir", scen.dirs, "A directory of your own scenario files (repeatable)")
      ->check(input_dir());
  c_scen->add_flag("--json", scen.json, "Machine-readable list");
  auto* c_show = c_scen->add_subcommand(
      "show", "What a scenario reproduces, its public source, the host behaviour, what a correct collector does");
  c_show->add_option("name", scen.show, "Scenario name")->required();
  c_show->add_flag("--json", scen.json, "Machine-readable");
  c_show->add_option("--scenario-dir", scen.dirs, "A directory of your own scenario files (repeatable)")
      ->check(input_dir());
  c_scen->callback([o, &rc] { rc = run_scenarios(*o); });
}

}  // namespace perfsim::cli
