#include "captures/split.h"

#ifndef PERFSIM_CAPTURES_PORTABLE
#include <lz4.h>
#include <zstd.h>
#endif

#include <bit>
#include <cstring>

#include "captures/codec.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"

namespace perfsim::captures {
namespace {

namespace db = winperf::data_block;
namespace ot = winperf::object_type;

// PERF_DATA_BLOCK value words: SystemTime, then PerfTime, PerfFreq, PerfTime100nSec.
constexpr uint32_t kHeaderValues[] = {
    db::kSystemTime,   db::kSystemTime + 4, db::kSystemTime + 8, db::kSystemTime + 12, db::kPerfTime,
    db::kPerfTime + 4, db::kPerfFreq,       db::kPerfFreq + 4,   db::kPerfTime100nSec, db::kPerfTime100nSec + 4};
constexpr size_t kHeaderWords = std::size(kHeaderValues);  // the first columns of every layout
static_assert(ot::kPerfFreq == ot::kPerfTime + 8);         // an object's times: 4 words from PerfTime

void lone(Layout& l, uint32_t off) {
  l.offsets.push_back(off);
  l.parent.push_back(kNoParent);
  l.group_end.push_back(uint32_t(l.offsets.size()));
}

// Words of a counter block's data, after its ByteLength.
uint32_t data_words(const perfdata::CounterBlockView& b) { return (b.length - winperf::kCounterBlockSize) / 4; }

// Columns of a multi-instance object: word w of every instance's counter block, w = 0, 1, ...
bool instances(const perfdata::ObjectView& o, Layout& l) {
  struct Block {
    uint32_t data, words, parent;
  };
  std::vector<Block> blocks;
  uint32_t most = 0;
  perfdata::InstanceCursor cursor(o);
  for (perfdata::InstanceView in; cursor.next(in);) {
    // ParentObjectTitleIndex 0: no parent; else ParentObjectInstance is its index.
    const uint32_t parent = in.parent_title_index() ? in.parent_instance() : kNoParent;
    blocks.push_back({o.at + in.block.data(), data_words(in.block), parent});
    most = std::max(most, data_words(in.block));
  }
  if (cursor.damaged()) return false;
  for (uint32_t w = 0; w < most; ++w) {
    for (const Block& b : blocks)
      if (w < b.words) l.offsets.push_back(b.data + 4 * w), l.parent.push_back(b.parent);
    l.group_end.push_back(uint32_t(l.offsets.size()));
  }
  return true;
}

bool object(const perfdata::ObjectView& o, Layout& l) {
  if (!o.lengths_consistent()) return false;
  for (uint32_t w = 0; w < 4; ++w) lone(l, o.at + ot::kPerfTime + 4 * w);
  if (o.multi_instance()) return instances(o, l);
  perfdata::CounterBlockView b;
  if (!perfdata::single_block(o, b)) return false;
  for (uint32_t w = 0; w < data_words(b); ++w) lone(l, o.at + b.data() + 4 * w);
  return true;
}

uint32_t zigzag(uint32_t d) { return (d << 1) ^ uint32_t(int32_t(d) >> 31); }
uint32_t unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1)); }

// Residual modes, one byte per group in a delta record.
constexpr uint8_t kDelta = 0;        // against the previous value
constexpr uint8_t kDeltaDelta = 1;   // against prev + (prev - prev2): clocks and steady rates give 0
constexpr uint8_t kSum = 2;          // mode table 2: prev + the increments of the relation's two groups
constexpr uint8_t kAbsolute = 3;     // a keyframe's values (never written as a mode byte)
constexpr uint8_t kSumAbsolute = 4;  // a keyframe's relation target: the sum of its two groups (never written)

// Where group g's values start; the values of a relation's groups pair up by position.
size_t group_begin(const Layout& l, size_t g) { return g ? l.group_end[g - 1] : 0; }

uint32_t predict(uint8_t mode, const SplitState& st, size_t j) {
  if (mode == kDelta) return st.prev[j];
  if (mode == kDeltaDelta) return 2 * st.prev[j] - st.prev2[j];
  return 0;
}

