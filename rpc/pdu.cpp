#include "rpc/pdu.h"

#include <cstdio>

namespace perfsim::rpc {
namespace {

// ByteReader that honours the sender's integer byte order (drep), since C706 lets the client
// pick big-endian.
class WireReader {
 public:
  WireReader(ByteView d, bool le, size_t pos = 0) : r_(d, pos), le_(le) {}
  size_t pos() const { return r_.pos(); }
  size_t remaining() const { return r_.remaining(); }
  bool skip(size_t n) { return r_.skip(n); }
  bool align(size_t a) { return r_.skip((a - r_.pos() % a) % a); }
  bool u8(uint8_t& v) { return r_.u8(v); }
  bool u16(uint16_t& v) {
    if (!r_.u16(v)) return false;
    if (!le_) v = uint16_t((v >> 8) | (v << 8));
    return true;
  }
  bool u32(uint32_t& v) {
    if (!r_.u32(v)) return false;
    if (!le_) v = __builtin_bswap32(v);
    return true;
  }
  bool bytes(size_t n, ByteView& out) { return r_.bytes(n, out); }
  bool uuid(Uuid& u) {
    if (!u32(u.time_low) || !u16(u.time_mid) || !u16(u.time_hi)) return false;
    ByteView rest;
    if (!bytes(8, rest)) return false;
    std::copy(rest.begin(), rest.end(), u.rest.begin());
    return true;
  }
  bool syntax(SyntaxId& s) { return uuid(s.uuid) && u16(s.version_major) && u16(s.version_minor); }

 private:
  ByteReader r_;
  bool le_;
};

Status truncated(const char* what, size_t pos) {
  return Status::Corruption(std::string("at offset ") + std::to_string(pos) + ": truncated " + what);
}

void put_uuid(Bytes& b, const Uuid& u) {
  put_le32(b, u.time_low);
  put_le16(b, u.time_mid);
  put_le16(b, u.time_hi);
  b.insert(b.end(), u.rest.begin(), u.rest.end());
}

void put_syntax(Bytes& b, const SyntaxId& s) {
  put_uuid(b, s.uuid);
  put_le16(b, s.version_major);
  put_le16(b, s.version_minor);
}

// Writes a header with frag_length 0; finish() patches it once the body is complete.
Bytes start_pdu(PType type, uint8_t pfc_flags, uint32_t call_id) {
  Bytes b;
  b.reserve(64);
  b.push_back(5);
  b.push_back(0);
  b.push_back(uint8_t(type));
  b.push_back(pfc_flags);
  b.push_back(kDrepLittleEndian);
  b.push_back(0);
  b.push_back(0);
  b.push_back(0);
  put_le16(b, 0);  // frag_length
  put_le16(b, 0);  // auth_length
  put_le32(b, call_id);
  return b;
}

Bytes finish(Bytes b) {
  store_le16(&b[8], uint16_t(b.size()));
  return b;
}

bool known_ptype(uint8_t t) {
  switch (PType(t)) {
    case PType::kRequest:
    case PType::kResponse:
    case PType::kFault:
    case PType::kBind:
    case PType::kBindAck:
    case PType::kBindNak:
    case PType::kAlterContext:
    case PType::kAlterContextResp:
    case PType::kAuth3:
    case PType::kShutdown:
    case PType::kCoCancel:
    case PType::kOrphaned:
      return true;
  }
  return false;
}

Status expect_type(const Header& h, PType a, PType b) {
  if (h.ptype == a || h.ptype == b) return Status::Ok();
  return Status::InvalidArgument(std::string("PDU is ") + ptype_name(h.ptype) + ", expected " + ptype_name(a));
}

// Where the body ends: before the sec_trailer and credentials when auth_length > 0
// (C706 13.2.6.1: auth_pad_length sits in the trailer, 8 bytes before the credentials).
Status body_end(ByteView pdu, const Header& h, size_t body_start, size_t& end) {
  end = pdu.size();
  if (h.auth_length == 0) return Status::Ok();
  size_t trailer = size_t(h.auth_length) + 8;
  if (trailer > pdu.size() - body_start)
    return Status::Corruption("at offset 10: auth_length " + std::to_string(h.auth_length) + " exceeds the PDU");
  size_t pad = pdu[pdu.size() - trailer + 2];
  if (pad > pdu.size() - trailer - body_start)
    return Status::Corruption("at offset " + std::to_string(pdu.size() - trailer + 2) + ": auth_pad_length too large");
  end = pdu.size() - trailer - pad;
  return Status::Ok();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const char* ptype_name(PType t) {
  switch (t) {
    case PType::kRequest:
      return "request";
    case PType::kResponse:
      return "response";
    case PType::kFault:
      return "fault";
    case PType::kBind:
      return "bind";
    case PType::kBindAck:
      return "bind_ack";
    case PType::kBindNak:
      return "bind_nak";
    case PType::kAlterContext:
      return "alter_context";
    case PType::kAlterContextResp:
      return "alter_context_resp";
    case PType::kAuth3:
      return "auth3";
    case PType::kShutdown:
      return "shutdown";
    case PType::kCoCancel:
      return "co_cancel";
    case PType::kOrphaned:
      return "orphaned";
  }
  return "unknown";
}

std::optional<Uuid> Uuid::parse(std::string_view text) {
  // Field boundaries of the canonical 8-4-4-4-12 form.
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') return std::nullopt;
  uint8_t raw[16];
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '-') continue;
    int hi = hex_value(text[i]), lo = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
    if (hi < 0 || lo < 0) return std::nullopt;
    raw[n++] = uint8_t(hi * 16 + lo);
    ++i;
  }
  if (n != 16) return std::nullopt;
  Uuid u;
  u.time_low = uint32_t(raw[0]) << 24 | uint32_t(raw[1]) << 16 | uint32_t(raw[2]) << 8 | raw[3];
  u.time_mid = uint16_t(raw[4] << 8 | raw[5]);
  u.time_hi = uint16_t(raw[6] << 8 | raw[7]);
  std::copy(raw + 8, raw + 16, u.rest.begin());
  return u;
}

std::string Uuid::to_string() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", time_low, time_mid, time_hi,
                rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6], rest[7]);
  return buf;
}

