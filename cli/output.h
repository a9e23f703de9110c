// Small output helpers shared by the subcommands: errors to stderr in one consistent form, and a
// progress line that is drawn only when stderr is a terminal.
#pragma once
#include <cstdint>
#include <string>

namespace perfsim::cli {

// "perfsim <cmd>: <message>" on stderr; returns `code` so callers can `return fail(...)`.
int fail(const std::string& cmd, const std::string& message, int code = 1);

class Progress {
 public:
  Progress(std::string label, uint64_t total);
  void update(uint64_t done);
  // An open-ended progress line ("12 samples, 3.1 MB, 0 errors"), redrawn in place.
  void text(const std::string& line);
  void finish();

 private:
  std::string label_;
  uint64_t total_;
  bool tty_;
  int last_percent_ = -1;
};

}  // namespace perfsim::cli
