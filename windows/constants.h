// The Windows status codes and registry value types perfsim speaks, defined once for every folder.
// Names follow winerror.h / winnt.h with perfsim's k-prefix (Samba's headers define REG_SZ etc. as
// macros, which plain Windows names would collide with in the tests that include both).
#pragma once
#include <cstdint>
#include <string>

namespace perfsim::windows {

// Win32 error codes, carried as WERROR on the winreg wire ([MS-ERREF] 2.2; MS-RRP 2.2 "WERROR").
inline constexpr uint32_t kErrorSuccess = 0;               // ERROR_SUCCESS (WERR_OK)
inline constexpr uint32_t kErrorFileNotFound = 2;          // ERROR_FILE_NOT_FOUND
inline constexpr uint32_t kErrorAccessDenied = 5;          // ERROR_ACCESS_DENIED
inline constexpr uint32_t kErrorInvalidHandle = 6;         // ERROR_INVALID_HANDLE
inline constexpr uint32_t kErrorInvalidParameter = 87;     // ERROR_INVALID_PARAMETER
inline constexpr uint32_t kErrorInsufficientBuffer = 122;  // ERROR_INSUFFICIENT_BUFFER
inline constexpr uint32_t kErrorBusy = 170;                // ERROR_BUSY
inline constexpr uint32_t kErrorTransferTooLong = 222;     // ERROR_TRANSFER_TOO_LONG
inline constexpr uint32_t kErrorMoreData = 234;            // ERROR_MORE_DATA
inline constexpr uint32_t kErrorNoMoreItems = 259;         // ERROR_NO_MORE_ITEMS

// "WERR_MORE_DATA (234)": Samba's spelling, the one collectors' logs use; "WERROR n" for others.
std::string werror_name(uint32_t code);

// Registry value types (winnt.h; MS-RRP 2.2.4 lists the same values).
inline constexpr uint32_t kRegNone = 0;      // REG_NONE
inline constexpr uint32_t kRegSz = 1;        // REG_SZ
inline constexpr uint32_t kRegExpandSz = 2;  // REG_EXPAND_SZ
inline constexpr uint32_t kRegBinary = 3;    // REG_BINARY (HKEY_PERFORMANCE_DATA answers)
inline constexpr uint32_t kRegDword = 4;     // REG_DWORD
inline constexpr uint32_t kRegMultiSz = 7;   // REG_MULTI_SZ (Counter/Help name tables)
inline constexpr uint32_t kRegQword = 11;    // REG_QWORD

}  // namespace perfsim::windows
