#include "server/pipe_listener.h"

#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "server/cloexec.h"

namespace perfsim::server {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;
using PipeConnection = Connection<local::socket, npa::MessageFramer>;

namespace {

std::string hex_status(uint32_t s) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", s);
  return buf;
}

// One socket from accept until its NPA request is answered. It sits in the worker's
// ConnectionSet meanwhile, so a server shutdown closes it like any connection.
class Handshake final : public ConnectionBase, public std::enable_shared_from_this<Handshake> {
 public:
  Handshake(local::socket s, const PipeListenerConfig& cfg, ListenerHost& host, ConnectionSet* set, uint64_t id)
      : socket_(std::move(s)), timer_(socket_.get_executor()), cfg_(cfg), host_(host), set_(set), id_(id) {}

  void start() {
    if (std::string why; !peer_allowed(why)) return refuse("peer_not_allowed", why);
    timer_.expires_after(cfg_.handshake_timeout);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->refuse("handshake_timeout", "no complete named-pipe request in time");
    });
    read();
  }

  void close(std::string_view reason, std::string_view detail = {}) override {
    if (closed_) return;
    closed_ = true;
    if (reason != "handed_over") {
      LogLine line("pipe_close", LogLevel::kDebug);
      line.kv("conn", id_).kv("reason", reason);
      if (!detail.empty()) line.kv("detail", detail);
      line.emit(host_.log());
    }
    boost::system::error_code ignored;
    timer_.cancel();
    if (reason != "handed_over") socket_.close(ignored);
    auto keep_alive = shared_from_this();
    set_->remove(this);
  }

 private:
  bool peer_allowed(std::string& why) {
    if (cfg_.allowed_peer_uid < 0) return true;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(socket_.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      why = "SO_PEERCRED failed";
      return false;
    }
    if (int(cred.uid) == cfg_.allowed_peer_uid) return true;
    why = "peer uid " + std::to_string(cred.uid) + " pid " + std::to_string(cred.pid) + ", expected uid " +
          std::to_string(cfg_.allowed_peer_uid);
    return false;
  }

  void refuse(std::string_view reason, std::string_view detail) {
    LogLine("pipe_refused").kv("conn", id_).kv("reason", reason).kv("detail", detail).emit(host_.log());
    close(reason, detail);
  }

  void read() {
    const FrameResult f = npa::frame_request(buf_);
    if (f.kind == FrameResult::Kind::kError) return refuse(f.reason, f.detail);
    if (f.kind == FrameResult::Kind::kComplete) return on_request(f.size);
    const size_t have = buf_.size();
    buf_.resize(f.size);
    socket_.async_read_some(asio::buffer(buf_.data() + have, f.size - have),
                            [self = shared_from_this(), have](boost::system::error_code ec, size_t n) {
                              if (self->closed_) return;
                              self->buf_.resize(have + n);
                              if (ec) return self->refuse("read_error", ec.message());
                              self->read();
                            });
  }

  void on_request(size_t size) {
    if (size != buf_.size()) return refuse("npa_trailing_bytes", "data after the named-pipe request");
    npa::Request req;
    if (Status st = npa::parse_request(buf_, req); !st.ok()) return refuse("npa_bad_request", st.message());
    route_ = cfg_.router ? cfg_.router(req) : PipeRoute{};
    peer_ = PeerInfo{req.remote_client_addr + ":" + std::to_string(req.remote_client_port),
                     req.local_server_addr + ":" + std::to_string(req.local_server_port), route_.name};
    LogLine line("pipe_open", LogLevel::kDebug);
    line.kv("conn", id_)
        .kv("npa_level", uint64_t(req.level))
        .kv("transport", uint64_t(req.transport))
        .kv("peer", peer_.remote)
        .kv("local", peer_.local)
        .kv("account", req.account_name)
        .kv("authenticated", req.authenticated ? "yes" : "no");
    if (!req.session_info_decoded) line.kv("session_info", req.has_session_info ? "undecoded" : "none");
    if (!route_.factory) line.kv("refused", hex_status(route_.status));
    line.emit(host_.log());
    reply_ = npa::encode_reply(req.level, route_.factory ? 0 : route_.status);
    asio::async_write(socket_, asio::buffer(reply_), [self = shared_from_this()](boost::system::error_code ec, size_t) {
      if (self->closed_) return;
      if (ec) return self->refuse("write_error", ec.message());
      self->hand_over();
    });
  }

  // The reply is out: from here on the socket carries PDUs.
  void hand_over() {
    if (!route_.factory) return close("refused_by_router");
    std::unique_ptr<ConnectionHandler> handler = route_.factory->create(peer_);
    if (!handler) return refuse("no_handler", "the host's factory made no handler");
    timer_.cancel();
    auto conn = std::make_shared<PipeConnection>(std::move(socket_), npa::MessageFramer(host_.max_pdu_size()),
                                                 std::move(handler), peer_, host_.limits(), &host_.log(), set_, id_);
    close("handed_over");        // leaves the set and frees its slot ...
    if (!host_.try_reserve()) {  // ... which the connection takes again
      LogLine("conn_refused", LogLevel::kWarn)
          .kv("peer", peer_.remote)
          .kv("listener", peer_.listener_name)
          .kv("reason", "max_connections")
          .emit(host_.log());
      return;  // conn is dropped unstarted; its destructor closes the socket
    }
    set_->add(conn);
    conn->start();
  }

  local::socket socket_;
  asio::steady_timer timer_;
  const PipeListenerConfig& cfg_;
  ListenerHost& host_;
  ConnectionSet* set_;
  uint64_t id_;
  Bytes buf_;
  Bytes reply_;
  PipeRoute route_;
  PeerInfo peer_;
  bool closed_ = false;
};

}  // namespace

