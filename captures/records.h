// Bodies of the capture record types (FORMAT.md "Record bodies"): encode_* builds a body,
// decode_metadata() adds a metadata body to a Capture, the query header and the index have their
// own structs. Decoders are bounds-checked and accept (ignore) bytes appended by later versions.
#pragma once
#include <string>
#include <vector>

#include "captures/capture.h"
#include "captures/format.h"

namespace perfsim::captures {

Bytes encode_host(const HostInfo& h);
Bytes encode_registry(const RegistryValue& v);
Bytes encode_names(const NameTable& t);
Bytes encode_object(const ObjectInfo& o);
Bytes encode_fingerprint(const std::string& json);

// Decodes a kHost/kRegistry/kNames/kObject/kFingerprint body into meta (host replaced,
// fingerprint replaced, the others appended).
Status decode_metadata(RecordType type, ByteView body, Capture& meta);
bool is_metadata(RecordType type);

// The fixed part of a kQuery body; the coded payload is the rest of the body.
struct QueryHeader {
  uint32_t seq = 0;             // 0-based number of this query record in the file
  uint32_t base_seq = kNoBase;  // seq of the record this one is a delta against
  uint32_t tick = 0;
  int64_t time_100ns = 0;
  uint32_t latency_us = 0;
  uint32_t status = 0;
  uint32_t reg_type = 0;
  uint32_t size = 0;
  uint32_t raw_size = 0;  // decoded payload size
  Codec codec = Codec::kStored;
  std::string value_name;
};
void encode_query_header(Bytes& b, const QueryHeader& h);
bool decode_query_header(ByteReader& r, QueryHeader& h);

// One query record as the index (and a scan) describes it.
struct RecordInfo {
  uint64_t offset = 0;  // of the record's sync marker
  int64_t time_100ns = 0;
  uint32_t tick = 0;
  uint32_t query = 0;       // into IndexData::queries
  uint32_t base = kNoBase;  // entry number of the base record, kNoBase for a keyframe
  uint32_t raw_size = 0;
};

struct IndexData {
  std::vector<uint64_t> metadata_offsets;
  std::vector<std::string> queries;  // distinct value names, first-seen order
  std::vector<RecordInfo> records;   // file order
};
Bytes encode_index(const IndexData& ix);
Status decode_index(ByteView body, IndexData& ix);

Bytes encode_footer(uint64_t index_offset);
bool decode_footer(ByteView last16, uint64_t& index_offset);

}  // namespace perfsim::captures