// Values [j0, j1) of one column from the residual planes, one loop per mode: this is the decoder's
// hot path, so the mode is not tested per value.
void restore(uint8_t mode, SplitState& st, const uint8_t* __restrict p, size_t n, size_t j0, size_t j1) {
  const uint8_t* __restrict p1 = p + n;
  const uint8_t* __restrict p2 = p + 2 * n;
  const uint8_t* __restrict p3 = p + 3 * n;
  auto z = [&](size_t j) {
    return unzigzag(uint32_t(p[j]) | uint32_t(p1[j]) << 8 | uint32_t(p2[j]) << 16 | uint32_t(p3[j]) << 24);
  };
  // Distinct buffers (cur, prev, prev2, planes): __restrict lets the compiler vectorise these loops.
  uint32_t* __restrict cur = st.cur.data();
  const uint32_t* __restrict a = st.prev.data();
  const uint32_t* __restrict b = st.prev2.data();
  if (mode == kDelta) {
    for (size_t j = j0; j < j1; ++j) cur[j] = a[j] + z(j);
  } else if (mode == kDeltaDelta) {
    for (size_t j = j0; j < j1; ++j) cur[j] = 2 * a[j] - b[j] + z(j);
  } else {
    for (size_t j = j0; j < j1; ++j) cur[j] = z(j);
  }
}

// After a record: its values become prev, prev becomes prev2.
void rotate(SplitState& st, bool delta) {
  st.prev2.swap(st.prev);
  st.prev.swap(st.cur);
  st.history = delta ? std::min<uint32_t>(st.history + 1, 2) : 1;
}

}  // namespace

#ifdef PERFSIM_CAPTURES_PORTABLE
// Built without zstd and LZ4 (codec.cpp says why): the split codec is never written (Writer::create
// refuses format v2) and refused when read.
struct ZstdContexts {};
#else
struct ZstdContexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
#endif

bool find_layout(ByteView p, Layout& l) {
  l.offsets.clear();
  l.group_end.clear();
  l.object_end.clear();
  l.parent.clear();
  perfdata::BlockView b;
  if (!perfdata::view_block(p, b) || b.total_byte_length() > p.size()) return false;
  for (uint32_t off : kHeaderValues) lone(l, off);
  perfdata::ObjectCursor objects(b);
  for (perfdata::ObjectView o; objects.next(o);) {
    if (!object(o, l)) return false;
    l.object_end.push_back(uint32_t(l.group_end.size()));
  }
  return !objects.damaged();
}

void make_structure(ByteView payload, const Layout& layout, Bytes& out) {
  out.assign(payload.begin(), payload.end());
  for (uint32_t off : layout.offsets) std::memset(&out[off], 0, 4);
}

SplitCoder::SplitCoder(Entropy entropy, int zstd_level, bool cross)
    : entropy_(entropy), level_(zstd_level), cross_(cross), z_(std::make_unique<ZstdContexts>()) {}
SplitCoder::~SplitCoder() = default;

#ifdef PERFSIM_CAPTURES_PORTABLE
void SplitCoder::compress(ByteView, Bytes&) {}
Status SplitCoder::decompress(Entropy, ByteView, Bytes&, size_t) {
  return Status::Unsupported("this build has no zstd or LZ4: read the capture with perfsim on Linux");
}
#else
void SplitCoder::compress(ByteView src, Bytes& out) {
  const size_t len_at = out.size();
  put_le32(out, 0);
  const size_t at = out.size();
  if (entropy_ == Entropy::kZstd) {
    out.resize(at + ZSTD_compressBound(src.size()));
    const size_t n = ZSTD_compressCCtx(z_->c, out.data() + at, out.size() - at, src.data(), src.size(), level_);
    out.resize(at + (ZSTD_isError(n) ? 0 : n));  // cannot fail with a bound-sized buffer
  } else {
    const int bound = LZ4_compressBound(int(src.size()));
    out.resize(at + size_t(bound));
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(src.data()),
                                       reinterpret_cast<char*>(out.data() + at), int(src.size()), bound);
    out.resize(at + size_t(n));
  }
  store_le32(&out[len_at], uint32_t(out.size() - at));
}

