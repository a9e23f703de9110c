// For tests that a command's work grows linearly with its input (issue 44): the CPU time of the
// commands a test runs, for ratios between sizes n and 4n.
#pragma once
#include <sys/resource.h>

namespace perfsim::testing {

// CPU seconds (user + system) of the commands `run` starts: RUSAGE_CHILDREN counts every waited-for
// descendant (the shell, timeout and perfsim together), not the wall clock of a shared machine.
// At least `floor`: below it start-up and clock granularity are all there is.
template <class F>
double child_cpu_seconds(F run, double floor = 0.05) {
  const auto cpu = [] {
    rusage u{};
    ::getrusage(RUSAGE_CHILDREN, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  const double before = cpu();
  run();
  const double used = cpu() - before;
  return used > floor ? used : floor;
}

}  // namespace perfsim::testing
