// README.md's quick starts, run as written: each user's block of commands in order, in bash with
// `set -e`, from a scratch directory that holds the repository's scripts/ (as the repository root
// would, without writing into the checkout), with the built perfsim first on PATH as the build
// block's `export PATH=...` puts it. The build block itself is what this build did.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;

namespace {

struct QuickStart {
  std::string who;                    // the bold lead of its paragraph
  std::vector<std::string> commands;  // its indented code block, line by line
};

// The "## Quick start" section's blocks: each "**Who**: ..." paragraph and the indented block after it.
std::vector<QuickStart> quick_starts() {
  std::ifstream in(fs::path(PERFSIM_SOURCE_DIR) / "README.md");
  std::vector<QuickStart> out;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) inside = line == "## Quick start";
    if (!inside) continue;
    if (line.rfind("**", 0) == 0)
      out.push_back({line.substr(2, line.find("**", 2) - 2), {}});
    else if (!out.empty() && line.rfind("    ", 0) == 0)
      out.back().commands.push_back(line.substr(4));
  }
  return out;
}

// The block in bash, run in `dir` with `bin` first on PATH (/usr/bin next: Debian's python3, as on a
// machine install-deps.sh set up).
std::string script_of(const QuickStart& q, const fs::path& dir, const std::string& bin) {
  std::string s = "cd '" + dir.string() + "'\nexport PATH='" + bin + ":/usr/bin:/bin':\"$PATH\"\nset -e\n";
  for (const std::string& c : q.commands) s += c + "\n";
  return s + "wait\n";  // a server the block started and stopped has exited before the test ends
}

// Runs the quick start of `who`: 3 to 5 commands, exit 0, something printed.
void run_quick_start(const std::string& who) {
  const std::vector<QuickStart> all = quick_starts();
  const auto q = std::find_if(all.begin(), all.end(), [&](const QuickStart& x) { return x.who == who; });
  REQUIRE(q != all.end());
  CHECK(q->commands.size() >= 3);
  CHECK(q->commands.size() <= 5);
  const std::string bin = fs::path(PERFSIM_EXE).parent_path().string();
  perfsim::testing::TempDir dir("perfsim-quickstart");
  fs::create_directory_symlink(fs::path(PERFSIM_SOURCE_DIR) / "scripts", dir.path / "scripts");
  const fs::path script = dir.path / "quickstart.sh";
  std::ofstream(script) << script_of(*q, dir.path, bin);
  const auto r = perfsim::testing::run_command("/bin/bash", script.string(), 240);
  INFO(script_of(*q, dir.path, bin) << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.code == 0);
  CHECK(!r.out.empty());
}

}  // namespace

TEST_CASE("README's quick starts: one for each of the three users, in this order") {
  const std::vector<QuickStart> all = quick_starts();
  REQUIRE(all.size() == 3);
  CHECK(all[0].who == "Collector developer");
  CHECK(all[1].who == "Support engineer");
  CHECK(all[2].who == "Capacity tester");
}

TEST_CASE("README's collector developer quick start runs as written") { run_quick_start("Collector developer"); }
TEST_CASE("README's support engineer quick start runs as written") { run_quick_start("Support engineer"); }
TEST_CASE("README's capacity tester quick start runs as written") { run_quick_start("Capacity tester"); }
