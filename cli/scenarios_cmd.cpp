// `perfsim scenarios` and `perfsim scenarios show NAME`: the field-bug scenarios (scenarios/).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/json.h"
#include "scenarios/catalog.h"

namespace perfsim::cli {

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

}  // namespace perfsim::cli
