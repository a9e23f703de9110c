// Runs a command line to completion and hands back its exit code and output: how tests run the
// built perfsim (`args` are shell-quoted, as a user types them).
#pragma once
#include <string>

namespace perfsim::testing {

struct CommandResult {
  int code = -1;    // exit code; timeout's 124 when it ran out of time, -1 when it could not start
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `exe args` through /bin/sh, bounded by `timeout SECONDS` (SIGTERM), stdin inherited.
CommandResult run_command(const std::string& exe, const std::string& args, int seconds = 60);

}  // namespace perfsim::testing
