// Zero-copy views of a PERF_DATA_BLOCK and what it holds (objects, counter definitions, instances,
// counter blocks), for the code that reads or patches perf data in place: the capture codec's
// layout, the replayer's walk and live patching. model.h is the copying, rebuildable form.
//
// Contract:
//  - A view is made by one checked call (view_block, ObjectCursor::next, ...); once made, every
//    accessor reads inside the bytes the check covered, so accessors do no bounds checks. A
//    structure that does not fit gives no view: cursors stop there and say damaged().
//  - Offsets a view reports (ObjectView::at, CounterBlockView::at, ...) are from the start of the
//    enclosing structure (the block for objects, the object for what is inside it), so a copy of
//    an object's bytes (an assembled answer) can be patched with the same numbers.
//  - The Mutable* types write the fields Windows' answers move (clocks, lengths, counts) through
//    a pointer the caller got from a view of the same layout; they check nothing.
//  - Nothing here allocates.
#pragma once
#include <cstdint>

#include "core/bytes.h"
#include "perfdata/winperf.h"

namespace perfsim::perfdata {

// A counter value of `size` bytes (8: LARGE, else DWORD) at p; one load or store of that width
// (core/bytes.h).
inline uint64_t load_counter(const uint8_t* p, uint32_t size) { return size == 8 ? load_le64(p) : load_le32(p); }
inline void store_counter(uint8_t* p, uint32_t size, uint64_t v) {
  if (size == 8)
    store_le64(p, v);
  else
    store_le32(p, uint32_t(v));
}

// PERF_DATA_BLOCK. Checked: the signature, 88 bytes present, HeaderLength in [88, end].
struct BlockView {
  ByteView bytes;              // the blob as given
  uint32_t end = 0;            // min(TotalByteLength, bytes.size()): where objects must end
  uint32_t header_length = 0;  // HeaderLength: the first object starts here

  uint32_t total_byte_length() const { return field32(winperf::data_block::kTotalByteLength); }
  uint32_t num_object_types() const { return field32(winperf::data_block::kNumObjectTypes); }
  // The system name's bytes (SystemNameLength of them, NUL included) when they lie in the blob.
  bool system_name(ByteView& out) const;
  uint32_t field32(uint32_t off) const { return load_le32(bytes.data() + off); }
  uint64_t field64(uint32_t off) const { return load_le64(bytes.data() + off); }
};
// True when `blob` starts with "PERF" in UTF-16LE and holds the 88-byte header.
bool has_block_header(ByteView blob);
// False (and `out` untouched) when `blob` is not a usable PERF_DATA_BLOCK (see BlockView).
bool view_block(ByteView blob, BlockView& out);

// PERF_OBJECT_TYPE. Checked: 64 bytes, TotalByteLength >= 64 and inside the block's end.
struct ObjectView {
  const uint8_t* p = nullptr;
  uint32_t at = 0;      // from the block's start
  uint32_t length = 0;  // TotalByteLength

  uint32_t field32(uint32_t off) const { return load_le32(p + off); }
  uint64_t perf_time() const { return load_le64(p + winperf::object_type::kPerfTime); }
  uint64_t perf_freq() const { return load_le64(p + winperf::object_type::kPerfFreq); }
  uint32_t name_index() const { return field32(winperf::object_type::kObjectNameTitleIndex); }
  uint32_t header_length() const { return field32(winperf::object_type::kHeaderLength); }
  uint32_t definition_length() const { return field32(winperf::object_type::kDefinitionLength); }
  uint32_t num_counters() const { return field32(winperf::object_type::kNumCounters); }
  int32_t num_instances() const { return int32_t(field32(winperf::object_type::kNumInstances)); }
  bool multi_instance() const { return num_instances() != winperf::PERF_NO_INSTANCES; }
  // HeaderLength >= 64, DefinitionLength between it and TotalByteLength: the definitions, the
  // instances and the counter block can be looked for. Cursors below need it.
  bool lengths_consistent() const;
};

// The objects of a block in order: at most NumObjectTypes, each inside the block's end.
class ObjectCursor {
 public:
  explicit ObjectCursor(const BlockView& b) : b_(b), pos_(b.header_length), left_(b.num_object_types()) {}
  // The next object; false at the end (NumObjectTypes seen, or the block's end reached) or at an
  // object that does not fit (damaged()).
  bool next(ObjectView& o);
  bool damaged() const { return damaged_; }

 private:
  const BlockView& b_;
  uint32_t pos_;
  uint32_t left_;
  bool damaged_ = false;
};

// PERF_COUNTER_DEFINITION. Checked: 40 bytes inside DefinitionLength (ByteLength is not: a
// definition shorter than 40 bytes is the last one read).
struct CounterDefView {
  const uint8_t* p = nullptr;
  uint32_t field32(uint32_t off) const { return load_le32(p + off); }
  uint32_t name_index() const { return field32(winperf::counter_def::kCounterNameTitleIndex); }
  uint32_t type() const { return field32(winperf::counter_def::kCounterType); }
  uint32_t size() const { return field32(winperf::counter_def::kCounterSize); }
  uint32_t offset() const { return field32(winperf::counter_def::kCounterOffset); }
};

// The counter definitions of an object whose lengths_consistent(): at most NumCounters.
class CounterDefCursor {
 public:
  explicit CounterDefCursor(const ObjectView& o)
      : o_(o), pos_(o.header_length()), end_(o.definition_length()), left_(o.num_counters()) {}
  bool next(CounterDefView& c);

