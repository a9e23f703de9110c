// validate(): a valid rich blob has no findings; each check fires on a planted defect, at the
// offset locate() computes independently; and the validator agrees with parse() on damaged blobs.
#include <catch2/catch.hpp>

#include <sstream>

#include "perfdata/validate.h"
#include "tests/perfdata_model/rich_blob.h"

using namespace perfsim;
using namespace perfsim::perfdata;
using namespace perfsim::perfdata::testing;

namespace {

namespace db = winperf::data_block;
namespace ot = winperf::object_type;
namespace cd = winperf::counter_def;
namespace id = winperf::instance_def;

std::string dump(const std::vector<Finding>& fs) {
  std::ostringstream s;
  for (const Finding& f : fs) s << to_string(f) << "\n";
  return s.str();
}

void require_finding(const Bytes& b, const char* check, size_t offset, Severity severity) {
  const std::vector<Finding> fs = validate(b);
  INFO("expected " << severity_name(severity) << " " << check << " @" << offset << "; got:\n" << dump(fs));
  const bool found = std::any_of(fs.begin(), fs.end(), [&](const Finding& f) {
    return f.check == check && f.offset == offset && f.severity == severity;
  });
  REQUIRE(found);
}

void put32(Bytes& b, size_t at, uint32_t v) { store_le32(&b[at], v); }
uint32_t get32(const Bytes& b, size_t at) { return load_le32(&b[at]); }

struct Rich {
  DataBlock d = rich_block();
  Layout l = locate(d);
  Bytes b = build(d);
  const ObjectLayout& obj(size_t i) const { return l.objects[i]; }
};

}  // namespace

TEST_CASE("a valid rich blob has no findings") {
  Rich r;
  const std::vector<Finding> fs = validate(r.b);
  INFO(dump(fs));
  CHECK(fs.empty());
}

TEST_CASE("PERF_DATA_BLOCK header checks") {
  Rich r;
  Bytes& b = r.b;
  SECTION("truncated") { require_finding(Bytes(b.begin(), b.begin() + 50), "block.truncated", 50, Severity::kError); }
  SECTION("signature") {
    b[4] = 'X';
    require_finding(b, "block.signature", 0, Severity::kError);
  }
  SECTION("byte order") {
    put32(b, db::kLittleEndian, 0);
    require_finding(b, "block.byte-order", db::kLittleEndian, Severity::kError);
  }
  SECTION("version") {
    put32(b, db::kVersion, 2);
    require_finding(b, "block.version", db::kVersion, Severity::kWarning);
  }
  SECTION("revision") {
    put32(b, db::kRevision, 3);
    require_finding(b, "block.revision", db::kRevision, Severity::kWarning);
  }
  SECTION("TotalByteLength past the blob") {
    put32(b, db::kTotalByteLength, uint32_t(b.size() + 8));
    require_finding(b, "block.total-length", db::kTotalByteLength, Severity::kError);
  }
  SECTION("bytes past TotalByteLength") {
    const size_t total = b.size();
    b.insert(b.end(), 8, 0xEE);
    require_finding(b, "block.trailing-bytes", total, Severity::kWarning);
  }
  SECTION("TotalByteLength not a multiple of 8") {
    r.d.objects.back().trailer = {0, 0, 0, 0};
    require_finding(build(r.d), "block.total-length-alignment", db::kTotalByteLength, Severity::kWarning);
  }
  SECTION("HeaderLength") {
    put32(b, db::kHeaderLength, 80);
    require_finding(b, "block.header-length", db::kHeaderLength, Severity::kError);
  }
  SECTION("system name outside the header") {
    put32(b, db::kSystemNameLength, 1000);
    require_finding(b, "block.system-name-bounds", db::kSystemNameOffset, Severity::kError);
  }
  SECTION("system name of odd length") {
    put32(b, db::kSystemNameLength, 13);
    require_finding(b, "block.system-name-odd-length", kDataBlockSize, Severity::kWarning);
  }
  SECTION("system name without NUL") {
    b[kDataBlockSize + 12] = 'X';  // "HOST01" is 6 units; its NUL is at 12
    require_finding(b, "block.system-name-unterminated", kDataBlockSize, Severity::kWarning);
  }
}

