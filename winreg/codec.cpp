#include "winreg/codec.h"

#include <algorithm>

#include "rpc/ndr.h"

namespace perfsim::winreg {
namespace {

using ndr::Reader;
using ndr::Writer;

// Each xfer() describes one structure for both directions (see ndr.h). In writing mode the
// structure is only read, which is why encode() may pass a const object through const_cast.

template <class Io>
bool xfer(Io& io, PolicyHandle& h) {
  if (!io.u32(h.attributes)) return false;
  for (uint8_t& b : h.uuid)
    if (!io.u8(b)) return false;
  return true;
}

// FILETIME / NTTIME: two DWORDs, so 4-byte aligned (not an 8-aligned hyper).
template <class Io>
bool xfer_filetime(Io& io, uint64_t& t) {
  uint32_t low = uint32_t(t), high = uint32_t(t >> 32);
  if (!io.u32(low) || !io.u32(high)) return false;
  t = uint64_t(high) << 32 | low;
  return true;
}

template <class Io>
bool xfer_u32_ptr(Io& io, std::optional<uint32_t>& v) {
  return ndr::unique(io, v, [&](uint32_t& x) { return io.u32(x); });
}

// A structure starts on its most aligned member's boundary (C706 14.3.2, "Alignment of
// Constructed Types"; MS-RPCE 2.2.5 keeps the rule for NDR64); a pointer is a 4-byte unsigned long
// (C706 14.3.10), so winreg_String, winreg_StringBuf and winreg_ValNameBuf (two uint16 and a
// pointer) align to 4 before their first uint16. Samba's generated code does the same
// (ndr_push_align(ndr, 5) in ndr_push_winreg_ValNameBuf). It matters where such a structure is
// a pointee that follows a string: QueryMultipleValues' second value name after "Last Counter".
template <class Io>
bool align_pointer_struct(Io& io) {
  return io.align(4);
}

// winreg_String: name_len, name_size (bytes incl. NUL), unique pointer to a [string].
template <class Io>
bool xfer_string(Io& io, String& s) {
  uint16_t len = s ? uint16_t((s->size() + 1) * 2) : 0, size = len;
  if (!align_pointer_struct(io) || !io.u16(len) || !io.u16(size)) return false;
  return ndr::unique(io, s, [&](std::u16string& text) { return ndr::cv_string(io, text); });
}

// winreg_StringBuf counts an empty name as length 0; winreg_ValNameBuf counts its NUL.
enum class EmptyName { kZeroLength, kCountsNul };

template <class Io>
bool xfer_strbuf(Io& io, StringBuf& s, EmptyName empty) {
  uint16_t length = s.length, size = s.size;
  if constexpr (!Io::kReading) {
    bool zero = !s.text || (s.text->empty() && empty == EmptyName::kZeroLength);
    length = zero ? 0 : uint16_t((s.text->size() + 1) * 2);
    size = std::max(size, length);
  }
  bool present = s.text.has_value();
  if (!align_pointer_struct(io) || !io.u16(length) || !io.u16(size) || !io.pointer(present)) return false;
  if constexpr (Io::kReading) {
    s.length = length;
    s.size = size;
    if (present)
      s.text.emplace();
    else
      s.text.reset();
  }
  if (!present) return true;
  uint32_t max = size / 2, offset = 0, actual = length / 2;
  if (!io.array_header(max, offset, actual) || !io.utf16(*s.text, actual)) return false;
  if constexpr (Io::kReading) {
    if (!s.text->empty() && s.text->back() == u'\0') s.text->pop_back();
  }
  return true;
}

template <class Io>
bool xfer_strbuf_ptr(Io& io, std::optional<StringBuf>& s, EmptyName empty) {
  return ndr::unique(io, s, [&](StringBuf& b) { return xfer_strbuf(io, b, empty); });
}

// A unique pointer to a conformant-varying byte array whose max_count comes from `size_is`.
template <class Io, class Data>
bool xfer_data(Io& io, std::optional<Data>& data, const std::optional<uint32_t>& size_is) {
  return ndr::unique(io, data, [&](Data& d) { return ndr::cv_bytes(io, d, size_is.value_or(0)); });
}

template <class Io>
bool xfer(Io& io, KeySecurityData& sd) {
  bool present = sd.data.has_value();
  if (!io.pointer(present) || !io.u32(sd.size) || !io.u32(sd.len)) return false;
  if constexpr (Io::kReading) {
    if (present)
      sd.data.emplace();
    else
      sd.data.reset();
  }
  return !present || ndr::cv_bytes(io, *sd.data, sd.size);
}

// QueryMultipleValue[] (MS-RRP's RVALENT): conformant-varying array of structs, all scalars
// first, then each element's name buffer (scalars and its string together), each name buffer
// 4-aligned (xfer_strbuf) after the previous element's string.
template <class Io>
bool xfer(Io& io, std::vector<ValueEntry>& values) {
  uint32_t max = uint32_t(values.size()), offset = 0, count = max;
  if (!io.array_header(max, offset, count)) return false;
  if constexpr (Io::kReading) {
    if (count > io.remaining() / 16) return io.fail("QueryMultipleValue count larger than the stub");
    values.assign(count, {});
  }
  std::vector<bool> present(count);
  for (uint32_t i = 0; i < count; ++i) {
    ValueEntry& e = values[i];
    bool p = e.name.has_value();
    if (!io.pointer(p) || !io.u32(e.valuelen) || !io.u32(e.valueptr) || !io.u32(e.type)) return false;
    present[i] = p;
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (!present[i]) continue;
    if constexpr (Io::kReading) values[i].name.emplace();
    if (!xfer_strbuf(io, *values[i].name, EmptyName::kCountsNul)) return false;
  }
  return true;
}

template <class Io>
bool xfer_num_values(Io& io, const std::vector<ValueEntry>& values) {
  uint32_t n = uint32_t(values.size());
  if (!io.u32(n)) return false;
  return n == values.size() || io.fail("num_values disagrees with the values array");
}

// ---- operations, in opnum order ----

template <class Io>
bool xfer(Io& io, OpenHiveRequest& r) {
  return ndr::unique(io, r.system_name, [&](uint16_t& c) { return io.u16(c); }) && io.u32(r.access_mask);
}
template <class Io>
bool xfer(Io& io, OpenHiveResponse& r) {
  return xfer(io, r.handle) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, CloseKeyRequest& r) {
  return xfer(io, r.handle);
}
template <class Io>
bool xfer(Io& io, CloseKeyResponse& r) {
  return xfer(io, r.handle) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, EnumKeyRequest& r) {
  return xfer(io, r.handle) && io.u32(r.enum_index) && xfer_strbuf(io, r.name, EmptyName::kZeroLength) &&
         xfer_strbuf_ptr(io, r.keyclass, EmptyName::kZeroLength) &&
         ndr::unique(io, r.last_changed_time, [&](uint64_t& t) { return xfer_filetime(io, t); });
}
template <class Io>
bool xfer(Io& io, EnumKeyResponse& r) {
  return xfer_strbuf(io, r.name, EmptyName::kZeroLength) && xfer_strbuf_ptr(io, r.keyclass, EmptyName::kZeroLength) &&
         ndr::unique(io, r.last_changed_time, [&](uint64_t& t) { return xfer_filetime(io, t); }) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, EnumValueRequest& r) {
  return xfer(io, r.handle) && io.u32(r.enum_index) && xfer_strbuf(io, r.name, EmptyName::kCountsNul) &&
         xfer_u32_ptr(io, r.type) && xfer_data(io, r.value, r.size) && xfer_u32_ptr(io, r.size) &&
         xfer_u32_ptr(io, r.length);
}
template <class Io>
bool xfer(Io& io, EnumValueResponse& r) {
  return xfer_strbuf(io, r.name, EmptyName::kCountsNul) && xfer_u32_ptr(io, r.type) && xfer_data(io, r.value, r.size) &&
         xfer_u32_ptr(io, r.size) && xfer_u32_ptr(io, r.length) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, GetKeySecurityRequest& r) {
  return xfer(io, r.handle) && io.u32(r.sec_info) && xfer(io, r.sd);
}
template <class Io>
bool xfer(Io& io, GetKeySecurityResponse& r) {
  return xfer(io, r.sd) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, OpenKeyRequest& r) {
  return xfer(io, r.parent_handle) && xfer_string(io, r.keyname) && io.u32(r.options) && io.u32(r.access_mask);
}
template <class Io>
bool xfer(Io& io, OpenKeyResponse& r) {
  return xfer(io, r.handle) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, QueryInfoKeyRequest& r) {
  return xfer(io, r.handle) && xfer_string(io, r.classname);
}
template <class Io>
bool xfer(Io& io, QueryInfoKeyResponse& r) {
  return xfer_string(io, r.classname) && io.u32(r.num_subkeys) && io.u32(r.max_subkeylen) && io.u32(r.max_classlen) &&
         io.u32(r.num_values) && io.u32(r.max_valnamelen) && io.u32(r.max_valbufsize) && io.u32(r.secdescsize) &&
         xfer_filetime(io, r.last_changed_time) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, QueryValueRequest& r) {
  return xfer(io, r.handle) && xfer_string(io, r.value_name) && xfer_u32_ptr(io, r.type) &&
         xfer_data(io, r.data, r.data_size) && xfer_u32_ptr(io, r.data_size) && xfer_u32_ptr(io, r.data_length);
}
template <class Io>
bool xfer(Io& io, QueryValueResponse& r) {
  return xfer_u32_ptr(io, r.type) && xfer_data(io, r.data, r.data_size) && xfer_u32_ptr(io, r.data_size) &&
         xfer_u32_ptr(io, r.data_length) && io.u32(r.result);
}

// winreg_SecBuf embeds KeySecurityData, whose data pointer is embedded too: its referent is
// deferred past the structure's last member, `inherit` (C706 14.3.12.3, embedded pointers).
template <class Io>
bool xfer(Io& io, SecBuf& b) {
  KeySecurityData& sd = b.sd;
  bool present = sd.data.has_value();
  if (!io.u32(b.length) || !io.pointer(present) || !io.u32(sd.size) || !io.u32(sd.len) || !io.u8(b.inherit))
    return false;
  if constexpr (Io::kReading) {
    if (present)
      sd.data.emplace();
    else
      sd.data.reset();
  }
  return !present || ndr::cv_bytes(io, *sd.data, sd.size);
}
template <class Io>
bool xfer(Io& io, CreateKeyRequest& r) {
  return xfer(io, r.handle) && xfer_string(io, r.name) && xfer_string(io, r.keyclass) && io.u32(r.options) &&
         io.u32(r.access_mask) && ndr::unique(io, r.secdesc, [&](SecBuf& b) { return xfer(io, b); }) &&
         xfer_u32_ptr(io, r.action_taken);
}
template <class Io>
bool xfer(Io& io, CreateKeyResponse& r) {
  return xfer(io, r.new_handle) && xfer_u32_ptr(io, r.action_taken) && io.u32(r.result);
}
template <class Io>
bool xfer(Io& io, DeleteKeyRequest& r) {
  return xfer(io, r.handle) && xfer_string(io, r.name);
}
template <class Io>
bool xfer(Io& io, SetKeySecurityRequest& r) {
  return xfer(io, r.handle) && io.u32(r.sec_info) && xfer(io, r.sd);
}
// data is [ref, size_is(size)]: the referent of a top-level ref pointer is marshalled in place
// (no referent id, C706 14.3.12.1), a conformant array is its max_count then its elements.
template <class Io>
bool xfer(Io& io, SetValueRequest& r) {
  uint32_t max = uint32_t(r.data.size());
  if (!xfer(io, r.handle) || !xfer_string(io, r.name) || !io.u32(r.type) || !io.u32(max) || !io.bytes(r.data, max))
    return false;
  if (!io.u32(r.size)) return false;
  return r.size == max || io.fail("SetValue size disagrees with the data array");
}
template <class Io>
bool xfer(Io& io, StatusResponse& r) {
  return io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, GetVersionRequest& r) {
  return xfer(io, r.handle);
}
template <class Io>
bool xfer(Io& io, GetVersionResponse& r) {
  return io.u32(r.version) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, QueryMultipleValuesRequest& r) {
  return xfer(io, r.key_handle) && xfer(io, r.values) && xfer_num_values(io, r.values) &&
         xfer_data(io, r.buffer, r.buffer_size) && io.u32(r.buffer_size);
}
template <class Io>
bool xfer(Io& io, QueryMultipleValuesResponse& r) {
  return xfer(io, r.values) && xfer_data(io, r.buffer, r.buffer_size) && io.u32(r.buffer_size) && io.u32(r.result);
}

template <class Io>
bool xfer(Io& io, QueryMultipleValues2Request& r) {
  return xfer(io, r.key_handle) && xfer(io, r.values) && xfer_num_values(io, r.values) &&
         xfer_data(io, r.buffer, r.offered) && io.u32(r.offered);
}
template <class Io>
bool xfer(Io& io, QueryMultipleValues2Response& r) {
  return xfer(io, r.values) && xfer_data(io, r.buffer, std::nullopt) && io.u32(r.needed) && io.u32(r.result);
}

template <class T>
Bytes encode_any(const T& v) {
  Writer w;
  xfer(w, const_cast<T&>(v));  // Writer never modifies (see above)
  return w.take();
}

// Every byte array the xfer templates write is a member of `v`, so the writer may reference
// them while the chain keeps `v` alive.
template <class T>
ByteChain encode_shared_any(std::shared_ptr<const T> v) {
  const T& ref = *v;
  Writer w(std::move(v));
  xfer(w, const_cast<T&>(ref));
  return w.take_chain();
}

template <class T>
Status decode_any(ByteView stub, T& out) {
  out = T{};
  Reader r(stub);
  xfer(r, out);
  return r.status();
}

}  // namespace

const char* opnum_name(uint16_t opnum) {
  switch (opnum) {
    case kOpenHKCR:
      return "OpenHKCR";
    case kOpenHKCU:
      return "OpenHKCU";
    case kOpenHKU:
      return "OpenHKU";
    case kOpenHKLM:
      return "OpenHKLM";
    case kOpenHKPD:
      return "OpenHKPD";
    case kCloseKey:
      return "CloseKey";
    case kCreateKey:
      return "CreateKey";
    case kDeleteKey:
      return "DeleteKey";
    case kDeleteValue:
      return "DeleteValue";
    case kSetKeySecurity:
      return "SetKeySecurity";
    case kSetValue:
      return "SetValue";
    case kEnumKey:
      return "EnumKey";
    case kEnumValue:
      return "EnumValue";
    case kGetKeySecurity:
      return "GetKeySecurity";
    case kOpenKey:
      return "OpenKey";
    case kQueryInfoKey:
      return "QueryInfoKey";
    case kQueryValue:
      return "QueryValue";
    case kGetVersion:
      return "GetVersion";
    case kQueryMultipleValues:
      return "QueryMultipleValues";
    case kOpenHKPT:
      return "OpenHKPT";
    case kOpenHKPN:
      return "OpenHKPN";
    case kQueryMultipleValues2:
      return "QueryMultipleValues2";
  }
  return nullptr;
}

#define PERFSIM_WINREG_DEFINE_CODEC(T)                                                            \
  Bytes encode(const T& v) { return encode_any(v); }                                              \
  ByteChain encode_shared(std::shared_ptr<const T> v) { return encode_shared_any(std::move(v)); } \
  Status decode(ByteView stub, T& out) { return decode_any(stub, out); }
PERFSIM_WINREG_MESSAGES(PERFSIM_WINREG_DEFINE_CODEC)
#undef PERFSIM_WINREG_DEFINE_CODEC

}  // namespace perfsim::winreg
