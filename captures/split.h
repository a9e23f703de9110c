// Capture format v2's split codec (FORMAT.md "Split codec"): a perf-data payload becomes its
// structure (the payload with every value word zeroed: definitions, instance headers and names,
// lengths) and its values (the 32-bit words that move: the clocks, each object's PerfTime and
// PerfFreq, every counter block's data), stored as columns of residuals against the previous
// samples of the same query, then entropy coded.
//
// Contract:
//  - find_layout() reads only structure words (signature, lengths, counts), never a value word, so
//    the structure alone yields the same layout: that is what makes decoding possible.
//  - Lossless by construction for every payload find_layout() accepts: structure + values put back
//    at the same offsets are the exact bytes (residuals are taken mod 2^32). Payloads it refuses take
//    the v1 codecs (codec.h), also exact.
//  - Decoding checks every length and count against the structure it holds; a mismatch is a
//    Corruption status, never a read or write outside the spans.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "captures/format.h"

namespace perfsim::captures {

// Where a payload's values sit: 4-byte words at `offsets`, in column order, cut into groups (one
// counter word of one object across its instances, or one lone word); group g is
// [group_end[g-1], group_end[g]).
struct Layout {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> group_end;
  std::vector<uint32_t> object_end;  // groups up to each object's last (the writer looks for relations within one)
  std::vector<uint32_t> parent;      // per value: its instance's parent instance number, kNoParent for none
};

inline constexpr uint32_t kNoParent = 0xFFFFFFFF;

// A cross-column prediction (mode table 2, FORMAT.md "Split codec"): every value of group `target`
// predicted from the same-numbered values of groups a and b (their sum, or the previous value plus
// their increments). Declared by a keyframe for its chain.
struct Relation {
  uint32_t target, a, b;  // b = kChildSum: target's value i from the sum of a's values whose parent is i
};

inline constexpr uint32_t kChildSum = 0xFFFFFFFF;

// False when the payload is not a PERF_DATA_BLOCK this walk understands (the caller falls back).
bool find_layout(ByteView payload, Layout& out);

// The payload with its value words zeroed.
void make_structure(ByteView payload, const Layout& layout, Bytes& out);

enum class Entropy : uint8_t { kZstd = 0, kLz4 = 1 };

// One query's history, kept alike by writer and reader: the structure its records reference and
// the values of the last two records.
struct SplitState {
  uint32_t struct_seq = kNoBase;  // seq of the record that carries `structure` inline
  Bytes structure;
  Layout layout;
  std::vector<uint32_t> prev, prev2, cur;
  uint32_t history = 0;             // how many of prev, prev2 hold values (0..2); 0 after a non-split record
  std::vector<Relation> relations;  // declared by the chain's keyframe (codec kSplitCross), in decoding order
};

struct ZstdContexts;  // compression/decompression contexts, reused across records

class SplitCoder {
 public:
  // cross: the writer looks for relations (codec kSplitCross); false writes codec kSplit only.
  explicit SplitCoder(Entropy entropy = Entropy::kZstd, int zstd_level = 3, bool cross = true);
  ~SplitCoder();
  SplitCoder(const SplitCoder&) = delete;
  SplitCoder& operator=(const SplitCoder&) = delete;

  // Appends the coded bytes of `payload` (laid out as st.layout, structure st.structure) to out.
  // delta: residuals against st's history (needs history >= 1), else the values themselves.
  // inline_structure: the structure travels in this record (seq `seq`), else st.struct_seq is named.
  // Returns the codec the record takes: kSplitCross when its chain declares relations, else kSplit.
  Codec encode(ByteView payload, SplitState& st, bool delta, bool inline_structure, uint32_t seq, Bytes& out);

  // Fetches the coded bytes of the query record with sequence number `seq` (for a referenced structure).
  using Fetch = std::function<Status(uint32_t seq, ByteView& coded)>;
  // Decodes a record (sequence `seq`, codec kSplit or kSplitCross) into out; st must hold the history
  // of its base when delta.
  Status decode(ByteView coded, Codec codec, uint32_t seq, uint32_t raw_size, bool delta, SplitState& st,
                const Fetch& fetch, Bytes& out);
  // The first min(want, raw_size) bytes of a record without its chain: the structure (kept in st,
  // which must not be a decode() state) and the block header's clock words stored plainly.
  Status prefix(ByteView coded, uint32_t raw_size, size_t want, SplitState& st, const Fetch& fetch, Bytes& out);

 private:
  Status load_structure(ByteView coded, uint32_t raw_size, SplitState& st, size_t& used);
  void compress(ByteView src, Bytes& out);
  Status decompress(Entropy e, ByteView src, Bytes& out, size_t size);
  void find_relations(SplitState& st);
  Status check_relations(const SplitState& st);

  Entropy entropy_;
  int level_;
  bool cross_;
  std::vector<int32_t> declared_;  // per group: its relation's number, -1 for none
  std::vector<uint32_t> pred_;     // a relation target's predictions
  std::unique_ptr<ZstdContexts> z_;
  Bytes planes_, packed_;
};

}  // namespace perfsim::captures
