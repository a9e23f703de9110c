// Structural validation of PERF_DATA_BLOCK blobs (see validate.h for the contract).
// The walk mirrors parse() but keeps going after a defect where the next structure can still be
// found, and records what it saw so cross-structure checks (counters vs blocks, parents) can run.
#include "perfdata/validate.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "core/utf16.h"
#include "perfdata/layout.h"
#include "perfdata/limits.h"
#include "perfdata/winperf.h"

namespace perfsim::perfdata {
namespace {

using namespace winperf;
namespace db = winperf::data_block;
namespace ot = winperf::object_type;
using std::to_string;

constexpr Severity kError = Severity::kError;
constexpr Severity kWarning = Severity::kWarning;
constexpr Severity kInfo = Severity::kInfo;

struct CounterInfo {
  size_t at = 0;
  uint32_t title = 0, type = 0, size = 0, offset = 0;
};

struct BlockInfo {
  size_t at = 0;
  uint32_t length = 0;
  int instance = -1;  // -1: the single-instance object's block
};

struct InstanceInfo {
  size_t at = 0;
  uint32_t parent_title = 0, parent_instance = 0;
  int32_t unique_id = -1;
  std::u16string name;
};

struct ObjectInfo {
  size_t at = 0;
  size_t index = 0;
  uint32_t title = 0;
  bool multi = false;
  bool misaligned = false;  // one misalignment shifts all that follows: report only the first
  std::vector<CounterInfo> counters;
  std::vector<InstanceInfo> instances;
  std::vector<BlockInfo> blocks;
};

struct Header {
  size_t limit = 0;  // where objects must end: TotalByteLength, or the blob end if that is unusable
  uint32_t hdr_len = 0;
  uint32_t num_objects = 0;
};

class Report {
 public:
  explicit Report(const ValidateOptions& opt) : opt_(opt) {}
  void add(Severity s, const char* check, size_t at, std::string msg) {
    if (s < opt_.min_severity) return;
    if (out_.size() >= opt_.max_findings) {
      ++dropped_;
      return;
    }
    out_.push_back(Finding{s, check, std::move(msg), at});
  }
  const ValidateOptions& options() const { return opt_; }
  std::vector<Finding> finish() {
    if (dropped_) out_.push_back(Finding{kInfo, kTooManyFindings, to_string(dropped_) + " more findings dropped", 0});
    return std::move(out_);
  }

