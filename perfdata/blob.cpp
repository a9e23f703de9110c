// Parse and build PERF_DATA_BLOCK byte-identically (see model.h for the contract).
#include <algorithm>
#include <string>

#include "core/utf16.h"
#include "perfdata/filetime.h"
#include "perfdata/model.h"

namespace perfsim::perfdata {
namespace {

using namespace winperf;

Status corrupt(size_t off, const std::string& what) {
  return Status::Corruption("at offset " + std::to_string(off) + ": " + what);
}

Bytes copy(ByteView v) { return Bytes(v.begin(), v.end()); }

// Reads the region [begin, end) of the blob, or fails naming the offset.
Status region(ByteView blob, size_t begin, size_t end, Bytes& out, const char* what) {
  if (begin > end || end > blob.size())
    return corrupt(begin, std::string(what) + " runs past the end of its container");
  out = copy(blob.subspan(begin, end - begin));
  return Status::Ok();
}

Status parse_counter(ByteView blob, size_t at, size_t limit, CounterDef& c, uint32_t& len) {
  ByteReader r(blob.first(limit), at);
  if (!r.u32(len) || !r.u32(c.name_index) || !r.u32(c.name_title) || !r.u32(c.help_index) || !r.u32(c.help_title) ||
      !r.i32(c.default_scale) || !r.u32(c.detail_level) || !r.u32(c.type) || !r.u32(c.size) || !r.u32(c.offset))
    return corrupt(at, "counter definition truncated");
  if (len < kCounterDefSize || at + len > limit)
    return corrupt(at, "counter definition ByteLength " + std::to_string(len) + " out of range");
  return region(blob, at + kCounterDefSize, at + len, c.extra, "counter definition");
}

// Counter block region: from its ByteLength DWORD to `end` (next instance or the object end).
Status parse_block_len(ByteView blob, size_t at, size_t limit, uint32_t& len) {
  if (at + 4 > limit) return corrupt(at, "counter block header past the object end");
  len = load_le32(&blob[at]);
  if (len < 4 || at + len > limit)
    return corrupt(at, "counter block ByteLength " + std::to_string(len) + " out of range");
  return Status::Ok();
}

Status parse_instance(ByteView blob, size_t at, size_t limit, Instance& in, size_t& next) {
  ByteReader r(blob.first(limit), at);
  uint32_t len = 0;
  if (!r.u32(len) || !r.u32(in.parent_title_index) || !r.u32(in.parent_instance) || !r.i32(in.unique_id) ||
      !r.u32(in.name_offset) || !r.u32(in.name_length))
    return corrupt(at, "instance definition truncated");
  if (len < kInstanceDefSize || at + len > limit)
    return corrupt(at, "instance ByteLength " + std::to_string(len) + " out of range");
  if (in.name_length && (in.name_offset < kInstanceDefSize || size_t(in.name_offset) + in.name_length > len))
    return corrupt(at, "instance name outside its definition");
  if (Status s = region(blob, at + kInstanceDefSize, at + len, in.name_region, "instance"); !s.ok()) return s;
  uint32_t block_len = 0;
  if (Status s = parse_block_len(blob, at + len, limit, block_len); !s.ok()) return s;
  // The next instance starts where the (8-byte padded) block ends; Windows pads ByteLength itself.
  next = at + len + block_len;
  return region(blob, at + len, next, in.counter_block, "counter block");
}

Status parse_object(ByteView blob, size_t at, size_t limit, Object& o, size_t& next, const ParseOptions& opt) {
  ByteReader r(blob.first(limit), at);
  uint32_t total = 0, def_len = 0, hdr_len = 0;
  if (!r.u32(total) || !r.u32(def_len) || !r.u32(hdr_len) || !r.u32(o.name_index) || !r.u32(o.name_title) ||
      !r.u32(o.help_index) || !r.u32(o.help_title) || !r.u32(o.detail_level) || !r.u32(o.num_counters) ||
      !r.i32(o.default_counter) || !r.i32(o.num_instances) || !r.u32(o.code_page) || !r.i64(o.perf_time) ||
      !r.i64(o.perf_freq))
    return corrupt(at, "object type truncated");
  if (total < kObjectTypeSize || at + total > limit)
    return corrupt(
        at, "object " + std::to_string(o.name_index) + " TotalByteLength " + std::to_string(total) + " out of range");
  if (hdr_len < kObjectTypeSize || def_len < hdr_len || def_len > total)
    return corrupt(at, "object " + std::to_string(o.name_index) + " HeaderLength/DefinitionLength inconsistent");
  const size_t end = at + total;
  if (Status s = region(blob, at + kObjectTypeSize, at + hdr_len, o.header_extra, "object header"); !s.ok()) return s;
  size_t pos = at + hdr_len;
  const size_t defs_end = at + def_len;
  o.counters.clear();
  for (uint32_t i = 0; i < o.num_counters; ++i) {
    CounterDef c;
    uint32_t len = 0;
    if (Status s = parse_counter(blob, pos, defs_end, c, len); !s.ok()) return s;
    o.counters.push_back(std::move(c));
    pos += len;
  }
  if (Status s = region(blob, pos, defs_end, o.definitions_extra, "definitions"); !s.ok()) return s;
  pos = defs_end;
  o.instances.clear();
  o.counter_block.clear();
  if (o.num_instances == PERF_NO_INSTANCES) {
    uint32_t block_len = 0;
    if (Status s = parse_block_len(blob, pos, end, block_len); !s.ok()) return s;
    o.counter_block = copy(blob.subspan(pos, block_len));
    pos += block_len;
  } else {
    if (o.num_instances < 0) return corrupt(at, "object " + std::to_string(o.name_index) + " NumInstances negative");
    for (int32_t i = 0; i < o.num_instances; ++i) {
      Instance in;
      size_t nx = 0;
      if (Status s = parse_instance(blob, pos, end, in, nx); !s.ok()) return s;
      o.instances.push_back(std::move(in));
      pos = nx;
    }
  }
  (void)opt;
  next = end;
  return region(blob, pos, end, o.trailer, "object");
}

void put_systemtime(Bytes& b, const SystemTime& t) {
  for (uint16_t v : {t.year, t.month, t.day_of_week, t.day, t.hour, t.minute, t.second, t.ms}) put_le16(b, v);
}

void build_object(Bytes& b, const Object& o) {
  const size_t at = b.size();
  const uint32_t hdr_len = kObjectTypeSize + uint32_t(o.header_extra.size());
  uint32_t def_len = hdr_len + uint32_t(o.definitions_extra.size());
  for (const CounterDef& c : o.counters) def_len += kCounterDefSize + uint32_t(c.extra.size());
  put_le32(b, 0);  // TotalByteLength, patched below
  put_le32(b, def_len);
  put_le32(b, hdr_len);
  for (uint32_t v : {o.name_index, o.name_title, o.help_index, o.help_title, o.detail_level, o.num_counters})
    put_le32(b, v);
  put_le32(b, uint32_t(o.default_counter));
  put_le32(b, uint32_t(o.num_instances));
  put_le32(b, o.code_page);
  put_le64(b, uint64_t(o.perf_time));
  put_le64(b, uint64_t(o.perf_freq));
  put_bytes(b, o.header_extra);
  for (const CounterDef& c : o.counters) {
    put_le32(b, kCounterDefSize + uint32_t(c.extra.size()));
    for (uint32_t v : {c.name_index, c.name_title, c.help_index, c.help_title}) put_le32(b, v);
    put_le32(b, uint32_t(c.default_scale));
    for (uint32_t v : {c.detail_level, c.type, c.size, c.offset}) put_le32(b, v);
    put_bytes(b, c.extra);
  }
  put_bytes(b, o.definitions_extra);
  if (o.multi_instance()) {
    for (const Instance& in : o.instances) {
      put_le32(b, kInstanceDefSize + uint32_t(in.name_region.size()));
      put_le32(b, in.parent_title_index);
      put_le32(b, in.parent_instance);
      put_le32(b, uint32_t(in.unique_id));
      put_le32(b, in.name_offset);
      put_le32(b, in.name_length);
      put_bytes(b, in.name_region);
      put_bytes(b, in.counter_block);
    }
  } else {
    put_bytes(b, o.counter_block);
  }
  put_bytes(b, o.trailer);
  store_le32(&b[at], uint32_t(b.size() - at));
}

}  // namespace

void append_object(Bytes& out, const Object& o) { build_object(out, o); }

std::u16string Instance::name() const {
  if (name_length < 2 || name_offset < kInstanceDefSize) return {};
  const size_t off = name_offset - kInstanceDefSize;
  if (off + name_length > name_region.size()) return {};
  std::u16string s = load_utf16le(name_region.data() + off, name_length / 2);
  while (!s.empty() && s.back() == u'\0') s.pop_back();
  return s;
}

std::u16string DataBlock::system_name() const {
  if (system_name_offset < kDataBlockSize) return {};
  const size_t off = system_name_offset - kDataBlockSize;
  if (off + system_name_length > header_region.size()) return {};
  std::u16string s = load_utf16le(header_region.data() + off, system_name_length / 2);
  while (!s.empty() && s.back() == u'\0') s.pop_back();
  return s;
}

uint32_t processor_count(const DataBlock& block) {
  constexpr uint32_t kProcessorObject = 238;  // the English table's "Processor" on every version
  const Object* o = block.find(kProcessorObject);
  if (!o) return 0;
  uint32_t n = 0;
  for (const Instance& in : o->instances) n += in.name() != u"_Total";
  return n;
}

const Object* DataBlock::find(uint32_t name_index) const {
  for (const Object& o : objects)
    if (o.name_index == name_index) return &o;
  return nullptr;
}

Status parse(ByteView blob, DataBlock& out, const ParseOptions& opt) {
  out = DataBlock{};
  if (blob.size() < kDataBlockSize)
    return corrupt(0, "shorter than PERF_DATA_BLOCK (" + std::to_string(blob.size()) + " bytes)");
  if (!(blob[0] == 'P' && blob[1] == 0 && blob[2] == 'E' && blob[3] == 0 && blob[4] == 'R' && blob[5] == 0 &&
        blob[6] == 'F' && blob[7] == 0))
    return corrupt(0, "signature is not \"PERF\"");
  ByteReader r(blob, data_block::kLittleEndian);
  uint32_t total = 0, hdr_len = 0;
  SystemTime& t = out.system_time;
  if (!r.u32(out.little_endian) || !r.u32(out.version) || !r.u32(out.revision) || !r.u32(total) || !r.u32(hdr_len) ||
      !r.u32(out.num_object_types) || !r.i32(out.default_object) || !r.u16(t.year) || !r.u16(t.month) ||
      !r.u16(t.day_of_week) || !r.u16(t.day) || !r.u16(t.hour) || !r.u16(t.minute) || !r.u16(t.second) ||
      !r.u16(t.ms) || !r.u32(out.reserved) || !r.i64(out.perf_time) || !r.i64(out.perf_freq) ||
      !r.i64(out.perf_time_100ns) || !r.u32(out.system_name_length) || !r.u32(out.system_name_offset))
    return corrupt(data_block::kLittleEndian, "header truncated");
  if (total > blob.size())
    return corrupt(data_block::kTotalByteLength, "TotalByteLength " + std::to_string(total) + " exceeds the " +
                                                     std::to_string(blob.size()) + " bytes present");
  if (total != blob.size() && !opt.tolerant)
    return corrupt(data_block::kTotalByteLength, "TotalByteLength " + std::to_string(total) +
                                                     " differs from the blob size " + std::to_string(blob.size()));
  if (hdr_len < kDataBlockSize || hdr_len > total)
    return corrupt(data_block::kHeaderLength, "HeaderLength " + std::to_string(hdr_len) + " out of range");
  if (Status s = region(blob, kDataBlockSize, hdr_len, out.header_region, "header"); !s.ok()) return s;
  ByteView body = blob.first(total);
  size_t pos = hdr_len;
  for (uint32_t i = 0; i < out.num_object_types; ++i) {
    if (pos == total) {
      // object-count-lies: NumObjectTypes larger than the objects present; stop at TotalByteLength.
      if (opt.tolerant) break;
      return corrupt(pos, "NumObjectTypes " + std::to_string(out.num_object_types) + " but only " + std::to_string(i) +
                              " objects present");
    }
    Object o;
    size_t next = 0;
    if (Status s = parse_object(body, pos, total, o, next, opt); !s.ok()) return s;
    out.objects.push_back(std::move(o));
    pos = next;
  }
  out.trailer = copy(body.subspan(pos, total - pos));
  return Status::Ok();
}

Bytes build(const DataBlock& d) {
  Bytes b;
  b.reserve(64 * 1024);
  for (char c : {'P', 'E', 'R', 'F'}) put_le16(b, uint16_t(c));
  put_le32(b, d.little_endian);
  put_le32(b, d.version);
  put_le32(b, d.revision);
  put_le32(b, 0);  // TotalByteLength, patched
  put_le32(b, kDataBlockSize + uint32_t(d.header_region.size()));
  put_le32(b, d.num_object_types);
  put_le32(b, uint32_t(d.default_object));
  put_systemtime(b, d.system_time);
  put_le32(b, d.reserved);
  put_le64(b, uint64_t(d.perf_time));
  put_le64(b, uint64_t(d.perf_freq));
  put_le64(b, uint64_t(d.perf_time_100ns));
  put_le32(b, d.system_name_length);
  put_le32(b, d.system_name_offset);
  put_bytes(b, d.header_region);
  for (const Object& o : d.objects) build_object(b, o);
  put_bytes(b, d.trailer);
  store_le32(&b[data_block::kTotalByteLength], uint32_t(b.size()));
  return b;
}

void set_system_name(DataBlock& d, std::u16string_view name) {
  d.header_region.clear();
  put_utf16le(d.header_region, name);
  put_le16(d.header_region, 0);
  d.system_name_length = uint32_t(d.header_region.size());
  d.system_name_offset = kDataBlockSize;
  pad_to(d.header_region, 8);
}

Bytes make_counter_block(uint32_t counter_data_bytes) {
  const uint32_t len = align_up(kCounterBlockSize + counter_data_bytes, 8);
  Bytes b(len, 0);
  store_le32(b.data(), len);
  return b;
}

Instance make_instance(std::u16string_view name, uint32_t counter_data_bytes, uint32_t parent_title_index,
                       uint32_t parent_instance, int32_t unique_id) {
  Instance in;
  in.parent_title_index = parent_title_index;
  in.parent_instance = parent_instance;
  in.unique_id = unique_id;
  set_instance_name(in, name);
  in.counter_block = make_counter_block(counter_data_bytes);
  return in;
}

void set_instance_name(Instance& in, std::u16string_view name) {
  in.name_offset = kInstanceDefSize;
  in.name_region.clear();
  put_utf16le(in.name_region, name);
  put_le16(in.name_region, 0);
  in.name_length = uint32_t(in.name_region.size());
  pad_to(in.name_region, 8);  // 24-byte header + padded name keeps the counter block 8-aligned
}

void fix_counts(DataBlock& d) {
  d.num_object_types = uint32_t(d.objects.size());
  for (Object& o : d.objects) {
    o.num_counters = uint32_t(o.counters.size());
    if (o.multi_instance()) o.num_instances = int32_t(o.instances.size());
  }
}

uint64_t read_counter(const Bytes& block, const CounterDef& def) {
  if (def.size == 8 && size_t(def.offset) + 8 <= block.size()) return load_le64(&block[def.offset]);
  if (def.size >= 4 && size_t(def.offset) + 4 <= block.size()) return load_le32(&block[def.offset]);
  return 0;
}

void write_counter(Bytes& block, const CounterDef& def, uint64_t value) {
  if (def.size == 8 && size_t(def.offset) + 8 <= block.size())
    store_le64(&block[def.offset], value);
  else if (def.size == 4 && size_t(def.offset) + 4 <= block.size())
    store_le32(&block[def.offset], uint32_t(value));
}

DataBlock empty_block(std::u16string_view system_name, const SystemTime& t, int64_t perf_time, int64_t perf_freq,
                      int64_t perf_time_100ns) {
  DataBlock d;
  d.system_time = t;
  d.perf_time = perf_time;
  d.perf_freq = perf_freq;
  d.perf_time_100ns = perf_time_100ns;
  set_system_name(d, system_name);
  return d;
}

}  // namespace perfsim::perfdata

