// One-line structured logging for the server: `ts=<UTC ISO-8601 ms> event=<name> key=value ...`.
// A line is built in one string and handed to the sink in a single call, so lines from several
// threads never interleave as long as the sink writes each call atomically. Values that contain
// spaces, quotes, '=' or are empty are double-quoted (with \" and \\ escaped).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace perfsim::server {

// Receives one line without the trailing newline. Called from any server thread, concurrently:
// a sink must be thread-safe.
using LogSink = std::function<void(std::string_view line)>;

// Writes each line plus '\n' to stderr with one fwrite.
LogSink stderr_log_sink();

class LogLine {
 public:
  explicit LogLine(std::string_view event);
  LogLine& kv(std::string_view key, std::string_view value);
  LogLine& kv(std::string_view key, const char* value) { return kv(key, std::string_view(value)); }
  LogLine& kv(std::string_view key, uint64_t value);
  const std::string& str() const { return line_; }
  void emit(const LogSink& sink) const {
    if (sink) sink(line_);
  }

 private:
  std::string line_;
};

}  // namespace perfsim::server
