// The built-in scenario files (scenarios/builtin/*) as built into perfsim; generated into
// builtin_data.cpp by CMake.
#pragma once
#include <string_view>
#include <vector>

namespace perfsim::scenarios {

struct BuiltinFile {
  std::string_view name;  // the file name: "win2000-more-data.toml", "german-host.ini"
  std::string_view text;
};

const std::vector<BuiltinFile>& builtin_files();

}  // namespace perfsim::scenarios
