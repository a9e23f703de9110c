// One accepted connection: it owns its stream, read buffer, write queue, idle timer and handler,
// and runs entirely on its stream's executor (one io_context thread), so nothing here locks.
//
// Guarantees:
// - Replies go out in the order the handler produced them, gathered into one async_write per batch;
//   a reply's shared pieces (a payload referenced by many fragments) go to the socket uncopied.
// - A frame error, read/write error, idle timeout (no complete PDU for `idle_timeout`) or a
//   kClose verdict closes only this connection, with one conn_close log line (plus a conn_error
//   line for errors). A kClose verdict first flushes the replies already queued. A kReset verdict
//   closes at once (reason=host_reset), drops what is queued, and a TCP peer gets a RST.
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
// - An idle connection holds no read buffer: with nothing buffered it waits for the socket to be
//   readable, reads into its thread's scratch buffer and handles the whole frames there; only a
//   frame's beginning (or frames a pause leaves unhandled) is copied into its own ReadBuffer, which
//   grows while a large frame is in flight and is freed once drained. The speculative peek before
//   each wait (what Asio's own speculative read does) keeps data or an EOF that arrived meanwhile
//   from being missed: the stream's io_context runs on one thread, so no epoll_wait can consume
//   the readiness edge between the peek and the wait.
//
// Stream is any Asio stream socket (tcp::socket, local::stream_protocol::socket); Framer is a value
// type shaped like DcerpcFramer. Create with std::make_shared, add to a ConnectionSet, call start().
#pragma once
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/socket.h>

#include "server/admission.h"
#include "server/framer.h"
#include "server/handler.h"
#include "server/log.h"
#include "server/read_buffer.h"
#include "server/reply_budget.h"

