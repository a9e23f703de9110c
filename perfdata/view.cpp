// The checks that make a view (view.h); the accessors need none after them.
#include "perfdata/view.h"

#include <algorithm>
#include <cstring>

namespace perfsim::perfdata {

using namespace winperf;

bool has_block_header(ByteView blob) {
  static constexpr uint8_t kSig[data_block::kSignatureSize] = {'P', 0, 'E', 0, 'R', 0, 'F', 0};
  return blob.size() >= kDataBlockSize && std::memcmp(blob.data() + data_block::kSignature, kSig, sizeof kSig) == 0;
}

bool view_block(ByteView blob, BlockView& out) {
  if (!has_block_header(blob)) return false;
  BlockView b{blob, 0, 0};
  b.end = uint32_t(std::min<uint64_t>(b.total_byte_length(), blob.size()));
  b.header_length = b.field32(data_block::kHeaderLength);
  if (b.header_length < kDataBlockSize || b.header_length > b.end) return false;
  out = b;
  return true;
}

bool BlockView::system_name(ByteView& out) const {
  const uint32_t off = field32(data_block::kSystemNameOffset), len = field32(data_block::kSystemNameLength);
  if (uint64_t(off) + len > bytes.size()) return false;
  out = bytes.subspan(off, len);
  return true;
}

bool ObjectView::lengths_consistent() const {
  const uint32_t hdr = header_length(), def = definition_length();
  return hdr >= kObjectTypeSize && def >= hdr && def <= length;
}

bool ObjectCursor::next(ObjectView& o) {
  if (left_ == 0 || pos_ == b_.end || damaged_) return false;
  const uint64_t pos = pos_;
  if (pos + kObjectTypeSize > b_.end) return damaged_ = true, false;
  const uint8_t* p = b_.bytes.data() + pos;
  const uint32_t len = load_le32(p + object_type::kTotalByteLength);
  if (len < kObjectTypeSize || pos + len > b_.end) return damaged_ = true, false;
  o = ObjectView{p, pos_, len};
  pos_ += len;
  --left_;
  return true;
}

bool CounterDefCursor::next(CounterDefView& c) {
  if (left_ == 0 || pos_ + kCounterDefSize > end_) return false;
  c.p = o_.p + pos_;
  const uint32_t len = c.field32(counter_def::kByteLength);
  --left_;
  if (len < kCounterDefSize)
    left_ = 0;  // where the next one starts is unknown
  else
    pos_ += len;
  return true;
}

bool counter_block_at(const ObjectView& o, uint64_t at, CounterBlockView& out) {
  if (at + kCounterBlockSize > o.length) return false;
  const uint32_t len = load_le32(o.p + at + counter_block::kByteLength);
  if (len < kCounterBlockSize || at + len > o.length) return false;
  out = CounterBlockView{uint32_t(at), len};
  return true;
}

bool InstanceView::name(ByteView& out) const {
  const uint32_t off = name_offset(), len = name_length();
  if (uint64_t(off) + len > length) return false;
  out = ByteView(p + off, len);
  return true;
}

bool InstanceCursor::next(InstanceView& i) {
  if (damaged_) return false;
  if (o_.num_instances() < 0) return damaged_ = true, false;  // a single-instance object has none
  if (left_ == 0) return false;
  if (pos_ + kInstanceDefSize > o_.length) return damaged_ = true, false;
  const uint8_t* p = o_.p + pos_;
  const uint32_t len = load_le32(p + instance_def::kByteLength);
  CounterBlockView block;
  if (len < kInstanceDefSize || pos_ + len > o_.length || !counter_block_at(o_, pos_ + len, block))
    return damaged_ = true, false;
  i = InstanceView{p, uint32_t(pos_), len, block};
  pos_ += uint64_t(len) + block.length;
  --left_;
  return true;
}

}  // namespace perfsim::perfdata
