// Named-pipe traffic inside one captured SMB connection: cuts each direction's byte stream into
// NetBIOS session messages and SMB2 commands (compounds included) and hands on the bytes written
// to and read from each open file: WRITE request data and FSCTL_PIPE_TRANSCEIVE input go to the
// server, READ and TRANSCEIVE output (also when STATUS_BUFFER_OVERFLOW says more follows) come
// back. Responses are matched to their requests by MessageId (a READ response names no file).
// Which pipe is winreg is left to the DCE/RPC layer, by content.
// What cannot be read stops the connection, said once by stopped(): an SMB3 transform header
// (encrypted session), a compression transform, an SMB1 session past its negotiate.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "rpc/ntlm_challenge.h"

namespace perfsim::recorder {

using FileId = std::array<uint8_t, 16>;  // SMB2_FILEID: persistent + volatile

class Smb2PipeDemux {
 public:
  enum class Stop { kNone, kEncrypted, kCompressed, kSmb1, kNotSmb };
  // to_server: client -> server bytes of the pipe; `time_100ns` of the frame completing them.
  using PipeBytes = std::function<void(const FileId& fid, bool to_server, ByteView data, int64_t time_100ns)>;

  explicit Smb2PipeDemux(PipeBytes sink) : sink_(std::move(sink)) {}

  // Bytes of the TCP connection in order, `from_client` telling the direction.
  void feed(bool from_client, ByteView data, int64_t time_100ns);

  Stop stopped() const { return stop_; }
  // The version in the NTLMSSP CHALLENGE of the connection's SESSION_SETUP (MS-SMB2 2.2.6).
  const std::optional<rpc::NtlmVersion>& announced() const { return announced_; }

  // True when the first bytes a client sends look like SMB over TCP (a session message holding
  // an SMB1/SMB2/SMB3 header, or a NetBIOS session request on port 139). Needs 8 bytes.
  static bool looks_like_smb(ByteView first_client_bytes);

 private:
  struct Pending {
    uint16_t command = 0;
    FileId fid{};
  };
  void message(bool from_client, ByteView msg, int64_t time);
  void smb2(bool from_client, ByteView msg, size_t at, FileId& related, int64_t time);

  PipeBytes sink_;
  Stop stop_ = Stop::kNone;
  Bytes buffer_[2];                      // [from_client]
  std::map<uint64_t, Pending> pending_;  // MessageId -> request
  std::optional<rpc::NtlmVersion> announced_;
};

const char* smb_stop_reason(Smb2PipeDemux::Stop s);  // "SMB3-encrypted session", ...

}  // namespace perfsim::recorder
