#include "tests/common/perfsim_serve.h"

#include <poll.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/common/host_tools.h"

namespace perfsim::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Reads one byte, waiting at most until `deadline`: 1, 0 at EOF, -1 when the time is up.
int read_byte(int fd, char& c, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return -1;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, int(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    const ssize_t r = ::read(fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    return r > 0 ? 1 : 0;
  }
}

}  // namespace

Status PerfsimServe::start(const std::string& perfsim, const std::string& args, const ServeStart& how) {
  stop();
  lines_.clear();
  subprocess::Options o;
  o.out = subprocess::Stream::kPipe;
  o.err = how.err_path.empty() ? subprocess::Stream::kNull : subprocess::Stream::kFile;
  o.err_path = how.err_path;
  o.parent_death_signal = how.parent_death_signal;
  o.new_session = how.new_session;
  if (Status st = subprocess::start({"/bin/sh", "-c", "exec " + perfsim + " serve --json " + args}, o, child_);
      !st.ok())
    return st;
  const auto ready = how.ready ? how.ready : [](const std::vector<std::string>& l) { return !l.empty(); };
  const auto deadline = Clock::now() + how.timeout;
  std::string line;
  int got = 1;
  char c;
  while (!ready(lines_) && (got = read_byte(child_.out_fd, c, deadline)) == 1) {
    if (c != '\n') {
      line.push_back(c);
      continue;
    }
    lines_.push_back(line);
    line.clear();
  }
  subprocess::close_pipes(child_);  // nothing reads on: perfsim must not block on a full pipe
  const std::string err = how.err_path.empty() ? "" : ": " + read_text(how.err_path);
  if (!ready(lines_))
    return Status::IOError(got == 0 ? "perfsim serve exited before it was ready" + err
                                    : "perfsim serve was not ready within " + std::to_string(how.timeout.count()) +
                                          " s" + err);
  const nlohmann::json first = nlohmann::json::parse(lines_.front(), nullptr, false);
  if (first.is_object()) {
    port_ = first.value("port", uint16_t(0));
    address_ = first.value("address", std::string());
    host_ = first.value("host", std::string());
  }
  return Status::Ok();
}

int PerfsimServe::stop(std::chrono::seconds grace, bool group) {
  if (child_.pid <= 0) return 0;
  return subprocess::stop(child_, grace, group).code;
}

}  // namespace perfsim::testing
