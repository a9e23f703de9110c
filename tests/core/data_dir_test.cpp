#include <catch2/catch.hpp>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "core/data_dir.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;

namespace {

// Sets PERFSIM_DATA_DIR for one scope (or clears it), restoring what was there.
struct DataDirEnv {
  std::string saved;
  bool had = false;
  explicit DataDirEnv(const char* value) {
    if (const char* v = getenv("PERFSIM_DATA_DIR")) had = true, saved = v;
    if (value)
      setenv("PERFSIM_DATA_DIR", value, 1);
    else
      unsetenv("PERFSIM_DATA_DIR");
  }
  ~DataDirEnv() {
    if (had)
      setenv("PERFSIM_DATA_DIR", saved.c_str(), 1);
    else
      unsetenv("PERFSIM_DATA_DIR");
  }
};

}  // namespace

TEST_CASE("data_dir: PERFSIM_DATA_DIR's folder when it has the one asked for, else the built-in path") {
  perfsim::testing::TempDir d("perfsim-datadir");
  fs::create_directories(d.path / "captures");
  const std::string built_in = "/nonexistent/source/captures";
  {
    DataDirEnv env(d.path.c_str());
    CHECK(perfsim::data_dir("captures", built_in) == (d.path / "captures").string());
    CHECK(perfsim::data_dir("web", built_in) == built_in);  // no web/ there: the next place
  }
  {
    DataDirEnv env("");
    CHECK(perfsim::data_dir("captures", built_in) == built_in);
  }
  {
    // This test runs from the build tree, which has no ../share/perfsim beside it.
    DataDirEnv env(nullptr);
    CHECK(perfsim::data_dir("captures", built_in) == built_in);
  }
}