SyntaxId winreg_syntax() { return {*Uuid::parse("338cd001-2244-31f1-aaaa-900038001003"), 1, 0}; }
SyntaxId ndr20_syntax() { return {*Uuid::parse("8a885d04-1ceb-11c9-9fe8-08002b104860"), 2, 0}; }
SyntaxId ndr64_syntax() { return {*Uuid::parse("71710533-beba-4937-8319-b5dbef9ccc36"), 1, 0}; }

bool is_bind_time_feature_syntax(const SyntaxId& s) {
  return s.uuid.time_low == 0x6cb71c2c && s.uuid.time_mid == 0x9812 && s.uuid.time_hi == 0x4540 &&
         s.version_major == 1 && s.version_minor == 0;
}

uint8_t bind_time_features(const SyntaxId& s) { return s.uuid.rest[0]; }

SyntaxId bind_time_feature_syntax(uint8_t features) {
  SyntaxId s{*Uuid::parse("6cb71c2c-9812-4540-0000-000000000000"), 1, 0};
  s.uuid.rest[0] = features;
  return s;
}

Status parse_header(ByteView pdu, Header& h) {
  if (pdu.size() < kHeaderSize) return truncated("common header", pdu.size());
  h.rpc_vers = pdu[0];
  h.rpc_vers_minor = pdu[1];
  if (h.rpc_vers != 5 || h.rpc_vers_minor > 1)
    return Status::Unsupported("at offset 0: RPC version " + std::to_string(h.rpc_vers) + "." +
                               std::to_string(h.rpc_vers_minor) + ", expected 5.0");
  if (!known_ptype(pdu[2]))
    return Status::Corruption("at offset 2: unknown connection-oriented ptype " + std::to_string(pdu[2]));
  h.ptype = PType(pdu[2]);
  h.pfc_flags = pdu[3];
  std::copy(pdu.begin() + 4, pdu.begin() + 8, h.drep.begin());
  WireReader r(pdu, h.little_endian(), 8);
  r.u16(h.frag_length);
  r.u16(h.auth_length);
  r.u32(h.call_id);
  if (h.frag_length != pdu.size())
    return Status::Corruption("at offset 8: frag_length " + std::to_string(h.frag_length) + " but PDU has " +
                              std::to_string(pdu.size()) + " bytes");
  if (h.auth_length > pdu.size() - kHeaderSize)
    return Status::Corruption("at offset 10: auth_length " + std::to_string(h.auth_length) + " exceeds the PDU");
  return Status::Ok();
}

