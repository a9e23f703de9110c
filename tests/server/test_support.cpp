#include "test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>

namespace perfsim::server::test {

Bytes make_pdu(uint32_t call_id, size_t size, bool little_endian, uint8_t ptype) {
  Bytes b(size < 16 ? 16 : size);
  b[0] = 5;
  b[1] = 0;
  b[2] = ptype;
  b[3] = 0x03;
  b[4] = little_endian ? 0x10 : 0x00;
  uint16_t len = uint16_t(size);
  if (little_endian) {
    store_le16(&b[8], len);
    store_le32(&b[12], call_id);
  } else {
    b[8] = uint8_t(len >> 8);
    b[9] = uint8_t(len);
    for (int i = 0; i < 4; ++i) b[12 + i] = uint8_t(call_id >> (24 - 8 * i));
  }
  for (size_t i = 16; i < b.size(); ++i) b[i] = uint8_t(i * 7 + call_id);
  return b;
}

namespace {

class EchoHandler : public ConnectionHandler {
 public:
  EchoHandler(size_t reply_size, EchoStats& stats) : reply_size_(reply_size), stats_(stats) {}
  Verdict on_pdu(ByteView pdu, std::vector<ByteChain>& out) override {
    stats_.pdus.fetch_add(1);
    if (pdu[2] == kPtypeThrow) throw std::runtime_error("test handler failure");
    bool le = pdu[4] & 0x10;
    uint32_t call_id = le ? load_le32(&pdu[12])
                          : (uint32_t(pdu[12]) << 24 | uint32_t(pdu[13]) << 16 | uint32_t(pdu[14]) << 8 | pdu[15]);
    Bytes r(reply_size_, 0xab);
    r[0] = 5;
    r[2] = 2;
    r[3] = 0x03;
    r[4] = 0x10;
    store_le16(&r[8], uint16_t(reply_size_));
    store_le32(&r[12], call_id);
    store_le32(&r[16], seq_++);
    store_le32(&r[20], uint32_t(pdu.size()));
    out.push_back(std::move(r));
    return pdu[2] == kPtypeCloseMe ? Verdict::kClose : Verdict::kContinue;
  }

 private:
  size_t reply_size_;
  EchoStats& stats_;
  uint32_t seq_ = 0;
};

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? int(left.count()) : 0;
}

}  // namespace

std::unique_ptr<ConnectionHandler> EchoFactory::create(const PeerInfo&) {
  stats.handlers.fetch_add(1);
  return std::make_unique<EchoHandler>(reply_size_, stats);
}

sockaddr_in loopback_v4(uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sa;
}

LogSink CapturedLog::sink() {
  return [this](std::string_view line) {
    std::lock_guard lk(mu_);
    lines_.emplace_back(line);
  };
}

size_t CapturedLog::count(const std::string& needle) const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (const auto& l : lines_) n += l.find(needle) != std::string::npos;
  return n;
}

bool CapturedLog::contains(const std::string& needle) const { return count(needle) > 0; }

TestClient::TestClient(uint16_t port, int rcvbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in sa = loopback_v4(port);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
}

TestClient::~TestClient() { close(); }

void TestClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TestClient::send_all(ByteView data, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t done = 0;
  while (done < data.size()) {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return false;
    ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (n > 0) done += size_t(n);
  }
  return true;
}

bool TestClient::send_bytewise(ByteView data) {
  for (size_t i = 0; i < data.size(); ++i)
    if (!send_all(data.subspan(i, 1))) return false;
  return true;
}

bool TestClient::recv_exact(size_t n, Bytes& out, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  out.resize(n);
  size_t done = 0;
  while (done < n) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return false;
    ssize_t got = ::recv(fd_, out.data() + done, n - done, MSG_DONTWAIT);
    if (got == 0) return false;
    if (got < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (got > 0) done += size_t(got);
  }
  return true;
}

bool TestClient::recv_reply(Reply& r, int timeout_ms) {
  Bytes head;
  if (!recv_exact(24, head, timeout_ms)) return false;
  size_t size = load_le16(&head[8]);
  if (head[0] != 5 || head[2] != 2 || size < 24) return false;
  r.call_id = load_le32(&head[12]);
  r.seq = load_le32(&head[16]);
  r.request_size = load_le32(&head[20]);
  Bytes rest;
  return size == 24 || recv_exact(size - 24, rest, timeout_ms);
}

bool TestClient::wait_closed(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  uint8_t sink[4096];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return false;
    ssize_t got = ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT);
    if (got == 0) return true;
    if (got < 0 && errno != EAGAIN && errno != EINTR) return true;  // reset counts as closed
  }
}

void TestClient::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

bool TestClient::recv_to_eof(Bytes& out, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  uint8_t chunk[65536];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, remaining_ms(deadline)) <= 0) return false;
    ssize_t got = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (got == 0) return true;
    if (got < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (got > 0) out.insert(out.end(), chunk, chunk + got);
  }
}

}  // namespace perfsim::server::test
