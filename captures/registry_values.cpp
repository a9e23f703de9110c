#include "captures/registry_values.h"

#include <algorithm>
#include <utility>

#include "core/utf16.h"

namespace perfsim::captures {

namespace {
bool same(const RegistryValue& v, std::string_view key, std::string_view name) {
  return iequals(v.key, key) && iequals(v.name, name);
}
}  // namespace

const RegistryValue* find_value(const std::vector<RegistryValue>& registry, std::string_view key,
                                std::string_view name) {
  for (const RegistryValue& v : registry)
    if (same(v, key, name)) return &v;
  return nullptr;
}

void set_value(Capture& cap, std::string_view key, std::string_view name, uint32_t type, Bytes data) {
  for (RegistryValue& v : cap.registry)
    if (same(v, key, name)) {
      v.type = type;
      v.data = std::move(data);
      return;
    }
  cap.registry.push_back({std::string(key), std::string(name), type, std::move(data)});
}

void remove_value(Capture& cap, std::string_view key, std::string_view name) {
  std::erase_if(cap.registry, [&](const RegistryValue& v) { return same(v, key, name); });
}

Bytes reg_dword(uint32_t v) {
  Bytes b;
  put_le32(b, v);
  return b;
}

Bytes reg_sz(std::string_view utf8) {
  Bytes b;
  put_utf16le(b, utf8_to_utf16(utf8));
  put_le16(b, 0);
  return b;
}

std::string reg_sz_text(const Bytes& data) {
  std::u16string s;
  for (size_t i = 0; i + 1 < data.size(); i += 2) {
    const char16_t c = char16_t(data[i] | (data[i + 1] << 8));
    if (c == 0) break;
    s.push_back(c);
  }
  return utf16_to_utf8(s);
}

}  // namespace perfsim::captures
