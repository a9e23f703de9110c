// A bench run in a child process, so its peak RSS (wait4's ru_maxrss) is its own and not the
// largest of every run the bench made (perfmon_bench, redact_bench).
#pragma once
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace perfsim::bench {

struct ChildRun {
  double seconds = 0;
  long peak_kib = 0;
};

// Runs f (returning an exit code) in a child: its wall time and its own peak RSS; exits the bench
// when the child fails.
template <typename F>
ChildRun in_child(F f) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) _exit(f());
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "child failed\n");
    std::exit(1);
  }
  return {s, ru.ru_maxrss};
}

}  // namespace perfsim::bench
