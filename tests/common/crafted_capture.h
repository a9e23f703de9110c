// Damage made on purpose to a written capture's bytes, parsed from the frames (captures/FORMAT.md),
// not through the reader under test: a record's size fields rewritten and its CRC made right again,
// so only the size checks stand between the claim and an allocation.
#pragma once
#include "captures/format.h"

namespace perfsim::testing {

// Offset of the first record of `type` in a capture file's bytes, or 0.
inline size_t record_offset(const Bytes& file, captures::RecordType type) {
  using namespace captures;
  for (size_t pos = kFileHeaderSize; pos + kRecordHeaderSize <= file.size();
       pos += kRecordHeaderSize + load_le32(&file[pos + 8]))
    if (file[pos + 12] == uint8_t(type)) return pos;
  return 0;
}

// The record at `pos` checks out again after its body was changed in place.
inline void refresh_crc(Bytes& file, size_t pos) {
  const size_t len = load_le32(&file[pos + 8]);
  store_le32(&file[pos + 4], captures::crc32c(ByteView(file).subspan(pos + 8, 5 + len)));
}

// Offset of the first registry record's packed data field (codec u8, raw size u32, coded length
// u32, coded bytes: FORMAT.md "packed"), past its key, name and type.
inline size_t registry_packed_at(const Bytes& file, size_t record) {
  size_t at = record + captures::kRecordHeaderSize;
  at += 4 + load_le32(&file[at]);            // key
  return at + 4 + load_le32(&file[at]) + 4;  // name, type
}

}  // namespace perfsim::testing
