// Status: how perfsim reports failure across layers (LevelDB-style), instead of throwing.
// A Status is ok() or carries a code and a message a person can act on. Parsers put the byte
// offset of the problem into the message ("at offset 1234: ...").
#pragma once
#include <string>
#include <utility>

namespace perfsim {

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
