// Streaming capture writer (format: FORMAT.md). create() writes the file header and the host
// record; metadata and query records follow in any order; close() appends the index and footer.
//
// Guarantees:
//  - Every record reaches the file with one write(2) of its complete frame before the call
//    returns, so a writer killed at any point (SIGKILL included) leaves a file whose records up to
//    the last complete one read back; the torn remainder is reported by the reader.
//  - SyncPolicy decides what survives a power loss: nothing is fsynced before close() unless asked.
//  - A query's records start a keyframe at least every keyframe_interval records, so decoding any
//    record needs at most keyframe_interval - 1 deltas (v2 also starts one when the structure changes).
//  - Query records must come in non-decreasing tick order (InvalidArgument otherwise).
//  - After the first I/O error every call returns that error.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "captures/capture.h"
#include "captures/codec.h"
#include "captures/records.h"
#include "captures/split.h"

namespace perfsim::captures {

class Reader;

enum class DeltaCodec {
  kNone,      // every payload a keyframe
  kXor,       // XOR against the previous payload, then LZ4 (default: smallest and fastest, see FORMAT.md)
  kDict,      // LZ4 with the previous payload as dictionary, per 32 KiB chunk
  kSmallest,  // both, keep the smaller (twice the encoding work)
};

enum class SyncPolicy {
  kOnClose,      // fdatasync at close only; records survive a killed process, not a power loss
  kEveryTick,    // fdatasync when a record of a new tick arrives (the previous tick is then safe)
  kEveryRecord,  // fdatasync after every record
};

struct WriterOptions {
  uint32_t keyframe_interval = 32;
  DeltaCodec delta = DeltaCodec::kXor;  // v1 codec, and v2's fallback for payloads that do not split
  SyncPolicy sync = SyncPolicy::kOnClose;
  uint32_t version = kFormatVersion;  // 1: v1 codecs only, for perfsim before v2
  // v2 only (FORMAT.md "Split codec"):
  Entropy entropy = Entropy::kZstd;
  int zstd_level = 3;
  bool cross_columns = true;     // relations between columns (codec 5); false: codec 4 only, as before
  uint32_t structure_every = 8;  // a keyframe repeats its structure inline at least every this many
                                 // keyframes, so losing one record costs a bounded stretch
};

class Writer {
 public:
  static Status create(const std::string& path, const HostInfo& host, const WriterOptions& opt,
                       std::unique_ptr<Writer>& out);
  ~Writer();  // close()s if the caller did not; an error there is lost, so call close()
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  Status add_registry(const RegistryValue& v);
  Status add_names(const NameTable& t);
  Status add_object(const ObjectInfo& o);
  Status set_fingerprint(const std::string& json);  // the reader keeps the last one written
  Status append(const QueryRecord& r);
  Status sync();
  Status close();

  uint64_t file_bytes() const { return offset_; }
  uint64_t raw_payload_bytes() const { return raw_bytes_; }

 private:
  struct QueryState {
    uint32_t id = 0;
    uint32_t last_entry = kNoBase;
    uint32_t since_keyframe = 0;
    Bytes prev;  // last payload, the base of the next delta
    SplitState split;
    uint32_t keyframes_by_ref = 0;  // keyframes since the structure was last inline
  };

  Writer(int fd, const WriterOptions& opt)
      : fd_(fd), opt_(opt), split_(opt.entropy, opt.zstd_level, opt.cross_columns) {}
  Status write_frame(RecordType type, ByteView body);
  Status write_metadata(RecordType type, const Bytes& body);
  Codec encode_delta(ByteView payload, ByteView base);
  // v2: codes payload with the split codec when it walks (codec: kSplit or kSplitCross); false
  // (nothing written) otherwise.
  bool encode_split(ByteView payload, QueryState& q, bool& keyframe, uint32_t seq, Codec& codec);
  Status write_all(ByteView data);

  int fd_ = -1;
  WriterOptions opt_;
  Status error_;
  uint64_t offset_ = 0;
  uint64_t raw_bytes_ = 0;
  uint32_t last_tick_ = 0;
  IndexData index_;
  std::unordered_map<std::string, QueryState> queries_;
  EncodeScratch scratch_;
  SplitCoder split_;
  Layout layout_;
  Bytes structure_;
  Bytes coded_, coded_alt_, body_, frame_;
};

// A capture's registry values, name tables, catalog and fingerprint (its records are the caller's).
Status add_metadata(Writer& w, const Capture& c);
// Writes a whole capture (host, registry, names, catalog, fingerprint, records) and closes it.
Status write_capture(const std::string& path, const Capture& c, const WriterOptions& opt = {});

// Writes a file with `write(tmp)` to `PATH.tmp.PID` beside `path`, then renames it over `path`:
// a failure (or a kill) leaves `path` as it was and no half-written file under its name. The temp
// file is removed on failure, an exception out of `write` (std::bad_alloc) included, which is
// rethrown; leftovers of killed runs (their PID gone) are removed first.
// lodctr, `perfsim import --perfmon`, `perfsim redact` and `perfsim convert` write their outputs
// through it. A `path` that exists and is not a regular file is refused first (check_replaceable).
Status write_replacing(const std::string& path, const std::function<Status(const std::string& tmp)>& write);

// Ok when `path` does not exist or is a regular file (through symlinks); otherwise InvalidArgument
// naming what it is and what to write instead. A rename replaces a device node, FIFO or socket
// with the new file (as root, `-o /dev/null` made /dev/null a capture) and a directory cannot be
// replaced at all; writing a capture into a stream instead would leave no file to read back.
Status check_replaceable(const std::string& path);

// Rewrites the capture at `in` (v1 or v2) into `out` with `opt` (e.g. v1 -> v2), one record at a
// time: memory stays at a few samples whatever the capture's length. A damaged input is refused
// (Corruption naming the offset; `out` is left as it was: write_replacing) rather than silently
// shortened.
// `records` (optional) receives the number of query records written.
Status convert_capture(const std::string& in, const std::string& out, const WriterOptions& opt,
                       uint64_t* records = nullptr);

// What rewrite_capture does to each record on the way (nullptr: nothing).
using RecordEdit = std::function<void(QueryRecord&)>;

// Writes `meta` (host, registry, names, catalog, fingerprint: usually `in`'s metadata, edited)
// and then every record of `in`, each passed through `edit`, into `out`, one record at a time.
// A damaged `in` is refused (its lost records would vanish from `out`); `out` is left to the caller.
Status rewrite_capture(Reader& in, const Capture& meta, const RecordEdit& edit, const std::string& out,
                       const WriterOptions& opt = {}, uint64_t* records = nullptr);

}  // namespace perfsim::captures
