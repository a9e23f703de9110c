// Test helpers for the server transport: a minimal DCE/RPC-shaped request builder, an echo-like
// handler, a log capture and a POSIX loopback client whose every wait is bounded.
#pragma once
#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "server/handler.h"
#include "server/log.h"

namespace perfsim::server::test {

constexpr uint8_t kPtypeRequest = 0;
constexpr uint8_t kPtypeCloseMe = 0x7f;  // EchoHandler replies, then asks to close
constexpr uint8_t kPtypeThrow = 0x7e;    // EchoHandler throws

// A CO PDU header with the given call_id and a body of `size - 16` bytes (filled with a pattern).
Bytes make_pdu(uint32_t call_id, size_t size = 24, bool little_endian = true, uint8_t ptype = kPtypeRequest);

// Reply: 16-byte header (ptype 2, frag_length = reply_size, call_id of the request), then
// u32 sequence number of the request on this connection and u32 frag_length of the request.
struct Reply {
  uint32_t call_id = 0, seq = 0, request_size = 0;
};

struct EchoStats {
  std::atomic<uint64_t> pdus{0};
  std::atomic<uint64_t> handlers{0};
};

class EchoFactory : public HandlerFactory {
 public:
  explicit EchoFactory(size_t reply_size = 24) : reply_size_(reply_size) {}
  std::unique_ptr<ConnectionHandler> create(const PeerInfo& peer) override;
  EchoStats stats;

 private:
  size_t reply_size_;
};

// 127.0.0.1:port
sockaddr_in loopback_v4(uint16_t port);

class CapturedLog {
 public:
  LogSink sink();
  bool contains(const std::string& needle) const;
  size_t count(const std::string& needle) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

class TestClient {
 public:
  // rcvbuf > 0 pins SO_RCVBUF (set before connect, which also stops autotuning).
  explicit TestClient(uint16_t port, int rcvbuf = 0);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return fd_ >= 0 && connected_; }
  bool send_all(ByteView data, int timeout_ms = 5000);
  // One send() per byte, TCP_NODELAY on: the server sees the PDU in many small pieces.
  bool send_bytewise(ByteView data);
  bool recv_exact(size_t n, Bytes& out, int timeout_ms = 5000);
  bool recv_reply(Reply& r, int timeout_ms = 5000);
  // True when the server closed (EOF or reset) within the timeout; discards data until then.
  bool wait_closed(int timeout_ms = 5000);
  // shutdown(SHUT_WR): the server reads EOF, the socket stays open for reading.
  void shutdown_write();
  // Appends everything until the server's EOF; false on a reset or when the timeout passes first.
  bool recv_to_eof(Bytes& out, int timeout_ms = 10000);
  void close();

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace perfsim::server::test
