// core/subprocess.h: starting, waiting for and stopping programs without a shell.
#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/subprocess.h"

namespace perfsim::subprocess {
namespace {

using namespace std::chrono_literals;

ExitStatus run_sh(const std::string& script) {
  Child c;
  REQUIRE(start({"/bin/sh", "-c", script}, Options{}, c).ok());
  return wait(c);
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST_CASE("exit codes and a signal death are reported") {
  CHECK(run_sh("exit 0").code == 0);
  CHECK(run_sh("exit 3").code == 3);
  const ExitStatus killed = run_sh("kill -9 $$");
  CHECK(killed.code == -1);
  CHECK(killed.signal == SIGKILL);
  CHECK(describe(killed) == "signal 9");
  CHECK(describe(ExitStatus{3, 0}) == "exit 3");
}

TEST_CASE("stdout is captured through a pipe, stderr with it, stdin from input") {
  std::string out;
  ExitStatus st;
  REQUIRE(run({"sh", "-c", "echo out; echo err >&2; cat"}, "in\n", out, st).ok());
  CHECK(st.code == 0);
  CHECK(out == "out\nerr\nin\n");
}

TEST_CASE("stdout and stderr go to files, appended") {
  const auto dir = std::filesystem::temp_directory_path() / ("subprocess_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Options o;
  o.out = Stream::kFile;
  o.out_path = (dir / "out").string();
  o.err = Stream::kFile;
  o.err_path = (dir / "err").string();
  for (int i = 0; i < 2; ++i) {
    Child c;
    REQUIRE(start({"/bin/sh", "-c", "echo o; echo e >&2"}, o, c).ok());
    CHECK(wait(c).code == 0);
  }
  std::stringstream out, err;
  out << std::ifstream(dir / "out").rdbuf();
  err << std::ifstream(dir / "err").rdbuf();
  CHECK(out.str() == "o\no\n");
  CHECK(err.str() == "e\ne\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a bounded wait times out on a running child, and stop() kills it") {
  Child c;
  REQUIRE(start({"sleep", "30"}, Options{}, c).ok());
  ExitStatus st;
  CHECK_FALSE(poll(c, st));
  CHECK_FALSE(wait_for(c, 100ms, st));
  // A child ignoring SIGTERM needs the SIGKILL after the grace. It says "trapped" once the trap
  // is set, then becomes the sleep (exec keeps SIGTERM ignored), so no orphan holds a pipe; stderr
  // goes to /dev/null, away from ctest's output pipe, which ctest waits on.
  Options quiet;
  quiet.out = Stream::kPipe;
  quiet.err = Stream::kNull;
  Child stubborn;
  // sleep-ok: a child that outlives the test's SIGTERM on purpose; stop() must kill it
  REQUIRE(start({"/bin/sh", "-c", "trap '' TERM; echo trapped; exec sleep 30"}, quiet, stubborn).ok());
  std::string said;
  char ch;  // read() returns 0 at EOF if the shell died first: the wait is bounded by the child
  while (::read(stubborn.out_fd, &ch, 1) == 1 && ch != '\n') said += ch;
  REQUIRE(said == "trapped");
  CHECK(stop(c, 2s).signal == SIGTERM);
  CHECK(stop(stubborn, 200ms).signal == SIGKILL);
  CHECK(c.pid == -1);
}

TEST_CASE("stop() on a new session reaches the children of the child") {
  Options o;
  o.new_session = true;
  o.out = Stream::kPipe;
  Child c;
  // sleep-ok: a grandchild that must still run when its group is stopped
  REQUIRE(start({"/bin/sh", "-c", "sleep 30 & echo $!; wait"}, o, c).ok());
  std::string line;
  char ch;
  while (::read(c.out_fd, &ch, 1) == 1 && ch != '\n') line += ch;
  const pid_t grandchild = std::stoi(line);
  CHECK(::getpgid(grandchild) == c.pid);
  stop(c, 2s, /*group=*/true);
  // The grandchild was our child's; init reaps it once it is dead.
  for (int i = 0; i < 100 && alive(grandchild); ++i) std::this_thread::sleep_for(20ms);
  CHECK_FALSE(alive(grandchild));
}

TEST_CASE("the fork path (parent-death signal) runs programs and reports missing ones") {
  Options o;
  o.parent_death_signal = SIGTERM;
  o.out = Stream::kPipe;
  Child c;
  REQUIRE(start({"echo", "hi"}, o, c).ok());
  std::string out;
  read_all(c.out_fd, out);
  CHECK(out == "hi\n");
  CHECK(wait(c).code == 0);

  const Status missing = start({"/nonexistent/perfsim-no-such-program"}, o, c);
  CHECK(missing.code() == Status::Code::kNotFound);
  CHECK(missing.message().find("perfsim-no-such-program") != std::string::npos);
  CHECK(c.pid == -1);
}

TEST_CASE("env entries reach the child over the caller's environment, on both start paths") {
  ::setenv("PERFSIM_SUBPROCESS_TEST_KEPT", "kept", 1);
  ::setenv("PERFSIM_SUBPROCESS_TEST_SET", "old", 1);
  for (const int death_signal : {0, int(SIGTERM)}) {
    Options o;
    o.parent_death_signal = death_signal;
    o.out = Stream::kPipe;
    o.env = {"PERFSIM_SUBPROCESS_TEST_SET=new", "PERFSIM_SUBPROCESS_TEST_ADDED=a=b"};
    Child c;
    REQUIRE(start({"/bin/sh", "-c",
                   "echo $PERFSIM_SUBPROCESS_TEST_KEPT $PERFSIM_SUBPROCESS_TEST_SET $PERFSIM_SUBPROCESS_TEST_ADDED; "
                   "env | grep -c ^PERFSIM_SUBPROCESS_TEST_SET="},
                  o, c)
                .ok());
    std::string out;
    read_all(c.out_fd, out);
    CHECK(out == "kept new a=b\n1\n");  // replaced, not a second entry
    CHECK(wait(c).code == 0);
  }
  ::unsetenv("PERFSIM_SUBPROCESS_TEST_KEPT");
  ::unsetenv("PERFSIM_SUBPROCESS_TEST_SET");
}

TEST_CASE("a missing program is a Status naming it") {
  Child c;
  const Status s = start({"perfsim-no-such-program", "x"}, Options{}, c);
  CHECK(s.code() == Status::Code::kNotFound);
  CHECK(s.message().find("perfsim-no-such-program") != std::string::npos);
  CHECK(c.pid == -1);
  Options bad;
  bad.out = Stream::kFile;
  bad.out_path = "/nonexistent/dir/out";
  const Status f = start({"true"}, bad, c);
  CHECK_FALSE(f.ok());
  CHECK(f.message().find("/nonexistent/dir/out") != std::string::npos);
}

}  // namespace
}  // namespace perfsim::subprocess