Status SplitCoder::decompress(Entropy e, ByteView src, Bytes& out, size_t size) {
  const bool zstd = e == Entropy::kZstd;
  if (Status s = check_expansion(size, src.size(), zstd ? kZstdMaxRatio : kLz4MaxRatio, zstd ? "zstd" : "LZ4"); !s.ok())
    return s;
  out.resize(size);
  if (e == Entropy::kZstd) {
    const size_t n = ZSTD_decompressDCtx(z_->d, out.data(), size, src.data(), src.size());
    if (ZSTD_isError(n) || n != size) return Status::Corruption("zstd block does not decode to its size");
  } else if (e == Entropy::kLz4) {
    if (size == 0 && src.empty()) return Status::Ok();
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(out.data()),
                                      int(src.size()), int(size));
    if (n != int(size)) return Status::Corruption("LZ4 block does not decode to its size");
  } else {
    return Status::Corruption("unknown entropy coder " + std::to_string(int(e)));
  }
  return Status::Ok();
}
#endif

namespace {

uint64_t width(uint32_t d) { return uint64_t(std::bit_width(zigzag(d))); }

// A relation costs 12 bytes a keyframe: declared only when it saves more than that there.
constexpr uint64_t kRelationBits = 96;

// Predictions of relation r's target values (k = 0 .. size - 1): in a keyframe a_k + b_k, or for a
// child sum the sum of a's values whose parent is k; in a delta the target's base value plus the
// same sum taken over the increments (cur - prev) of the sources.
void relation_prediction(const SplitState& st, const Relation& r, bool keyframe, std::vector<uint32_t>& pred) {
  const Layout& l = st.layout;
  const size_t x0 = group_begin(l, r.target), n = l.group_end[r.target] - x0, a0 = group_begin(l, r.a);
  const uint32_t* cur = st.cur.data();
  const uint32_t* prev = st.prev.data();
  pred.assign(n, 0);
  if (r.b == kChildSum) {
    for (size_t j = a0; j < l.group_end[r.a]; ++j)
      if (const uint32_t i = l.parent[j]; i < n) pred[i] += keyframe ? cur[j] : cur[j] - prev[j];
  } else {
    const size_t b0 = group_begin(l, r.b);
    if (keyframe)
      for (size_t k = 0; k < n; ++k) pred[k] = cur[a0 + k] + cur[b0 + k];
    else
      for (size_t k = 0; k < n; ++k) pred[k] = (cur[a0 + k] - prev[a0 + k]) + (cur[b0 + k] - prev[b0 + k]);
  }
  if (!keyframe)
    for (size_t k = 0; k < n; ++k) pred[k] += prev[x0 + k];
}

}  // namespace

