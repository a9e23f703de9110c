// Hand-built NPA requests for the tests: an NDR writer of our own (independent of server/npa.cpp)
// laying out named_pipe_auth_req levels 5/7/8 as Samba 4.17 does, with an optional session info
// carrying an account name. Positions count from the request's first byte, as in Samba.
#pragma once
#include <optional>
#include <string>

#include "core/bytes.h"

namespace perfsim::npa_test {

struct RequestSpec {
  uint32_t level = 7;
  uint8_t transport = 1;
  std::optional<std::string> remote_name = "127.0.0.1", remote_addr = "127.0.0.1";
  uint16_t remote_port = 40000;
  std::optional<std::string> local_name = "smbhost", local_addr = "127.0.0.2";
  uint16_t local_port = 445;
  bool need_idle = false;
  bool session_info = true;
  std::string account = "alice", domain = "SMBHOST";
  uint8_t authenticated = 1;
  uint32_t sids = 2, groups = 1;
};

class Writer {
 public:
  Bytes b;
  void align(size_t a) { pad_to(b, a); }
  void u8(uint8_t v) { b.push_back(v); }
  void u16(uint16_t v) {
    align(2);
    put_le16(b, v);
  }
  void u32(uint32_t v) {
    align(4);
    put_le32(b, v);
  }
  void hyper(uint64_t v) {
    align(8);
    put_le64(b, v);
  }
  void nttime(uint64_t v) {
    align(4);
    put_le64(b, v);
  }
  void ptr(bool present) { u32(present ? 0x20000 + 4 * next_++ : 0); }
  void str(const std::string& s) {
    const uint32_t n = uint32_t(s.size() + 1);
    u32(n);
    u32(0);
    u32(n);
    b.insert(b.end(), s.begin(), s.end());
    b.push_back(0);
  }
  void blob(size_t n) {
    u32(uint32_t(n));
    b.insert(b.end(), n, 0xAB);
  }

 private:
  uint32_t next_ = 0;
};

inline void session_info(Writer& w, const RequestSpec& s) {
  w.ptr(true);                                    // auth_session_info
  w.blob(0);                                      // exported_gssapi_credentials
  for (int i = 0; i < 4; ++i) w.ptr(true);        // token, unix_token, info, unix_info
  w.ptr(false);                                   // torture
  w.blob(16);                                     // session_key
  w.ptr(false);                                   // credentials
  for (int i = 0; i < 16; ++i) w.u8(uint8_t(i));  // unique_session_token
  w.align(8);
  // security_token
  w.u32(s.sids);
  w.u32(s.sids);
  for (uint32_t i = 0; i < s.sids; ++i) {
    w.align(4);
    w.u8(1);
    w.u8(2);
    for (uint8_t a : {0, 0, 0, 0, 0, 5}) w.u8(a);
    w.u32(32);
    w.u32(544 + i);
  }
  w.hyper(0);
  w.u32(0);
  // security_unix_token
  w.u32(s.groups);
  w.hyper(1000);
  w.hyper(1000);
  w.u32(s.groups);
  for (uint32_t i = 0; i < s.groups; ++i) w.hyper(1000 + i);
  // auth_user_info: account, upn, constructed, domain, then 7 more string pointers
  w.ptr(true);
  w.ptr(false);
  w.u8(0);
  w.ptr(true);
  for (int i = 0; i < 7; ++i) w.ptr(i == 2);  // only full_name present
  for (int i = 0; i < 6; ++i) w.nttime(0x7fffffffffffffffULL);
  w.u16(0);
  w.u16(0);
  w.u32(0x10);
  w.u8(s.authenticated);
  w.str(s.account);
  w.str(s.domain);
  w.str("Full Name");
  // auth_user_info_unix
  w.ptr(true);
  w.ptr(true);
  w.str(s.account);
  w.str(s.account);
}

inline Bytes build_request(const RequestSpec& s) {
  Writer w;
  w.b = {0, 0, 0, 0, 'N', 'P', 'A', 'M'};
  w.u32(s.level);
  w.u32(s.level);
  w.u8(s.transport);
  w.ptr(s.remote_name.has_value());
  w.ptr(s.remote_addr.has_value());
  w.u16(s.remote_port);
  w.ptr(s.local_name.has_value());
  w.ptr(s.local_addr.has_value());
  w.u16(s.local_port);
  w.ptr(s.session_info);
  if (s.level == 5) w.u8(s.need_idle ? 1 : 0);
  for (const auto* f : {&s.remote_name, &s.remote_addr, &s.local_name, &s.local_addr})
    if (*f) w.str(**f);
  if (s.session_info) session_info(w, s);
  const uint32_t len = uint32_t(w.b.size() - 4);
  for (int i = 0; i < 4; ++i) w.b[i] = uint8_t(len >> (8 * (3 - i)));
  return w.b;
}

}  // namespace perfsim::npa_test
