#include "core/data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace perfsim {

namespace fs = std::filesystem;

namespace {

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

}  // namespace

std::string data_dir(std::string_view sub, std::string_view built_in) {
  if (const char* env = std::getenv("PERFSIM_DATA_DIR"); env && *env) {
    const fs::path p = fs::path(env) / sub;
    if (is_dir(p)) return p.string();
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path p = exe.parent_path().parent_path() / "share" / "perfsim" / sub;
    if (is_dir(p)) return p.lexically_normal().string();
  }
  return std::string(built_in);
}

}  // namespace perfsim