struct PipeListener::Impl {
  explicit Impl(PipeListenerConfig c) : cfg(std::move(c)) {}

  void accept_next() {
    WorkerSlot w = host->next_worker();
    acceptor->async_accept(
        *w.ctx, [this, w](boost::system::error_code ec, local::socket s) { on_accept(w, ec, std::move(s)); });
  }

  void on_accept(WorkerSlot w, boost::system::error_code ec, local::socket s) {
    mark_cloexec(s);
    if (host->stopping() || ec == asio::error::operation_aborted || !acceptor) return;
    if (ec) {
      LogLine("accept_error", LogLevel::kError)
          .kv("listener", cfg.socket_path)
          .kv("detail", ec.message())
          .emit(host->log());
      retry->expires_after(std::chrono::milliseconds(100));
      retry->async_wait([this](boost::system::error_code e) {
        if (!e && !host->stopping() && acceptor) accept_next();
      });
      return;
    }
    if (!host->try_reserve()) {
      LogLine("conn_refused", LogLevel::kWarn)
          .kv("listener", cfg.socket_path)
          .kv("reason", "max_connections")
          .emit(host->log());
      s.close(ec);
    } else {
      asio::post(*w.ctx, [this, w, s = std::move(s), id = host->next_connection_id()]() mutable {
        if (host->stopping()) {  // close_all may already have run on this worker
          boost::system::error_code ignored;
          s.close(ignored);
          host->release();
          return;
        }
        auto h = std::make_shared<Handshake>(std::move(s), cfg, *host, w.conns, id);
        w.conns->add(h);
        h->start();
      });
    }
    accept_next();
  }

  PipeListenerConfig cfg;
  ListenerHost* host = nullptr;
  std::unique_ptr<local::acceptor> acceptor;
  std::unique_ptr<asio::steady_timer> retry;
};

PipeListener::PipeListener(PipeListenerConfig cfg) : impl_(std::make_unique<Impl>(std::move(cfg))) {}

PipeListener::~PipeListener() { close(); }

Status PipeListener::open(ListenerHost& host) {
  Impl& m = *impl_;
  m.host = &host;
  std::error_code fec;
  // A socket left by a killed run would make bind fail; only a socket is ever replaced.
  if (std::filesystem::is_socket(m.cfg.socket_path, fec)) std::filesystem::remove(m.cfg.socket_path, fec);
  boost::system::error_code ec;
  m.acceptor = std::make_unique<local::acceptor>(host.accept_context());
  m.retry = std::make_unique<asio::steady_timer>(host.accept_context());
  open_cloexec(*m.acceptor, local(), ec);
  if (!ec) m.acceptor->bind(local::endpoint(m.cfg.socket_path), ec);
  if (!ec) m.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    m.acceptor.reset();
    return Status::IOError("named-pipe socket " + m.cfg.socket_path + ": " + ec.message());
  }
  LogLine("listen", LogLevel::kDebug).kv("listener", "pipe").kv("local", m.cfg.socket_path).emit(host.log());
  m.accept_next();
  return Status::Ok();
}

// Drops the acceptor here rather than in the destructor: its io_context belongs to the server
// and may be gone by then. Aborted accepts still queued see a null acceptor and stop.
void PipeListener::close() {
  Impl& m = *impl_;
  if (!m.acceptor) return;
  boost::system::error_code ignored;
  m.acceptor->close(ignored);
  m.retry->cancel();
  m.acceptor.reset();
  m.retry.reset();
  std::error_code fec;
  std::filesystem::remove(m.cfg.socket_path, fec);
}

}  // namespace perfsim::server
