// Capture format v1: round trip, damage (truncation, bit flips, broken index), random access,
// summary. Expected values come from the sample generator and the file layout, never from the
// code under test.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "captures/inspect.h"
#include "captures/reader.h"
#include "captures/writer.h"
#include "sample_data.h"
#include "tests/common/crafted_capture.h"

using namespace perfsim;
using namespace perfsim::captures;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("perfsim_cap_" + std::to_string(::getpid()) + "_" + name)).string();
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

bool same_record(const QueryRecord& a, const QueryRecord& b) {
  return a.tick == b.tick && a.time_100ns == b.time_100ns && a.latency_us == b.latency_us &&
         a.value_name == b.value_name && a.status == b.status && a.reg_type == b.reg_type && a.size == b.size &&
         a.payload == b.payload;
}

void require_same_metadata(const Capture& a, const Capture& b) {
  CHECK(a.host.name == b.host.name);
  CHECK(a.host.profile == b.host.profile);
  CHECK(a.host.product_name == b.host.product_name);
  CHECK(a.host.current_version == b.host.current_version);
  CHECK(a.host.build_number == b.host.build_number);
  CHECK(a.host.csd_version == b.host.csd_version);
  CHECK(a.host.perf_freq == b.host.perf_freq);
  CHECK(a.host.processors == b.host.processors);
  CHECK(a.host.start_time_100ns == b.host.start_time_100ns);
  CHECK(a.host.interval_ms == b.host.interval_ms);
  REQUIRE(a.registry.size() == b.registry.size());
  for (size_t i = 0; i < a.registry.size(); ++i) {
    CHECK(a.registry[i].key == b.registry[i].key);
    CHECK(a.registry[i].name == b.registry[i].name);
    CHECK(a.registry[i].type == b.registry[i].type);
    CHECK(a.registry[i].data == b.registry[i].data);
  }
  REQUIRE(a.names.size() == b.names.size());
  for (size_t i = 0; i < a.names.size(); ++i) {
    CHECK(a.names[i].lang == b.names[i].lang);
    CHECK(a.names[i].counter == b.names[i].counter);
    CHECK(a.names[i].help == b.names[i].help);
  }
  REQUIRE(a.catalog.size() == b.catalog.size());
  for (size_t i = 0; i < a.catalog.size(); ++i) {
    CHECK(a.catalog[i].index == b.catalog[i].index);
    CHECK(a.catalog[i].provider == b.catalog[i].provider);
    CHECK(a.catalog[i].costly == b.catalog[i].costly);
  }
  CHECK(a.fingerprint_json == b.fingerprint_json);
}

// Every record in `got` must be one of `want`, in order; returns how many of `want` were missing.
size_t missing_records(const std::vector<QueryRecord>& want, const std::vector<QueryRecord>& got) {
  size_t j = 0;
  for (const QueryRecord& g : got) {
    while (j < want.size() && !same_record(want[j], g)) ++j;
    REQUIRE(j < want.size());  // g is not an original record (or out of order)
    ++j;
  }
  return want.size() - got.size();
}

// Byte offset where record i (0-based, query records only) starts: found by parsing the frames
// directly, independently of the reader.
std::vector<size_t> query_record_offsets(const Bytes& file, size_t* index_offset = nullptr) {
  std::vector<size_t> out;
  size_t pos = kFileHeaderSize;
  while (pos + kRecordHeaderSize <= file.size() && load_le32(&file[pos]) == kSyncMarker) {
    const uint8_t type = file[pos + 12];
    if (type == uint8_t(RecordType::kQuery)) out.push_back(pos);
    if (type == uint8_t(RecordType::kIndex) && index_offset) *index_offset = pos;
    pos += kRecordHeaderSize + load_le32(&file[pos + 8]);
  }
  return out;
}

bool mentions_offset(const std::string& message, size_t offset) {
  return message.find("at offset " + std::to_string(offset) + ":") != std::string::npos;
}

constexpr uint32_t kTicks = 40;
constexpr uint32_t kKeyframeInterval = 8;
const WriterOptions kXorOptions{kKeyframeInterval, DeltaCodec::kXor, SyncPolicy::kOnClose};

}  // namespace