TEST_CASE("object count and lengths against TotalByteLength") {
  Rich r;
  Bytes& b = r.b;
  SECTION("NumObjectTypes larger than present (object-count-lies) is only a warning") {
    put32(b, db::kNumObjectTypes, 7);
    require_finding(b, "block.object-count-lies", db::kNumObjectTypes, Severity::kWarning);
    CHECK_FALSE(has_errors(validate(b)));
  }
  SECTION("NumObjectTypes smaller than present") {
    put32(b, db::kNumObjectTypes, 3);
    require_finding(b, "block.object-count-short", db::kNumObjectTypes, Severity::kError);
  }
  SECTION("bytes that belong to no object") {
    r.d.trailer = Bytes(16, 0xEE);
    require_finding(build(r.d), "block.objects-length", r.l.trailer, Severity::kError);
  }
  SECTION("too few bytes left for another declared object") {
    r.d.trailer = Bytes(16, 0);
    Bytes t = build(r.d);
    put32(t, db::kNumObjectTypes, 6);
    require_finding(t, "block.objects-length", r.l.trailer, Severity::kError);
  }
}

TEST_CASE("PERF_OBJECT_TYPE checks") {
  Rich r;
  Bytes& b = r.b;
  const size_t proc = r.obj(1).at;
  SECTION("TotalByteLength overruns the block") {
    const size_t last = r.obj(4).at;
    put32(b, last, get32(b, last) + 8);
    require_finding(b, "object.total-length", last, Severity::kError);
  }
  SECTION("TotalByteLength below the header size") {
    put32(b, proc, 32);
    require_finding(b, "object.total-length", proc, Severity::kError);
  }
  SECTION("HeaderLength") {
    put32(b, proc + ot::kHeaderLength, 60);
    require_finding(b, "object.header-length", proc + ot::kHeaderLength, Severity::kError);
  }
  SECTION("DefinitionLength past TotalByteLength") {
    put32(b, proc + ot::kDefinitionLength, get32(b, proc) + 8);
    require_finding(b, "object.definition-length", proc + ot::kDefinitionLength, Severity::kError);
  }
  SECTION("misaligned object") {
    r.d.objects[0].trailer = {0, 0, 0, 0};
    require_finding(build(r.d), "object.alignment", locate(r.d).objects[1].at, Severity::kWarning);
  }
  SECTION("NumInstances negative") {
    put32(b, proc + ot::kNumInstances, uint32_t(-5));
    require_finding(b, "object.num-instances", proc + ot::kNumInstances, Severity::kError);
  }
  SECTION("NumCounters larger than the definitions") {
    put32(b, r.obj(0).at + ot::kNumCounters, 6);
    require_finding(b, "object.counter-count", r.obj(0).at + ot::kNumCounters, Severity::kError);
  }
  SECTION("NumCounters smaller than the definitions") {
    put32(b, r.obj(0).at + ot::kNumCounters, 4);
    require_finding(b, "object.definitions-slack", r.obj(0).counters[4], Severity::kWarning);
  }
  SECTION("NumInstances larger than the chain") {
    put32(b, proc + ot::kNumInstances, 5);
    require_finding(b, "object.instance-count", proc + ot::kNumInstances, Severity::kError);
  }
  SECTION("bytes after the data beyond padding") {
    r.d.objects[1].trailer = Bytes(16, 0);
    require_finding(build(r.d), "object.trailing-bytes", r.obj(1).trailer, Severity::kWarning);
  }
}

