// The server log's levels, formats and buffering (server/log.h): lines below the level are
// dropped, JSON lines are JSON whatever a value holds, and lines reach the fd in batches: none
// until a warn, the buffer filling or the sink's end, not one write per line.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "server/log.h"

using namespace perfsim::server;

namespace {

// What the pipe holds now (non-blocking: "" when nothing was written).
std::string drain(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  return out;
}

struct Pipe {
  int fd[2]{-1, -1};
  Pipe() { REQUIRE(::pipe2(fd, O_NONBLOCK) == 0); }
  ~Pipe() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
};

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("log lines in JSON are one object each, also for quotes, control bytes and bytes that are not UTF-8",
          "[server][log]") {
  LogLine line("pipe_open", LogLevel::kDebug);
  line.kv("account", std::string_view("a\"b\\c\x01\xff\xc3\xa9", 9)).kv("conn", uint64_t(7)).kv("empty", "");
  const auto j = nlohmann::json::parse(line.json());
  CHECK(j.at("level") == "debug");
  CHECK(j.at("event") == "pipe_open");
  CHECK(j.at("conn") == 7);  // numbers stay numbers
  CHECK(j.at("account") == "a\"b\\c\x01\xef\xbf\xbd\xc3\xa9");
  CHECK(j.at("empty") == "");
  CHECK(line.str().find(" level=debug event=pipe_open ") != std::string::npos);
}

TEST_CASE("the stderr sink drops lines below its level and writes in batches: at a warn, a full buffer, its end",
          "[server][log]") {
  Pipe p;
  {
    LogOptions o;
    o.level = LogLevel::kInfo;
    o.fd = p.fd[1];
    o.flush_every = std::chrono::hours(1);  // only the events below write
    const LogSink sink = stderr_log_sink(o);
    LogLine("listen", LogLevel::kDebug).emit(sink);
    LogLine("server_start").emit(sink);
    LogLine("server_ready").emit(sink);
    CHECK(drain(p.fd[0]).empty());  // two info lines buffered, not written
    LogLine("conn_refused", LogLevel::kWarn).emit(sink);
    const std::string batch = drain(p.fd[0]);
    CHECK(count(batch, "\n") == 3);  // the warn takes the buffered lines with it
    CHECK(batch.find("event=listen") == std::string::npos);
    LogLine("server_stop").emit(sink);
    CHECK(drain(p.fd[0]).empty());
  }
  CHECK(count(drain(p.fd[0]), "event=server_stop") == 1);  // the last copy's end writes the rest
}

TEST_CASE("the stderr sink writes once its buffer fills, so what waits stays bounded", "[server][log]") {
  Pipe p;
  LogOptions o;
  o.fd = p.fd[1];
  o.flush_every = std::chrono::hours(1);
  o.buffer_bytes = 1000;
  const LogSink sink = stderr_log_sink(o);
  size_t written = 0;  // lines of over 100 bytes: at most 9 fit in the buffer
  for (int i = 0; i < 30; ++i) {
    LogLine("conn_error").kv("detail", std::string(90, 'x')).emit(sink);
    written += count(drain(p.fd[0]), "\n");
  }
  CHECK(written >= 30 - 9);
  CHECK(written < 30);  // the last ones wait for the next batch
}

TEST_CASE("log level and format words: each accepted, others refused naming the choices", "[server][log]") {
  LogLevel l{};
  CHECK(parse_log_level("debug", l).ok());
  CHECK(l == LogLevel::kDebug);
  CHECK(parse_log_level("warn", l).ok());
  CHECK(l == LogLevel::kWarn);
  CHECK_THAT(parse_log_level("verbose", l).message(), Catch::Contains("error, warn, info or debug"));
  LogFormat f{};
  CHECK(parse_log_format("json", f).ok());
  CHECK(f == LogFormat::kJson);
  CHECK_THAT(parse_log_format("xml", f).message(), Catch::Contains("logfmt or json"));
}

namespace {

std::set<std::string> thread_ids() {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) out.insert(e.path().filename());
  return out;
}

// The thread's blocked signals (/proc/self/task/TID/status, SigBlk).
uint64_t blocked_signals(const std::string& tid) {
  std::ifstream in("/proc/self/task/" + tid + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigBlk:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  return 0;
}

}  // namespace

// perfsim serve makes its sink before it blocks SIGHUP for the fault reloader's sigwait: a
// flusher that could take SIGHUP would let the default action end the process.
TEST_CASE("the stderr sink's flusher thread takes no signal, SIGHUP included", "[server][log]") {
  const std::set<std::string> before = thread_ids();
  LogOptions o;
  o.fd = -1;  // nothing is written here
  const LogSink sink = stderr_log_sink(o);
  std::set<std::string> added;
  for (const std::string& t : thread_ids())
    if (!before.count(t)) added.insert(t);
  REQUIRE(added.size() == 1);
  const uint64_t mask = blocked_signals(*added.begin());
  CHECK((mask >> (SIGHUP - 1) & 1) == 1);
  CHECK((mask >> (SIGTERM - 1) & 1) == 1);
  CHECK((mask >> (SIGINT - 1) & 1) == 1);
}
