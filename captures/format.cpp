#include "captures/format.h"

#ifdef PERFSIM_CAPTURES_PORTABLE
#include <boost/crc.hpp>
#else
#include <isa-l/crc.h>
#endif

#include <algorithm>
#include <cstring>

namespace perfsim::captures {

uint32_t crc32c(ByteView data) {
#ifdef PERFSIM_CAPTURES_PORTABLE
  // Built for a target without isa-l (perfsim-record.exe, windows_recorder/README.md): Boost.CRC's
  // header-only table, the same CRC-32C (RFC 3720 B.4: reflected, init and xorout 0xFFFFFFFF).
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data.data(), data.size());
  return crc.checksum();
#else
  // isa-l picks the fastest implementation this CPU has at run time (SSE4.2 crc32 with PCLMUL
  // folding on x86-64) and keeps a portable table path for the rest. Its crc32_iscsi neither
  // inverts the initial value nor the result, so the standard pre/post inversion is done here.
  uint32_t state = 0xFFFFFFFFu;
  const uint8_t* p = data.data();
  for (size_t left = data.size(); left > 0;) {
    const size_t n = std::min<size_t>(left, size_t(1) << 30);  // its length is an int
    state = crc32_iscsi(const_cast<uint8_t*>(p), int(n), state);
    p += n;
    left -= n;
  }
  return ~state;
#endif
}

void frame_record(Bytes& out, RecordType type, ByteView body) {
  const size_t start = out.size();
  put_le32(out, kSyncMarker);
  put_le32(out, 0);  // crc, patched below
  put_le32(out, uint32_t(body.size()));
  out.push_back(uint8_t(type));
  put_bytes(out, body);
  // The CRC covers length, type and body so a flipped length is caught too.
  store_le32(&out[start + 4], crc32c(ByteView(out).subspan(start + 8)));
}

Check check_record(ByteView file, size_t offset, RecordView& out, std::string& why, bool verify_crc) {
  const size_t avail = offset <= file.size() ? file.size() - offset : 0;
  if (avail < 4) {
    why = "record header cut off";
    return avail == 0 || std::memcmp(&kSyncMarker, file.data() + offset, avail) != 0 ? Check::kBad : Check::kTorn;
  }
  if (load_le32(&file[offset]) != kSyncMarker) {
    why = "no sync marker";
    return Check::kBad;
  }
  if (avail < kRecordHeaderSize) {
    why = "record header cut off";
    return Check::kTorn;
  }
  const uint32_t crc = load_le32(&file[offset + 4]);
  const uint32_t len = load_le32(&file[offset + 8]);
  if (len > kMaxRecordBody) {
    why = "record length " + std::to_string(len) + " too large";
    return Check::kBad;
  }
  if (len > avail - kRecordHeaderSize) {
    why = "record needs " + std::to_string(kRecordHeaderSize + len) + " bytes, " + std::to_string(avail) + " present";
    return Check::kTorn;
  }
  if (verify_crc && crc32c(file.subspan(offset + 8, 5 + size_t(len))) != crc) {
    why = "checksum mismatch";
    return Check::kBad;
  }
  out.type = RecordType(file[offset + 12]);
  out.body = file.subspan(offset + kRecordHeaderSize, len);
  out.offset = offset;
  out.end = offset + kRecordHeaderSize + len;
  return Check::kOk;
}

size_t find_sync(ByteView file, size_t from) {
  uint8_t marker[4];
  store_le32(marker, kSyncMarker);
  for (size_t i = from; i + 4 <= file.size(); ++i) {
    const void* hit = std::memchr(file.data() + i, marker[0], file.size() - i);
    if (!hit) break;
    i = size_t(static_cast<const uint8_t*>(hit) - file.data());
    if (i + 4 <= file.size() && std::memcmp(file.data() + i, marker, 4) == 0) return i;
  }
  return file.size();
}

void put_str(Bytes& b, std::string_view s) {
  put_le32(b, uint32_t(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}

void put_blob(Bytes& b, ByteView v) {
  put_le32(b, uint32_t(v.size()));
  put_bytes(b, v);
}

bool get_str(ByteReader& r, std::string& s) {
  uint32_t n;
  ByteView v;
  if (!r.u32(n) || !r.bytes(n, v)) return false;
  s.assign(v.begin(), v.end());
  return true;
}

bool get_blob(ByteReader& r, Bytes& out) {
  uint32_t n;
  ByteView v;
  if (!r.u32(n) || !r.bytes(n, v)) return false;
  out.assign(v.begin(), v.end());
  return true;
}

Status corruption_at(size_t offset, const std::string& what) {
  return Status::Corruption("at offset " + std::to_string(offset) + ": " + what);
}

}  // namespace perfsim::captures
