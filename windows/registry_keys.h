// Registry key paths perfsim reads and writes in more than one folder, defined once.
#pragma once

namespace perfsim::windows {

// HKLM-relative key of the counter name tables (its 009, 007, ... subkeys) and their Last Counter,
// Last Help, Version and Base Index values (Microsoft docs, "Adding Counter Names and Descriptions
// to the Registry"; MS-RRP 3.1.1.1 for HKEY_PERFORMANCE_TEXT's mapping onto it).
inline constexpr char kPerflibKey[] = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib";

}  // namespace perfsim::windows
