// smbd's named-pipe backend handshake ("NPA", Samba's named_pipe_auth.idl) and the message-mode
// framing that follows it. smbd connects to `<socket_dir>/np/<pipe>` for each open of a pipe and
// first sends one request saying who the client is and which address it reached; the backend
// answers with a fixed 36-byte reply, then every message in either direction carries a u16
// little-endian length prefix.
//
// Guarantees: parse_request() reads only inside the bytes it is given and checks every length,
// pointer and string against them (a request is at most kMaxRequestSize bytes); it accepts
// levels 5 (Samba 4.17.0-8), 7 (4.17.9+, 4.19) and 8 (4.20+), and the reply mirrors the level.
// The account name comes from the session info as Samba 4.17 lays it out; when that part does
// not decode the request still parses, with session_info_decoded false and no account.
#pragma once
#include <cstdint>
#include <string>

#include "core/bytes.h"
#include "core/status.h"
#include "server/framer.h"

namespace perfsim::server::npa {

inline constexpr size_t kMaxRequestSize = 64 * 1024;  // smbd's are < 1 KiB; a big token fits too
inline constexpr uint32_t kLevel5 = 5, kLevel7 = 7, kLevel8 = 8;
inline constexpr uint8_t kTransportNp = 1, kTransportNcalrpc = 8;
inline constexpr uint16_t kFileTypeMessageMode = 2;
inline constexpr uint16_t kDeviceState = 0x05ff;
inline constexpr uint64_t kAllocationSize = 4096;
inline constexpr size_t kReplySize = 36;

struct Request {
  uint32_t level = 0;
  uint8_t transport = 0;           // kTransportNp for SMB clients, kTransportNcalrpc for Samba's own
  std::string remote_client_name;  // smbd's idea of the client (its address as text, usually)
  std::string remote_client_addr;  // "127.0.0.1"
  uint16_t remote_client_port = 0;
  std::string local_server_name;  // always smbd's own host name
  std::string local_server_addr;  // the address the SMB client connected to: selects the host
  uint16_t local_server_port = 0;
  bool need_idle_server = false;      // level 5 only
  bool has_session_info = false;      // smbd always sends one; it may be absent in a hand-made request
  bool session_info_decoded = false;  // account/domain below are valid
  std::string account_name;           // "alice"; anonymous sessions say "ANONYMOUS LOGON" or the guest account
  std::string domain_name;
  bool authenticated = false;  // auth_user_info.authenticated: false for anonymous and guest
};

// How much of `buffered` the request needs: kNeedMore with the total size once the length field
// is in, kComplete with the request's size, kError for a bad magic or a length over the limit.
FrameResult frame_request(ByteView buffered);
// Decodes one complete request (exactly the bytes frame_request() said).
Status parse_request(ByteView request, Request& out);
// The 36-byte reply: message mode, `status` (an NTSTATUS; non-zero refuses the open).
Bytes encode_reply(uint32_t level, uint32_t status = 0);

// Message mode after the handshake: each message is a u16 LE length and that many bytes, and
// must hold exactly one DCE/RPC PDU (smbd writes each client write as one message; clients write
// whole PDUs). Replies get the same prefix.
class MessageFramer {
 public:
  static constexpr size_t kOutPrefixSize = 2;
  explicit MessageFramer(size_t max_pdu = DcerpcFramer::kMaxPdu) : pdu_(max_pdu) {}
  FrameResult next(ByteView buffered) const;
  void out_prefix(size_t reply_size, uint8_t* dst) const { store_le16(dst, uint16_t(reply_size)); }

 private:
  DcerpcFramer pdu_;
};

}  // namespace perfsim::server::npa
