#include "rpc/ndr.h"

#include "core/utf16.h"

namespace perfsim::ndr {

bool Writer::pointer(bool& present) {
  uint32_t id = 0;
  if (present) {
    id = next_referent_;
    next_referent_ += 4;  // MS and Samba number referents from 0x20000 in steps of 4
  }
  return u32(id);
}

bool Writer::array_header(uint32_t& max_count, uint32_t& offset, uint32_t& actual) {
  return u32(max_count) && u32(offset) && u32(actual);
}

// Shares when gathering (a gathering writer has an owner_) and `owner` keeps `data` alive.
bool Writer::put(ByteView data, uint32_t count, const std::shared_ptr<const void>& owner) {
  const size_t n = std::min<size_t>(count, data.size());
  if (owner_ && owner && n >= kShareMin) {
    chain_.append(out_);
    chain_.append_shared(owner, data.first(n));
    out_.clear();
    shared_ = chain_.size();
  } else {
    out_.insert(out_.end(), data.begin(), data.begin() + n);
  }
  if (count > n) out_.insert(out_.end(), count - n, 0);
  return true;
}

ByteChain Writer::take_chain() {
  if (chain_.empty()) {  // nothing shared: the bytes become the chain, uncopied
    shared_ = 0;
    return ByteChain(std::move(out_));
  }
  chain_.append(out_);
  out_.clear();
  shared_ = 0;
  return std::move(chain_);
}

bool Writer::utf16(std::u16string& text, uint32_t units) {
  align(2);
  size_t n = std::min<size_t>(units, text.size());
  put_utf16le(out_, std::u16string_view(text).substr(0, n));
  out_.insert(out_.end(), 2 * (units - n), 0);
  return true;
}

bool Reader::fail(const char* what) {
  if (error_.empty()) error_ = "at stub offset " + std::to_string(r_.pos()) + ": " + what;
  return false;
}

bool Reader::align(size_t n) {
  size_t pad = (n - r_.pos() % n) % n;
  return r_.skip(pad) || fail("truncated alignment padding");
}

bool Reader::pointer(bool& present) {
  uint32_t id = 0;
  if (!u32(id)) return false;
  present = id != 0;
  return true;
}

bool Reader::array_header(uint32_t& max_count, uint32_t& offset, uint32_t& actual) {
  if (!u32(max_count) || !u32(offset) || !u32(actual)) return false;
  if (offset != 0) return fail("array offset other than 0");
  if (actual > max_count) return fail("array actual_count above max_count");
  return true;
}

bool Reader::bytes(Bytes& data, uint32_t count) {
  ByteView v;
  if (!r_.bytes(count, v)) return fail("array longer than the stub");
  data.assign(v.begin(), v.end());
  return true;
}

bool Reader::bytes(SharedBytes& data, uint32_t count) {
  Bytes b;
  if (!bytes(b, count)) return false;
  data = SharedBytes(std::move(b));
  return true;
}

bool Reader::utf16(std::u16string& text, uint32_t units) {
  ByteView v;
  if (!align(2)) return false;
  if (units > r_.remaining() / 2 || !r_.bytes(size_t(units) * 2, v)) return fail("string longer than the stub");
  text = load_utf16le(v.data(), units);
  return true;
}

}  // namespace perfsim::ndr
