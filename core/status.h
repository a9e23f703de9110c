// Status: how perfsim reports failure across layers (LevelDB-style), instead of throwing.
// A Status is ok() or carries a code and a message a person can act on. Parsers put the byte
// offset of the problem into the message ("at offset 1234: ...").
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace perfsim {

// Input text (a name, a value, a cell) for a message: 'TEXT' when it has at most `max_chars`
// characters, else its first `max_chars`, an ellipsis and how long the whole is,
// 'aaaa…' (50000000 characters), so that no message grows with its input (a 100 MB value was
// echoed whole into an error, issue 54). Characters as core/utf16.h's utf16_length counts them;
// the cut falls between UTF-8 sequences. `quote` is the mark on either side.
inline constexpr size_t kQuoteChars = 100;
std::string quote_input(std::string_view text, size_t max_chars = kQuoteChars, char quote = '\'');

class [[nodiscard]] Status {
 public:
  enum class Code { kOk = 0, kCorruption, kInvalidArgument, kNotFound, kIOError, kUnsupported };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status Corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
  static Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status IOError(std::string m) { return Status(Code::kIOError, std::move(m)); }
  static Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }
  std::string ToString() const;

 private:
  Status(Code c, std::string m) : code_(c), msg_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace perfsim
