#include "admin/token.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace perfsim::admin {
namespace {

// RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
bool b64token(std::string_view t) {
  const size_t body = t.find_last_not_of('=') + 1;
  if (body == 0) return false;
  return std::all_of(t.begin(), t.begin() + body, [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~' || c == '+' || c == '/';
  });
}

std::string mode_text(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
  return buf;
}

Status create_token(const std::string& path, std::string& token) {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) return Status::IOError("cannot draw random bytes for the admin token");
  static const char* const kHex = "0123456789abcdef";
  token.clear();
  for (unsigned char b : raw) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot create the admin token file " + path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == ssize_t(line.size());
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    ::unlink(path.c_str());
    return Status::IOError("cannot write the admin token file " + path);
  }
  return Status::Ok();
}

}  // namespace

Status load_or_create_token(const std::string& path, std::string& token, bool& created) {
  created = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && errno == ENOENT) {
    created = true;
    return create_token(path, token);
  }
  if (fd < 0)
    return Status::InvalidArgument("--admin-token-file " + path + ": cannot open it: " + std::strerror(errno) +
                                   " (a symbolic link is refused: name the file itself)");
  struct stat st {};
  std::string text;
  Status verdict = Status::Ok();
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    verdict = Status::InvalidArgument("--admin-token-file " + path + " is not a regular file");
  } else if (st.st_uid != ::geteuid()) {
    verdict =
        Status::InvalidArgument("--admin-token-file " + path + " belongs to uid " + std::to_string(st.st_uid) +
                                ", not to this user (uid " + std::to_string(::geteuid()) + "); use a file of your own");
  } else if (st.st_mode & 077) {
    verdict = Status::InvalidArgument("--admin-token-file " + path + " is open to other users (mode " +
                                      mode_text(st.st_mode) + "); run `chmod 600 " + path + "`");
  } else {
    char buf[kMaxTokenSize + 2];
    ssize_t n = 0, got = 0;
    while (size_t(got) < sizeof buf && (n = ::read(fd, buf + got, sizeof buf - size_t(got))) > 0) got += n;
    text.assign(buf, size_t(std::max<ssize_t>(got, 0)));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.size() < kMinTokenSize || text.size() > kMaxTokenSize || !b64token(text))
      verdict = Status::InvalidArgument(
          "--admin-token-file " + path + ": the token must be one line of " + std::to_string(kMinTokenSize) + " to " +
          std::to_string(kMaxTokenSize) +
          " letters, digits or -._~+/ (RFC 6750 b64token); remove the file and perfsim makes one");
  }
  ::close(fd);
  if (verdict.ok()) token = std::move(text);
  return verdict;
}

bool token_matches(std::string_view given, std::string_view token) {
  return given.size() == token.size() && !token.empty() && CRYPTO_memcmp(given.data(), token.data(), token.size()) == 0;
}

}  // namespace perfsim::admin
