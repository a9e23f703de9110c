#include "server/npa.h"

#include <string_view>

namespace perfsim::server::npa {
namespace {

constexpr uint8_t kMagic[4] = {'N', 'P', 'A', 'M'};
constexpr size_t kHeaderSize = 16;  // BE length, magic, level, union discriminant
constexpr uint8_t kMaxSubAuths = 15;

uint32_t load_be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

// NDR (little-endian, 32-bit) over the whole request: alignment counts from the request's first
// byte, as Samba pushes the length field with the rest.
class NdrReader {
 public:
  explicit NdrReader(ByteView d, size_t pos) : r_(d, pos) {}
  bool align(size_t a) { return r_.skip((a - r_.pos() % a) % a); }
  bool u8(uint8_t& v) { return r_.u8(v); }
  bool u16(uint16_t& v) { return align(2) && r_.u16(v); }
  bool u32(uint32_t& v) { return align(4) && r_.u32(v); }
  bool u64_align4(uint64_t& v) { return align(4) && r_.u64(v); }  // NTTIME, udlong
  bool u64(uint64_t& v) { return align(8) && r_.u64(v); }         // hyper
  bool skip(size_t n) { return r_.skip(n); }
  bool ptr(bool& present) {
    uint32_t id = 0;
    if (!u32(id)) return false;
    present = id != 0;
    return true;
  }
  // A conformant-varying NUL-terminated 8-bit string ([string] uint8 *).
  bool string(std::string& out) {
    uint32_t max = 0, offset = 0, actual = 0;
    if (!u32(max) || !u32(offset) || !u32(actual)) return false;
    if (offset != 0 || actual == 0 || actual > max || actual > r_.remaining()) return false;
    ByteView b;
    if (!r_.bytes(actual, b) || b.back() != 0) return false;
    out.assign(reinterpret_cast<const char*>(b.data()), actual - 1);
    return out.find('\0') == std::string::npos;
  }
  bool blob() {  // DATA_BLOB: u32 length, bytes
    uint32_t n = 0;
    return u32(n) && r_.skip(n);
  }
  size_t remaining() const { return r_.remaining(); }

