#include "server/log.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>

namespace perfsim::server {

namespace {

std::string timestamp() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  return std::string(buf, size_t(n));
}

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || c == '\t' || c == '\n') return true;
  return false;
}

void append_logfmt(std::string& line, std::string_view value) {
  if (!needs_quotes(value)) {
    line += value;
    return;
  }
  line += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') line += '\\';
    line += (c == '\n' || c == '\t') ? ' ' : c;
  }
  line += '"';
}

// Length of the well-formed UTF-8 sequence at s[i], 0 when there is none (RFC 3629).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return uint8_t(s[k]); };
  const uint8_t c = b(i);
  const size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if (n == 3 && ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0))) return 0;  // overlong, surrogate
  if (n == 4 && ((c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) >= 0x90))) return 0;  // overlong, > U+10FFFF
  return n;
}

// A JSON string; bytes that are not UTF-8 (a peer's account name may be anything) become U+FFFD.
void append_json_string(std::string& out, std::string_view v) {
  out += '"';
  for (size_t i = 0; i < v.size();) {
    const uint8_t c = uint8_t(v[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
      out += buf;
    } else if (c >= 0x80) {
      const size_t n = utf8_length(v, i);
      out += n ? v.substr(i, n) : std::string_view("\xEF\xBF\xBD");
      i += n ? n : 1;
      continue;
    } else {
      out += char(c);
    }
    ++i;
  }
  out += '"';
}

// One sink's buffer and the thread that writes it out every flush_every. The thread never owns
// the state: the destructor stops and joins it, then writes what is left.
class BufferedWriter {
 public:
  explicit BufferedWriter(LogOptions o) : o_(o) {
    buf_.reserve(o_.buffer_bytes);
    // The flusher takes no signal: made before serve blocks SIGHUP for its reloader, it would
    // otherwise be the thread a SIGHUP kills the process through.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  ~BufferedWriter() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    write_out();
  }
  BufferedWriter(const BufferedWriter&) = delete;
  BufferedWriter& operator=(const BufferedWriter&) = delete;

  void add(const LogLine& line) {
    if (line.level() > o_.level) return;
    std::lock_guard lk(mu_);
    buf_ += o_.format == LogFormat::kJson ? line.json() : line.str();
    buf_ += '\n';
    if (line.level() <= LogLevel::kWarn || buf_.size() >= o_.buffer_bytes) write_out();
  }

 private:
  void run() {
    std::unique_lock lk(mu_);
    while (!stop_) {
      cv_.wait_for(lk, o_.flush_every);
      write_out();
    }
  }

  // Under mu_ (or after the thread is gone): one write(2) for everything buffered.
  void write_out() {
    size_t done = 0;
    while (done < buf_.size()) {
      const ssize_t n = ::write(o_.fd, buf_.data() + done, buf_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // stderr gone: the lines cannot go anywhere else
      done += size_t(n);
    }
    buf_.clear();
  }

  LogOptions o_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string buf_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

std::string_view log_level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "info";
}

Status parse_log_level(std::string_view text, LogLevel& out) {
  for (LogLevel l : {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug})
    if (text == log_level_name(l)) {
      out = l;
      return Status::Ok();
    }
  return Status::InvalidArgument("log level '" + std::string(text) + "': write error, warn, info or debug");
}

Status parse_log_format(std::string_view text, LogFormat& out) {
  if (text == "logfmt" || text == "json") {
    out = text == "json" ? LogFormat::kJson : LogFormat::kLogfmt;
    return Status::Ok();
  }
  return Status::InvalidArgument("log format '" + std::string(text) + "': write logfmt or json");
}

LogSink stderr_log_sink(LogOptions o) {
  auto w = std::make_shared<BufferedWriter>(o);
  return [w](const LogLine& line) { w->add(line); };
}

LogLine::LogLine(std::string_view event, LogLevel level) : level_(level) {
  line_.reserve(200);
  fields_.reserve(8);
  std::string ts = timestamp();
  line_ += "ts=" + ts;
  fields_.push_back({"ts", std::move(ts)});
  kv("level", log_level_name(level));
  kv("event", event);
}

LogLine& LogLine::kv(std::string_view key, std::string_view value) {
  line_ += ' ';
  line_ += key;
  line_ += '=';
  append_logfmt(line_, value);
  fields_.push_back({std::string(key), std::string(value)});
  return *this;
}

LogLine& LogLine::kv(std::string_view key, uint64_t value) {
  kv(key, std::string_view(std::to_string(value)));
  fields_.back().number = true;
  return *this;
}

std::string LogLine::json() const {
  std::string out = "{";
  for (const Field& f : fields_) {
    if (out.size() > 1) out += ',';
    append_json_string(out, f.key);
    out += ':';
    if (f.number)
      out += f.value;
    else
      append_json_string(out, f.value);
  }
  out += '}';
  return out;
}

}  // namespace perfsim::server
