// The role files (synth/roles/*.toml) as built into perfsim; generated into roles_data.cpp by CMake.
#pragma once
#include <string_view>
#include <vector>

namespace perfsim::synth {

struct RoleFile {
  std::string_view name;  // the file's stem: "iis"
  std::string_view toml;  // its text
};

const std::vector<RoleFile>& role_files();

}  // namespace perfsim::synth