// Relations for a keyframe, found in its values: for each group of an object, the pair of groups of
// the same object and size whose sum predicts it in fewest bits (exact on the group's first
// values), else the group of another object whose values summed per parent instance does; declared
// when that saves more than the declaration costs. No group depends on itself, however indirectly;
// the relations are then ordered so that a source that is a target comes first (FORMAT.md).
void SplitCoder::find_relations(SplitState& st) {
  std::vector<Relation> found;
  const Layout& l = st.layout;
  const std::vector<uint32_t>& cur = st.cur;
  const size_t groups = l.group_end.size();
  declared_.assign(groups, -1);  // group -> index into found
  auto size = [&](size_t g) { return l.group_end[g] - group_begin(l, g); };
  // Does group g depend on group x through the relations found so far?
  auto depends = [&](size_t g, size_t x) {
    std::vector<size_t> todo{g};
    for (size_t steps = 0; !todo.empty() && steps <= found.size() * 4 + 4; ++steps) {
      const size_t h = todo.back();
      todo.pop_back();
      if (h == x) return true;
      if (declared_[h] < 0) continue;
      const Relation& r = found[size_t(declared_[h])];
      todo.push_back(r.a);
      if (r.b != kChildSum) todo.push_back(r.b);
    }
    return false;
  };
  auto declare = [&](const Relation& r) {
    declared_[r.target] = int32_t(found.size());
    found.push_back(r);
  };
  auto plain_bits = [&](size_t x) {
    uint64_t bits = 0;
    for (size_t j = group_begin(l, x); j < l.group_end[x]; ++j) bits += width(cur[j]);
    return bits;
  };
  size_t first = kHeaderWords;
  for (uint32_t end : l.object_end) {
    for (size_t x = first; x < end; ++x) {
      const size_t n = size(x), x0 = group_begin(l, x);
      const uint64_t plain = n ? plain_bits(x) : 0;
      if (plain <= kRelationBits) continue;
      uint64_t best = plain - kRelationBits;
      size_t best_a = 0, best_b = 0;
      const size_t probe = std::min<size_t>(n, 4);
      for (size_t a = first; a < end && best > 0; ++a) {
        if (a == x || size(a) != n) continue;
        const size_t a0 = group_begin(l, a);
        for (size_t b = a; b < end && best > 0; ++b) {
          if (b == x || size(b) != n) continue;
          const size_t b0 = group_begin(l, b);
          bool exact = true;
          for (size_t k = 0; k < probe && exact; ++k) exact = cur[x0 + k] == cur[a0 + k] + cur[b0 + k];
          if (!exact || depends(a, x) || depends(b, x)) continue;
          uint64_t bits = 0;
          for (size_t k = 0; k < n && bits < best; ++k) bits += width(cur[x0 + k] - cur[a0 + k] - cur[b0 + k]);
          if (bits < best) best = bits, best_a = a, best_b = b;
        }
      }
      if (best_a != 0) declare({uint32_t(x), uint32_t(best_a), uint32_t(best_b)});  // group 0 is never a source
    }
    first = end;
  }
  // Child sums, for the groups no pair predicts: a group of child instances (parent numbers on its
  // values) summed per parent, each child group's sums computed once.
  struct Child {
    size_t group;
    std::vector<uint32_t> sums;  // by parent number
  };
  std::vector<Child> children;
  for (size_t a = kHeaderWords; a < groups; ++a) {
    const size_t a0 = group_begin(l, a);
    if (size(a) == 0 || l.parent[a0] == kNoParent) continue;
    Child c{a, {}};
    for (size_t j = a0; j < l.group_end[a]; ++j) {
      if (l.parent[j] >= l.offsets.size()) continue;  // no instance has that many parents
      if (l.parent[j] >= c.sums.size()) c.sums.resize(l.parent[j] + 1, 0);
      c.sums[l.parent[j]] += cur[j];
    }
    children.push_back(std::move(c));
  }
  for (size_t x = kHeaderWords; x < groups && !children.empty(); ++x) {
    const size_t n = size(x), x0 = group_begin(l, x);
    if (declared_[x] >= 0 || n < 2) continue;
    const uint64_t plain = plain_bits(x);
    if (plain <= kRelationBits) continue;
    uint64_t best = plain - kRelationBits;
    size_t best_a = 0;
    for (const Child& c : children) {
      if (c.group == x || c.sums.size() > n || c.sums.size() < 2) continue;
      bool exact = true;
      for (size_t k = 0; k < std::min<size_t>(c.sums.size(), 4) && exact; ++k) exact = c.sums[k] == cur[x0 + k];
      if (!exact || depends(c.group, x)) continue;
      uint64_t bits = 0;
      for (size_t k = 0; k < n && bits < best; ++k) bits += width(cur[x0 + k] - (k < c.sums.size() ? c.sums[k] : 0));
      if (bits < best) best = bits, best_a = c.group;
    }
    if (best_a != 0) declare({uint32_t(x), uint32_t(best_a), kChildSum});
  }
  // Decoding order: a relation after those whose targets it reads.
  st.relations.clear();
  std::vector<uint8_t> done(found.size(), 0);
  auto ready = [&](uint32_t g) { return declared_[g] < 0 || done[size_t(declared_[g])]; };
  for (size_t placed = 0, progress = 1; placed < found.size() && progress;) {
    progress = 0;
    for (size_t i = 0; i < found.size(); ++i) {
      const Relation& r = found[i];
      if (done[i] || !ready(r.a) || (r.b != kChildSum && !ready(r.b))) continue;
      done[i] = 1, ++placed, ++progress;
      st.relations.push_back(r);
    }
  }
}

