// One accepted connection: it owns its stream, read buffer, write queue, idle timer and handler,
// and runs entirely on its stream's executor (one io_context thread), so nothing here locks.
//
// Guarantees:
// - Replies go out in the order the handler produced them, gathered into one async_write per batch;
//   a reply's shared pieces (a payload referenced by many fragments) go to the socket uncopied.
// - A frame error, read/write error, idle timeout (no complete PDU for `idle_timeout`) or a
//   kClose verdict closes only this connection, with one conn_close log line (plus a conn_error
//   line for errors). A kClose verdict first flushes the replies already queued.
// - EOF from the peer (a half-close, shutdown(SHUT_WR)) stops reading, lets every reply already
//   queued or being written reach the socket, then closes (reason=peer_closed): a client that sends
//   its requests and reads to EOF gets whole answers. A write failing after EOF is the peer gone
//   entirely and closes with the same reason, without a conn_error line.
// - When the queued reply bytes reach `write_queue_limit`, the connection stops handling PDUs and
//   stops reading until the queue drains below the limit; a client that never reads therefore
//   holds at most one handler batch beyond the limit (and the idle timeout still applies).
// - With a server-wide ReplyBudget (`limits.budget`), queued bytes are charged to it: while the
//   budget is over, a connection that still has replies queued handles no further PDU (it waits for
//   its own queue to drain: backpressure), and the budget may evict the connections whose replies
//   have waited longest for the client to read, which close with reason=slow_reader.
// - A handler's reply_delay() holds that PDU's replies (and everything after it) on a timer; the
//   connection reads nothing meanwhile and then goes on in order.
// - The read buffer only grows while a large frame is in flight (see ReadBuffer).
//
// Stream is any Asio stream socket (tcp::socket, local::stream_protocol::socket); Framer is a value
// type shaped like DcerpcFramer. Create with std::make_shared, add to a ConnectionSet, call start().
#pragma once
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/framer.h"
#include "server/handler.h"
#include "server/log.h"
#include "server/read_buffer.h"
#include "server/reply_budget.h"

namespace perfsim::server {

struct ConnectionLimits {
  std::chrono::milliseconds idle_timeout{300'000};  // 0 = never
  size_t write_queue_limit = 1 << 20;               // bytes of replies queued before reads pause
  size_t read_buffer_base = 4096;                   // read buffer capacity of an idle connection
  ReplyBudget* budget = nullptr;                    // server-wide unread reply bytes; null = none
};

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Idempotent. `reason` is a log token; `detail` a free-form explanation (may be empty).
  virtual void close(std::string_view reason, std::string_view detail = {}) = 0;
};

// The open connections of one io_context thread; touched only from that thread. Owns them until
// they close. `active` (shared by all threads of a server) counts open connections.
class ConnectionSet {
 public:
  explicit ConnectionSet(std::atomic<size_t>* active) : active_(active) {}
  void add(std::shared_ptr<ConnectionBase> c) {
    ConnectionBase* key = c.get();
    open_.emplace(key, std::move(c));
  }
  void remove(ConnectionBase* c) {
    if (open_.erase(c) && active_) active_->fetch_sub(1, std::memory_order_relaxed);
  }
  void close_all(std::string_view reason) {
    std::vector<std::shared_ptr<ConnectionBase>> all;
    all.reserve(open_.size());
    for (auto& [key, conn] : open_) all.push_back(conn);
    for (auto& conn : all) conn->close(reason);
  }
  size_t size() const { return open_.size(); }

 private:
  std::unordered_map<ConnectionBase*, std::shared_ptr<ConnectionBase>> open_;
  std::atomic<size_t>* active_;
};

template <class Stream, class Framer>
class Connection final : public ConnectionBase, public std::enable_shared_from_this<Connection<Stream, Framer>> {
  using Clock = std::chrono::steady_clock;

 public:
  Connection(Stream stream, Framer framer, std::unique_ptr<ConnectionHandler> handler, PeerInfo peer,
             const ConnectionLimits& limits, const LogSink* log, ConnectionSet* set, uint64_t id)
      : stream_(std::move(stream)),
        timer_(stream_.get_executor()),
        delay_timer_(stream_.get_executor()),
        framer_(std::move(framer)),
        handler_(std::move(handler)),
        peer_(std::move(peer)),
        limits_(limits),
        log_(log),
        set_(set),
        id_(id),
        rbuf_(limits.read_buffer_base) {}