namespace perfsim::perfdata {

SystemTime system_time_of(int64_t filetime) {
  const int64_t ms_total = filetime / 10000;
  int64_t days = ms_total / 86400000;
  const int64_t ms_day = ms_total % 86400000;
  SystemTime t;
  t.day_of_week = uint16_t((days + 1) % 7);  // 1601-01-01 was a Monday
  days -= 134774;                            // to days since 1970-01-01
  // civil_from_days (Howard Hinnant's algorithm).
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = unsigned(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  t.year = uint16_t(int64_t(yoe) + era * 400 + (m <= 2));
  t.month = uint16_t(m);
  t.day = uint16_t(d);
  t.hour = uint16_t(ms_day / 3600000);
  t.minute = uint16_t(ms_day / 60000 % 60);
  t.second = uint16_t(ms_day / 1000 % 60);
  t.ms = uint16_t(ms_day % 1000);
  return t;
}

int64_t filetime_of(const SystemTime& t) {
  // days_from_civil (Howard Hinnant's algorithm), then from 1970-01-01 to 1601-01-01.
  const unsigned m = t.month, d = t.day;
  const int64_t y = int64_t(t.year) - (m <= 2);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = unsigned(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + int64_t(doe) - 719468 + 134774;  // 134774: 1601-01-01 .. 1970-01-01
  const int64_t ms = ((days * 24 + t.hour) * 60 + t.minute) * 60000 + int64_t(t.second) * 1000 + t.ms;
  return ms * 10000;
}

}  // namespace perfsim::perfdata
