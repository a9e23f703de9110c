// Capture file format (v2; v1 files are read too): constants and record framing shared by writer and reader (FORMAT.md
// specifies every byte). A record is `sync | crc32c | length | type | body`; frame_record()
// builds one, check_record() validates one at an offset without reading outside the file.
// Body field helpers (put_str/get_str, put_blob/get_blob) are the only encoding the bodies use.
#pragma once
#include <cstdint>
#include <string>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::captures {

inline constexpr char kFileMagic[8] = {'P', 'S', 'I', 'M', 'C', 'A', 'P', '1'};
inline constexpr uint32_t kFormatVersion = 2;     // what the writer makes by default
inline constexpr uint32_t kMinFormatVersion = 1;  // still read (and written on request), forever
inline constexpr size_t kFileHeaderSize = 16;     // magic(8) version(4) reserved(4)

inline constexpr uint32_t kSyncMarker = 0x7AC41FD9;  // arbitrary; the CRC decides, the marker finds
inline constexpr size_t kRecordHeaderSize = 13;      // sync(4) crc(4) length(4) type(1)
inline constexpr uint32_t kMaxRecordBody = 1u << 30;

inline constexpr char kFooterMagic[8] = {'P', 'S', 'I', 'M', 'I', 'D', 'X', '1'};
inline constexpr size_t kFooterSize = 16;  // index record offset(8) magic(8)

inline constexpr uint32_t kNoBase = 0xFFFFFFFF;  // base_seq of a keyframe

enum class RecordType : uint8_t {
  kHost = 1,
  kRegistry = 2,
  kNames = 3,
  kObject = 4,
  kFingerprint = 5,
  kQuery = 6,
  kIndex = 7,
};

// How a query payload is stored (FORMAT.md "Payload codecs").
enum class Codec : uint8_t {
  kStored = 0,      // raw bytes
  kLz4 = 1,         // LZ4 block of the payload alone (keyframe)
  kXorLz4 = 2,      // LZ4 block of payload XOR base payload
  kDictLz4 = 3,     // 32 KiB chunks, each LZ4 with a 64 KiB window of the base payload as dictionary
  kSplit = 4,       // v2: structure (stored once, referenced) + value columns (split.h), mode table 1
  kSplitCross = 5,  // v2: the same with mode table 2 (cross-column relations, split.h)
};

inline bool is_split(Codec c) { return c == Codec::kSplit || c == Codec::kSplitCross; }

// CRC-32C (Castagnoli; init and xorout 0xFFFFFFFF), in hardware where the CPU has it (isa-l).
uint32_t crc32c(ByteView data);

// Appends a framed record (header + body) to out.
void frame_record(Bytes& out, RecordType type, ByteView body);

struct RecordView {
  RecordType type{};
  ByteView body;
  size_t offset = 0;  // of the sync marker
  size_t end = 0;     // one past the body
};

enum class Check { kOk, kTorn, kBad };

// Validates the record at `offset`. kTorn: it is cut off by the end of `file` (a record whose
// length field points past the end counts as torn). kBad: wrong marker or checksum. why says which.
// verify_crc = false skips the checksum, for a record already verified (cheap now: crc32c runs at
// memory speed, see FORMAT.md, but a replayer's timeline loops over the same records).
Check check_record(ByteView file, size_t offset, RecordView& out, std::string& why, bool verify_crc = true);

// Next offset >= from where a sync marker starts, or file.size().
size_t find_sync(ByteView file, size_t from);

// Body field encoding: strings and blobs are u32 length + bytes.
void put_str(Bytes& b, std::string_view s);
void put_blob(Bytes& b, ByteView v);
bool get_str(ByteReader& r, std::string& s);
bool get_blob(ByteReader& r, Bytes& v);

Status corruption_at(size_t offset, const std::string& what);

}  // namespace perfsim::captures