  void start() {
    opened_ = last_pdu_ = Clock::now();
    tagged(LogLine("conn_open")).kv("local", peer_.local).emit(*log_);
    arm_idle_timer(opened_);
    if (limits_.budget) {
      budget_share_ = limits_.budget->join(
          [ex = stream_.get_executor(), weak = std::weak_ptr<Connection>(this->shared_from_this())] {
            boost::asio::post(ex, [weak] {
              if (auto self = weak.lock()) self->evict();
            });
          });
      in_budget_ = true;
    }
    read();
  }

  void close(std::string_view reason, std::string_view detail = {}) override {
    if (closed_) return;
    closed_ = true;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - opened_);
    LogLine line("conn_close");
    tagged(line)
        .kv("bytes_in", bytes_in_)
        .kv("bytes_out", bytes_out_)
        .kv("pdus_in", pdus_in_)
        .kv("pdus_out", pdus_out_)
        .kv("duration_ms", uint64_t(ms.count()))
        .kv("reason", reason);
    if (!detail.empty()) line.kv("detail", detail);
    line.emit(*log_);  // before the close, so the line exists once the peer sees the close
    if (in_budget_) limits_.budget->leave(budget_share_);
    in_budget_ = false;
    boost::system::error_code ignored;
    timer_.cancel();
    delay_timer_.cancel();
    stream_.shutdown(Stream::shutdown_both, ignored);
    stream_.close(ignored);
    auto keep_alive = this->shared_from_this();  // the set may hold the last owning reference
    set_->remove(this);
  }

 private:
  struct Outgoing {
    ByteChain body;
    std::array<uint8_t, Framer::kOutPrefixSize> prefix{};
  };

  LogLine& tagged(LogLine&& line) { return tagged(line); }
  LogLine& tagged(LogLine& line) {
    return line.kv("conn", id_).kv("peer", peer_.remote).kv("listener", peer_.listener_name);
  }

  // The reply budget chose this connection: its client has left replies unread longest.
  void evict() {
    if (closed_) return;
    const std::string detail = std::to_string(queued_bytes_) + " reply bytes unread while the server's " +
                               std::to_string(limits_.budget->limit()) + "-byte reply budget was exceeded";
    fail("slow_reader", detail);
  }

  // Backpressure: replies still queued while the server-wide budget is over.
  bool over_budget() const { return limits_.budget && queued_bytes_ > 0 && limits_.budget->over(); }

  void fail(std::string_view reason, std::string_view detail) {
    tagged(LogLine("conn_error")).kv("reason", reason).kv("detail", detail).emit(*log_);
    close(reason, detail);
  }

  void read() {
    if (reading_ || closed_ || peer_eof_) return;
    reading_ = true;
    auto space = rbuf_.prepare(need_);
    stream_.async_read_some(
        boost::asio::buffer(space.data(), space.size()),
        [self = this->shared_from_this()](boost::system::error_code ec, size_t n) { self->on_read(ec, n); });
  }

  void on_read(boost::system::error_code ec, size_t n) {
    reading_ = false;
    if (closed_) return;
    if (ec) {
      if (ec == boost::asio::error::eof) return on_peer_eof();
      if (ec == boost::asio::error::connection_reset) return close("peer_reset");
      return fail("read_error", ec.message());
    }
    rbuf_.commit(n);
    bytes_in_ += n;
    process();
  }

  // The peer will send nothing more; what it asked for before still goes out (see on_write).
  void on_peer_eof() {
    peer_eof_ = true;
    if (!writing_ && !delayed_ && pending_.empty()) close("peer_closed");
  }

  // Handles every complete frame in the buffer unless paused, then reads again.
  void process() {
    while (!closed_ && !closing_ && !paused_ && !delayed_) {
      if (over_budget()) {
        paused_ = true;
        break;
      }
      FrameResult f = framer_.next(rbuf_.data());
      if (f.kind == FrameResult::Kind::kError) return fail(f.reason, f.detail);
      if (f.kind == FrameResult::Kind::kNeedMore) {
        need_ = f.size;
        break;
      }
      if (!handle_frame(rbuf_.data().first(f.size).subspan(f.payload_offset))) return;
      rbuf_.consume(f.size);
      need_ = 0;
    }
    if (closed_) return;
    if (delayed_) return;    // the delay timer writes and goes on
    if (!writing_) write();  // one gathered write for all replies of this batch
    if (closing_ || peer_eof_) {
      if (!writing_) close(closing_ ? "handler_close" : "peer_closed");
      return;
    }
    if (!paused_) read();
  }

