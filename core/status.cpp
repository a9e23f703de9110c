#include "core/status.h"

#include "core/utf16.h"

namespace perfsim {

std::string quote_input(std::string_view text, size_t max_chars, char quote) {
  size_t cut = 0;
  const size_t length = utf16_length(text, &cut, max_chars);
  if (cut == text.size()) return quote + std::string(text) + quote;
  return quote + std::string(text.substr(0, cut)) + "\u2026" + quote + " (" + std::to_string(length) + " characters)";
}

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kCorruption:
      return "corruption: " + msg_;
    case Code::kInvalidArgument:
      return "invalid argument: " + msg_;
    case Code::kNotFound:
      return "not found: " + msg_;
    case Code::kIOError:
      return "I/O error: " + msg_;
    case Code::kUnsupported:
      return "unsupported: " + msg_;
  }
  return msg_;
}

}  // namespace perfsim