 private:
  ByteReader r_;
};

bool skip_sid(NdrReader& r) {
  uint8_t rev = 0, n = 0;
  return r.align(4) && r.u8(rev) && r.u8(n) && n <= kMaxSubAuths && r.skip(6) && r.skip(4 * size_t(n));
}

// security_token (Samba 4.17): conformance, num_sids, sids, hyper privilege_mask, rights_mask.
bool skip_security_token(NdrReader& r) {
  uint32_t max = 0, n = 0;
  if (!r.u32(max) || !r.u32(n) || n != max || n > r.remaining() / 8) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (!skip_sid(r)) return false;
  uint64_t priv = 0;
  uint32_t rights = 0;
  return r.u64(priv) && r.u32(rights);
}

// security_unix_token: conformance, hyper uid, hyper gid, ngroups, hyper groups[ngroups].
bool skip_unix_token(NdrReader& r) {
  uint32_t max = 0, n = 0;
  uint64_t id = 0;
  if (!r.u32(max) || !r.u64(id) || !r.u64(id) || !r.u32(n) || n != max || n > r.remaining() / 8) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (!r.u64(id)) return false;
  return true;
}

// auth_user_info: ten string pointers around one boolean, six NTTIMEs, counters and flags, then
// the strings. Only account and domain name are kept.
bool read_user_info(NdrReader& r, Request& out) {
  bool p[11] = {};  // account, upn, domain, dns_domain, full, script, profile, home, drive, server
  uint8_t constructed = 0, authenticated = 0;
  if (!r.ptr(p[0]) || !r.ptr(p[1]) || !r.u8(constructed)) return false;
  for (int i = 2; i < 10; ++i)
    if (!r.ptr(p[i])) return false;
  uint64_t t = 0;
  for (int i = 0; i < 6; ++i)
    if (!r.u64_align4(t)) return false;
  uint16_t count = 0;
  uint32_t flags = 0;
  if (!r.u16(count) || !r.u16(count) || !r.u32(flags) || !r.u8(authenticated)) return false;
  for (int i = 0; i < 10; ++i) {
    if (!p[i]) continue;
    std::string s;
    if (!r.string(s)) return false;
    if (i == 0) out.account_name = std::move(s);
    if (i == 2) out.domain_name = std::move(s);
  }
  out.authenticated = authenticated != 0;
  return true;
}

// auth_session_info_transport -> auth_session_info as Samba 4.17 encodes it.
bool read_session_info(NdrReader& r, Request& out) {
  bool info = false, token = false, unix_token = false, user = false, unix_info = false, torture = false, creds = false;
  if (!r.ptr(info) || !r.blob()) return false;
  if (!info) return true;
  if (!r.ptr(token) || !r.ptr(unix_token) || !r.ptr(user) || !r.ptr(unix_info) || !r.ptr(torture) || !r.blob() ||
      !r.ptr(creds) || !r.skip(16) /* unique_session_token GUID */)
    return false;
  if (torture || creds) return false;  // never sent by smbd; we could not step over them
  if (!r.align(8)) return false;       // observed before the token (4.17.12)
  if (token && !skip_security_token(r)) return false;
  if (unix_token && !skip_unix_token(r)) return false;
  if (user && !read_user_info(r, out)) return false;
  return true;  // unix_info follows; nothing in it we need
}

}  // namespace

FrameResult frame_request(ByteView b) {
  FrameResult f;
  for (size_t i = 0; i < 4 && 4 + i < b.size(); ++i) {
    if (b[4 + i] != kMagic[i]) {
      f.kind = FrameResult::Kind::kError;
      f.reason = "npa_bad_magic";
      f.detail = "named-pipe request without the NPAM magic";
      return f;
    }
  }
  if (b.size() < 4) {
    f.size = kHeaderSize;
    return f;
  }
  const size_t total = size_t(load_be32(b.data())) + 4;
  if (total < kHeaderSize || total > kMaxRequestSize) {
    f.kind = FrameResult::Kind::kError;
    f.reason = "npa_bad_length";
    f.detail =
        "named-pipe request length " + std::to_string(total) + " outside [16, " + std::to_string(kMaxRequestSize) + "]";
    return f;
  }
  f.size = total;
  if (b.size() >= total) f.kind = FrameResult::Kind::kComplete;
  return f;
}

Status parse_request(ByteView b, Request& out) {
  out = Request();
  FrameResult f = frame_request(b);
  if (f.kind == FrameResult::Kind::kError) return Status::Corruption(f.detail);
  if (f.kind != FrameResult::Kind::kComplete || f.size != b.size())
    return Status::Corruption("named-pipe request of " + std::to_string(b.size()) + " bytes, its length says " +
                              std::to_string(f.size));
  out.level = load_le32(&b[8]);
  const uint32_t arm = load_le32(&b[12]);
  if (out.level != kLevel5 && out.level != kLevel7 && out.level != kLevel8)
    return Status::Unsupported("named-pipe request level " + std::to_string(out.level) + " (known: 5, 7, 8)");
  if (arm != out.level)
    return Status::Corruption("named-pipe request level " + std::to_string(out.level) + " with union arm " +
                              std::to_string(arm));
  NdrReader r(b, kHeaderSize);
  bool rcn = false, rca = false, lsn = false, lsa = false;
  uint8_t idle = 0;
  bool ok = r.u8(out.transport) && r.ptr(rcn) && r.ptr(rca) && r.u16(out.remote_client_port) && r.ptr(lsn) &&
            r.ptr(lsa) && r.u16(out.local_server_port) && r.ptr(out.has_session_info);
  if (ok && out.level == kLevel5) ok = r.u8(idle);
  out.need_idle_server = idle != 0;
  if (ok && rcn) ok = r.string(out.remote_client_name);
  if (ok && rca) ok = r.string(out.remote_client_addr);
  if (ok && lsn) ok = r.string(out.local_server_name);
  if (ok && lsa) ok = r.string(out.local_server_addr);
  if (!ok) return Status::Corruption("named-pipe request: fields run past its end or break NDR rules");
  if (out.has_session_info) {
    Request info = out;
    if (read_session_info(r, info)) {
      info.session_info_decoded = true;
      out = std::move(info);
    }
  }
  return Status::Ok();
}

Bytes encode_reply(uint32_t level, uint32_t status) {
  Bytes b;
  b.reserve(kReplySize);
  const uint32_t length = kReplySize - 4;
  for (int i = 3; i >= 0; --i) b.push_back(uint8_t(length >> (8 * i)));
  put_bytes(b, ByteView(kMagic, 4));
  put_le32(b, level);
  put_le32(b, level);
  put_le16(b, kFileTypeMessageMode);
  put_le16(b, kDeviceState);
  pad_to(b, 8);
  put_le64(b, kAllocationSize);
  put_le32(b, status);
  return b;
}

namespace {

FrameResult need_more(size_t total) {
  FrameResult f;
  f.size = total;
  return f;
}

}  // namespace

FrameResult MessageFramer::next(ByteView b) const {
  if (b.size() < kOutPrefixSize) return need_more(kOutPrefixSize);
  const size_t length = load_le16(b.data());
  const size_t total = kOutPrefixSize + length;
  ByteView body = b.subspan(kOutPrefixSize, std::min(length, b.size() - kOutPrefixSize));
  // Check the PDU header as soon as it arrives, like the TCP framer does.
  FrameResult pdu = pdu_.next(body);
  if (pdu.kind == FrameResult::Kind::kError) return pdu;
  if (b.size() < total) return need_more(total);
  if (pdu.kind != FrameResult::Kind::kComplete || pdu.size != length) {
    FrameResult e;
    e.kind = FrameResult::Kind::kError;
    e.reason = "bad_message";
    e.detail = "pipe message of " + std::to_string(length) + " bytes does not hold exactly one PDU" +
               (pdu.kind == FrameResult::Kind::kComplete ? " (frag_length " + std::to_string(pdu.size) + ")" : "");
    return e;
  }
  FrameResult r;
  r.kind = FrameResult::Kind::kComplete;
  r.size = total;
  r.payload_offset = kOutPrefixSize;
  return r;
}

}  // namespace perfsim::server::npa