Status parse_bind(ByteView pdu, const Header& h, Bind& out) {
  if (Status s = expect_type(h, PType::kBind, PType::kAlterContext); !s.ok()) return s;
  size_t end;
  if (Status s = body_end(pdu, h, kHeaderSize, end); !s.ok()) return s;
  WireReader r(pdu.first(end), h.little_endian(), kHeaderSize);
  uint8_t n_ctx;
  if (!r.u16(out.max_xmit_frag) || !r.u16(out.max_recv_frag) || !r.u32(out.assoc_group_id) || !r.u8(n_ctx) ||
      !r.skip(3))
    return truncated("bind body", r.pos());
  out.contexts.clear();
  for (uint8_t i = 0; i < n_ctx; ++i) {
    ContextElem c;
    uint8_t n_ts;
    if (!r.u16(c.context_id) || !r.u8(n_ts) || !r.skip(1) || !r.syntax(c.abstract_syntax))
      return truncated("presentation context", r.pos());
    for (uint8_t t = 0; t < n_ts; ++t) {
      SyntaxId s;
      if (!r.syntax(s)) return truncated("transfer syntax", r.pos());
      c.transfer_syntaxes.push_back(s);
    }
    out.contexts.push_back(std::move(c));
  }
  out.auth_verifier = h.auth_length ? pdu.last(size_t(h.auth_length) + 8) : ByteView{};  // after the auth padding
  return Status::Ok();
}

Status parse_bind_ack(ByteView pdu, const Header& h, BindAck& out) {
  if (Status s = expect_type(h, PType::kBindAck, PType::kAlterContextResp); !s.ok()) return s;
  size_t end;
  if (Status s = body_end(pdu, h, kHeaderSize, end); !s.ok()) return s;
  WireReader r(pdu.first(end), h.little_endian(), kHeaderSize);
  uint16_t addr_len;
  ByteView addr;
  if (!r.u16(out.max_xmit_frag) || !r.u16(out.max_recv_frag) || !r.u32(out.assoc_group_id) || !r.u16(addr_len) ||
      !r.bytes(addr_len, addr) || !r.align(4))
    return truncated("bind_ack body", r.pos());
  out.secondary_address.assign(addr.begin(), addr.end());
  while (!out.secondary_address.empty() && out.secondary_address.back() == '\0') out.secondary_address.pop_back();
  uint8_t n;
  if (!r.u8(n) || !r.skip(3)) return truncated("result list", r.pos());
  out.results.clear();
  for (uint8_t i = 0; i < n; ++i) {
    ContextResult c;
    if (!r.u16(c.result) || !r.u16(c.reason) || !r.syntax(c.transfer_syntax)) return truncated("result", r.pos());
    out.results.push_back(c);
  }
  return Status::Ok();
}

Status parse_bind_nak(ByteView pdu, const Header& h, BindNak& out) {
  if (Status s = expect_type(h, PType::kBindNak, PType::kBindNak); !s.ok()) return s;
  WireReader r(pdu, h.little_endian(), kHeaderSize);
  if (!r.u16(out.reject_reason)) return truncated("bind_nak body", r.pos());
  out.versions.clear();
  uint8_t n;
  if (!r.u8(n)) return Status::Ok();  // versions are optional when the reason is not a version problem
  for (uint8_t i = 0; i < n; ++i) {
    uint8_t major, minor;
    if (!r.u8(major) || !r.u8(minor)) return truncated("bind_nak versions", r.pos());
    out.versions.emplace_back(major, minor);
  }
  return Status::Ok();
}

Status parse_request(ByteView pdu, const Header& h, Request& out) {
  if (Status s = expect_type(h, PType::kRequest, PType::kRequest); !s.ok()) return s;
  WireReader r(pdu, h.little_endian(), kHeaderSize);
  if (!r.u32(out.alloc_hint) || !r.u16(out.context_id) || !r.u16(out.opnum))
    return truncated("request header", r.pos());
  out.object.reset();
  if (h.pfc_flags & kPfcObjectUuid) {
    Uuid u;
    if (!r.uuid(u)) return truncated("object uuid", r.pos());
    out.object = u;
  }
  size_t end;
  if (Status s = body_end(pdu, h, r.pos(), end); !s.ok()) return s;
  out.stub = pdu.subspan(r.pos(), end - r.pos());
  return Status::Ok();
}

Status parse_response(ByteView pdu, const Header& h, Response& out) {
  if (Status s = expect_type(h, PType::kResponse, PType::kResponse); !s.ok()) return s;
  WireReader r(pdu, h.little_endian(), kHeaderSize);
  if (!r.u32(out.alloc_hint) || !r.u16(out.context_id) || !r.u8(out.cancel_count) || !r.skip(1))
    return truncated("response header", r.pos());
  size_t end;
  if (Status s = body_end(pdu, h, r.pos(), end); !s.ok()) return s;
  out.stub = pdu.subspan(r.pos(), end - r.pos());
  return Status::Ok();
}