TEST_CASE("a capture round-trips with every delta codec") {
  const Capture c = testdata::make_capture(kTicks);
  const auto codec = GENERATE(DeltaCodec::kNone, DeltaCodec::kXor, DeltaCodec::kDict, DeltaCodec::kSmallest);
  const std::string path = temp_path("roundtrip.pscap");
  REQUIRE(write_capture(path, c, WriterOptions{kKeyframeInterval, codec, SyncPolicy::kOnClose}).ok());

  for (bool use_index : {true, false}) {
    std::unique_ptr<Reader> r;
    REQUIRE(Reader::open(path, r, ReaderOptions{use_index}).ok());
    CHECK(r->used_index() == use_index);
    CHECK(r->warnings().empty());
  }
  Capture back;
  std::vector<std::string> warnings;
  const Status st = read_capture(path, back, &warnings);
  INFO("codec " << int(codec) << ": " << st.ToString());
  REQUIRE(st.ok());
  CHECK(warnings.empty());
  require_same_metadata(c, back);
  REQUIRE(back.records.size() == c.records.size());
  for (size_t i = 0; i < c.records.size(); ++i) CHECK(same_record(c.records[i], back.records[i]));
  std::filesystem::remove(path);
}

TEST_CASE("deltas make a slowly changing capture smaller than keyframes alone") {
  const Capture c = testdata::make_capture(kTicks);
  const std::string path = temp_path("small.pscap");
  REQUIRE(write_capture(path, c, WriterOptions{kKeyframeInterval, DeltaCodec::kNone, SyncPolicy::kOnClose}).ok());
  const auto keyframes_only = std::filesystem::file_size(path);
  REQUIRE(write_capture(path, c, kXorOptions).ok());
  const auto with_deltas = std::filesystem::file_size(path);
  // The sample counters are random 64-bit values growing by up to 5000 a tick: LZ4 alone gains
  // nothing on them, a delta leaves about two changed bytes in eight.
  CHECK(with_deltas * 3 < keyframes_only * 2);
  std::filesystem::remove(path);
}

TEST_CASE("random access returns the records of tick k, in any order") {
  const Capture c = testdata::make_capture(kTicks);
  const std::string path = temp_path("random.pscap");
  REQUIRE(write_capture(path, c, kXorOptions).ok());
  std::map<uint32_t, std::vector<const QueryRecord*>> by_tick;
  for (const QueryRecord& r : c.records) by_tick[r.tick].push_back(&r);

  for (bool use_index : {true, false}) {
    std::unique_ptr<Reader> r;
    REQUIRE(Reader::open(path, r, ReaderOptions{use_index}).ok());
    for (uint32_t tick : {39u, 0u, 23u, 22u, 7u, 31u, 15u, 16u, 38u, 1u, 39u}) {
      std::vector<QueryRecord> got;
      REQUIRE(r->read_tick(tick, got).ok());
      REQUIRE(got.size() == by_tick[tick].size());
      for (size_t i = 0; i < got.size(); ++i) CHECK(same_record(*by_tick[tick][i], got[i]));
    }
    std::vector<QueryRecord> none;
    REQUIRE(r->read_tick(kTicks + 5, none).ok());
    CHECK(none.empty());
  }
  std::filesystem::remove(path);
}

TEST_CASE("a truncated capture keeps every complete record and reports where it was cut") {
  const Capture c = testdata::make_capture(kTicks);
  const std::string full = temp_path("full.pscap");
  const std::string cut = temp_path("cut.pscap");
  REQUIRE(write_capture(full, c, kXorOptions).ok());
  const Bytes bytes = read_file(full);
  size_t index_at = 0;
  const std::vector<size_t> starts = query_record_offsets(bytes, &index_at);
  REQUIRE(starts.size() == c.records.size());
  REQUIRE(index_at > starts.back());

  // Cut inside the header of a record, inside its body, and one byte short of its end.
  for (size_t k : {size_t(0), size_t(5), starts.size() / 2, starts.size() - 1}) {
    const size_t end = k + 1 < starts.size() ? starts[k + 1] : index_at;
    for (size_t at : {starts[k] + 3, starts[k] + 20, (starts[k] + end) / 2, end - 1}) {
      write_file(cut, Bytes(bytes.begin(), bytes.begin() + std::ptrdiff_t(at)));
      Capture back;
      std::vector<std::string> warnings;
      const Status st = read_capture(cut, back, &warnings);
      CAPTURE(k, at, st.ToString());
      REQUIRE(st.code() == Status::Code::kCorruption);
      CHECK(mentions_offset(st.message(), starts[k]));
      CHECK(back.records.size() == k);
      CHECK(missing_records(std::vector<QueryRecord>(c.records.begin(), c.records.begin() + std::ptrdiff_t(k)),
                            back.records) == 0);
      require_same_metadata(c, back);
    }
  }
  // Cut exactly between two records: nothing is damaged, only the index is missing.
  write_file(cut, Bytes(bytes.begin(), bytes.begin() + std::ptrdiff_t(starts[10])));
  Capture back;
  CHECK(read_capture(cut, back).ok());
  CHECK(back.records.size() == 10);
  std::filesystem::remove(full);
  std::filesystem::remove(cut);
}

