// Requests the winreg tests send, built the way collectors build them.
#pragma once
#include <optional>
#include <string>

#include "winreg/codec.h"

namespace perfsim::testing {

// QueryValue as a collector sends it: type and sizes pointers set, a data buffer of `buffer`
// bytes offered (an empty array on the wire), or a NULL data pointer for nullopt.
inline winreg::QueryValueRequest query_value_request(const winreg::PolicyHandle& h, const std::u16string& name,
                                                     std::optional<uint32_t> buffer) {
  winreg::QueryValueRequest q;
  q.handle = h;
  q.value_name = name;
  q.type = 0;
  if (buffer) q.data = Bytes();
  q.data_size = buffer.value_or(0);
  q.data_length = 0;
  return q;
}

}  // namespace perfsim::testing