TEST_CASE("PERF_INSTANCE_DEFINITION checks") {
  Rich r;
  Bytes& b = r.b;
  const size_t in1 = r.obj(1).instances[1];
  SECTION("a ByteLength chain running past the object, which parse() rejects") {
    const size_t in2 = r.obj(1).instances[2];
    put32(b, in2, uint32_t(r.obj(1).end - in2 + 8));
    require_finding(b, "instance.length", in2, Severity::kError);
    DataBlock p;
    CHECK_FALSE(parse(b, p).ok());
  }
  SECTION("ByteLength below the definition size") {
    put32(b, in1, 8);
    require_finding(b, "instance.length", in1, Severity::kError);
  }
  SECTION("misaligned counter block") {
    Bytes& name = r.d.objects[1].instances[0].name_region;
    name.resize(name.size() + 4);
    const Bytes t = build(r.d);
    require_finding(t, "counterblock.alignment", locate(r.d).objects[1].blocks[0], Severity::kWarning);
    CHECK_FALSE(has_errors(validate(t)));
  }
  SECTION("misaligned instance, reported where the misalignment starts") {
    Bytes& block = r.d.objects[1].instances[0].counter_block;
    block.resize(block.size() + 4);
    store_le32(block.data(), uint32_t(block.size()));
    const Bytes t = build(r.d);
    const std::vector<Finding> fs = validate(t);
    require_finding(t, "instance.alignment", locate(r.d).objects[1].instances[1], Severity::kWarning);
    // The instances and blocks after it inherit the shift: one warning in this object, not six.
    CHECK(std::count_if(fs.begin(), fs.end(), [](const Finding& f) {
            return f.check.find("alignment") != std::string::npos && f.check != "block.total-length-alignment";
          }) == 4);
    CHECK_FALSE(has_errors(fs));
  }
  SECTION("a name past PDH_MAX_INSTANCE_NAME (issue 54): a warning at the name, its label cut short") {
    for (size_t length : {size_t(1024), size_t(1025), size_t(50000)}) {
      INFO(length);
      set_instance_name(r.d.objects[1].instances[1], std::u16string(length, u'x'));
      const Bytes t = build(r.d);
      const std::vector<Finding> fs = validate(t);
      const auto n =
          std::count_if(fs.begin(), fs.end(), [](const Finding& f) { return f.check == kInstanceNameLength; });
      CHECK(n == (length > 1024 ? 1 : 0));
      if (length > 1024) {
        require_finding(t, "instance.name-length", locate(r.d).objects[1].instances[1] + winperf::kInstanceDefSize,
                        Severity::kWarning);
        for (const Finding& f : fs) CHECK(f.message.size() < 400);
      }
      CHECK_FALSE(has_errors(fs));
    }
  }
  SECTION("name outside the definition") {
    put32(b, in1 + id::kNameLength, 500);
    require_finding(b, "instance.name-bounds", in1 + id::kNameOffset, Severity::kError);
  }
  SECTION("name offset inside the fixed header") {
    put32(b, in1 + id::kNameOffset, 8);
    require_finding(b, "instance.name-bounds", in1 + id::kNameOffset, Severity::kError);
  }
  SECTION("name of odd length") {
    put32(b, in1 + id::kNameLength, 7);
    require_finding(b, "instance.name-odd-length", in1 + kInstanceDefSize, Severity::kWarning);
  }
  SECTION("name without NUL") {
    b[in1 + kInstanceDefSize + 12] = 'X';  // "System" is 6 units
    require_finding(b, "instance.name-unterminated", in1 + kInstanceDefSize, Severity::kWarning);
  }
  SECTION("duplicate names are info only") {
    r.d.objects[1].instances[2] = make_instance(u"System", 44);
    const Bytes t = build(r.d);
    require_finding(t, "instance.duplicate-name", r.obj(1).instances[2], Severity::kInfo);
    CHECK(validate(t, ValidateOptions{Severity::kWarning}).empty());
  }
  SECTION("parent object not in the blob") {
    const size_t th0 = r.obj(2).instances[0];
    put32(b, th0 + id::kParentObjectTitleIndex, 9999);
    require_finding(b, "instance.parent-object", th0 + id::kParentObjectTitleIndex, Severity::kWarning);
  }
  SECTION("parent instance past the parent's instances") {
    const size_t th2 = r.obj(2).instances[2];
    put32(b, th2 + id::kParentObjectInstance, 4);
    require_finding(b, "instance.parent-instance", th2 + id::kParentObjectInstance, Severity::kWarning);
  }
}

