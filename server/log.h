// One-line structured logging for the server: `ts=<UTC ISO-8601 ms> level=<level> event=<name>
// key=value ...` (logfmt), or the same fields as one JSON object a line. A line is built whole
// and handed to the sink in a single call, so lines from several threads never interleave as long
// as the sink writes each call atomically. logfmt values that contain spaces, quotes, '=' or are
// empty are double-quoted (with \" and \\ escaped).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace perfsim::server {

// Most to least severe; a sink at level L writes the lines at L and above.
enum class LogLevel : uint8_t { kError, kWarn, kInfo, kDebug };
enum class LogFormat : uint8_t { kLogfmt, kJson };

std::string_view log_level_name(LogLevel l);
// "error|warn|info|debug" / "logfmt|json"; the error names the accepted words.
Status parse_log_level(std::string_view text, LogLevel& out);
Status parse_log_format(std::string_view text, LogFormat& out);

class LogLine;

// Receives each line, at every level: the sink filters. Called from any server thread,
// concurrently: a sink must be thread-safe. A LogLine converts to its logfmt text, so a
// `[](std::string_view line) {...}` is a sink too (tests capture every line that way).
using LogSink = std::function<void(const LogLine& line)>;

struct LogOptions {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kLogfmt;
  int fd = 2;                                   // stderr
  std::chrono::milliseconds flush_every{1000};  // at most this long in the buffer
  size_t buffer_bytes = 64 * 1024;              // written once this much waits
};

// Lines at `level` and above, in `format`, buffered: written with one write(2) when the buffer
// fills, at once for warn and error, every `flush_every`, and when the last copy of the sink is
// destroyed (a clean stop loses nothing).
LogSink stderr_log_sink(LogOptions o = {});

class LogLine {
 public:
  explicit LogLine(std::string_view event, LogLevel level = LogLevel::kInfo);
  LogLine& kv(std::string_view key, std::string_view value);
  LogLine& kv(std::string_view key, const char* value) { return kv(key, std::string_view(value)); }
  LogLine& kv(std::string_view key, const std::string& value) { return kv(key, std::string_view(value)); }
  LogLine& kv(std::string_view key, uint64_t value);
  LogLevel level() const { return level_; }
  const std::string& str() const { return line_; }  // logfmt
  std::string json() const;
  operator std::string_view() const { return line_; }
  void emit(const LogSink& sink) const {
    if (sink) sink(*this);
  }

 private:
  struct Field {
    std::string key, value;
    bool number = false;
  };
  LogLevel level_;
  std::string line_;
  std::vector<Field> fields_;  // ts, level, event, then kv's, for json()
};

}  // namespace perfsim::server
