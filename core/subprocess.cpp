#include "core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace perfsim::subprocess {
namespace {

using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The child's ends of its three streams (-1: inherit) and whatever the parent must close after.
struct Plumbing {
  std::array<int, 3> child_fd = {-1, -1, -1};
  std::vector<int> to_close;
  ~Plumbing() {
    for (int& fd : to_close) close_fd(fd);
  }
};

Status errno_status(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

Status open_into(const char* path, int flags, int& child_fd, Plumbing& p) {
  const int fd = ::open(path, flags | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status(std::string("cannot open ") + path);
  p.to_close.push_back(fd);
  child_fd = fd;
  return Status::Ok();
}

// A pipe; `child_reads` says which end the child gets, the other goes to `mine`.
Status pipe_into(bool child_reads, int& child_fd, int& mine, Plumbing& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno_status("pipe");
  child_fd = child_reads ? fds[0] : fds[1];
  mine = child_reads ? fds[1] : fds[0];
  p.to_close.push_back(child_fd);
  return Status::Ok();
}

Status plumb_one(int index, Stream s, const std::string& path, int& mine, Plumbing& p) {
  switch (s) {
    case Stream::kInherit:
      return Status::Ok();
    case Stream::kNull:
      return open_into("/dev/null", index == 0 ? O_RDONLY : O_WRONLY, p.child_fd[index], p);
    case Stream::kPipe:
      return pipe_into(index == 0, p.child_fd[index], mine, p);
    case Stream::kFile:
      if (index == 0) return Status::InvalidArgument("stdin cannot be a file");
      return open_into(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, p.child_fd[index], p);
    case Stream::kStdout:
      if (index != 2) return Status::InvalidArgument("only stderr can follow stdout");
      p.child_fd[2] = p.child_fd[1] >= 0 ? p.child_fd[1] : 1;
      return Status::Ok();
  }
  return Status::InvalidArgument("unknown stream");
}

Status plumb(const Options& o, Child& c, Plumbing& p) {
  if (Status s = plumb_one(0, o.in, "", c.in_fd, p); !s.ok()) return s;
  if (Status s = plumb_one(1, o.out, o.out_path, c.out_fd, p); !s.ok()) return s;
  return plumb_one(2, o.err, o.err_path, c.err_fd, p);
}

// argv[0] as a path: itself when it has a slash, else the first executable match in PATH.
std::string resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

struct CArgv {
  explicit CArgv(const std::vector<std::string>& a) : args(a) {
    for (std::string& s : args) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
};

// The caller's environment with `extra` (NAME=VALUE) replacing entries of the same name, built
// before spawning (the forked child may not allocate).
CArgv environment(const std::vector<std::string>& extra) {
  std::vector<std::string> all;
  const auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const bool replaced =
        std::any_of(extra.begin(), extra.end(), [&](const std::string& x) { return name_of(x) == name_of(entry); });
    if (!replaced) all.push_back(entry);
  }
  all.insert(all.end(), extra.begin(), extra.end());
  return CArgv(all);
}

// posix_spawnp: returns 0 or the errno of what failed (exec included: glibc reports it).
int spawn(CArgv& argv, CArgv& env, const Options& o, const Plumbing& p, pid_t& pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  for (int i = 0; i < 3; ++i)
    if (p.child_fd[i] >= 0) posix_spawn_file_actions_adddup2(&fa, p.child_fd[i], i);
  // Nothing of ours beyond stdio reaches the child, also a descriptor another thread opened
  // without O_CLOEXEC or has not yet marked (an accepted socket: server/cloexec.h).
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  if (o.new_session) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  const int rc = ::posix_spawnp(&pid, argv.ptrs[0], &fa, &attr, argv.ptrs.data(), env.ptrs.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

// In the forked child: async-signal-safe calls only (other threads may hold locks). An exec
// failure's errno goes back through `report` (close-on-exec, so a successful exec closes it).
[[noreturn]] void child_side(const char* path, char* const* argv, char* const* env, const Options& o, const Plumbing& p,
                             pid_t parent, int report) {
  if (o.new_session) ::setsid();
  ::prctl(PR_SET_PDEATHSIG, o.parent_death_signal);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  for (int i = 0; i < 3; ++i)
    if (p.child_fd[i] >= 0) ::dup2(p.child_fd[i], i);  // dup2 clears close-on-exec on the copy
  // As spawn()'s closefrom: every other descriptor closes at exec (`report` must live until then).
  ::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
  ::execve(path, argv, env);
  const int e = errno;
  (void)!::write(report, &e, sizeof e);
  ::_exit(127);
}

int fork_exec(CArgv& argv, CArgv& env, const Options& o, const Plumbing& p, pid_t& pid) {
  const std::string path = resolve(argv.args[0]);
  if (path.empty()) return ENOENT;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t parent = ::getpid();
  pid = ::fork();
  if (pid == 0) child_side(path.c_str(), argv.ptrs.data(), env.ptrs.data(), o, p, parent, report[1]);
  const int fork_errno = errno;
  ::close(report[1]);
  int exec_errno = 0;
  if (pid > 0) {
    ssize_t n;
    while ((n = ::read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {}
    if (n != sizeof exec_errno) exec_errno = 0;
  }
  ::close(report[0]);
  if (pid < 0) return fork_errno;
  if (exec_errno != 0) {
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    pid = -1;
  }
  return exec_errno;
}

ExitStatus decode(int st) {
  ExitStatus s;
  if (WIFEXITED(st)) s.code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) s.signal = WTERMSIG(st);
  return s;
}

// waitpid with `flags`; true when the child was reaped (or is gone: then status says -1).
bool reap(Child& c, int flags, ExitStatus& status) {
  if (c.pid <= 0) return true;
  int st = 0;
  pid_t r;
  while ((r = ::waitpid(c.pid, &st, flags)) < 0 && errno == EINTR) {}
  if (r == 0) return false;
  status = r == c.pid ? decode(st) : ExitStatus{};
  c.pid = -1;
  return true;
}

}  // namespace

std::string describe(ExitStatus s) {
  return s.code >= 0 ? "exit " + std::to_string(s.code) : "signal " + std::to_string(s.signal);
}

Status start(const std::vector<std::string>& argv, const Options& options, Child& child) {
  child = Child{};
  if (argv.empty() || argv[0].empty()) return Status::InvalidArgument("no program to run");
  Plumbing p;
  if (Status s = plumb(options, child, p); !s.ok()) {
    close_pipes(child);
    return Status::IOError("cannot run " + argv[0] + ": " + s.message());
  }
  CArgv cargv(argv);
  CArgv env = environment(options.env);
  const int rc = options.parent_death_signal != 0 ? fork_exec(cargv, env, options, p, child.pid)
                                                  : spawn(cargv, env, options, p, child.pid);
  if (rc == 0) return Status::Ok();
  child.pid = -1;
  close_pipes(child);
  const std::string why = "cannot run " + argv[0] + ": " + std::strerror(rc);
  return rc == ENOENT ? Status::NotFound(why) : Status::IOError(why);
}

ExitStatus wait(Child& child) {
  ExitStatus s;
  reap(child, 0, s);
  return s;
}

bool poll(Child& child, ExitStatus& status) { return reap(child, WNOHANG, status); }

bool wait_for(Child& child, std::chrono::milliseconds bound, ExitStatus& status) {
  const auto deadline = Clock::now() + bound;
  while (!poll(child, status)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

ExitStatus stop(Child& child, std::chrono::milliseconds grace, bool group, int first) {
  ExitStatus s;
  close_pipes(child);
  if (child.pid <= 0) return s;
  const pid_t target = group ? -child.pid : child.pid;
  ::kill(target, first);
  if (!wait_for(child, grace, s)) {
    ::kill(target, SIGKILL);
    s = wait(child);
  }
  if (group) ::kill(target, SIGKILL);  // children that outlived their parent (a group is gone only when empty)
  return s;
}

void close_pipes(Child& child) {
  close_fd(child.in_fd);
  close_fd(child.out_fd);
  close_fd(child.err_fd);
}

void read_all(int& fd, std::string& out) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close_fd(fd);
}

Status run(const std::vector<std::string>& argv, const std::string& input, std::string& output, ExitStatus& status) {
  Options o;
  o.in = input.empty() ? Stream::kNull : Stream::kPipe;
  o.out = Stream::kPipe;
  o.err = Stream::kStdout;
  Child c;
  if (Status s = start(argv, o, c); !s.ok()) return s;
  if (c.in_fd >= 0) (void)!::write(c.in_fd, input.data(), input.size());
  close_fd(c.in_fd);
  read_all(c.out_fd, output);
  status = wait(c);
  return Status::Ok();
}

}  // namespace perfsim::subprocess
