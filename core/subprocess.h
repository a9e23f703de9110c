// Subprocess: the one way perfsim (and its tests) start and stop other programs.
//
// A program is started from an argv vector, never through a shell: argv[0] is a path or a name
// looked up in PATH. Each standard stream is inherited, /dev/null, a pipe the caller reads (or,
// for stdin, writes), or a file (stdout/stderr only; opened for appending, created 0600). stderr
// may instead go wherever stdout goes. No other descriptor of the caller reaches the program,
// whether or not it was opened close-on-exec (server/cloexec.h).
//
// Starting uses posix_spawn, which is safe while other threads run. Only a parent-death signal
// needs fork+exec; that path makes only async-signal-safe calls between the two, and resolves
// argv[0] in PATH before forking.
//
// Contract:
//   - start() fails with a Status naming the program when it cannot be run (not found, not
//     executable, a file that cannot be opened); nothing is left running or open then.
//   - The caller owns the pipe ends in Child and must read them; a child writing to a full pipe
//     blocks. close_pipes() closes whatever is still open.
//   - Every started child must be reaped once: by wait(), a wait_for()/poll() that returned true,
//     or stop(). After that child.pid is -1 and the other calls do nothing.
//   - None of these throws; all are EINTR-safe.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"

namespace perfsim::subprocess {

enum class Stream {
  kInherit,  // the caller's own stream
  kNull,     // /dev/null
  kPipe,     // a pipe: Child::in_fd / out_fd / err_fd is the caller's end
  kFile,     // Options::out_path / err_path (not for stdin)
  kStdout,   // stderr only: wherever stdout goes
};

struct Options {
  Stream in = Stream::kNull;
  Stream out = Stream::kInherit;
  Stream err = Stream::kInherit;
  std::string out_path, err_path;  // for Stream::kFile
  // A new session (setsid): the child leads its own process group, so stop(.., group=true)
  // reaches the children it forks, and a terminal's signals do not reach it.
  bool new_session = false;
  // When nonzero, the child gets this signal if the thread that started it dies (PR_SET_PDEATHSIG),
  // so a daemon does not outlive a crashed parent. Forces the fork+exec path.
  int parent_death_signal = 0;
  // NAME=VALUE entries the child gets over (replacing) the caller's environment; empty: the
  // caller's environment as it is.
  std::vector<std::string> env;
};

struct Child {
  pid_t pid = -1;
  int in_fd = -1, out_fd = -1, err_fd = -1;  // the caller's pipe ends, -1 when not a pipe
};

// How a child ended: code >= 0 when it exited, else signal is what killed it.
struct ExitStatus {
  int code = -1;
  int signal = 0;
  bool exited_ok() const { return code == 0; }
};

// "exit 3" or "signal 9".
std::string describe(ExitStatus status);

Status start(const std::vector<std::string>& argv, const Options& options, Child& child);

// Blocks until the child ends.
ExitStatus wait(Child& child);

// Waits at most `bound`; false (child still running) when the time is up.
bool wait_for(Child& child, std::chrono::milliseconds bound, ExitStatus& status);

// Reaps the child if it has ended (WNOHANG): true then, with its status.
bool poll(Child& child, ExitStatus& status);

// Sends `first` (SIGTERM unless told) to the child, or with group=true to its process group
// (needs new_session), waits up to `grace`, then SIGKILLs and reaps. With group=true a last
// SIGKILL reaches children that outlived their parent. Closes the pipes.
ExitStatus stop(Child& child, std::chrono::milliseconds grace, bool group = false, int first = 15 /*SIGTERM*/);

void close_pipes(Child& child);

// Reads everything from fd until EOF into `out` (closing fd and setting it to -1).
void read_all(int& fd, std::string& out);

// Runs a program to completion with stdin from `input` (or /dev/null when empty) and stdout and
// stderr together into `output`. Not for programs that might not finish.
Status run(const std::vector<std::string>& argv, const std::string& input, std::string& output, ExitStatus& status);

}  // namespace perfsim::subprocess
