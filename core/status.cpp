#include "core/status.h"

namespace perfsim {

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