TEST_CASE("a bit flip in the middle is reported and the records after it are recovered") {
  const Capture c = testdata::make_capture(kTicks);
  const std::string full = temp_path("flip_full.pscap");
  const std::string bad = temp_path("flip.pscap");
  REQUIRE(write_capture(full, c, kXorOptions).ok());
  Bytes bytes = read_file(full);
  const std::vector<size_t> starts = query_record_offsets(bytes);

  // Record m is a "Global" delta: the generator's ordinal of each record within its query says which
  // later records depend on it (those up to the next keyframe of that query).
  std::map<std::string, uint32_t> ordinal;
  std::vector<uint32_t> ord;
  for (const QueryRecord& r : c.records) ord.push_back(ordinal[r.value_name]++);
  size_t m = starts.size() / 2;
  while (c.records[m].value_name != "Global" || ord[m] % kKeyframeInterval == 0) ++m;
  size_t lost = 1;
  for (size_t i = m + 1; i < c.records.size(); ++i)
    if (c.records[i].value_name == "Global" && ord[i] > ord[m] && ord[i] % kKeyframeInterval != 0 &&
        ord[i] / kKeyframeInterval == ord[m] / kKeyframeInterval)
      ++lost;

  SECTION("in a record body") { bytes[starts[m] + 60] ^= 0x10; }
  SECTION("in a record's length field") { bytes[starts[m] + 11] ^= 0x40; }
  SECTION("in a record's sync marker") { bytes[starts[m] + 1] ^= 0x01; }
  write_file(bad, bytes);

  // With the index the reader jumps over the damage; without it, it must resynchronise by scanning.
  for (bool use_index : {true, false}) {
    std::unique_ptr<Reader> r;
    REQUIRE(Reader::open(bad, r, ReaderOptions{use_index}).ok());
    CHECK(r->used_index() == use_index);
    Capture back;
    std::vector<std::string> warnings;
    const Status st = read_capture(bad, back, &warnings, ReaderOptions{use_index});
    CAPTURE(use_index, st.ToString());
    REQUIRE(st.code() == Status::Code::kCorruption);
    CHECK(mentions_offset(st.message(), starts[m]));
    CHECK(missing_records(c.records, back.records) == lost);
    // The last record of every query is after the damage and must be back.
    CHECK(same_record(back.records.back(), c.records.back()));
  }
  std::filesystem::remove(full);
  std::filesystem::remove(bad);
}

