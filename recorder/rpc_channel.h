// The client side of a connection-oriented DCE/RPC association carrying winreg, whatever moves
// its bytes: bind winreg + NDR 2.0 (unauthenticated, or NTLMSSP / SPNEGO through rpc/auth.h's
// client SecurityContext at connect, integrity or privacy), then calls fragmented at the
// negotiated sizes, their responses reassembled (and verified, unsealed, when the level asks).
// No sockets here: the TCP channel (tcp_channel.h) gives it a socket, a test or a fuzz target a
// server's bytes from memory, and all of them run the same code.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "core/status.h"
#include "recorder/channel.h"
#include "rpc/auth.h"

namespace perfsim::recorder {

// Who logs on over DCE/RPC, and how.
struct TcpAuth {
  rpc::ClientIdentity who;
  uint8_t auth_type = rpc::kAuthTypeNtlmssp;      // or kAuthTypeSpnego
  uint8_t auth_level = rpc::kAuthLevelIntegrity;  // kAuthLevelConnect .. kAuthLevelPrivacy
};

// What a server can make one call hold or wait for. The stub: the largest value winreg carries
// (QueryValue's data_size is at most 64 MiB, the IDL's range; the largest sane Global) and its
// NDR framing. The fragments: that stub in fragments of C706's minimum size (1432 bytes, 1408 of
// stub; 1376 when signed) needs under 50,000 of them, so a server sending more, e.g. empty
// fragments without end, is refused instead of read forever. alloc_hint is never trusted.
inline constexpr size_t kMaxResponseStub = 64 * 1024 * 1024 + 4096;
inline constexpr size_t kMaxResponseFragments = 65536;

// One connection's bytes. Each operation either completes or fails (closed connection, time-out);
// the transport bounds how long it waits.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  virtual Status write(ByteView bytes) = 0;
  // Exactly `n` bytes into `out`.
  virtual Status read_exact(size_t n, Bytes& out) = 0;
};

// Binds winreg over `stream` and hands back the bound channel. `where` ("HOST:PORT") names the
// host in messages; `describe` is what Channel::describe() answers. With `auth`, `sec` is the
// client security context made for it (made by the caller, so bad credentials fail before any
// connection); a refused bind or logon fails here with a message naming the host and the account.
Status bind_rpc_channel(std::unique_ptr<ByteStream> stream, const std::string& where, const std::string& describe,
                        const std::optional<TcpAuth>& auth, std::unique_ptr<rpc::SecurityContext> sec,
                        std::unique_ptr<Channel>& out);

}  // namespace perfsim::recorder