Codec SplitCoder::encode(ByteView payload, SplitState& st, bool delta, bool inline_structure, uint32_t seq,
                         Bytes& out) {
  out.push_back(uint8_t(entropy_));
  put_le32(out, inline_structure ? kNoBase : st.struct_seq);
  if (inline_structure) {
    put_le32(out, uint32_t(st.structure.size()));
    compress(st.structure, out);
    st.struct_seq = seq;
  }
  const Layout& l = st.layout;
  const std::vector<uint32_t>& off = l.offsets;
  const std::vector<uint32_t>& ends = l.group_end;
  const size_t n = off.size(), groups = delta ? ends.size() : 0;
  st.cur.resize(n);
  for (size_t j = 0; j < n; ++j) st.cur[j] = load_le32(&payload[off[j]]);
  if (!delta) {
    if (cross_)
      find_relations(st);
    else
      st.relations.clear();
  }
  declared_.assign(ends.size(), -1);
  for (size_t r = 0; r < st.relations.size(); ++r) declared_[st.relations[r].target] = int32_t(r);
  planes_.assign(groups + 4 * n, 0);
  uint8_t* plane = planes_.data() + groups;
  for (size_t g = 0, j0 = 0; g < ends.size(); j0 = ends[g++]) {
    const bool target = declared_[g] >= 0;
    if (target) relation_prediction(st, st.relations[size_t(declared_[g])], !delta, pred_);
    auto predicted = [&](uint8_t m, size_t j) {
      return m == kSum || m == kSumAbsolute ? pred_[j - j0] : predict(m, st, j);
    };
    uint8_t mode = target ? kSumAbsolute : kAbsolute;
    if (delta) {
      // The mode that needs fewer bits over the group (delta-of-delta only with two samples).
      uint64_t bits[3] = {0, 0, 0};
      const uint8_t modes = target ? 3 : st.history >= 2 ? 2 : 1;
      for (size_t j = j0; j < ends[g]; ++j)
        for (uint8_t m = 0; m < modes; ++m)
          if (m != kDeltaDelta || st.history >= 2) bits[m] += width(st.cur[j] - predicted(m, j));
      mode = st.history >= 2 && bits[1] < bits[0] ? kDeltaDelta : kDelta;
      if (target && bits[kSum] < bits[mode]) mode = kSum;
      planes_[g] = mode;
    }
    for (size_t j = j0; j < ends[g]; ++j) {
      const uint32_t z = zigzag(st.cur[j] - predicted(mode, j));
      for (size_t b = 0; b < 4; ++b) plane[b * n + j] = uint8_t(z >> (8 * b));
    }
  }
  // The block header's clock words again, plain: a reader wanting only the payload's first bytes
  // (payload_prefix) gets them from the structure and these, without the record's chain.
  for (size_t k = 0; k < kHeaderWords; ++k) put_le32(out, st.cur[k]);
  put_le32(out, uint32_t(n));
  put_le32(out, uint32_t(ends.size()));
  const bool cross = !st.relations.empty();
  if (cross && !delta) {
    put_le32(out, uint32_t(st.relations.size()));
    for (const Relation& r : st.relations) {
      put_le32(out, r.target);
      put_le32(out, r.a);
      put_le32(out, r.b);
    }
  }
  compress(planes_, out);
  rotate(st, delta);
  return cross ? Codec::kSplitCross : Codec::kSplit;
}

Status SplitCoder::load_structure(ByteView coded, uint32_t raw_size, SplitState& st, size_t& used) {
  ByteReader r(coded);
  uint8_t e = 0;
  uint32_t ref = 0, size = 0, clen = 0;
  ByteView block;
  if (!r.u8(e) || !r.u32(ref) || ref != kNoBase || !r.u32(size) || !r.u32(clen) || !r.bytes(clen, block))
    return Status::Corruption("split record's structure cut short or absent");
  // Checked before decoding, so a damaged size never allocates more than the payload needs.
  if (size != raw_size) return Status::Corruption("structure size differs from the recorded size");
  if (Status s = decompress(Entropy(e), block, st.structure, size); !s.ok()) return s;
  if (!find_layout(st.structure, st.layout)) return Status::Corruption("structure is not a walkable PERF_DATA_BLOCK");
  used = r.pos();
  return Status::Ok();
}

