// The perf-data model: PERF_DATA_BLOCK and everything inside it, as Windows lays it out.
//
// Contract:
//  - parse() never reads outside the buffer it is given; every problem it reports names the byte
//    offset. Strict mode also rejects a blob whose size differs from TotalByteLength and a
//    NumObjectTypes larger than the objects present; tolerant mode (the default) accepts both, as
//    collectors must (object-count-lies), stopping at TotalByteLength. Finer layout defects
//    (alignment, slack, unterminated names) are the validator's job (validate.h), not parse()'s.
//  - build(parse(blob)) is byte-identical to the blob's first TotalByteLength bytes for every blob
//    parse() accepts. To make that possible the model keeps, beside the decoded fields, the raw bytes
//    Windows leaves between structures (name padding, counter block padding, trailing bytes) and the
//    declared counts (NumObjectTypes, NumCounters, NumInstances) as they were. Lengths
//    (TotalByteLength, HeaderLength, DefinitionLength, instance ByteLength) are recomputed by
//    build() from the content.
//  - Code that creates data (synth, lodctr providers) uses the make_* helpers, which lay things out
//    as Windows does (8-byte alignment, names NUL-terminated), then fix_counts().
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"
#include "perfdata/winperf.h"

namespace perfsim::perfdata {

struct SystemTime {  // SYSTEMTIME, UTC
  uint16_t year = 0, month = 0, day_of_week = 0, day = 0, hour = 0, minute = 0, second = 0, ms = 0;
};

struct CounterDef {  // PERF_COUNTER_DEFINITION
  uint32_t name_index = 0;
  uint32_t name_title = 0;  // pointer field, 0 on the wire
  uint32_t help_index = 0;
  uint32_t help_title = 0;
  int32_t default_scale = 0;
  uint32_t detail_level = winperf::PERF_DETAIL_NOVICE;
  uint32_t type = 0;
  uint32_t size = 4;
  uint32_t offset = 0;  // into the counter block, which starts with its own ByteLength DWORD
  Bytes extra;          // bytes past the 40-byte definition inside its ByteLength (normally none)
};

struct Instance {  // PERF_INSTANCE_DEFINITION + name + PERF_COUNTER_BLOCK
  uint32_t parent_title_index = 0;
  uint32_t parent_instance = 0;
  int32_t unique_id = -1;  // PERF_NO_UNIQUE_ID when named by string
  uint32_t name_offset = winperf::kInstanceDefSize;
  uint32_t name_length = 0;  // bytes, including the NUL
  Bytes name_region;         // bytes from the end of the 24-byte header to ByteLength
  Bytes counter_block;       // from the block's ByteLength DWORD to the next instance/object

  std::u16string name() const;  // decoded from name_region via name_offset/name_length
};

struct Object {  // PERF_OBJECT_TYPE
  uint32_t name_index = 0;
  uint32_t name_title = 0;
  uint32_t help_index = 0;
  uint32_t help_title = 0;
  uint32_t detail_level = winperf::PERF_DETAIL_NOVICE;
  uint32_t num_counters = 0;  // as declared
  int32_t default_counter = 0;
  int32_t num_instances = winperf::PERF_NO_INSTANCES;  // as declared
  uint32_t code_page = 0;
  int64_t perf_time = 0;
  int64_t perf_freq = 0;
  Bytes header_extra;  // bytes between 64 and HeaderLength (normally none)
  std::vector<CounterDef> counters;
  Bytes definitions_extra;          // bytes between the last definition and DefinitionLength
  std::vector<Instance> instances;  // empty when num_instances == PERF_NO_INSTANCES
  Bytes counter_block;              // single-instance object: the one PERF_COUNTER_BLOCK (padded)
  Bytes trailer;                    // bytes after the data up to TotalByteLength

  bool multi_instance() const { return num_instances != winperf::PERF_NO_INSTANCES; }
};

struct DataBlock {  // PERF_DATA_BLOCK
  uint32_t little_endian = 1;
  uint32_t version = winperf::PERF_DATA_VERSION;
  uint32_t revision = winperf::PERF_DATA_REVISION;
  uint32_t num_object_types = 0;  // as declared (may lie: object-count-lies)
  int32_t default_object = 0;
  SystemTime system_time;
  uint32_t reserved = 0;  // padding after SystemTime
  int64_t perf_time = 0;
  int64_t perf_freq = 0;
  int64_t perf_time_100ns = 0;
  uint32_t system_name_length = 0;  // bytes, including the NUL
  uint32_t system_name_offset = winperf::kDataBlockSize;
  Bytes header_region;  // bytes from 88 to HeaderLength: the system name and padding
  std::vector<Object> objects;
  Bytes trailer;  // bytes after the last object up to TotalByteLength

  std::u16string system_name() const;
  const Object* find(uint32_t name_index) const;
};

struct ParseOptions {
  bool tolerant = true;  // accept the content quirks real hosts show (see contract above)
};

Status parse(ByteView blob, DataBlock& out, const ParseOptions& opt = {});
// The processors a host has by its Processor object (title index 238): its instances but _Total,
// one per logical processor (Microsoft, "Processor object": an instance per processor and the
// _Total average). 0 when the block has no Processor object.
uint32_t processor_count(const DataBlock& block);
Bytes build(const DataBlock& block);
// One object's bytes appended to `out` as build() lays them (TotalByteLength, DefinitionLength and
// HeaderLength computed), for code that adds an object to an answer (a lodctr event's).
void append_object(Bytes& out, const Object& o);

// Layout helpers for code that creates data.
void set_system_name(DataBlock& block, std::u16string_view name);  // header_region + offset/length
Instance make_instance(std::u16string_view name, uint32_t counter_data_bytes, uint32_t parent_title_index = 0,
                       uint32_t parent_instance = 0, int32_t unique_id = -1);
// Renames an instance, laid out as make_instance does (name right after the 24-byte header,
// NUL-terminated, padded to 8 bytes so the counter block stays 8-aligned); build() then
// recomputes ByteLength and every enclosing TotalByteLength. `perfsim redact` uses it.
void set_instance_name(Instance& in, std::u16string_view name);
Bytes make_counter_block(uint32_t counter_data_bytes);  // ByteLength DWORD + zeroed data, 8-aligned
void fix_counts(DataBlock& block);                      // declared counts := what is present

// Raw counter access inside a counter block (offset counts from the block start).
uint64_t read_counter(const Bytes& counter_block, const CounterDef& def);
void write_counter(Bytes& counter_block, const CounterDef& def, uint64_t value);

// An empty PERF_DATA_BLOCK as Windows answers an unknown value name.
DataBlock empty_block(std::u16string_view system_name, const SystemTime& t, int64_t perf_time, int64_t perf_freq,
                      int64_t perf_time_100ns);

}  // namespace perfsim::perfdata