TEST_CASE("PERF_COUNTER_BLOCK and PERF_COUNTER_DEFINITION checks") {
  Rich r;
  Bytes& b = r.b;
  const ObjectLayout& sys = r.obj(0);
  SECTION("counter block ByteLength below 4") {
    put32(b, sys.blocks[0], 2);
    require_finding(b, "counterblock.length", sys.blocks[0], Severity::kError);
  }
  SECTION("instance counter block ByteLength past the object") {
    const size_t blk = r.obj(1).blocks[1];
    put32(b, blk, 1000);
    require_finding(b, "counterblock.length", blk, Severity::kError);
  }
  SECTION("counter definition ByteLength") {
    put32(b, sys.counters[1], 20);
    require_finding(b, "counter.length", sys.counters[1], Severity::kError);
  }
  SECTION("CounterSize disagrees with the type") {
    put32(b, sys.counters[1] + cd::kCounterSize, 4);  // PERF_COUNTER_LARGE_RAWCOUNT is PERF_SIZE_LARGE
    require_finding(b, "counter.size-type", sys.counters[1] + cd::kCounterSize, Severity::kError);
  }
  SECTION("CounterOffset over the block's ByteLength") {
    put32(b, sys.counters[0] + cd::kCounterOffset, 0);
    require_finding(b, "counter.offset", sys.counters[0] + cd::kCounterOffset, Severity::kError);
  }
  SECTION("counter past the single-instance block") {
    put32(b, sys.counters[0] + cd::kCounterOffset, 30);  // 4 bytes at 30 in a 32-byte block
    require_finding(b, "counter.outside-block", sys.blocks[0], Severity::kError);
  }
  SECTION("counter past one instance's block") {
    r.d.objects[1].instances[2].counter_block = make_counter_block(20);
    require_finding(build(r.d), "counter.outside-block", locate(r.d).objects[1].blocks[2], Severity::kError);
  }
  SECTION("base counter missing") {
    r.d.objects[0].counters.erase(r.d.objects[0].counters.begin() + 3);
    fix_counts(r.d);
    require_finding(build(r.d), "counter.base-missing", locate(r.d).objects[0].counters[2], Severity::kError);
  }
  SECTION("base counter with no user before it") {
    r.d.objects[0].counters.insert(r.d.objects[0].counters.begin(), counter(20, PERF_RAW_BASE, 4, 4));
    fix_counts(r.d);
    require_finding(build(r.d), "counter.base-orphan", locate(r.d).objects[0].counters[0], Severity::kWarning);
  }
  SECTION("duplicate counter definition") {
    auto& cs = r.d.objects[0].counters;
    cs.insert(cs.begin() + 1, cs[0]);
    fix_counts(r.d);
    require_finding(build(r.d), "counter.duplicate", locate(r.d).objects[0].counters[1], Severity::kWarning);
  }
}

TEST_CASE("a base counter sharing its user's title index is no duplicate") {
  Rich r;
  r.d.objects[0].counters[3].name_index = r.d.objects[0].counters[2].name_index;
  const std::vector<Finding> fs = validate(build(r.d));
  INFO(dump(fs));
  CHECK(fs.empty());
}

TEST_CASE("options bound the report") {
  Rich r;
  Bytes b = r.b;
  put32(b, db::kVersion, 2);
  put32(b, db::kRevision, 2);
  put32(b, db::kNumObjectTypes, 9);
  const std::vector<Finding> fs = validate(b, ValidateOptions{Severity::kInfo, 2});
  REQUIRE(fs.size() == 3);
  CHECK(fs.back().check == "validate.too-many-findings");
  CHECK(fs.back().message.find("1 more") == 0);
}

TEST_CASE("messages name the object, instance and counter") {
  Rich r;
  put32(r.b, r.obj(1).blocks[2], 1000);
  put32(r.b, r.obj(0).counters[1] + cd::kCounterSize, 4);
  const std::vector<Finding> fs = validate(r.b);
  INFO(dump(fs));
  auto message = [&](const char* id) {
    for (const Finding& f : fs)
      if (f.check == id) return f.message;
    return std::string();
  };
  CHECK(message("counterblock.length").find("object #1 (title 230) instance #2 \"svchost\"") == 0);
  CHECK(message("counter.size-type").find("object #0 (title 2) counter #1 (title 12)") == 0);
}

// The contract: no error findings means parse() (tolerant) accepts the blob.
void check_agrees_with_parse(const Bytes& b, size_t& rejected) {
  const std::vector<Finding> fs = validate(b);
  DataBlock p;
  const Status s = parse(b, p);
  INFO("parse: " << s.message() << "\nvalidate:\n" << dump(fs));
  if (!s.ok()) {
    ++rejected;
    CHECK(has_errors(fs));
  }
}

TEST_CASE("every truncation is reported, and validate agrees with parse") {
  const Bytes full = Rich().b;
  size_t rejected = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    const Bytes cut(full.begin(), full.begin() + std::ptrdiff_t(n));  // exact size: ASan sees overreads
    INFO("length " << n);
    CHECK(has_errors(validate(cut)));
    if (n >= 24) {
      Bytes fitted = cut;
      put32(fitted, db::kTotalByteLength, uint32_t(n));
      check_agrees_with_parse(fitted, rejected);
    }
  }
  CHECK(rejected > full.size() / 2);
}

TEST_CASE("random damage: validate agrees with parse") {
  const Bytes full = Rich().b;
  std::mt19937 rng(7);
  size_t rejected = 0;
  for (int round = 0; round < 4000; ++round) {
    const Bytes b = damaged(full, rng);
    check_agrees_with_parse(b, rejected);
  }
  CHECK(rejected > 0);
}