 private:
  const ValidateOptions& opt_;
  std::vector<Finding> out_;
  size_t dropped_ = 0;
};

std::string hex32(uint32_t v) {
  char b[11];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

std::string obj_label(const ObjectInfo& o) {
  return "object #" + to_string(o.index) + " (title " + to_string(o.title) + ")";
}
std::string inst_label(const ObjectInfo& o, size_t k, const InstanceInfo& in) {
  std::string s = obj_label(o) + " instance #" + to_string(k);
  if (!in.name.empty()) return s + " " + quote_input(utf16_to_utf8(in.name), kQuoteChars, '"');
  if (in.unique_id != -1) return s + " (UniqueID " + to_string(in.unique_id) + ")";
  return s;
}
std::string ctr_label(const ObjectInfo& o, size_t k, uint32_t title) {
  return obj_label(o) + " counter #" + to_string(k) + " (title " + to_string(title) + ")";
}

struct NameChecks {
  const char* bounds;
  const char* odd_length;
  const char* unterminated;
};
constexpr NameChecks kSystemNameChecks{kSystemNameBounds, kSystemNameOddLength, kSystemNameUnterminated};
constexpr NameChecks kInstanceNameChecks{kInstanceNameBounds, kInstanceNameOddLength, kInstanceNameUnterminated};

// A UTF-16 name at base+off of len bytes that must lie in [base+min_off, base+max_off); the caller
// guarantees base+max_off is inside the blob. Returns the name without its NUL, or "" if unusable.
std::u16string check_name(ByteView blob, Report& rep, const NameChecks& ids, const std::string& who, size_t field_at,
                          size_t base, uint32_t min_off, uint32_t max_off, uint32_t off, uint32_t len) {
  if (len == 0) return {};
  if (off < min_off || size_t(off) + len > max_off) {
    rep.add(kError, ids.bounds, field_at,
            who + " name (offset " + to_string(off) + ", " + to_string(len) + " bytes) lies outside its " +
                to_string(min_off) + ".." + to_string(max_off) + " byte container");
    return {};
  }
  const size_t at = base + off;
  if (len % 2) rep.add(kWarning, ids.odd_length, at, who + " name length " + to_string(len) + " is odd for UTF-16");
  std::u16string s = load_utf16le(&blob[at], len / 2);
  if (s.empty() || s.back() != u'\0') rep.add(kWarning, ids.unterminated, at, who + " name is not NUL-terminated");
  while (!s.empty() && s.back() == u'\0') s.pop_back();
  return s;
}

std::optional<Header> check_header(ByteView blob, Report& rep) {
  if (blob.size() < kDataBlockSize) {
    rep.add(kError, kBlockTruncated, blob.size(),
            "blob has " + to_string(blob.size()) + " bytes, PERF_DATA_BLOCK needs " + to_string(kDataBlockSize));
    return std::nullopt;
  }
  static constexpr uint8_t kSignature[8] = {'P', 0, 'E', 0, 'R', 0, 'F', 0};
  if (!std::equal(std::begin(kSignature), std::end(kSignature), blob.begin())) {
    rep.add(kError, kBlockSignature, db::kSignature, "signature is not \"PERF\" in UTF-16LE: not a PERF_DATA_BLOCK");
    return std::nullopt;
  }
  ByteReader r(blob, db::kLittleEndian);  // 88 bytes are present: the reads below cannot fail
  uint32_t little_endian = 0, version = 0, revision = 0, total = 0, name_len = 0, name_off = 0;
  Header h;
  r.u32(little_endian), r.u32(version), r.u32(revision), r.u32(total), r.u32(h.hdr_len), r.u32(h.num_objects);
  r.seek(db::kSystemNameLength), r.u32(name_len), r.u32(name_off);
  if (little_endian != 1)
    rep.add(kError, kBlockByteOrder, db::kLittleEndian, "LittleEndian is " + to_string(little_endian) + ", not 1");
  if (version != PERF_DATA_VERSION)
    rep.add(kWarning, kBlockVersion, db::kVersion, "Version is " + to_string(version) + ", not 1");
  if (revision != PERF_DATA_REVISION)
    rep.add(kWarning, kBlockRevision, db::kRevision, "Revision is " + to_string(revision) + ", not 1");
  h.limit = total;
  if (total < kDataBlockSize || total > blob.size()) {
    rep.add(kError, kBlockTotalLength, db::kTotalByteLength,
            "TotalByteLength " + to_string(total) + " out of range for a blob of " + to_string(blob.size()) + " bytes");
    h.limit = blob.size();
  } else if (total < blob.size()) {
    // perflib's guard-byte check: data written past the length the provider reported.
    rep.add(kWarning, kBlockTrailingBytes, total,
            to_string(blob.size() - total) + " bytes follow TotalByteLength " + to_string(total));
  }
  if (total % 8)
    rep.add(kWarning, kBlockTotalAlignment, db::kTotalByteLength,
            "TotalByteLength " + to_string(total) + " is not a multiple of 8");
  if (h.hdr_len < kDataBlockSize || h.hdr_len > h.limit) {
    rep.add(kError, kBlockHeaderLength, db::kHeaderLength,
            "HeaderLength " + to_string(h.hdr_len) + " out of range " + to_string(kDataBlockSize) + ".." +
                to_string(h.limit));
    return std::nullopt;
  }
  check_name(blob, rep, kSystemNameChecks, "system", db::kSystemNameOffset, 0, kDataBlockSize, h.hdr_len, name_off,
             name_len);
  return h;
}

std::optional<uint32_t> size_for_type(uint32_t type) {
  switch (type & PERF_SIZE_MASK) {
    case PERF_SIZE_DWORD:
      return 4;
    case PERF_SIZE_LARGE:
      return 8;
    case PERF_SIZE_ZERO:
      return 0;
    default:
      return std::nullopt;  // PERF_SIZE_VARIABLE_LEN: any size
  }
}

void check_alignment(Report& rep, ObjectInfo& o, const char* check, size_t at, const std::string& who) {
  if (at % 8 == 0 || o.misaligned) return;
  o.misaligned = true;
  rep.add(kWarning, check, at,
          who + " starts at " + to_string(at) + ", not a multiple of 8 (what follows in the object inherits it)");
}

void check_counter_fields(Report& rep, const CounterInfo& c, const std::string& who) {
  if (auto want = size_for_type(c.type); want && c.size != *want)
    rep.add(kError, kCounterSizeType, c.at + winperf::counter_def::kCounterSize,
            who + " CounterSize " + to_string(c.size) + " but its type " + hex32(c.type) + " says " + to_string(*want));
  if (c.size > 0 && c.offset < kCounterBlockSize)
    rep.add(kError, kCounterOffset, c.at + winperf::counter_def::kCounterOffset,
            who + " CounterOffset " + to_string(c.offset) + " overlaps the counter block's ByteLength");
}

// Walks NumCounters definitions in [pos, defs_end). False when they do not all fit.
bool check_definitions(ByteView blob, Report& rep, ObjectInfo& o, size_t pos, size_t defs_end, uint32_t declared) {
  for (uint32_t k = 0; k < declared; ++k) {
    if (defs_end - pos < kCounterDefSize) {
      rep.add(kError, kObjectCounterCount, o.at + ot::kNumCounters,
              obj_label(o) + " NumCounters " + to_string(declared) + " but DefinitionLength holds only " +
                  to_string(k) + " definitions");
      return false;
    }
    ByteReader r(blob.first(defs_end), pos);
    uint32_t len = 0;
    CounterInfo c;
    c.at = pos;
    r.u32(len), r.u32(c.title), r.skip(20), r.u32(c.type), r.u32(c.size), r.u32(c.offset);
    const std::string who = ctr_label(o, k, c.title);
    if (len < kCounterDefSize || len > defs_end - pos) {
      rep.add(kError, kCounterLength, pos,
              who + " ByteLength " + to_string(len) + " out of range (" + to_string(defs_end - pos) +
                  " bytes left before DefinitionLength)");
      return false;
    }
    check_counter_fields(rep, c, who);
    o.counters.push_back(c);
    pos += len;
  }
  if (pos < defs_end) {
    const size_t n = defs_end - pos;
    rep.add(kWarning, kObjectDefinitionsSlack, pos,
            obj_label(o) + " has " + to_string(n) + " bytes between its last counter definition and DefinitionLength" +
                (n >= kCounterDefSize ? " (room for undeclared definitions: NumCounters too small?)" : ""));
  }
  return true;
}

// Base counters must directly follow their user; titles repeat in some providers (quirk).
void check_counter_sequence(Report& rep, const ObjectInfo& o) {
  const auto& cs = o.counters;
  std::map<uint32_t, size_t> first_by_title;
  for (size_t k = 0; k < cs.size(); ++k) {
    const CounterInfo& c = cs[k];
    const std::string who = ctr_label(o, k, c.title);
    if (needs_base(c.type) && (k + 1 == cs.size() || !is_base_type(cs[k + 1].type)))
      rep.add(kError, kCounterBaseMissing, c.at,
              who + " of type " + hex32(c.type) + " is not directly followed by a base counter");
    if (is_base_type(c.type)) {
      if (k == 0 || !needs_base(cs[k - 1].type))
        rep.add(kWarning, kCounterBaseOrphan, c.at,
                who + " is a base counter (type " + hex32(c.type) + ") but the counter before it uses none");
      continue;  // a base often shares its user's title index (PhysicalDisk): not a duplicate
    }
    if (c.title == 0) continue;
    auto [it, fresh] = first_by_title.emplace(c.title, k);
    if (!fresh)
      rep.add(kWarning, kCounterDuplicate, c.at, who + " repeats the title index of counter #" + to_string(it->second));
  }
}

// Each counter where the layout table puts it for the host's version (ValidateOptions::layout_version).
void check_counter_layout(Report& rep, const ObjectInfo& o) {
  const ValidateOptions& opt = rep.options();
  if (opt.layout_version == 0) return;
  const CounterLayout* row = nullptr;
  if (opt.names) {
    auto it = opt.names->find(o.title);
    if (it != opt.names->end()) row = find_counter_layout(it->second, opt.layout_version);
  } else {
    row = find_counter_layout(o.title, opt.layout_version);
  }
  if (!row) return;
  std::vector<CounterShape> shapes;
  for (const CounterInfo& c : o.counters) shapes.push_back({c.title, c.size});
  const std::vector<uint32_t> want = counter_offsets(row, shapes);
  for (size_t k = 0; k < o.counters.size(); ++k)
    if (o.counters[k].offset != want[k])
      rep.add(kWarning, kCounterLayout, o.counters[k].at + winperf::counter_def::kCounterOffset,
              ctr_label(o, k, o.counters[k].title) + " CounterOffset " + to_string(o.counters[k].offset) +
                  " but Windows " + to_string(opt.layout_version / 100) + "." + to_string(opt.layout_version % 100) +
                  " puts it at " + to_string(want[k]) + " (layout of " + row->object + ")");
}

// The PERF_COUNTER_BLOCK at pos must end by `end`; on success it is recorded and pos moves past it.
bool check_block(ByteView blob, Report& rep, ObjectInfo& o, size_t& pos, size_t end, int instance,
                 const std::string& who) {
  ByteReader r(blob.first(end), pos);
  uint32_t len = 0;
  if (!r.u32(len)) {
    rep.add(kError, kCounterBlockLength, pos, who + " has no room for its counter block before the object's end");
    return false;
  }
  if (len < kCounterBlockSize || len > end - pos) {
    rep.add(kError, kCounterBlockLength, pos,
            who + " counter block ByteLength " + to_string(len) + " out of range (" + to_string(end - pos) +
                " bytes left in the object)");
    return false;
  }
  check_alignment(rep, o, kCounterBlockAlignment, pos, who + " counter block");
  o.blocks.push_back(BlockInfo{pos, len, instance});
  pos += len;
  return true;
}

// Follows the ByteLength chain of NumInstances instances from pos. False when it breaks.
bool check_instances(ByteView blob, Report& rep, ObjectInfo& o, size_t& pos, size_t end, int32_t declared) {
  for (int32_t k = 0; k < declared; ++k) {
    if (end - pos < kInstanceDefSize) {
      rep.add(kError, kObjectInstanceCount, o.at + ot::kNumInstances,
              obj_label(o) + " NumInstances " + to_string(declared) +
                  " but the instance chain reaches the object's end at " + to_string(pos) + " after " + to_string(k) +
                  " instances");
      return false;
    }
    ByteReader r(blob.first(end), pos);
    InstanceInfo in;
    in.at = pos;
    uint32_t len = 0, name_off = 0, name_len = 0;
    r.u32(len), r.u32(in.parent_title), r.u32(in.parent_instance), r.i32(in.unique_id), r.u32(name_off),
        r.u32(name_len);
    const std::string unnamed = inst_label(o, size_t(k), in);
    if (len < kInstanceDefSize || len > end - pos) {
      rep.add(kError, kInstanceLength, pos,
              unnamed + " ByteLength " + to_string(len) + " out of range (" + to_string(end - pos) +
                  " bytes left in the object)");
      return false;
    }
    in.name = check_name(blob, rep, kInstanceNameChecks, unnamed, pos + winperf::instance_def::kNameOffset, pos,
                         kInstanceDefSize, len, name_off, name_len);
    const std::string who = inst_label(o, size_t(k), in);
    if (in.name.size() > limits::kInstanceName.max)
      rep.add(kWarning, kInstanceNameLength, pos + name_off,
              who + " name is " + to_string(in.name.size()) + " characters, more than the " +
                  to_string(limits::kInstanceName.max) + " of " + limits::kInstanceName.name +
                  ": PDH cannot name it (perfdata/limits.h)");
    check_alignment(rep, o, kInstanceAlignment, pos, who);
    o.instances.push_back(in);
    pos += len;
    if (!check_block(blob, rep, o, pos, end, k, who)) return false;
  }
  return true;
}

void check_trailer(Report& rep, const ObjectInfo& o, size_t pos, size_t end) {
  const size_t n = end - pos;
  if (n == 0 || (n < 8 && end % 8 == 0)) return;  // padding to 8 bytes, as Windows writes it
  rep.add(kWarning, kObjectTrailingBytes, pos,
          obj_label(o) + " has " + to_string(n) + " bytes after its data up to TotalByteLength" +
              (o.multi && n >= kInstanceDefSize + kCounterBlockSize
                   ? " (room for undeclared instances: NumInstances too small?)"
                   : ""));
}

void check_counters_in_blocks(Report& rep, const ObjectInfo& o) {
  for (size_t k = 0; k < o.counters.size(); ++k) {
    const CounterInfo& c = o.counters[k];
    if (c.size == 0) continue;
    const uint64_t c_end = uint64_t(c.offset) + c.size;
    const BlockInfo* first = nullptr;
    size_t bad = 0;
    for (const BlockInfo& b : o.blocks)
      if (c_end > b.length && bad++ == 0) first = &b;
    if (!first) continue;
    const std::string where = first->instance < 0
                                  ? std::string("the object's")
                                  : inst_label(o, size_t(first->instance), o.instances[size_t(first->instance)]) + "'s";
    rep.add(kError, kCounterOutsideBlock, first->at,
            ctr_label(o, k, c.title) + " (CounterOffset " + to_string(c.offset) + ", CounterSize " + to_string(c.size) +
                ") ends past " + where + " " + to_string(first->length) + "-byte counter block" +
                (bad > 1 ? " and " + to_string(bad - 1) + " more" : ""));
  }
}

void check_instance_names(Report& rep, const ObjectInfo& o) {
  std::map<std::tuple<uint32_t, uint32_t, int32_t, std::u16string>, size_t> seen;
  for (size_t k = 0; k < o.instances.size(); ++k) {
    const InstanceInfo& in = o.instances[k];
    auto [it, fresh] = seen.emplace(std::tuple(in.parent_title, in.parent_instance, in.unique_id, in.name), k);
    if (!fresh)
      rep.add(kInfo, kInstanceDuplicateName, in.at,
              inst_label(o, k, in) + " has the same name and parent as instance #" + to_string(it->second));
  }
}

// Returns false when TotalByteLength is unusable, so the next object cannot be found; else `next`.
bool check_object(ByteView blob, Report& rep, size_t limit, ObjectInfo& o, size_t& next) {
  ByteReader r(blob.first(limit), o.at);  // the caller checked 64 bytes are present
  uint32_t total = 0, def_len = 0, hdr_len = 0, num_counters = 0;
  int32_t num_instances = 0;
  r.u32(total), r.u32(def_len), r.u32(hdr_len), r.u32(o.title), r.skip(16), r.u32(num_counters), r.skip(4),
      r.i32(num_instances);
  const std::string who = obj_label(o);
  check_alignment(rep, o, kObjectAlignment, o.at, who);
  if (total < kObjectTypeSize || total > limit - o.at) {
    rep.add(kError, kObjectTotalLength, o.at,
            who + " TotalByteLength " + to_string(total) + " out of range (" + to_string(limit - o.at) +
                " bytes left before the block's TotalByteLength)");
    return false;
  }
  next = o.at + total;
  if (hdr_len < kObjectTypeSize || hdr_len > total) {
    rep.add(kError, kObjectHeaderLength, o.at + ot::kHeaderLength,
            who + " HeaderLength " + to_string(hdr_len) + " out of range");
    return true;
  }
  if (def_len < hdr_len || def_len > total) {
    rep.add(kError, kObjectDefinitionLength, o.at + ot::kDefinitionLength,
            who + " DefinitionLength " + to_string(def_len) + " outside HeaderLength " + to_string(hdr_len) +
                ".. TotalByteLength " + to_string(total));
    return true;
  }
  if (check_definitions(blob, rep, o, o.at + hdr_len, o.at + def_len, num_counters)) {
    check_counter_sequence(rep, o);
    check_counter_layout(rep, o);
  }
  size_t pos = o.at + def_len;
  bool data_ok = false;
  if (num_instances == PERF_NO_INSTANCES) {
    data_ok = check_block(blob, rep, o, pos, next, -1, who);
  } else if (num_instances < 0) {
    rep.add(kError, kObjectNumInstances, o.at + ot::kNumInstances,
            who + " NumInstances " + to_string(num_instances) + " is negative");
  } else {
    o.multi = true;
    data_ok = check_instances(blob, rep, o, pos, next, num_instances);
  }
  if (data_ok) check_trailer(rep, o, pos, next);
  check_counters_in_blocks(rep, o);
  check_instance_names(rep, o);
  return true;
}

// A plausible PERF_OBJECT_TYPE at `at`: tells undeclared objects from junk after the declared ones.
bool looks_like_object(ByteView blob, size_t at, size_t limit) {
  ByteReader r(blob.first(limit), at);
  uint32_t total = 0, def_len = 0, hdr_len = 0;
  return r.u32(total) && r.u32(def_len) && r.u32(hdr_len) && total >= kObjectTypeSize && total <= limit - at &&
         hdr_len >= kObjectTypeSize && def_len >= hdr_len && def_len <= total;
}

std::vector<ObjectInfo> walk_objects(ByteView blob, Report& rep, const Header& h) {
  std::vector<ObjectInfo> objects;
  size_t pos = h.hdr_len;
  bool lost = false;
  while (!lost && pos < h.limit && h.limit - pos >= kObjectTypeSize &&
         (objects.size() < h.num_objects || looks_like_object(blob, pos, h.limit))) {
    ObjectInfo o;
    o.at = pos;
    o.index = objects.size();
    lost = !check_object(blob, rep, h.limit, o, pos);
    objects.push_back(std::move(o));
  }
  if (lost) return objects;
  const size_t n = objects.size();
  if (h.num_objects < n)
    rep.add(kError, kObjectCountShort, db::kNumObjectTypes,
            "NumObjectTypes " + to_string(h.num_objects) + " but " + to_string(n) + " objects are present");
  if (pos < h.limit)
    rep.add(kError, kObjectsLength, pos,
            "the objects end at " + to_string(pos) + " but TotalByteLength is " + to_string(h.limit) + ": " +
                to_string(h.limit - pos) + " bytes belong to no object");
  else if (h.num_objects > n)
    rep.add(kWarning, kObjectCountLies, db::kNumObjectTypes,
            "NumObjectTypes " + to_string(h.num_objects) + " but only " + to_string(n) +
                " objects are present (object-count-lies)");
  return objects;
}

void check_parents(Report& rep, const std::vector<ObjectInfo>& objects) {
  std::map<uint32_t, const ObjectInfo*> by_title;
  for (const ObjectInfo& o : objects) by_title.emplace(o.title, &o);
  for (const ObjectInfo& o : objects) {
    for (size_t k = 0; k < o.instances.size(); ++k) {
      const InstanceInfo& in = o.instances[k];
      if (in.parent_title == 0) continue;
      auto it = by_title.find(in.parent_title);
      if (it == by_title.end()) {
        rep.add(kWarning, kInstanceParentObject, in.at + winperf::instance_def::kParentObjectTitleIndex,
                inst_label(o, k, in) + " names parent object title " + to_string(in.parent_title) +
                    ", which is not in the blob");
      } else if (const ObjectInfo& p = *it->second; p.multi && in.parent_instance >= p.instances.size()) {
        rep.add(kWarning, kInstanceParentInstance, in.at + winperf::instance_def::kParentObjectInstance,
                inst_label(o, k, in) + " names parent instance #" + to_string(in.parent_instance) + " of " +
                    obj_label(p) + ", which has " + to_string(p.instances.size()) + " instances");
      }
    }
  }
}

}  // namespace

std::vector<Finding> validate(ByteView blob, const ValidateOptions& opt) {
  Report rep(opt);
  if (std::optional<Header> h = check_header(blob, rep)) check_parents(rep, walk_objects(blob, rep, *h));
  return rep.finish();
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "?";
}

std::string to_string(const Finding& f) {
  return std::string(severity_name(f.severity)) + " " + f.check + " @" + std::to_string(f.offset) + ": " + f.message;
}

bool has_errors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; });
}

}  // namespace perfsim::perfdata