// A keyframe's relations against the structure: indices within the groups, equal sizes, one relation
// a target, and each source either no target or a target declared earlier (so decoding the
// targets in declaration order, after every other group, finds their sources decoded). Fills
// declared_ (group -> relation number) for the decoder.
Status SplitCoder::check_relations(const SplitState& st) {
  const Layout& l = st.layout;
  const size_t groups = l.group_end.size();
  declared_.assign(groups, -1);
  auto size = [&](size_t g) { return l.group_end[g] - group_begin(l, g); };
  for (size_t i = 0; i < st.relations.size(); ++i) {
    const Relation& r = st.relations[i];
    const bool child = r.b == kChildSum;  // the sum per parent instance: sizes differ
    if (r.target >= groups || r.a >= groups || (!child && r.b >= groups) || r.a == r.target || r.b == r.target)
      return Status::Corruption("relation " + std::to_string(i) + " names a group outside the structure or itself");
    if (!child && (size(r.a) != size(r.target) || size(r.b) != size(r.target)))
      return Status::Corruption("relation " + std::to_string(i) + " joins groups of different sizes");
    if (declared_[r.target] >= 0)
      return Status::Corruption("group " + std::to_string(r.target) + " is the target of two relations");
    declared_[r.target] = int32_t(i);
  }
  for (size_t i = 0; i < st.relations.size(); ++i)
    for (uint32_t s : {st.relations[i].a, st.relations[i].b})
      if (s != kChildSum && declared_[s] >= int32_t(i))
        return Status::Corruption("relation " + std::to_string(i) + " uses group " + std::to_string(s) +
                                  " before its own relation");
  return Status::Ok();
}

