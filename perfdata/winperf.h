// The constants of Windows' winperf.h that perfsim needs, written from the public documentation.
// Counter types are built from the bit fields below; the named types are the ones Windows uses.
#pragma once
#include <cstdint>

namespace perfsim::winperf {

// Sizes of the fixed structures as Windows lays them out (identical on 32- and 64-bit servers:
// the title pointer fields are DWORDs on the wire).
constexpr uint32_t kDataBlockSize = 88;    // PERF_DATA_BLOCK
constexpr uint32_t kObjectTypeSize = 64;   // PERF_OBJECT_TYPE
constexpr uint32_t kCounterDefSize = 40;   // PERF_COUNTER_DEFINITION
constexpr uint32_t kInstanceDefSize = 24;  // PERF_INSTANCE_DEFINITION
constexpr uint32_t kCounterBlockSize = 4;  // PERF_COUNTER_BLOCK (ByteLength)

// Field offsets, in bytes from the start of each structure, as winperf.h declares the fields
// (Microsoft Learn: "PERF_DATA_BLOCK structure (winperf.h)", "PERF_OBJECT_TYPE structure",
// "PERF_COUNTER_DEFINITION structure", "PERF_INSTANCE_DEFINITION structure", "PERF_COUNTER_BLOCK
// structure"). Every other folder reaches these fields through perfdata/view.h, never by number.
namespace data_block {              // PERF_DATA_BLOCK
constexpr uint32_t kSignature = 0;  // WCHAR Signature[4]: "PERF" in UTF-16LE
constexpr uint32_t kSignatureSize = 8;
constexpr uint32_t kLittleEndian = 8;      // DWORD
constexpr uint32_t kVersion = 12;          // DWORD
constexpr uint32_t kRevision = 16;         // DWORD
constexpr uint32_t kTotalByteLength = 20;  // DWORD
constexpr uint32_t kHeaderLength = 24;     // DWORD: to the first PERF_OBJECT_TYPE
constexpr uint32_t kNumObjectTypes = 28;   // DWORD
constexpr uint32_t kDefaultObject = 32;    // LONG
constexpr uint32_t kSystemTime = 36;       // SYSTEMTIME (8 WORDs, UTC), then 4 bytes of padding
constexpr uint32_t kSystemTimeSize = 16;
constexpr uint32_t kPerfTime = 56;          // LARGE_INTEGER (8-aligned, hence the padding)
constexpr uint32_t kPerfFreq = 64;          // LARGE_INTEGER
constexpr uint32_t kPerfTime100nSec = 72;   // LARGE_INTEGER
constexpr uint32_t kSystemNameLength = 80;  // DWORD, bytes including the NUL
constexpr uint32_t kSystemNameOffset = 84;  // DWORD, from the block's start
}  // namespace data_block

namespace object_type {                         // PERF_OBJECT_TYPE
constexpr uint32_t kTotalByteLength = 0;        // DWORD: this object, definitions and instances
constexpr uint32_t kDefinitionLength = 4;       // DWORD: to the first instance (or the counter block)
constexpr uint32_t kHeaderLength = 8;           // DWORD: to the first PERF_COUNTER_DEFINITION
constexpr uint32_t kObjectNameTitleIndex = 12;  // DWORD
constexpr uint32_t kObjectNameTitle = 16;       // DWORD on the wire (a pointer field)
constexpr uint32_t kObjectHelpTitleIndex = 20;  // DWORD
constexpr uint32_t kObjectHelpTitle = 24;       // DWORD on the wire
constexpr uint32_t kDetailLevel = 28;           // DWORD
constexpr uint32_t kNumCounters = 32;           // DWORD
constexpr uint32_t kDefaultCounter = 36;        // LONG
constexpr uint32_t kNumInstances = 40;          // LONG, PERF_NO_INSTANCES for a single-instance object
constexpr uint32_t kCodePage = 44;              // DWORD
constexpr uint32_t kPerfTime = 48;              // LARGE_INTEGER
constexpr uint32_t kPerfFreq = 56;              // LARGE_INTEGER
}  // namespace object_type

namespace counter_def {                          // PERF_COUNTER_DEFINITION
constexpr uint32_t kByteLength = 0;              // DWORD
constexpr uint32_t kCounterNameTitleIndex = 4;   // DWORD
constexpr uint32_t kCounterNameTitle = 8;        // DWORD on the wire
constexpr uint32_t kCounterHelpTitleIndex = 12;  // DWORD
constexpr uint32_t kCounterHelpTitle = 16;       // DWORD on the wire
constexpr uint32_t kDefaultScale = 20;           // LONG
constexpr uint32_t kDetailLevel = 24;            // DWORD
constexpr uint32_t kCounterType = 28;            // DWORD
constexpr uint32_t kCounterSize = 32;            // DWORD
constexpr uint32_t kCounterOffset = 36;          // DWORD, from the start of the PERF_COUNTER_BLOCK
}  // namespace counter_def

namespace instance_def {                         // PERF_INSTANCE_DEFINITION
constexpr uint32_t kByteLength = 0;              // DWORD: definition and name, to the counter block
constexpr uint32_t kParentObjectTitleIndex = 4;  // DWORD, 0: no parent
constexpr uint32_t kParentObjectInstance = 8;    // DWORD, the parent's position among its instances
constexpr uint32_t kUniqueID = 12;               // LONG, PERF_NO_UNIQUE_ID when named by string
constexpr uint32_t kNameOffset = 16;             // DWORD, from the definition's start
constexpr uint32_t kNameLength = 20;             // DWORD, bytes including the NUL
}  // namespace instance_def

namespace counter_block {            // PERF_COUNTER_BLOCK
constexpr uint32_t kByteLength = 0;  // DWORD: the block and its counter data
}  // namespace counter_block

static_assert(data_block::kSystemNameOffset + 4 == kDataBlockSize);
static_assert(object_type::kPerfFreq + 8 == kObjectTypeSize);
static_assert(counter_def::kCounterOffset + 4 == kCounterDefSize);
static_assert(instance_def::kNameLength + 4 == kInstanceDefSize);
static_assert(counter_block::kByteLength + 4 == kCounterBlockSize);

constexpr int32_t PERF_NO_INSTANCES = -1;
constexpr uint32_t PERF_NO_UNIQUE_ID = 0xFFFFFFFF;  // UniqueID of instances named by string
constexpr uint32_t PERF_DATA_VERSION = 1;
constexpr uint32_t PERF_DATA_REVISION = 1;

// Detail levels.
constexpr uint32_t PERF_DETAIL_NOVICE = 100;
constexpr uint32_t PERF_DETAIL_ADVANCED = 200;
constexpr uint32_t PERF_DETAIL_EXPERT = 300;
constexpr uint32_t PERF_DETAIL_WIZARD = 400;

// Counter type bit fields.
constexpr uint32_t PERF_SIZE_DWORD = 0x00000000;
constexpr uint32_t PERF_SIZE_LARGE = 0x00000100;
constexpr uint32_t PERF_SIZE_ZERO = 0x00000200;
constexpr uint32_t PERF_SIZE_VARIABLE_LEN = 0x00000300;
constexpr uint32_t PERF_SIZE_MASK = 0x00000300;

constexpr uint32_t PERF_TYPE_NUMBER = 0x00000000;
constexpr uint32_t PERF_TYPE_COUNTER = 0x00000400;
constexpr uint32_t PERF_TYPE_TEXT = 0x00000800;
constexpr uint32_t PERF_TYPE_ZERO = 0x00000C00;
constexpr uint32_t PERF_TYPE_MASK = 0x00000C00;

constexpr uint32_t PERF_NUMBER_HEX = 0x00000000;
constexpr uint32_t PERF_NUMBER_DECIMAL = 0x00010000;
constexpr uint32_t PERF_NUMBER_DEC_1000 = 0x00020000;

constexpr uint32_t PERF_COUNTER_VALUE = 0x00000000;
constexpr uint32_t PERF_COUNTER_RATE = 0x00010000;
constexpr uint32_t PERF_COUNTER_FRACTION = 0x00020000;
constexpr uint32_t PERF_COUNTER_BASE = 0x00030000;
constexpr uint32_t PERF_COUNTER_ELAPSED = 0x00040000;
constexpr uint32_t PERF_COUNTER_QUEUELEN = 0x00050000;
constexpr uint32_t PERF_COUNTER_HISTOGRAM = 0x00060000;
constexpr uint32_t PERF_COUNTER_PRECISION = 0x00070000;
constexpr uint32_t PERF_COUNTER_SUBTYPE_MASK = 0x00070000;

constexpr uint32_t PERF_TEXT_UNICODE = 0x00000000;
constexpr uint32_t PERF_TEXT_ASCII = 0x00010000;

constexpr uint32_t PERF_TIMER_TICK = 0x00000000;
constexpr uint32_t PERF_TIMER_100NS = 0x00100000;
constexpr uint32_t PERF_OBJECT_TIMER = 0x00200000;
constexpr uint32_t PERF_TIMER_MASK = 0x00300000;

constexpr uint32_t PERF_DELTA_COUNTER = 0x00400000;
constexpr uint32_t PERF_DELTA_BASE = 0x00800000;
constexpr uint32_t PERF_INVERSE_COUNTER = 0x01000000;
constexpr uint32_t PERF_MULTI_COUNTER = 0x02000000;

constexpr uint32_t PERF_DISPLAY_NO_SUFFIX = 0x00000000;
constexpr uint32_t PERF_DISPLAY_PER_SEC = 0x10000000;
constexpr uint32_t PERF_DISPLAY_PERCENT = 0x20000000;
constexpr uint32_t PERF_DISPLAY_SECONDS = 0x30000000;
constexpr uint32_t PERF_DISPLAY_NOSHOW = 0x40000000;

// Named counter types.
constexpr uint32_t PERF_COUNTER_COUNTER = 0x10410400;
constexpr uint32_t PERF_COUNTER_TIMER = 0x20410500;
constexpr uint32_t PERF_COUNTER_QUEUELEN_TYPE = 0x00450400;
constexpr uint32_t PERF_COUNTER_LARGE_QUEUELEN_TYPE = 0x00450500;
constexpr uint32_t PERF_COUNTER_100NS_QUEUELEN_TYPE = 0x00550500;
constexpr uint32_t PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE = 0x00650500;
constexpr uint32_t PERF_COUNTER_BULK_COUNT = 0x10410500;
constexpr uint32_t PERF_COUNTER_TEXT = 0x00000B00;
constexpr uint32_t PERF_COUNTER_RAWCOUNT = 0x00010000;
constexpr uint32_t PERF_COUNTER_LARGE_RAWCOUNT = 0x00010100;
constexpr uint32_t PERF_COUNTER_RAWCOUNT_HEX = 0x00000000;
constexpr uint32_t PERF_COUNTER_LARGE_RAWCOUNT_HEX = 0x00000100;
constexpr uint32_t PERF_SAMPLE_FRACTION = 0x20C20400;
constexpr uint32_t PERF_SAMPLE_COUNTER = 0x00410400;
constexpr uint32_t PERF_COUNTER_NODATA = 0x40000200;
constexpr uint32_t PERF_COUNTER_TIMER_INV = 0x21410500;
constexpr uint32_t PERF_SAMPLE_BASE = 0x40030401;
constexpr uint32_t PERF_AVERAGE_TIMER = 0x30020400;
constexpr uint32_t PERF_AVERAGE_BASE = 0x40030402;
constexpr uint32_t PERF_AVERAGE_BULK = 0x40020500;
constexpr uint32_t PERF_OBJ_TIME_TIMER = 0x20610500;
constexpr uint32_t PERF_100NSEC_TIMER = 0x20510500;
constexpr uint32_t PERF_100NSEC_TIMER_INV = 0x21510500;
constexpr uint32_t PERF_COUNTER_MULTI_TIMER = 0x22410500;
constexpr uint32_t PERF_COUNTER_MULTI_TIMER_INV = 0x23410500;
constexpr uint32_t PERF_COUNTER_MULTI_BASE = 0x42030500;
constexpr uint32_t PERF_100NSEC_MULTI_TIMER = 0x22510500;
constexpr uint32_t PERF_100NSEC_MULTI_TIMER_INV = 0x23510500;
constexpr uint32_t PERF_RAW_FRACTION = 0x20020400;
constexpr uint32_t PERF_LARGE_RAW_FRACTION = 0x20020500;
constexpr uint32_t PERF_RAW_BASE = 0x40030403;
constexpr uint32_t PERF_LARGE_RAW_BASE = 0x40030500;
constexpr uint32_t PERF_ELAPSED_TIME = 0x30240500;
constexpr uint32_t PERF_COUNTER_HISTOGRAM_TYPE = 0x80000000;
constexpr uint32_t PERF_COUNTER_DELTA = 0x00400400;
constexpr uint32_t PERF_COUNTER_LARGE_DELTA = 0x00400500;
constexpr uint32_t PERF_PRECISION_SYSTEM_TIMER = 0x20470500;
constexpr uint32_t PERF_PRECISION_100NS_TIMER = 0x20570500;
constexpr uint32_t PERF_PRECISION_OBJECT_TIMER = 0x20670500;
constexpr uint32_t PERF_PRECISION_TIMESTAMP = PERF_LARGE_RAW_BASE;

// True for the base types that must directly follow the counter that uses them.
constexpr bool is_base_type(uint32_t t) { return (t & PERF_COUNTER_SUBTYPE_MASK) == PERF_COUNTER_BASE; }
// True for the types whose formatted value needs the base counter that follows them.
constexpr bool needs_base(uint32_t t) {
  return t == PERF_RAW_FRACTION || t == PERF_LARGE_RAW_FRACTION || t == PERF_SAMPLE_FRACTION ||
         t == PERF_AVERAGE_TIMER || t == PERF_AVERAGE_BULK || t == PERF_COUNTER_MULTI_TIMER ||
         t == PERF_COUNTER_MULTI_TIMER_INV || t == PERF_100NSEC_MULTI_TIMER || t == PERF_100NSEC_MULTI_TIMER_INV ||
         t == PERF_PRECISION_SYSTEM_TIMER || t == PERF_PRECISION_100NS_TIMER || t == PERF_PRECISION_OBJECT_TIMER;
}

// How a counter's value moves between two collections, from its CounterType bits (Microsoft,
// winperf.h "Counter Types", learn.microsoft.com/windows/win32/perfctrs/counter-types, and
// "Calculating Counter Values"). Two-sample types are those with PERF_DELTA_COUNTER (counts,
// bulk counts, the timers, precision timers, deltas) plus the averages (PERF_AVERAGE_TIMER and
// PERF_AVERAGE_BULK, PERF_COUNTER_FRACTION without the delta bit whose formulas still take the
// difference of numerator and base): their raw values accumulate, and a consumer divides the
// growth between two samples by the growth of a clock or of the base. A base type
// (PERF_COUNTER_BASE subtype) accumulates when the counter it follows does (PERF_SAMPLE_BASE,
// PERF_AVERAGE_BASE, PERF_PRECISION_TIMESTAMP, PERF_COUNTER_MULTI_BASE); PERF_RAW_BASE under a
// PERF_RAW_FRACTION is read once, like every other single-sample type (PERF_COUNTER_RAWCOUNT,
// PERF_ELAPSED_TIME, ...): an instantaneous value.
constexpr bool two_sample(uint32_t t) {
  return (t & PERF_DELTA_COUNTER) || t == PERF_AVERAGE_TIMER || t == PERF_AVERAGE_BULK;
}
// True for a counter whose value accumulates (a two-sample type, or the base that follows one):
// what a live host keeps growing with time; the rest hold their last collected value.
constexpr bool accumulates(uint32_t type, uint32_t previous_type) {
  return two_sample(type) || (is_base_type(type) && two_sample(previous_type));
}

}  // namespace perfsim::winperf