 private:
  const ObjectView& o_;
  uint64_t pos_;
  uint32_t end_;
  uint32_t left_;
};

// PERF_COUNTER_BLOCK. Checked: ByteLength >= 4 and the block inside its object.
struct CounterBlockView {
  uint32_t at = 0;      // from the object's start
  uint32_t length = 0;  // ByteLength
  uint32_t data() const { return at + winperf::kCounterBlockSize; }
  // True when `size` bytes at `offset` (a definition's CounterOffset) lie inside the block.
  bool holds(uint32_t offset, uint32_t size) const { return uint64_t(offset) + size <= length; }
};
// The counter block at `at` (from the object's start); false when it does not fit.
bool counter_block_at(const ObjectView& o, uint64_t at, CounterBlockView& out);
// A single-instance object's counter block (at DefinitionLength).
inline bool single_block(const ObjectView& o, CounterBlockView& out) {
  return counter_block_at(o, o.definition_length(), out);
}

// PERF_INSTANCE_DEFINITION and the counter block after it. Checked: 24 bytes, ByteLength >= 24,
// both inside the object.
struct InstanceView {
  const uint8_t* p = nullptr;
  uint32_t at = 0;      // from the object's start
  uint32_t length = 0;  // ByteLength
  CounterBlockView block;

  uint32_t field32(uint32_t off) const { return load_le32(p + off); }
  uint32_t parent_title_index() const { return field32(winperf::instance_def::kParentObjectTitleIndex); }
  uint32_t parent_instance() const { return field32(winperf::instance_def::kParentObjectInstance); }
  uint32_t unique_id() const { return field32(winperf::instance_def::kUniqueID); }
  uint32_t name_offset() const { return field32(winperf::instance_def::kNameOffset); }
  uint32_t name_length() const { return field32(winperf::instance_def::kNameLength); }
  // The name's bytes (NameLength of them, NUL included) when they lie inside the definition.
  bool name(ByteView& out) const;
};

// The instances of a multi-instance object whose lengths_consistent(): at most NumInstances.
class InstanceCursor {
 public:
  explicit InstanceCursor(const ObjectView& o)
      : o_(o), pos_(o.definition_length()), left_(o.num_instances() > 0 ? uint32_t(o.num_instances()) : 0) {}
  // The next instance; false after NumInstances or at one that does not fit (damaged()).
  bool next(InstanceView& i);
  bool damaged() const { return damaged_; }

 private:
  const ObjectView& o_;
  uint64_t pos_;
  uint32_t left_;
  bool damaged_ = false;
};

// The fields a live answer moves, written in place. `p` is the block's (or the object's) first
// byte in a buffer laid out as a view of it saw.
struct MutableBlock {
  uint8_t* p;
  uint32_t field32(uint32_t off) const { return load_le32(p + off); }
  void set32(uint32_t off, uint32_t v) const { store_le32(p + off, v); }
  uint64_t field64(uint32_t off) const { return load_le64(p + off); }
  void set64(uint32_t off, uint64_t v) const { store_le64(p + off, v); }
  uint32_t total_byte_length() const { return field32(winperf::data_block::kTotalByteLength); }
  void set_total_byte_length(uint32_t v) const { set32(winperf::data_block::kTotalByteLength, v); }
  void set_header_length(uint32_t v) const { set32(winperf::data_block::kHeaderLength, v); }
  uint32_t num_object_types() const { return field32(winperf::data_block::kNumObjectTypes); }
  void set_num_object_types(uint32_t v) const { set32(winperf::data_block::kNumObjectTypes, v); }
  void set_system_name(uint32_t offset, uint32_t length) const {
    set32(winperf::data_block::kSystemNameOffset, offset);
    set32(winperf::data_block::kSystemNameLength, length);
  }
  uint64_t perf_time() const { return field64(winperf::data_block::kPerfTime); }
  void set_perf_time(uint64_t v) const { set64(winperf::data_block::kPerfTime, v); }
  uint64_t perf_freq() const { return field64(winperf::data_block::kPerfFreq); }
  uint64_t perf_time_100ns() const { return field64(winperf::data_block::kPerfTime100nSec); }
  void set_perf_time_100ns(uint64_t v) const { set64(winperf::data_block::kPerfTime100nSec, v); }
  uint8_t* system_time() const { return p + winperf::data_block::kSystemTime; }  // kSystemTimeSize bytes
};

// A DWORD field (winperf::data_block::k*) of a blob the caller checked holds kDataBlockSize bytes:
// for answers looked at only in their header (cut to it, or recognised as header-only).
inline uint32_t block_field32(ByteView blob, uint32_t field) { return load_le32(blob.data() + field); }

struct MutableObject {
  uint8_t* p;
  uint64_t perf_time() const { return load_le64(p + winperf::object_type::kPerfTime); }
  void set_perf_time(uint64_t v) const { store_le64(p + winperf::object_type::kPerfTime, v); }
  uint64_t perf_freq() const { return load_le64(p + winperf::object_type::kPerfFreq); }
};

}  // namespace perfsim::perfdata
