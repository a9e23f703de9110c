#include "server/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace perfsim::server {

namespace {

void append_timestamp(std::string& out) {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  out.append(buf, size_t(n));
}

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || c == '\t' || c == '\n') return true;
  return false;
}

}  // namespace

LogSink stderr_log_sink() {
  return [](std::string_view line) {
    std::string s;
    s.reserve(line.size() + 1);
    s.append(line).push_back('\n');
    std::fwrite(s.data(), 1, s.size(), stderr);
  };
}

LogLine::LogLine(std::string_view event) {
  line_.reserve(200);
  line_ += "ts=";
  append_timestamp(line_);
  kv("event", event);
}

LogLine& LogLine::kv(std::string_view key, std::string_view value) {
  line_ += ' ';
  line_ += key;
  line_ += '=';
  if (!needs_quotes(value)) {
    line_ += value;
    return *this;
  }
  line_ += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') line_ += '\\';
    line_ += (c == '\n' || c == '\t') ? ' ' : c;
  }
  line_ += '"';
  return *this;
}

LogLine& LogLine::kv(std::string_view key, uint64_t value) { return kv(key, std::string_view(std::to_string(value))); }

}  // namespace perfsim::server
