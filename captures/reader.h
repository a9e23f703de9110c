// Capture reader (format: FORMAT.md). open() maps the file, reads the metadata and the index
// trailer; when the trailer is missing or damaged it rebuilds the index by scanning the records.
//
// Guarantees:
//  - Nothing outside the file is read; every problem found names its byte offset.
//  - Damage does not stop reading: a torn or corrupt tail is reported and every record before it
//    is kept; corruption in the middle is skipped by resynchronising on the next record's sync
//    marker, and the records after it are kept (deltas whose base was lost are reported when read,
//    until the next keyframe of their query).
//  - Each record's checksum is verified the first time it is read (or at open when scanning); the
//    file must not change while it is open.
//  - payload(i) decodes at most keyframe_interval - 1 deltas (fewer when reading in order: the
//    last payload of each query is cached); a v2 split record may also read the one earlier record
//    that holds its structure.
//  - v1 and v2 files are read alike; every payload decodes to the exact bytes recorded.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "captures/capture.h"
#include "captures/records.h"
#include "captures/split.h"

namespace perfsim::captures {

inline constexpr uint32_t kLostBase = 0xFFFFFFFE;  // RecordInfo::base of a delta whose base is damaged

struct ReaderOptions {
  bool use_index = true;    // false: always scan (verifies every record's checksum on open)
  bool drop_pages = false;  // true: a record's pages leave the process once decoded (they stay in
                            // the page cache), so streaming a large capture holds no more of it
};

class Reader {
 public:
  static Status open(const std::string& path, std::unique_ptr<Reader>& out, const ReaderOptions& opt = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Host, registry, names, catalog, fingerprint; records left empty.
  const Capture& metadata() const { return meta_; }
  const std::vector<std::string>& queries() const { return index_.queries; }
  const std::vector<RecordInfo>& records() const { return index_.records; }
  bool used_index() const { return used_index_; }
  uint64_t file_size() const { return size_; }

  // Damage found so far (open, then reads), one line each with its offset; damage() is the first
  // as a Corruption status (ok when the file is intact). The names left out (below) are listed
  // here too, but are no damage.
  const std::vector<std::string>& warnings() const { return warnings_; }
  Status damage() const { return damage_; }
  // Name-table strings longer than Windows serves (perfdata/limits.h: a Counter table's past
  // PDH_MAX_COUNTER_NAME, a Help table's past perfsim's help bound), in metadata() and in the
  // registry's Perflib\LLL Counter and Help values: each pair taken out of its table, the rest of
  // the table and of the capture kept. One line each, naming its record's offset and its byte in
  // the table (issue 54: a 50 MB counter name was served as a 100 MB Counter table).
  struct LeftOut {
    uint64_t offset = 0;  // the metadata record's
    std::string message;
  };
  const std::vector<LeftOut>& left_out() const { return left_out_; }

  // Decoded payload of record i; the view is valid until the next decode of the same query.
  Status payload(size_t i, ByteView& out);
  Status read_record(size_t i, QueryRecord& out);
  // Record i's header fields (status, type, value name...) without decoding its payload.
  Status head(size_t i, QueryHeader& out);
  // The first min(n, raw_size) bytes of record i's payload, decoding only those (LZ4 can stop
  // early): enough for a PERF_DATA_BLOCK header without decoding the whole sample. Checksums are
  // not verified here (a full read does); the dictionary codec falls back to a full decode; a v2
  // split record needs only its structure (cached per query) and its plain clock words.
  Status payload_prefix(size_t i, size_t n, Bytes& out);
  // Record numbers [first, last) of a tick (empty when it has none).
  std::pair<size_t, size_t> tick_range(uint32_t tick) const;
  Status read_tick(uint32_t tick, std::vector<QueryRecord>& out);

 private:
  struct QueryCache {
    size_t decoded = SIZE_MAX;  // record whose payload `cur` holds
    Bytes cur, tmp;
    size_t prefix_of = SIZE_MAX;  // record whose first bytes `prefix` holds (payload_prefix)
    Bytes prefix;
    SplitState split;         // v2: the structure and last values of the split records decoded
    SplitState prefix_split;  // v2: the structure payload_prefix last used
  };

  Reader() = default;
  ByteView file() const { return {data_, size_}; }
  bool load_index(std::string& why);
  void scan();
  void note(const Status& st);
  void decoded(RecordType type, uint64_t offset);  // a metadata record just added to meta_
  Status decode_one(size_t i, QueryCache& c);
  Status read_header(size_t i, QueryHeader& h, ByteView& coded, bool verify = true);
  Status prefix_one(size_t i, size_t n, QueryCache& c);
  Status fetch_coded(uint32_t seq, ByteView& coded);  // a split record's coded bytes, by seq
  void drop(size_t i);
  void flush_drops();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  Capture meta_;
  IndexData index_;
  std::vector<uint32_t> seqs_;     // seq written in each record (equals its number unless records were lost)
  std::vector<uint8_t> verified_;  // record i's checksum already checked (scan, or an earlier read)
  std::vector<QueryCache> cache_;
  std::unique_ptr<SplitCoder> split_ = std::make_unique<SplitCoder>();
  std::vector<std::string> warnings_;
  std::vector<LeftOut> left_out_;
  Status damage_;
  bool used_index_ = false;
  bool drop_pages_ = false;
  size_t drop_first_ = 0, drop_last_ = 0;  // pages to give back, batched while reads are contiguous
};

// Reads a whole capture. On damage returns the first Corruption (with its offset) and still fills
// `out` with every intact record; `warnings` (optional) receives every problem found.
Status read_capture(const std::string& path, Capture& out, std::vector<std::string>* warnings = nullptr,
                    const ReaderOptions& opt = {});

}  // namespace perfsim::captures
