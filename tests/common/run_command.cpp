#include "tests/common/run_command.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/subprocess.h"

namespace perfsim::testing {

namespace fs = std::filesystem;
namespace sp = perfsim::subprocess;

CommandResult run_command(const std::string& exe, const std::string& args, int seconds) {
  // stderr goes to a file so neither pipe can fill while the other is read.
  static int serial = 0;
  const fs::path err =
      fs::temp_directory_path() / ("perfsim-run-err-" + std::to_string(getpid()) + "-" + std::to_string(++serial));
  fs::remove(err);  // sp::Stream::kFile appends
  sp::Options o;
  o.in = sp::Stream::kInherit;
  o.out = sp::Stream::kPipe;
  o.err = sp::Stream::kFile;
  o.err_path = err.string();
  CommandResult r;
  sp::Child c;
  const std::string line = "exec timeout " + std::to_string(seconds) + " " + exe + " " + args;
  if (!sp::start({"/bin/sh", "-c", line}, o, c).ok()) return r;
  sp::read_all(c.out_fd, r.out);
  r.code = sp::wait(c).code;
  std::ifstream e(err);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  fs::remove(err);
  return r;
}

}  // namespace perfsim::testing