  bool handle_frame(ByteView pdu) {
    ++pdus_in_;
    last_pdu_ = Clock::now();
    replies_.clear();
    Verdict verdict;
    try {
      verdict = handler_->on_pdu(pdu, replies_);
    } catch (const std::exception& e) {
      fail("handler_exception", e.what());
      return false;
    }
    for (ByteChain& r : replies_) enqueue(std::move(r));
    replies_.clear();
    if (std::string why = handler_->take_auth_error(); !why.empty())
      tagged(LogLine("auth_refused")).kv("detail", why).emit(*log_);
    if (verdict == Verdict::kClose) closing_ = true;
    if (const auto delay = handler_->reply_delay(); delay.count() > 0) hold_replies(delay);
    if (queued_bytes_ >= limits_.write_queue_limit || over_budget()) paused_ = true;
    return true;
  }

  void enqueue(ByteChain&& body) {
    Outgoing o{std::move(body)};
    framer_.out_prefix(o.body.size(), o.prefix.data());
    queued_bytes_ += o.prefix.size() + o.body.size();
    if (in_budget_) limits_.budget->charge(budget_share_, o.prefix.size() + o.body.size());
    ++pdus_out_;
    pending_.push_back(std::move(o));
  }

  void hold_replies(std::chrono::milliseconds delay) {
    delayed_ = true;
    delay_timer_.expires_after(delay);
    delay_timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      self->delayed_ = false;
      self->process();  // writes the held replies, then handles what arrived meanwhile
    });
  }

  void write() {
    if (pending_.empty() || closed_ || delayed_) return;
    writing_ = true;
    inflight_.swap(pending_);
    gather_.clear();
    for (Outgoing& o : inflight_) {
      if constexpr (Framer::kOutPrefixSize > 0) gather_.emplace_back(o.prefix.data(), o.prefix.size());
      o.body.for_each([this](ByteView piece) { gather_.emplace_back(piece.data(), piece.size()); });
    }
    boost::asio::async_write(
        stream_, gather_,
        [self = this->shared_from_this()](boost::system::error_code ec, size_t n) { self->on_write(ec, n); });
  }

  void on_write(boost::system::error_code ec, size_t n) {
    writing_ = false;
    if (closed_) return;
    if (ec) return peer_eof_ ? close("peer_closed", ec.message()) : fail("write_error", ec.message());
    bytes_out_ += n;
    queued_bytes_ -= n;
    if (in_budget_) limits_.budget->credit(budget_share_, n);
    inflight_.clear();
    if (!pending_.empty()) {
      write();
    } else if (closing_ || peer_eof_) {
      return close(closing_ ? "handler_close" : "peer_closed");
    }
    if (paused_ && queued_bytes_ < limits_.write_queue_limit) {
      paused_ = false;
      process();
    }
  }

  // Waits until the idle deadline; a PDU in the meantime moves the deadline, so the timer is
  // re-armed lazily instead of being cancelled on every PDU.
  void arm_idle_timer(Clock::time_point from) {
    if (limits_.idle_timeout.count() <= 0) return;
    timer_.expires_at(from + limits_.idle_timeout);
    timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      if (Clock::now() - self->last_pdu_ >= self->limits_.idle_timeout) return self->close("idle_timeout");
      self->arm_idle_timer(self->last_pdu_);
    });
  }

  Stream stream_;
  boost::asio::steady_timer timer_;
  boost::asio::steady_timer delay_timer_;  // holds replies a handler asked to delay
  Framer framer_;
  std::unique_ptr<ConnectionHandler> handler_;
  PeerInfo peer_;
  ConnectionLimits limits_;
  const LogSink* log_;
  ConnectionSet* set_;
  uint64_t id_;

  ReadBuffer rbuf_;
  size_t need_ = 0;                 // bytes the framer wants buffered before it can say more
  std::vector<ByteChain> replies_;  // handler output, reused
  std::vector<Outgoing> pending_;   // queued, not yet being written
  std::vector<Outgoing> inflight_;  // being written by the current async_write
  std::vector<boost::asio::const_buffer> gather_;
  size_t queued_bytes_ = 0;  // pending_ + inflight_
  bool reading_ = false, writing_ = false, paused_ = false, closing_ = false, closed_ = false, delayed_ = false;
  bool peer_eof_ = false;  // the peer half-closed: finish writing, read no more
  bool in_budget_ = false;
  ReplyBudget::Handle budget_share_{};

  Clock::time_point opened_, last_pdu_;
  uint64_t bytes_in_ = 0, bytes_out_ = 0, pdus_in_ = 0, pdus_out_ = 0;
};

}  // namespace perfsim::server