TEST_CASE("a damaged index trailer falls back to scanning and loses nothing") {
  const Capture c = testdata::make_capture(kTicks);
  const std::string path = temp_path("badindex.pscap");
  REQUIRE(write_capture(path, c, kXorOptions).ok());
  Bytes bytes = read_file(path);
  size_t index_at = 0;
  query_record_offsets(bytes, &index_at);
  bytes[index_at + 40] ^= 0xFF;
  write_file(path, bytes);

  std::unique_ptr<Reader> r;
  REQUIRE(Reader::open(path, r).ok());
  CHECK_FALSE(r->used_index());
  REQUIRE(r->damage().code() == Status::Code::kCorruption);
  CHECK(r->damage().message().find(std::to_string(index_at)) != std::string::npos);
  Capture back;
  CHECK(read_capture(path, back).code() == Status::Code::kCorruption);  // reported, and nothing lost:
  CHECK(missing_records(c.records, back.records) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("files that are not captures are refused with a reason") {
  const std::string path = temp_path("notcap.bin");
  std::unique_ptr<Reader> r;
  write_file(path, Bytes{'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!', 0, 0, 0, 0, 0});
  CHECK(Reader::open(path, r).code() == Status::Code::kCorruption);
  write_file(path, Bytes{});
  CHECK_FALSE(Reader::open(path, r).ok());
  write_file(path, Bytes(std::begin(kFileMagic), std::begin(kFileMagic) + 5));
  CHECK(Reader::open(path, r).message().find("cut off") != std::string::npos);
  Bytes v3(std::begin(kFileMagic), std::end(kFileMagic));
  put_le32(v3, 3);  // a version from a later perfsim
  put_le32(v3, 0);
  write_file(path, v3);
  CHECK(Reader::open(path, r).code() == Status::Code::kUnsupported);
  CHECK(Reader::open(temp_path("does-not-exist"), r).code() == Status::Code::kIOError);
  std::filesystem::remove(path);
}

TEST_CASE("the writer refuses ticks that go back") {
  const std::string path = temp_path("ticks.pscap");
  std::unique_ptr<Writer> w;
  REQUIRE(Writer::create(path, HostInfo{}, WriterOptions{}, w).ok());
  REQUIRE(w->append(testdata::make_record(5, "Global", 0, 3, Bytes{1, 2, 3})).ok());
  CHECK(w->append(testdata::make_record(4, "Global", 0, 3, Bytes{1, 2, 3})).code() == Status::Code::kInvalidArgument);
  REQUIRE(w->close().ok());
  std::filesystem::remove(path);
}

TEST_CASE("the summary counts records per query and sizes without decoding") {
  const Capture c = testdata::make_capture(kTicks);
  const std::string path = temp_path("summary.pscap");
  REQUIRE(write_capture(path, c).ok());
  CaptureSummary s;
  REQUIRE(summarize(path, s).ok());
  std::map<std::string, uint64_t> want;
  uint64_t raw = 0;
  for (const QueryRecord& r : c.records) {
    want[r.value_name]++;
    raw += r.payload.size();
  }
  REQUIRE(s.queries.size() == want.size());
  for (const QuerySummary& q : s.queries) CHECK(q.records == want[q.value_name]);
  CHECK(s.records == c.records.size());
  CHECK(s.ticks == kTicks);
  CHECK(s.raw_bytes == raw);
  CHECK(s.file_bytes == std::filesystem::file_size(path));
  CHECK(s.span_seconds == Approx(double(c.records.back().time_100ns - c.records.front().time_100ns) / 1e7));
  CHECK(s.host.name == c.host.name);
  nlohmann::json j = s;
  CHECK(j["host"]["name"] == c.host.name);
  CHECK(j["records"] == c.records.size());
  CHECK(j["queries"].size() == want.size());
  std::filesystem::remove(path);
}

namespace {

// A "NAME: N kB" line of /proc/self/status, in bytes.
size_t status_bytes(const std::string& name) {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind(name + ":", 0) == 0) return std::stoul(line.substr(name.size() + 1)) * 1024;
  return 0;
}

// Resident file-backed pages of this process (RssFile), in bytes.
size_t resident_file_bytes() { return status_bytes("RssFile"); }

}  // namespace

TEST_CASE("a reader that drops pages holds at most about a megabyte of a capture it streams through") {
  // 200 records of 64 KiB that do not compress: a 13 MB file, read front to back.
  Capture c = testdata::make_capture(0);
  for (uint32_t t = 0; t < 200; ++t) {
    Bytes payload;
    for (size_t j = 0; j < 8192; ++j) put_le64(payload, testdata::mix(uint64_t(t) * 8192 + j));
    c.records.push_back(testdata::make_record(t, "Global", 0, 3, std::move(payload)));
  }
  const std::string path = temp_path("streamed.perfcap");
  REQUIRE(write_capture(path, c, WriterOptions{32, DeltaCodec::kNone, SyncPolicy::kOnClose}).ok());
  REQUIRE(std::filesystem::file_size(path) > 12u * 1000 * 1000);
  for (const bool drop : {true, false}) {
    INFO("drop pages: " << drop);
    std::unique_ptr<Reader> r;
    REQUIRE(Reader::open(path, r, ReaderOptions{true, drop}).ok());
    const size_t before = resident_file_bytes();
    size_t most = 0;
    for (size_t i = 0; i < r->records().size(); ++i) {
      ByteView p;
      REQUIRE(r->payload(i, p).ok());
      REQUIRE(p.size() == 65536);
      CHECK(load_le64(p.data()) == testdata::mix(uint64_t(i) * 8192));
      most = std::max(most, resident_file_bytes() - std::min(before, resident_file_bytes()));
    }
    // Dropped in batches of 1 MiB plus the 64 KiB fault-around windows at either end; kept, the
    // whole file stays mapped (which shows this measure sees the pages).
    if (drop)
      CHECK(most < 2u * 1024 * 1024);
    else
      CHECK(most > 10u * 1000 * 1000);
  }
  std::filesystem::remove(path);
}

namespace {

// The process's peak resident memory since the last reset_peak_rss() (Linux: /proc/PID/clear_refs
// "5" resets VmHWM, proc(5)).
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }
size_t peak_rss() { return status_bytes("VmHWM"); }

}  // namespace

