#include "windows/constants.h"

namespace perfsim::windows {

std::string werror_name(uint32_t code) {
  switch (code) {
    case kErrorSuccess:
      return "WERR_OK (0)";
    case kErrorFileNotFound:
      return "WERR_FILE_NOT_FOUND (2)";
    case kErrorAccessDenied:
      return "WERR_ACCESS_DENIED (5)";
    case kErrorInvalidHandle:
      return "WERR_INVALID_HANDLE (6)";
    case kErrorInvalidParameter:
      return "WERR_INVALID_PARAMETER (87)";
    case kErrorInsufficientBuffer:
      return "WERR_INSUFFICIENT_BUFFER (122)";
    case kErrorBusy:
      return "WERR_BUSY (170)";
    case kErrorMoreData:
      return "WERR_MORE_DATA (234)";
    case kErrorNoMoreItems:
      return "WERR_NO_MORE_ITEMS (259)";
    default:
      return "WERROR " + std::to_string(code);
  }
}

}  // namespace perfsim::windows
