// The seam between the transport (TCP or an smbd named pipe) and the protocol above it.
// The transport frames the byte stream into DCE/RPC PDUs and hands each complete PDU to the
// connection's handler; the handler answers with zero or more PDUs and tells whether to go on.
// A handler is created per connection and is only ever called from that connection's strand,
// so it needs no locking.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/byte_chain.h"
#include "core/bytes.h"

namespace perfsim::server {

struct PeerInfo {
  std::string remote;         // "127.0.0.1:51234"
  std::string local;          // "127.0.0.1:4135" (the listener, which selects the host)
  std::string listener_name;  // the host/listener this connection belongs to
};

// kClose: an orderly close (FIN) once the replies already queued are written. kReset: the host
// that held the connection is gone (a reboot, a reset fault): the connection is aborted at once,
// unwritten replies dropped, and a TCP peer gets a RST instead of a FIN (SO_LINGER 0), as a host
// answers a segment for a connection it no longer has (RFC 9293, 3.10.7.1).
enum class Verdict { kContinue, kClose, kReset };

class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  // One complete PDU (header included). Replies are appended to `out` in order, one chain per
  // PDU; their shared pieces stay alive until the write completes.
  virtual Verdict on_pdu(ByteView pdu, std::vector<ByteChain>& out) = 0;
  // How long the replies of the last on_pdu wait before they are written (a slow or stalled
  // host); zero = at once. The connection holds them, and handles no further PDU, on a timer:
  // no thread blocks.
  virtual std::chrono::milliseconds reply_delay() { return std::chrono::milliseconds(0); }
  // Why the last on_pdu refused an authentication leg (empty: it did not), for the transport's
  // log: a refused token names the field that failed.
  virtual std::string take_auth_error() { return {}; }
  // False while the connection still has to authenticate before it may do anything (an
  // association where authentication is required, not yet authenticated). Such a connection
  // holds its slot only until the connection's auth deadline and is the first closed when the
  // server's slots run out (admission.h); asked after every PDU.
  virtual bool trusted() const { return true; }
};

// Creates the handler for a new connection accepted on a listener.
class HandlerFactory {
 public:
  virtual ~HandlerFactory() = default;
  virtual std::unique_ptr<ConnectionHandler> create(const PeerInfo& peer) = 0;
};

}  // namespace perfsim::server
