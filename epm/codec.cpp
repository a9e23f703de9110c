#include "epm/codec.h"

#include <algorithm>

#include "rpc/ndr.h"

namespace perfsim::epm {
namespace {

// GUID as NDR lays it out (a struct aligned to 4): u32, u16, u16, 8 octets.
template <class Io>
bool uuid(Io& io, rpc::Uuid& u) {
  if (!io.u32(u.time_low) || !io.u16(u.time_mid) || !io.u16(u.time_hi)) return false;
  for (uint8_t& b : u.rest)
    if (!io.u8(b)) return false;
  return true;
}

template <class Io>
bool handle(Io& io, ContextHandle& h) {
  if (!io.align(4)) return false;
  for (uint8_t& b : h.bytes)
    if (!io.u8(b)) return false;
  return true;
}

// twr_t referent: a conformant struct, so its size_is (max_count) comes first, then tower_length.
template <class Io>
bool tower_body(Io& io, Bytes& octets) {
  uint32_t max = uint32_t(octets.size()), length = max;
  if (!io.u32(max) || !io.u32(length)) return false;
  if constexpr (Io::kReading) {
    if (length != max) return io.fail("twr_t tower_length differs from its size_is");
  }
  return io.bytes(octets, length);
}

template <class Io>
bool unique_uuid(Io& io, std::optional<rpc::Uuid>& u) {
  return ndr::unique(io, u, [&](rpc::Uuid& v) { return uuid(io, v); });
}

template <class Io>
bool range_check(Io& io, uint32_t n) {
  if constexpr (Io::kReading) {
    if (n > kEptMaxEntries) return io.fail("count above the range(0,500) of the ept_* IDL");
  }
  return true;
}

template <class Io>
bool map_request(Io& io, MapRequest& r) {
  return unique_uuid(io, r.object) && ndr::unique(io, r.map_tower, [&](Bytes& t) { return tower_body(io, t); }) &&
         handle(io, r.entry_handle) && io.u32(r.max_towers) && range_check(io, r.max_towers);
}

// towers[]: [size_is(max_towers), length_is(num_towers)] twr_t* -> the pointers inline, then the
// referents (deferred) in order.
template <class Io>
bool map_response(Io& io, MapResponse& r) {
  uint32_t num = uint32_t(r.towers.size()), max = std::max(r.max_towers, num), offset = 0, actual = num;
  if (!handle(io, r.entry_handle) || !io.u32(num) || !io.array_header(max, offset, actual)) return false;
  if constexpr (Io::kReading) {
    if (actual != num || max > kEptMaxEntries) return io.fail("towers count differs from num_towers or above 500");
    r.max_towers = max;
    r.towers.resize(num);
  }
  std::vector<bool> present(num, true);
  for (uint32_t i = 0; i < num; ++i) {
    bool p = true;
    if (!io.pointer(p)) return false;
    present[i] = p;
  }
  for (uint32_t i = 0; i < num; ++i)
    if (present[i] && !(io.align(4) && tower_body(io, r.towers[i]))) return false;
  return io.u32(r.status);
}

template <class Io>
bool interface_id(Io& io, InterfaceId& i) {
  return uuid(io, i.uuid) && io.u16(i.version_major) && io.u16(i.version_minor);
}

template <class Io>
bool lookup_request(Io& io, LookupRequest& r) {
  return io.u32(r.inquiry_type) && unique_uuid(io, r.object) &&
         ndr::unique(io, r.interface_id, [&](InterfaceId& i) { return interface_id(io, i); }) &&
         io.u32(r.vers_option) && handle(io, r.entry_handle) && io.u32(r.max_ents) && range_check(io, r.max_ents);
}

// [string] char annotation[64] inside a struct: a varying array (offset, actual_count) whose
// count includes the NUL.
template <class Io>
bool annotation(Io& io, std::string& text) {
  uint32_t offset = 0, actual = uint32_t(text.size() + 1);
  if (!io.u32(offset) || !io.u32(actual)) return false;
  if constexpr (Io::kReading) {
    if (offset != 0 || actual > 64) return io.fail("annotation offset not 0 or longer than 64");
  }
  Bytes chars(text.begin(), text.end());
  if (!io.bytes(chars, actual)) return false;
  if constexpr (Io::kReading) text.assign(chars.begin(), std::find(chars.begin(), chars.end(), 0));
  return true;
}

template <class Io>
bool lookup_response(Io& io, LookupResponse& r) {
  uint32_t num = uint32_t(r.entries.size()), max = std::max(r.max_ents, num), offset = 0, actual = num;
  if (!handle(io, r.entry_handle) || !io.u32(num) || !io.array_header(max, offset, actual)) return false;
  if constexpr (Io::kReading) {
    if (actual != num || max > kEptMaxEntries) return io.fail("entries count differs from num_ents or above 500");
    r.max_ents = max;
    r.entries.resize(num);
  }
  std::vector<bool> present(num, true);
  for (uint32_t i = 0; i < num; ++i) {
    Entry& e = r.entries[i];
    bool p = true;
    if (!io.align(4) || !uuid(io, e.object) || !io.pointer(p) || !annotation(io, e.annotation)) return false;
    present[i] = p;
  }
  for (uint32_t i = 0; i < num; ++i)
    if (present[i] && !(io.align(4) && tower_body(io, r.entries[i].tower))) return false;
  return io.u32(r.status);
}

template <class T, class Fn>
Status decode_with(ByteView stub, T& out, Fn fn) {
  ndr::Reader r(stub);
  fn(r, out);
  return r.status();
}

template <class T, class Fn>
Bytes encode_with(const T& in, Fn fn) {
  ndr::Writer w;
  T copy = in;  // the Io functions take non-const references (one template for both directions)
  fn(w, copy);
  return w.take();
}

}  // namespace

rpc::SyntaxId epm_syntax() { return {*rpc::Uuid::parse("e1af8308-5d1f-11c9-91a4-08002b14a0fa"), 3, 0}; }

bool ContextHandle::null() const {
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

Status parse_floors(ByteView tower, std::vector<Floor>& out) {
  ByteReader r(tower);
  uint16_t count = 0;
  if (!r.u16(count)) return Status::Corruption("tower: truncated floor count");
  out.clear();
  for (uint16_t i = 0; i < count; ++i) {
    uint16_t n = 0;
    ByteView lhs, rhs;
    if (!r.u16(n) || !r.bytes(n, lhs) || !r.u16(n) || !r.bytes(n, rhs))
      return Status::Corruption("tower: floor " + std::to_string(i + 1) + " of " + std::to_string(count) +
                                " truncated at offset " + std::to_string(r.pos()));
    if (lhs.empty()) return Status::Corruption("tower: floor " + std::to_string(i + 1) + " has no protocol id");
    out.push_back({Bytes(lhs.begin(), lhs.end()), Bytes(rhs.begin(), rhs.end())});
  }
  return Status::Ok();
}

Bytes build_floors(const std::vector<Floor>& floors) {
  Bytes b;
  put_le16(b, uint16_t(floors.size()));
  for (const Floor& f : floors) {
    put_le16(b, uint16_t(f.lhs.size()));
    put_bytes(b, f.lhs);
    put_le16(b, uint16_t(f.rhs.size()));
    put_bytes(b, f.rhs);
  }
  return b;
}

// lhs: 0x0d, the uuid (little-endian fields), u16 major; rhs: u16 minor (C706 L.2).
Status parse_syntax_floor(const Floor& f, rpc::SyntaxId& out) {
  if (f.protocol() != kProtoUuid || f.lhs.size() != 19 || f.rhs.size() != 2)
    return Status::Corruption("tower: floor is not a uuid/version floor (protocol 0x0d, 19 + 2 bytes)");
  ByteReader r(ByteView(f.lhs).subspan(1));
  rpc::Uuid& u = out.uuid;
  r.u32(u.time_low);
  r.u16(u.time_mid);
  r.u16(u.time_hi);
  for (uint8_t& b : u.rest) r.u8(b);
  r.u16(out.version_major);
  out.version_minor = load_le16(f.rhs.data());
  return Status::Ok();
}

Floor syntax_floor(const rpc::SyntaxId& s) {
  Floor f;
  f.lhs.push_back(kProtoUuid);
  put_le32(f.lhs, s.uuid.time_low);
  put_le16(f.lhs, s.uuid.time_mid);
  put_le16(f.lhs, s.uuid.time_hi);
  put_bytes(f.lhs, ByteView(s.uuid.rest.data(), s.uuid.rest.size()));
  put_le16(f.lhs, s.version_major);
  put_le16(f.rhs, s.version_minor);
  return f;
}

std::vector<Floor> tcp_tower_floors(const TcpTower& t) {
  std::vector<Floor> floors{syntax_floor(t.interface), syntax_floor(t.transfer)};
  floors.push_back({{kProtoNcacn}, {0, 0}});  // rhs: the protocol's minor version, 0
  floors.push_back({{kProtoTcp}, {uint8_t(t.port >> 8), uint8_t(t.port)}});
  floors.push_back({{kProtoIp}, Bytes(t.ipv4.begin(), t.ipv4.end())});
  return floors;
}

Status decode(ByteView stub, MapRequest& out) {
  return decode_with(stub, out, [](ndr::Reader& r, MapRequest& o) { return map_request(r, o); });
}
Status decode(ByteView stub, LookupRequest& out) {
  return decode_with(stub, out, [](ndr::Reader& r, LookupRequest& o) { return lookup_request(r, o); });
}
Status decode(ByteView stub, HandleFreeRequest& out) {
  return decode_with(stub, out, [](ndr::Reader& r, HandleFreeRequest& o) { return handle(r, o.entry_handle); });
}
Status decode(ByteView stub, MapResponse& out) {
  return decode_with(stub, out, [](ndr::Reader& r, MapResponse& o) { return map_response(r, o); });
}
Status decode(ByteView stub, LookupResponse& out) {
  return decode_with(stub, out, [](ndr::Reader& r, LookupResponse& o) { return lookup_response(r, o); });
}
Bytes encode(const MapRequest& r) {
  return encode_with(r, [](ndr::Writer& w, MapRequest& o) { return map_request(w, o); });
}
Bytes encode(const LookupRequest& r) {
  return encode_with(r, [](ndr::Writer& w, LookupRequest& o) { return lookup_request(w, o); });
}
Bytes encode(const MapResponse& r) {
  return encode_with(r, [](ndr::Writer& w, MapResponse& o) { return map_response(w, o); });
}
Bytes encode(const LookupResponse& r) {
  return encode_with(r, [](ndr::Writer& w, LookupResponse& o) { return lookup_response(w, o); });
}
Bytes encode(const HandleFreeResponse& r) {
  return encode_with(
      r, [](ndr::Writer& w, HandleFreeResponse& o) { return handle(w, o.entry_handle) && w.u32(o.status); });
}

}  // namespace perfsim::epm
