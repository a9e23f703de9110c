// A path under $TMPDIR for one file of a test process, for tests that need a file name rather than
// a directory (temp_dir.h makes and removes directories).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace perfsim::testing {

// STEM_PID + EXT under $TMPDIR (the file is not made; the pid keeps two test executables that
// ctest runs at once apart).
inline std::string temp_file_path(const std::string& stem, const std::string& ext = "") {
  return (std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + ext)).string();
}

}  // namespace perfsim::testing
