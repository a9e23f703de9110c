// The in-memory form of a capture: everything perfsim knows about one recorded (or synthesised)
// host. The on-disk format (FORMAT.md, writer.h, reader.h) stores exactly this; the replayer
// serves it. Payloads are kept as the host sent them (raw PERF_DATA_BLOCK / REG_MULTI_SZ bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "perfdata/select.h"
#include "windows/constants.h"

namespace perfsim::captures {

struct HostInfo {
  std::string name;              // NetBIOS name the host reports (PERF_DATA_BLOCK system name)
  std::string profile;           // OS profile name (quirks.md): "win2000", "2003", "2016", ...
  std::string product_name;      // CurrentVersion\ProductName
  std::string current_version;   // CurrentVersion\CurrentVersion, e.g. "10.0" / "5.0"
  std::string build_number;      // CurrentVersion\CurrentBuildNumber
  std::string csd_version;       // CurrentVersion\CSDVersion (service pack), may be empty
  int64_t perf_freq = 10000000;  // QueryPerformanceFrequency
  uint32_t processors = 1;
  int64_t start_time_100ns = 0;  // FILETIME (UTC) of the first sample
  uint32_t interval_ms = 15000;  // nominal sampling interval
};

// One registry value under HKLM that collectors read. key is relative to HKLM, backslash-separated,
// e.g. "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib".
struct RegistryValue {
  std::string key;
  std::string name;
  uint32_t type = 0;  // a registry value type (windows/constants.h kRegSz, kRegDword, ...)
  Bytes data;
};

// Counter/Help tables of one language as the REG_MULTI_SZ bytes the host returns.
struct NameTable {
  std::string lang;  // three hex digits, e.g. "009"
  Bytes counter;
  Bytes help;
};

// What perflib knows about an object (provider, costly): defined with query selection.
using ObjectInfo = perfdata::ObjectInfo;

// One answer of the host to one QueryValue. Several records share a tick (several queries per poll).
struct QueryRecord {
  uint32_t tick = 0;                        // poll number, 0-based
  int64_t time_100ns = 0;                   // FILETIME (UTC) when the answer arrived
  uint32_t latency_us = 0;                  // how long the host took
  std::string value_name;                   // "Global", "Costly", "238 232", "Counter 009", ...
  uint32_t status = 0;                      // WERROR the host returned
  uint32_t reg_type = windows::kRegBinary;  // perf data; kRegMultiSz for name tables
  uint32_t size = 0;                        // data_size the host reported (may differ from payload size: quirks)
  Bytes payload;
};

struct Capture {
  HostInfo host;
  std::vector<RegistryValue> registry;
  std::vector<NameTable> names;
  std::vector<ObjectInfo> catalog;
  std::string fingerprint_json;      // the quirk fingerprint (quirks.md, last section), JSON text
  std::vector<QueryRecord> records;  // in tick order
};

}  // namespace perfsim::captures
