// The scenarios perfsim knows: the built-in ones (scenarios/builtin/*.toml, embedded at build time
// so an installed perfsim has them) and a user's own (`--scenario-dir DIR`: every *.toml there).
// A user's scenario with a built-in one's name replaces it, so a support engineer can adapt one.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"
#include "scenarios/scenario.h"

namespace perfsim::scenarios {

// Every scenario, built-in ones first, each list sorted by name. A file that does not read is an
// error naming it (file:line: key: what), never skipped.
Status load_all(const std::vector<std::string>& dirs, std::vector<Scenario>& out);
// The scenario called `name`. NotFound lists the known names.
Status find(const std::string& name, const std::vector<std::string>& dirs, Scenario& out);
// "a, b, c": the names of `all`.
std::string name_list(const std::vector<Scenario>& all);

}  // namespace perfsim::scenarios
