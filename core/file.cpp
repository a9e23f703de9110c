#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#ifdef _WIN32
// perfsim-record.exe (windows_recorder/): the C runtime opens in binary mode only when told, and
// has no sockets, FIFO-open or controlling-terminal flags.
#define S_ISSOCK(m) false
constexpr int kReadFlags = O_RDONLY | O_BINARY;
#else
// O_NONBLOCK: opening a FIFO with no writer must not hang before fstat can refuse it.
constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
#endif

namespace perfsim {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

std::string mib(size_t n) { return std::to_string(n >> 20) + " MiB"; }

Status too_large(const std::string& path, std::string_view what, size_t max_bytes) {
  return Status::InvalidArgument(path + ": the " + std::string(what) + " is larger than " + mib(max_bytes) +
                                 ", the most perfsim reads for it; check that this is the right file, or split it");
}

}  // namespace

Status read_bounded_file(const std::string& path, std::string_view what, std::string& out, size_t max_bytes) {
  const int fd = ::open(path.c_str(), kReadFlags);
  if (fd < 0) {
    const int err = errno;
    std::string m = path + ": cannot open the " + std::string(what) + ": " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(std::move(m)) : Status::IOError(std::move(m));
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    const std::string kind = stat_ok ? kind_of(st.st_mode) : "unreadable";
    ::close(fd);
    return Status::InvalidArgument(path + ": the " + std::string(what) + " is " + kind +
                                   ", not a regular file; give a file's path");
  }
  if (uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    return too_large(path, what, max_bytes);
  }
  out.assign(size_t(st.st_size), '\0');
  size_t done = 0;
  for (;;) {  // the size may change under us: read to EOF, one byte past the limit at most
    if (done == out.size()) out.resize(std::min(max_bytes + 1, done + 65536));
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::IOError(path + ": reading the " + std::string(what) + ": " + std::strerror(err));
    }
    if (n == 0) break;
    done += size_t(n);
    if (done > max_bytes) {
      ::close(fd);
      return too_large(path, what, max_bytes);
    }
  }
  ::close(fd);
  out.resize(done);
  return Status::Ok();
}

}  // namespace perfsim