TEST_CASE("a record whose raw size its coded bytes cannot hold is refused before it is allocated") {
  // Issue 44 M1: a capture whose registry record claimed 1 GiB cost 1.07 GB in every command.
  Capture c = testdata::make_capture(kTicks);
  Bytes blob;  // 144 KiB: 32 random KiB 4.5 times (inside LZ4's 64 KiB window), coded in about 33 KiB
  for (size_t j = 0; j < 18432; ++j) put_le64(blob, testdata::mix(j % 4096));
  c.registry.insert(c.registry.begin(), RegistryValue{"SOFTWARE\\Big", "Blob", 3, blob});
  const std::string path = temp_path("claims_1g.perfcap");
  REQUIRE(write_capture(path, c, kXorOptions).ok());
  Bytes bytes = read_file(path);
  constexpr uint32_t kClaim = 1u << 30;

  SECTION("a registry value") {
    const size_t at = testing::record_offset(bytes, RecordType::kRegistry);
    const size_t raw_at = testing::registry_packed_at(bytes, at);
    REQUIRE(bytes[raw_at] == uint8_t(Codec::kLz4));
    REQUIRE(load_le32(&bytes[raw_at + 1]) == blob.size());
    REQUIRE(load_le32(&bytes[raw_at + 5]) < blob.size() * 3 / 4);
    store_le32(&bytes[raw_at + 1], kClaim);
    testing::refresh_crc(bytes, at);
    write_file(path, bytes);
    reset_peak_rss();
    const size_t before = peak_rss();
    for (bool use_index : {true, false}) {
      Capture back;
      const Status st = read_capture(path, back, nullptr, ReaderOptions{use_index});
      CAPTURE(use_index, st.ToString());
      CHECK(st.code() == Status::Code::kCorruption);
      CHECK(mentions_offset(st.message(), at));
      CHECK(st.message().find("SOFTWARE\\Big\\Blob") != std::string::npos);
      CHECK(st.message().find("recorded size 1073741824 is more than") != std::string::npos);
      // What is intact is kept: every other registry value, the names, every record.
      CHECK(back.registry.size() == c.registry.size() - 1);
      CHECK(back.names.size() == c.names.size());
      CHECK(back.host.name == c.host.name);
      CHECK(missing_records(c.records, back.records) == 0);
    }
    CHECK(peak_rss() - before < 64u * 1024 * 1024);
  }
  SECTION("a query record read without the index") {
    const size_t at = query_record_offsets(bytes)[1];  // tick 0's "Global": a keyframe
    const size_t body = at + kRecordHeaderSize;
    const size_t raw_at = body + 4 * 3 + 8 + 4 * 4;  // seq base tick time latency status type size
    REQUIRE(c.records[1].value_name == "Global");
    REQUIRE(load_le32(&bytes[raw_at]) == c.records[1].payload.size());
    const Codec codec = Codec(bytes[raw_at + 4]);
    REQUIRE((codec == Codec::kLz4 || codec == Codec::kStored));
    store_le32(&bytes[raw_at], kClaim);
    bytes[raw_at + 4] = uint8_t(Codec::kLz4);
    testing::refresh_crc(bytes, at);
    write_file(path, bytes);
    reset_peak_rss();
    const size_t before = peak_rss();
    Capture back;
    const Status st = read_capture(path, back, nullptr, ReaderOptions{false});
    CAPTURE(st.ToString());
    CHECK(mentions_offset(st.message(), at));
    CHECK(st.message().find("recorded size 1073741824 is more than") != std::string::npos);
    // That keyframe and the deltas on it, no more.
    CHECK(missing_records(c.records, back.records) == kKeyframeInterval);
    CHECK(peak_rss() - before < 64u * 1024 * 1024);
  }
  std::filesystem::remove(path);
}
