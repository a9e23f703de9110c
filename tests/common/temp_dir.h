// A fresh directory under $TMPDIR for one test, made with mkdtemp (unique even when ctest runs
// the same executable's cases at once) and removed with everything in it when the test ends.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace perfsim::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "perfsim-test") {
    std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp " + templ + " failed");
    path = templ;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace perfsim::testing
