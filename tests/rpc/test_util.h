// Helpers shared by the rpc tests: hex literals to bytes.
#pragma once
#include <string_view>

#include "core/bytes.h"

namespace perfsim::test {

// Whitespace is ignored so literals can be laid out field by field.
inline Bytes from_hex(std::string_view hex) {
  Bytes out;
  int hi = -1;
  for (char c : hex) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(uint8_t(hi * 16 + v));
      hi = -1;
    }
  }
  return out;
}

}  // namespace perfsim::test
