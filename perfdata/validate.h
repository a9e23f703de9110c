// Structural validator for PERF_DATA_BLOCK blobs: the checks Windows' perflib applies to provider
// buffers (ExtCounterTestLevel 1: lengths add up, 8-byte alignment, counts consistent) and more.
//
// Contract:
//  - validate() walks the RAW bytes itself, so it also reports defects that make parse() fail
//    (e.g. an instance ByteLength chain running past its object). It never reads outside `blob`.
//  - Each finding has a severity, a stable check id (the k* constants below; tools and tests key on
//    them), a message naming the object (index and title index), instance (index and name) or
//    counter (index and title index), and the byte offset in the blob it is about. For a bad field
//    the offset is the field's; for a misplaced structure it is the structure's start.
//  - error: a consumer reading the blob goes wrong (parse() fails, values read from the wrong bytes).
//    warning: Windows tolerates it (and perflib may log an event). info: real hosts do this.
//  - A blob with no error findings is accepted by parse() in tolerant mode.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace perfsim::perfdata {

enum class Severity { kInfo, kWarning, kError };

struct Finding {
  Severity severity = Severity::kError;
  std::string check;    // stable id, one of the k* constants
  std::string message;  // names object/instance/counter
  size_t offset = 0;    // byte offset in the blob
};

struct ValidateOptions {
  Severity min_severity = Severity::kInfo;  // findings below this are dropped
  size_t max_findings = 1000;               // bounds the report on garbage input; the last finding says so
  // Counter block layouts (layout.h): given the host's Windows version (major * 100 + minor), an
  // object the table has a row for must have each counter at the row's offset (kCounterLayout).
  // Objects are found by name through `names` (009 index -> name) when given, else by fixed index.
  // 0: not checked (the blob alone does not say which Windows wrote it).
  uint32_t layout_version = 0;
  const std::map<uint32_t, std::string>* names = nullptr;
};

std::vector<Finding> validate(ByteView blob, const ValidateOptions& opt = {});

const char* severity_name(Severity s);    // "error", "warning", "info"
std::string to_string(const Finding& f);  // "error object.total-length @1234: message"
bool has_errors(const std::vector<Finding>& findings);

// Check ids. PERF_DATA_BLOCK:
inline constexpr const char kBlockTruncated[] = "block.truncated";           // shorter than 88 bytes
inline constexpr const char kBlockSignature[] = "block.signature";           // not "PERF" in UTF-16
inline constexpr const char kBlockByteOrder[] = "block.byte-order";          // LittleEndian != 1
inline constexpr const char kBlockVersion[] = "block.version";               // Version != 1 (warning)
inline constexpr const char kBlockRevision[] = "block.revision";             // Revision != 1 (warning)
inline constexpr const char kBlockTotalLength[] = "block.total-length";      // past the blob, or < 88
inline constexpr const char kBlockTrailingBytes[] = "block.trailing-bytes";  // blob longer than TotalByteLength
inline constexpr const char kBlockTotalAlignment[] = "block.total-length-alignment";  // not a multiple of 8
inline constexpr const char kBlockHeaderLength[] = "block.header-length";
inline constexpr const char kSystemNameBounds[] = "block.system-name-bounds";
inline constexpr const char kSystemNameOddLength[] = "block.system-name-odd-length";
inline constexpr const char kSystemNameUnterminated[] = "block.system-name-unterminated";
inline constexpr const char kObjectCountLies[] = "block.object-count-lies";    // NumObjectTypes > present (warning)
inline constexpr const char kObjectCountShort[] = "block.object-count-short";  // NumObjectTypes < present
inline constexpr const char kObjectsLength[] =
    "block.objects-length";  // object lengths don't add up to TotalByteLength
// PERF_OBJECT_TYPE:
inline constexpr const char kObjectTotalLength[] = "object.total-length";
inline constexpr const char kObjectHeaderLength[] = "object.header-length";
inline constexpr const char kObjectDefinitionLength[] = "object.definition-length";
inline constexpr const char kObjectAlignment[] = "object.alignment";
inline constexpr const char kObjectNumInstances[] = "object.num-instances";  // negative other than -1
inline constexpr const char kObjectCounterCount[] = "object.counter-count";  // NumCounters defs don't fit
inline constexpr const char kObjectDefinitionsSlack[] = "object.definitions-slack";
inline constexpr const char kObjectInstanceCount[] = "object.instance-count";  // chain ends before NumInstances
inline constexpr const char kObjectTrailingBytes[] = "object.trailing-bytes";  // beyond 8-byte padding
// PERF_INSTANCE_DEFINITION:
inline constexpr const char kInstanceLength[] = "instance.length";
inline constexpr const char kInstanceAlignment[] = "instance.alignment";
inline constexpr const char kInstanceNameBounds[] = "instance.name-bounds";
inline constexpr const char kInstanceNameOddLength[] = "instance.name-odd-length";
inline constexpr const char kInstanceNameUnterminated[] = "instance.name-unterminated";
inline constexpr const char kInstanceDuplicateName[] = "instance.duplicate-name";  // info
// A name past PDH_MAX_INSTANCE_NAME (perfdata/limits.h; warning: PDH cannot name the instance).
inline constexpr const char kInstanceNameLength[] = "instance.name-length";
inline constexpr const char kInstanceParentObject[] = "instance.parent-object";      // parent not in the blob
inline constexpr const char kInstanceParentInstance[] = "instance.parent-instance";  // index past parent's instances
// PERF_COUNTER_BLOCK:
inline constexpr const char kCounterBlockLength[] = "counterblock.length";
inline constexpr const char kCounterBlockAlignment[] = "counterblock.alignment";
// PERF_COUNTER_DEFINITION:
inline constexpr const char kCounterLength[] = "counter.length";
inline constexpr const char kCounterSizeType[] = "counter.size-type";  // CounterSize vs PERF_SIZE_* of the type
inline constexpr const char kCounterOffset[] = "counter.offset";       // overlaps the block's ByteLength
inline constexpr const char kCounterOutsideBlock[] = "counter.outside-block";
inline constexpr const char kCounterBaseMissing[] = "counter.base-missing";
inline constexpr const char kCounterBaseOrphan[] = "counter.base-orphan";
inline constexpr const char kCounterDuplicate[] = "counter.duplicate";
// CounterOffset differs from where Windows puts the counter (layout.h; warning: readers that honour
// CounterOffset are fine, those walking the block in definition order read the wrong bytes).
inline constexpr const char kCounterLayout[] = "counter.layout";
// The report itself:
inline constexpr const char kTooManyFindings[] = "validate.too-many-findings";

}  // namespace perfsim::perfdata