namespace perfsim::server {

struct ConnectionLimits {
  std::chrono::milliseconds idle_timeout{300'000};  // 0 = never
  // An untrusted connection (ConnectionHandler::trusted) closes this long after it opened unless it
  // has authenticated by then, whatever it sent meanwhile; 0 = never.
  std::chrono::milliseconds auth_timeout{10'000};
  Admission* admission = nullptr;      // where untrusted connections are listed; null = nowhere
  size_t write_queue_limit = 1 << 20;  // bytes of replies queued before reads pause
  size_t read_buffer_base = 4096;      // first capacity of the buffer of a PDU's beginning
  ReplyBudget* budget = nullptr;       // server-wide unread reply bytes; null = none
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
class Connection final : public ConnectionBase,
                         public Evictable,
                         public std::enable_shared_from_this<Connection<Stream, Framer>> {
  using Clock = std::chrono::steady_clock;

 public:
  Connection(Stream stream, Framer framer, std::unique_ptr<ConnectionHandler> handler, PeerInfo peer,
             const ConnectionLimits& limits, const LogSink* log, ConnectionSet* set, uint64_t id)
      : stream_(std::move(stream)),
        timer_(stream_.get_executor()),
        framer_(std::move(framer)),
        handler_(std::move(handler)),
        peer_(std::move(peer)),
        limits_(&limits),
        log_(log),
        set_(set),
        id_(id),
        rbuf_(limits.read_buffer_base) {}

  void start() {
    opened_ = last_pdu_ = Clock::now();
    boost::system::error_code ignored;
    stream_.non_blocking(true, ignored);  // on_readable's read_some must not block
    tagged(LogLine("conn_open", LogLevel::kDebug)).kv("local", peer_.local).emit(*log_);
    if (limits_->admission && !handler_->trusted()) {
      admission_entry_ = limits_->admission->join(std::weak_ptr<Connection>(this->shared_from_this()));
      untrusted_ = true;
    }
    arm_idle_timer();
    if (limits_->budget) {
      budget_share_ = limits_->budget->join(std::weak_ptr<Connection>(this->shared_from_this()));
      in_budget_ = true;
    }
    read();
  }

  void close(std::string_view reason, std::string_view detail = {}) override {
    if (closed_) return;
    closed_ = true;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - opened_);
    LogLine line("conn_close", LogLevel::kDebug);
    tagged(line)
        .kv("bytes_in", bytes_in_)
        .kv("bytes_out", bytes_out_)
        .kv("pdus_in", pdus_in_)
        .kv("pdus_out", pdus_out_)
        .kv("duration_ms", uint64_t(ms.count()))
        .kv("reason", reason);
    if (!detail.empty()) line.kv("detail", detail);
    line.emit(*log_);  // before the close, so the line exists once the peer sees the close
    if (in_budget_) limits_->budget->leave(budget_share_);
    in_budget_ = false;
    if (untrusted_) limits_->admission->leave(admission_entry_);
    untrusted_ = false;
    boost::system::error_code ignored;
    timer_.cancel();
    if (delay_timer_) delay_timer_->cancel();
    if (!reset_) stream_.shutdown(Stream::shutdown_both, ignored);  // a shutdown would send a FIN first
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

  // From the budget's or the acceptor's thread: the close runs on this connection's.
  void evict_async(Eviction why) override {
    boost::asio::post(stream_.get_executor(), [self = this->shared_from_this(), why] { self->evict(why); });
  }

  // The reply budget chose this connection (its client has left replies unread longest), or a new
  // connection needed its slot before it had authenticated.
  void evict(Eviction why) {
    if (closed_) return;
    if (why == Eviction::kUnauthenticated)
      return close("evicted_unauthenticated", "every connection slot was taken and this one had not authenticated");
    const std::string detail = std::to_string(queued_bytes_) + " reply bytes unread while the server's " +
                               std::to_string(limits_->budget->limit()) + "-byte reply budget was exceeded";
    fail("slow_reader", detail);
  }

  // Backpressure: replies still queued while the server-wide budget is over.
  bool over_budget() const { return limits_->budget && queued_bytes_ > 0 && limits_->budget->over(); }

  // SO_LINGER with a zero timeout makes close() send a RST and drop unsent data (socket(7)); on a
  // named pipe's unix socket it is a plain close.
  void abort(std::string_view reason) {
    if (closed_) return;
    reset_ = true;
    ::linger l{1, 0};
    ::setsockopt(stream_.native_handle(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(reason);
  }

  void fail(std::string_view reason, std::string_view detail) {
    tagged(LogLine("conn_error")).kv("reason", reason).kv("detail", detail).emit(*log_);
    close(reason, detail);
  }

  // 64 KiB: ten 5,840-byte fragments, or a burst of small requests, per read.
  static constexpr size_t kScratchSize = 64 * 1024;
  static std::span<uint8_t> scratch() {
    thread_local const std::unique_ptr<uint8_t[]> buf(new uint8_t[kScratchSize]);
    return {buf.get(), kScratchSize};
  }

  void read() {
    if (reading_ || closed_ || peer_eof_) return;
    reading_ = true;
    if (!rbuf_.data().empty()) {  // the rest of a buffered frame goes after its beginning
      auto space = rbuf_.prepare_toward(need_);
      stream_.async_read_some(
          boost::asio::buffer(space.data(), space.size()),
          [self = this->shared_from_this()](boost::system::error_code ec, size_t n) { self->on_read(ec, n); });
      return;
    }
    rbuf_.release();
    uint8_t probe = 0;
    const ssize_t r = ::recv(stream_.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {  // bytes, EOF or an error already there
      boost::asio::post(stream_.get_executor(),
                        [self = this->shared_from_this()] { self->on_readable(boost::system::error_code()); });
      return;
    }
    stream_.async_wait(Stream::wait_read,
                       [self = this->shared_from_this()](boost::system::error_code ec) { self->on_readable(ec); });
  }

  bool read_failed(const boost::system::error_code& ec) {
    if (!ec) return false;
    if (ec == boost::asio::error::eof)
      on_peer_eof();
    else if (ec == boost::asio::error::connection_reset)
      close("peer_reset");
    else
      fail("read_error", ec.message());
    return true;
  }

  // Into the connection's own buffer, after a frame's beginning.
  void on_read(boost::system::error_code ec, size_t n) {
    reading_ = false;
    if (closed_ || read_failed(ec)) return;
    rbuf_.commit(n);
    bytes_in_ += n;
    process();
  }

  // Nothing buffered: read into the thread's scratch and handle whole frames in place.
  void on_readable(boost::system::error_code ec) {
    reading_ = false;
    if (closed_) return;
    const std::span<uint8_t> s = scratch();
    size_t n = 0;
    if (!ec) n = stream_.read_some(boost::asio::buffer(s.data(), s.size()), ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) return read();
    if (read_failed(ec)) return;
    bytes_in_ += n;
    const ByteView in(s.data(), n);
    const size_t used = handle_frames(in);
    if (closed_) return;
    if (used < n) {  // the scratch is the next connection's: keep the rest in our own buffer
      const ByteView rest = in.subspan(used);
      std::memcpy(rbuf_.prepare(rest.size()).data(), rest.data(), rest.size());  // read() grows it
      rbuf_.commit(rest.size());
    }
    after_frames();
  }

  // The peer will send nothing more; what it asked for before still goes out (see on_write).
  void on_peer_eof() {
    peer_eof_ = true;
    if (!writing_ && !delayed_ && pending_.empty()) close("peer_closed");
  }

  // Handles every complete frame in the buffer unless paused, then reads again.
  void process() {
    const size_t used = handle_frames(rbuf_.data());
    if (closed_) return;
    rbuf_.consume(used);
    after_frames();
  }

  // Handles the complete frames at the front of `in` until a pause; returns the bytes they took.
  size_t handle_frames(ByteView in) {
    size_t used = 0;
    while (!closed_ && !closing_ && !paused_ && !delayed_) {
      if (over_budget()) {
        paused_ = true;
        break;
      }
      FrameResult f = framer_.next(in.subspan(used));
      if (f.kind == FrameResult::Kind::kError) {
        fail(f.reason, f.detail);
        break;
      }
      if (f.kind == FrameResult::Kind::kNeedMore) {
        need_ = f.size;
        break;
      }
      if (!handle_frame(in.subspan(used, f.size).subspan(f.payload_offset))) break;
      used += f.size;
      need_ = 0;
    }
    return used;
  }

  // After a batch of frames: write their replies, close or read on.
  void after_frames() {
    if (closed_) return;
    if (delayed_) return;    // the delay timer writes and goes on
    if (!writing_) write();  // one gathered write for all replies of this batch
    if (closing_ || peer_eof_) {
      if (!writing_) close(closing_ ? "handler_close" : "peer_closed");
      return;
    }
    if (!paused_) read();
  }

  // The handler's output of one PDU, moved into pending_ at once: one vector per thread, not
  // one per connection (an idle connection holds none; handlers never run nested).
  static std::vector<ByteChain>& replies() {
    thread_local std::vector<ByteChain> r;
    return r;
  }

  bool handle_frame(ByteView pdu) {
    ++pdus_in_;
    last_pdu_ = Clock::now();
    std::vector<ByteChain>& replies = Connection::replies();
    replies.clear();
    Verdict verdict;
    try {
      verdict = handler_->on_pdu(pdu, replies);
    } catch (const std::exception& e) {
      replies.clear();
      fail("handler_exception", e.what());
      return false;
    }
    for (ByteChain& r : replies) enqueue(std::move(r));
    replies.clear();
    if (std::string why = handler_->take_auth_error(); !why.empty())
      tagged(LogLine("auth_refused")).kv("detail", why).emit(*log_);
    if (untrusted_ && handler_->trusted()) {  // authenticated: an ordinary connection from now on
      limits_->admission->leave(admission_entry_);
      untrusted_ = false;
    }
    if (verdict == Verdict::kReset) {
      abort("host_reset");
      return false;
    }
    if (verdict == Verdict::kClose) closing_ = true;
    if (const auto delay = handler_->reply_delay(); delay.count() > 0) hold_replies(delay);
    if (queued_bytes_ >= limits_->write_queue_limit || over_budget()) paused_ = true;
    return true;
  }

  void enqueue(ByteChain&& body) {
    Outgoing o{std::move(body)};
    framer_.out_prefix(o.body.size(), o.prefix.data());
    queued_bytes_ += o.prefix.size() + o.body.size();
    if (in_budget_) limits_->budget->charge(budget_share_, o.prefix.size() + o.body.size());
    ++pdus_out_;
    pending_.push_back(std::move(o));
  }

  void hold_replies(std::chrono::milliseconds delay) {
    delayed_ = true;
    if (!delay_timer_) delay_timer_ = std::make_unique<boost::asio::steady_timer>(stream_.get_executor());
    delay_timer_->expires_after(delay);
    delay_timer_->async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      self->delayed_ = false;
      self->process();  // writes the held replies, then handles what arrived meanwhile
    });
  }

  void write() {
    if (pending_.empty() || closed_ || delayed_) return;
    writing_ = true;
    inflight_.swap(pending_);
    // Asio's write operation keeps its own copy of the buffer sequence, so the list of pieces is
    // built in a per-thread vector instead of one per connection.
    thread_local std::vector<boost::asio::const_buffer> gather;
    gather.clear();
    for (Outgoing& o : inflight_) {
      if constexpr (Framer::kOutPrefixSize > 0) gather.emplace_back(o.prefix.data(), o.prefix.size());
      o.body.for_each([](ByteView piece) { gather.emplace_back(piece.data(), piece.size()); });
    }
    boost::asio::async_write(
        stream_, gather,
        [self = this->shared_from_this()](boost::system::error_code ec, size_t n) { self->on_write(ec, n); });
  }

  void on_write(boost::system::error_code ec, size_t n) {
    writing_ = false;
    if (closed_) return;
    if (ec) return peer_eof_ ? close("peer_closed", ec.message()) : fail("write_error", ec.message());
    bytes_out_ += n;
    queued_bytes_ -= n;
    if (in_budget_) limits_->budget->credit(budget_share_, n);
    inflight_.clear();
    if (pending_.empty()) {  // all written: an idle connection keeps no queue storage
      std::vector<Outgoing>().swap(inflight_);
      std::vector<Outgoing>().swap(pending_);
    }
    if (!pending_.empty()) {
      write();
    } else if (closing_ || peer_eof_) {
      return close(closing_ ? "handler_close" : "peer_closed");
    }
    if (paused_ && queued_bytes_ < limits_->write_queue_limit) {
      paused_ = false;
      process();
    }
  }

  // The sooner of the idle deadline (a PDU moves it) and, while untrusted, the auth deadline (a
  // PDU does not: a client refused call after call must not keep its slot); max() when neither.
  Clock::time_point deadline(bool& auth) const {
    Clock::time_point d = Clock::time_point::max();
    if (limits_->idle_timeout.count() > 0) d = last_pdu_ + limits_->idle_timeout;
    auth = untrusted_ && limits_->auth_timeout.count() > 0 && opened_ + limits_->auth_timeout < d;
    return auth ? opened_ + limits_->auth_timeout : d;
  }

  // Waits until the deadline; a PDU in the meantime moves the idle deadline, so the timer is
  // re-armed lazily instead of being cancelled on every PDU.
  void arm_idle_timer() {
    bool auth = false;
    const Clock::time_point d = deadline(auth);
    if (d == Clock::time_point::max()) return;
    timer_.expires_at(d);
    timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      bool unauthenticated = false;
      if (Clock::now() >= self->deadline(unauthenticated))
        return unauthenticated ? self->close("auth_timeout", "not authenticated within the server's auth timeout")
                               : self->close("idle_timeout");
      self->arm_idle_timer();
    });
  }

  Stream stream_;
  boost::asio::steady_timer timer_;
  std::unique_ptr<boost::asio::steady_timer> delay_timer_;  // holds replies a handler asked to delay; made at first use
  Framer framer_;
  std::unique_ptr<ConnectionHandler> handler_;
  PeerInfo peer_;
  const ConnectionLimits* limits_;  // the server's, like log_: outlives its connections
  const LogSink* log_;
  ConnectionSet* set_;
  uint64_t id_;

  ReadBuffer rbuf_;
  size_t need_ = 0;                 // bytes the framer wants buffered before it can say more
  std::vector<Outgoing> pending_;   // queued, not yet being written
  std::vector<Outgoing> inflight_;  // being written by the current async_write
  size_t queued_bytes_ = 0;         // pending_ + inflight_
  bool reading_ = false, writing_ = false, paused_ = false, closing_ = false, closed_ = false, delayed_ = false;
  bool reset_ = false;     // abort(): closed with a RST
  bool peer_eof_ = false;  // the peer half-closed: finish writing, read no more
  bool in_budget_ = false;
  ReplyBudget::Handle budget_share_{};
  bool untrusted_ = false;  // listed in the admission until it authenticates or closes
  Admission::Handle admission_entry_{};

  Clock::time_point opened_, last_pdu_;
  uint64_t bytes_in_ = 0, bytes_out_ = 0, pdus_in_ = 0, pdus_out_ = 0;
};

}  // namespace perfsim::server