Status SplitCoder::decode(ByteView coded, Codec codec, uint32_t seq, uint32_t raw_size, bool delta, SplitState& st,
                          const Fetch& fetch, Bytes& out) {
  ByteReader r(coded);
  uint8_t e = 0;
  uint32_t ref = 0;
  if (!r.u8(e) || !r.u32(ref)) return Status::Corruption("split record cut short");
  if (ref == kNoBase) {
    st.struct_seq = kNoBase;
    size_t used = 0;
    if (Status s = load_structure(coded, raw_size, st, used); !s.ok()) return s;
    st.struct_seq = seq;
    r = ByteReader(coded, used);
  } else if (st.struct_seq != ref) {
    if (ref >= seq) return Status::Corruption("structure reference " + std::to_string(ref) + " is not earlier");
    st.struct_seq = kNoBase;
    ByteView other;
    size_t used = 0;
    if (Status s = fetch(ref, other); !s.ok()) return s;
    if (Status s = load_structure(other, raw_size, st, used); !s.ok())
      return Status::Corruption("structure in record " + std::to_string(ref) + ": " + s.message());
    st.struct_seq = ref;
  }
  uint32_t n = 0, groups = 0, vlen = 0;
  if (!r.skip(4 * kHeaderWords) || !r.u32(n) || !r.u32(groups))
    return Status::Corruption("split record's values cut short");
  const Layout& l = st.layout;
  if (st.structure.size() != raw_size) return Status::Corruption("structure size differs from the recorded size");
  if (n != l.offsets.size() || groups != l.group_end.size())
    return Status::Corruption("value count differs from the structure's");
  const bool cross = codec == Codec::kSplitCross;  // mode table 2
  if (!delta) {
    st.relations.clear();
    uint32_t count = 0;
    if (cross && (!r.u32(count) || count > groups)) return Status::Corruption("split record's relations cut short");
    for (uint32_t i = 0; i < count; ++i) {
      Relation rel{};
      if (!r.u32(rel.target) || !r.u32(rel.a) || !r.u32(rel.b))
        return Status::Corruption("split record's relations cut short");
      st.relations.push_back(rel);
    }
  }
  ByteView block;
  if (!r.u32(vlen) || !r.bytes(vlen, block)) return Status::Corruption("split record's values cut short");
  if (delta && (st.history == 0 || st.prev.size() != n))
    return Status::Corruption("delta record without the values of its base");
  if (cross) {
    if (Status s = check_relations(st); !s.ok()) return s;
  } else {
    declared_.assign(groups, -1);  // mode table 1: no relations, whatever an earlier keyframe declared
  }
  const size_t mode_bytes = delta ? groups : 0;
  if (Status s = decompress(Entropy(e), block, planes_, mode_bytes + 4 * size_t(n)); !s.ok()) return s;
  out.assign(st.structure.begin(), st.structure.end());
  st.cur.resize(n);
  const uint8_t* p = planes_.data() + mode_bytes;
  const uint8_t top = cross ? kSum : kDeltaDelta;  // the highest mode of the record's table
  for (size_t g = 0, j0 = 0; g < groups; j0 = l.group_end[g++]) {
    const uint8_t mode = delta ? planes_[g] : kAbsolute;
    if (delta && mode > top) return Status::Corruption("unknown residual mode " + std::to_string(mode));
    if (mode == kDeltaDelta && (st.history < 2 || st.prev2.size() != n))
      return Status::Corruption("delta-of-delta without two earlier samples");
    if (declared_[g] >= 0) continue;  // a relation's target: after every other group, below
    if (mode == kSum) return Status::Corruption("group " + std::to_string(g) + " in mode 2 has no relation");
    restore(mode, st, p, n, j0, l.group_end[g]);
  }
  for (const Relation& rel : st.relations) {
    if (!cross) break;
    const size_t x0 = group_begin(l, rel.target), size = l.group_end[rel.target] - x0;
    const uint8_t mode = delta ? planes_[rel.target] : kSumAbsolute;
    if (mode == kSum || mode == kSumAbsolute) {
      relation_prediction(st, rel, !delta, pred_);
      for (size_t k = 0; k < size; ++k) {
        const size_t j = x0 + k;
        st.cur[j] = pred_[k] + unzigzag(uint32_t(p[j]) | uint32_t(p[n + j]) << 8 |
                                        uint32_t(p[2 * size_t(n) + j]) << 16 | uint32_t(p[3 * size_t(n) + j]) << 24);
      }
    } else {
      restore(mode, st, p, n, x0, x0 + size);
    }
  }
  // Scattering after the columns keeps the hot loop above free of the payload's layout.
  uint8_t* o = out.data();
  // One 4-byte store a value: store_le32's byte stores, which the compiler cannot merge (the
  // payload might alias the offsets), took most of the decoder's time.
  if constexpr (std::endian::native == std::endian::little) {
    for (size_t j = 0; j < n; ++j) std::memcpy(o + l.offsets[j], &st.cur[j], 4);
  } else {
    for (size_t j = 0; j < n; ++j) store_le32(o + l.offsets[j], st.cur[j]);
  }
  rotate(st, delta);
  return Status::Ok();
}

Status SplitCoder::prefix(ByteView coded, uint32_t raw_size, size_t want, SplitState& st, const Fetch& fetch,
                          Bytes& out) {
  ByteReader r(coded);
  uint8_t e = 0;
  uint32_t ref = 0;
  size_t used = 0;
  if (!r.u8(e) || !r.u32(ref)) return Status::Corruption("split record cut short");
  if (ref == kNoBase) {
    st.struct_seq = kNoBase;
    if (Status s = load_structure(coded, raw_size, st, used); !s.ok()) return s;
    r = ByteReader(coded, used);
  } else if (st.struct_seq != ref) {
    st.struct_seq = kNoBase;
    ByteView other;
    if (Status s = fetch(ref, other); !s.ok()) return s;
    if (Status s = load_structure(other, raw_size, st, used); !s.ok()) return s;
    st.struct_seq = ref;
  }
  if (st.structure.size() != raw_size) return Status::Corruption("structure size differs from the recorded size");
  want = std::min<size_t>(want, raw_size);
  out.assign(st.structure.begin(), st.structure.begin() + want);
  for (uint32_t off : kHeaderValues) {
    uint32_t v = 0;
    if (!r.u32(v)) return Status::Corruption("split record's clock words cut short");
    for (size_t b = 0; b < 4 && off + b < want; ++b) out[off + b] = uint8_t(v >> (8 * b));
  }
  return Status::Ok();
}

}  // namespace perfsim::captures
