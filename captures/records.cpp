#include "captures/records.h"

#include <cstring>

#include "captures/codec.h"

namespace perfsim::captures {
namespace {

// Name tables and registry blobs are large and compress well: u8 codec, u32 raw size, blob.
void put_packed(Bytes& b, ByteView v) {
  Bytes coded;
  EncodeScratch s;
  const Codec c = encode_payload(v, {}, Codec::kLz4, coded, s);
  b.push_back(uint8_t(c));
  put_le32(b, uint32_t(v.size()));
  put_blob(b, coded);
}

// A packed field, or why it does not decode: cut short, an unknown codec, or a raw size its coded
// bytes cannot hold (checked before anything is allocated: codec.h check_expansion).
Status get_packed(ByteReader& r, Bytes& out, const std::string& what) {
  uint8_t codec = 0;
  uint32_t raw = 0, len = 0;
  ByteView coded;
  if (!r.u8(codec) || !r.u32(raw) || !r.u32(len) || !r.bytes(len, coded))
    return Status::Corruption(what + " cut short");
  if (codec != uint8_t(Codec::kStored) && codec != uint8_t(Codec::kLz4))
    return Status::Corruption(what + ": codec " + std::to_string(int(codec)) + " is neither 0 (stored) nor 1 (LZ4)");
  if (raw > kMaxRecordBody) return Status::Corruption(what + ": raw size " + std::to_string(raw) + " too large");
  if (Status s = decode_payload(Codec(codec), coded, {}, raw, out); !s.ok())
    return Status::Corruption(what + ": " + s.message());
  return Status::Ok();
}

Status short_body(RecordType t) {
  return Status::Corruption("record type " + std::to_string(int(t)) + " body cut short");
}

}  // namespace

Bytes encode_host(const HostInfo& h) {
  Bytes b;
  for (const std::string* s :
       {&h.name, &h.profile, &h.product_name, &h.current_version, &h.build_number, &h.csd_version})
    put_str(b, *s);
  put_le64(b, uint64_t(h.perf_freq));
  put_le32(b, h.processors);
  put_le64(b, uint64_t(h.start_time_100ns));
  put_le32(b, h.interval_ms);
  return b;
}

Bytes encode_registry(const RegistryValue& v) {
  Bytes b;
  put_str(b, v.key);
  put_str(b, v.name);
  put_le32(b, v.type);
  put_packed(b, v.data);
  return b;
}

Bytes encode_names(const NameTable& t) {
  Bytes b;
  put_str(b, t.lang);
  put_packed(b, t.counter);
  put_packed(b, t.help);
  return b;
}

Bytes encode_object(const ObjectInfo& o) {
  Bytes b;
  put_le32(b, o.index);
  put_str(b, o.provider);
  b.push_back(o.costly ? 1 : 0);
  return b;
}

Bytes encode_fingerprint(const std::string& json) {
  Bytes b;
  put_str(b, json);
  return b;
}

bool is_metadata(RecordType t) { return t >= RecordType::kHost && t <= RecordType::kFingerprint; }

Status decode_metadata(RecordType type, ByteView body, Capture& meta) {
  ByteReader r(body);
  bool ok = false;
  switch (type) {
    case RecordType::kHost: {
      HostInfo h;
      ok = get_str(r, h.name) && get_str(r, h.profile) && get_str(r, h.product_name) && get_str(r, h.current_version) &&
           get_str(r, h.build_number) && get_str(r, h.csd_version) && r.i64(h.perf_freq) && r.u32(h.processors) &&
           r.i64(h.start_time_100ns) && r.u32(h.interval_ms);
      if (ok) meta.host = std::move(h);
      break;
    }
    case RecordType::kRegistry: {
      RegistryValue v;
      ok = get_str(r, v.key) && get_str(r, v.name) && r.u32(v.type);
      if (!ok) break;
      if (Status s = get_packed(r, v.data, "registry value " + v.key + "\\" + v.name); !s.ok()) return s;
      meta.registry.push_back(std::move(v));
      break;
    }
    case RecordType::kNames: {
      NameTable t;
      ok = get_str(r, t.lang);
      if (!ok) break;
      for (auto [table, what] : {std::pair{&t.counter, "Counter "}, std::pair{&t.help, "Help "}})
        if (Status s = get_packed(r, *table, std::string(what) + t.lang + " table"); !s.ok()) return s;
      meta.names.push_back(std::move(t));
      break;
    }
    case RecordType::kObject: {
      ObjectInfo o;
      uint8_t costly = 0;
      ok = r.u32(o.index) && get_str(r, o.provider) && r.u8(costly);
      o.costly = costly != 0;
      if (ok) meta.catalog.push_back(std::move(o));
      break;
    }
    case RecordType::kFingerprint:
      ok = get_str(r, meta.fingerprint_json);
      break;
    default:
      return Status::InvalidArgument("record type " + std::to_string(int(type)) + " is not metadata");
  }
  return ok ? Status::Ok() : short_body(type);
}

void encode_query_header(Bytes& b, const QueryHeader& h) {
  put_le32(b, h.seq);
  put_le32(b, h.base_seq);
  put_le32(b, h.tick);
  put_le64(b, uint64_t(h.time_100ns));
  put_le32(b, h.latency_us);
  put_le32(b, h.status);
  put_le32(b, h.reg_type);
  put_le32(b, h.size);
  put_le32(b, h.raw_size);
  b.push_back(uint8_t(h.codec));
  put_str(b, h.value_name);
}

bool decode_query_header(ByteReader& r, QueryHeader& h) {
  uint8_t codec = 0;
  const bool ok = r.u32(h.seq) && r.u32(h.base_seq) && r.u32(h.tick) && r.i64(h.time_100ns) && r.u32(h.latency_us) &&
                  r.u32(h.status) && r.u32(h.reg_type) && r.u32(h.size) && r.u32(h.raw_size) && r.u8(codec) &&
                  get_str(r, h.value_name);
  h.codec = Codec(codec);
  return ok && h.raw_size <= kMaxRecordBody;
}

Bytes encode_index(const IndexData& ix) {
  Bytes b;
  put_le32(b, uint32_t(ix.metadata_offsets.size()));
  for (uint64_t o : ix.metadata_offsets) put_le64(b, o);
  put_le32(b, uint32_t(ix.queries.size()));
  for (const std::string& q : ix.queries) put_str(b, q);
  put_le32(b, uint32_t(ix.records.size()));
  for (const RecordInfo& e : ix.records) {
    put_le64(b, e.offset);
    put_le64(b, uint64_t(e.time_100ns));
    put_le32(b, e.tick);
    put_le32(b, e.query);
    put_le32(b, e.base);
    put_le32(b, e.raw_size);
  }
  return b;
}

Status decode_index(ByteView body, IndexData& ix) {
  ByteReader r(body);
  uint32_t n = 0;
  const Status cut = short_body(RecordType::kIndex);
  if (!r.u32(n) || n > r.remaining() / 8) return cut;
  ix.metadata_offsets.resize(n);
  for (uint64_t& o : ix.metadata_offsets) r.u64(o);
  if (!r.u32(n) || n > r.remaining() / 4) return cut;
  ix.queries.resize(n);
  for (std::string& q : ix.queries)
    if (!get_str(r, q)) return cut;
  if (!r.u32(n) || n > r.remaining() / 32) return cut;
  ix.records.resize(n);
  for (size_t i = 0; i < n; ++i) {
    RecordInfo& e = ix.records[i];
    r.u64(e.offset);
    r.i64(e.time_100ns);
    r.u32(e.tick);
    r.u32(e.query);
    r.u32(e.base);
    r.u32(e.raw_size);
    // A base must come earlier and belong to the same query, or random access could loop.
    if (e.query >= ix.queries.size() || (e.base != kNoBase && (e.base >= i || ix.records[e.base].query != e.query)))
      return Status::Corruption("index entry " + std::to_string(i) + " is inconsistent");
  }
  return Status::Ok();
}

Bytes encode_footer(uint64_t index_offset) {
  Bytes b;
  put_le64(b, index_offset);
  b.insert(b.end(), std::begin(kFooterMagic), std::end(kFooterMagic));
  return b;
}

bool decode_footer(ByteView last16, uint64_t& index_offset) {
  if (last16.size() != kFooterSize || std::memcmp(last16.data() + 8, kFooterMagic, 8) != 0) return false;
  index_offset = load_le64(last16.data());
  return true;
}

}  // namespace perfsim::captures
