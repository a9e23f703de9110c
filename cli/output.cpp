#include "cli/output.h"

#include <unistd.h>

#include <cstdio>

namespace perfsim::cli {

int fail(const std::string& cmd, const std::string& message, int code) {
  std::fprintf(stderr, "perfsim %s: %s\n", cmd.c_str(), message.c_str());
  return code;
}

Progress::Progress(std::string label, uint64_t total) : label_(std::move(label)), total_(total), tty_(isatty(2) == 1) {}

void Progress::update(uint64_t done) {
  if (!tty_ || total_ == 0) return;
  const int pct = int(done * 100 / total_);
  if (pct == last_percent_) return;
  last_percent_ = pct;
  const int width = 30, filled = pct * width / 100;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% (%llu/%llu)", label_.c_str(), filled, "##############################",
               width - filled, "", pct, (unsigned long long)done, (unsigned long long)total_);
  std::fflush(stderr);
}

void Progress::text(const std::string& line) {
  if (!tty_) return;
  std::fprintf(stderr, "\r%s %s\033[K", label_.c_str(), line.c_str());
  std::fflush(stderr);
  last_percent_ = 0;
}

void Progress::finish() {
  if (tty_ && last_percent_ >= 0) std::fprintf(stderr, "\n");
}

}  // namespace perfsim::cli