Status parse_fault(ByteView pdu, const Header& h, Fault& out) {
  if (Status s = expect_type(h, PType::kFault, PType::kFault); !s.ok()) return s;
  WireReader r(pdu, h.little_endian(), kHeaderSize);
  if (!r.u32(out.alloc_hint) || !r.u16(out.context_id) || !r.u8(out.cancel_count) || !r.u8(out.flags) ||
      !r.u32(out.status))
    return truncated("fault body", r.pos());
  return Status::Ok();
}

Bytes build_bind(PType type, uint32_t call_id, const Bind& b) {
  Bytes p = start_pdu(type, kPfcFirstFrag | kPfcLastFrag, call_id);
  put_le16(p, b.max_xmit_frag);
  put_le16(p, b.max_recv_frag);
  put_le32(p, b.assoc_group_id);
  p.push_back(uint8_t(b.contexts.size()));
  p.insert(p.end(), 3, 0);
  for (const ContextElem& c : b.contexts) {
    put_le16(p, c.context_id);
    p.push_back(uint8_t(c.transfer_syntaxes.size()));
    p.push_back(0);
    put_syntax(p, c.abstract_syntax);
    for (const SyntaxId& s : c.transfer_syntaxes) put_syntax(p, s);
  }
  return finish(std::move(p));
}

Bytes build_bind_ack(PType type, uint32_t call_id, const BindAck& a) {
  Bytes p = start_pdu(type, kPfcFirstFrag | kPfcLastFrag, call_id);
  put_le16(p, a.max_xmit_frag);
  put_le16(p, a.max_recv_frag);
  put_le32(p, a.assoc_group_id);
  // port_any_t: length includes the NUL; an empty address is sent as length 0 (as Windows does).
  uint16_t len = a.secondary_address.empty() ? 0 : uint16_t(a.secondary_address.size() + 1);
  put_le16(p, len);
  p.insert(p.end(), a.secondary_address.begin(), a.secondary_address.end());
  if (len) p.push_back(0);
  pad_to(p, 4);
  p.push_back(uint8_t(a.results.size()));
  p.insert(p.end(), 3, 0);
  for (const ContextResult& c : a.results) {
    put_le16(p, c.result);
    put_le16(p, c.reason);
    put_syntax(p, c.transfer_syntax);
  }
  return finish(std::move(p));
}

Bytes build_bind_nak(uint32_t call_id, const BindNak& n) {
  Bytes p = start_pdu(PType::kBindNak, kPfcFirstFrag | kPfcLastFrag, call_id);
  put_le16(p, n.reject_reason);
  p.push_back(uint8_t(n.versions.size()));
  for (auto [major, minor] : n.versions) {
    p.push_back(major);
    p.push_back(minor);
  }
  pad_to(p, 4);
  return finish(std::move(p));
}

Bytes build_request(uint8_t pfc_flags, uint32_t call_id, const Request& r) {
  if (r.object) pfc_flags |= kPfcObjectUuid;
  Bytes p = start_pdu(PType::kRequest, pfc_flags, call_id);
  put_le32(p, r.alloc_hint);
  put_le16(p, r.context_id);
  put_le16(p, r.opnum);
  if (r.object) put_uuid(p, *r.object);
  put_bytes(p, r.stub);
  return finish(std::move(p));
}

Bytes build_response_header(uint8_t pfc_flags, uint32_t call_id, const Response& r, size_t stub_size) {
  Bytes p = start_pdu(PType::kResponse, pfc_flags, call_id);
  put_le32(p, r.alloc_hint);
  put_le16(p, r.context_id);
  p.push_back(r.cancel_count);
  p.push_back(0);
  store_le16(&p[8], uint16_t(p.size() + stub_size));
  return p;
}

Bytes build_response(uint8_t pfc_flags, uint32_t call_id, const Response& r) {
  Bytes p = build_response_header(pfc_flags, call_id, r, r.stub.size());
  p.reserve(kResponseHeaderSize + r.stub.size());
  put_bytes(p, r.stub);
  return p;
}

Bytes build_fault(uint8_t pfc_flags, uint32_t call_id, const Fault& f) {
  Bytes p = start_pdu(PType::kFault, pfc_flags, call_id);
  put_le32(p, f.alloc_hint);
  put_le16(p, f.context_id);
  p.push_back(f.cancel_count);
  p.push_back(f.flags);
  put_le32(p, f.status);
  put_le32(p, 0);  // reserved
  return finish(std::move(p));
}

Bytes build_empty(PType type, uint8_t pfc_flags, uint32_t call_id) {
  Bytes p = start_pdu(type, pfc_flags, call_id);
  if (type == PType::kAuth3) put_le32(p, 0);  // auth3 carries 4 pad bytes before its trailer
  return finish(std::move(p));
}

}  // namespace perfsim::rpc
