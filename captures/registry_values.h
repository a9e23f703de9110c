// Reading and editing the registry values a capture carries (Capture::registry): lookup by key
// and name case-insensitively, as the Windows registry compares them, and the encodings of the
// two value types perfsim writes itself. One place for lodctr, names, synth and the recorder.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "captures/capture.h"
#include "core/bytes.h"

namespace perfsim::captures {

// The value `name` under `key` (relative to HKLM), or null.
const RegistryValue* find_value(const std::vector<RegistryValue>& registry, std::string_view key,
                                std::string_view name);
inline const RegistryValue* find_value(const Capture& cap, std::string_view key, std::string_view name) {
  return find_value(cap.registry, key, name);
}
// Replaces the type and data of `name` under `key`, or appends it.
void set_value(Capture& cap, std::string_view key, std::string_view name, uint32_t type, Bytes data);
// Removes `name` under `key` if present.
void remove_value(Capture& cap, std::string_view key, std::string_view name);

// REG_DWORD data (4 bytes, little-endian).
Bytes reg_dword(uint32_t v);
// REG_SZ data: UTF-16LE with its terminating NUL.
Bytes reg_sz(std::string_view utf8);
// The text of REG_SZ/REG_EXPAND_SZ data, up to the first NUL (an odd trailing byte is ignored).
std::string reg_sz_text(const Bytes& data);

}  // namespace perfsim::captures
