#include "server/server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

#include "server/cloexec.h"
#include "server/connection.h"
#include "server/framer.h"
#include "server/listener_host.h"

namespace perfsim::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using TcpConnection = Connection<tcp::socket, DcerpcFramer>;

namespace {

bool is_loopback(const asio::ip::address& a) {
  if (a.is_v4()) return a.to_v4().is_loopback();
  const auto v6 = a.to_v6();
  return v6.is_loopback() || (v6.is_v4_mapped() && asio::ip::make_address_v4(asio::ip::v4_mapped, v6).is_loopback());
}

std::string endpoint_string(const tcp::endpoint& ep) {
  std::string host = ep.address().to_string();
  if (ep.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(ep.port());
}

template <class Get>
std::string endpoint_string_or(Get get) {
  boost::system::error_code ec;
  tcp::endpoint ep = get(ec);
  return ec ? std::string("?") : endpoint_string(ep);
}

struct Worker {
  explicit Worker(std::atomic<size_t>* active) : ctx(1), guard(asio::make_work_guard(ctx)), conns(active) {}
  asio::io_context ctx;
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  ConnectionSet conns;  // touched only by this worker's thread
  std::thread thread;
};

struct Listener {
  explicit Listener(asio::io_context& ctx) : acceptor(ctx), retry(ctx) {}
  std::string name;
  std::shared_ptr<HandlerFactory> factory;
  tcp::acceptor acceptor;
  asio::steady_timer retry;  // paces accepting again after an accept error (e.g. out of fds)
};

}  // namespace

Status parse_listen_address(std::string_view text, bool allow_non_loopback, std::string& address, uint16_t& port) {
  const std::string quoted = "listen address '" + std::string(text) + "'";
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Status::InvalidArgument(quoted + ": expected ADDR:PORT");
  std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return Status::InvalidArgument(quoted + ": write an IPv6 address in brackets, e.g. [::1]:4135");
  }
  unsigned value = 0;
  auto [end, err] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (port_text.empty() || err != std::errc() || end != port_text.data() + port_text.size() || value > 65535)
    return Status::InvalidArgument(quoted + ": port must be a number from 0 to 65535");
  std::string host_text = host == "localhost" ? "127.0.0.1" : std::string(host);
  boost::system::error_code ec;
  asio::ip::address a = asio::ip::make_address(host_text, ec);
  if (ec) return Status::InvalidArgument(quoted + ": '" + host_text + "' is not an IP address");
  if (!is_loopback(a) && !allow_non_loopback)
    return Status::InvalidArgument(quoted + ": " + a.to_string() +
                                   " is not a loopback address; serving beyond this machine must be asked for "
                                   "(perfsim serve --allow-remote)");
  address = a.to_string();
  port = uint16_t(value);
  return Status::Ok();
}

struct Server::Impl {
  explicit Impl(ServerConfig c)
      : cfg(std::move(c)),
        framer(cfg.max_pdu_size),
        log(cfg.log ? cfg.log : stderr_log_sink()),
        budget(cfg.reply_budget ? cfg.reply_budget : SIZE_MAX),
        limits{cfg.idle_timeout,     cfg.auth_timeout,
               &admission,           std::max<size_t>(cfg.write_queue_limit, 1),
               cfg.read_buffer_base, cfg.reply_budget ? &budget : nullptr} {}

  Status start();
  Status bind(const ListenerConfig& lc);
  void accept_next(Listener& l);
  void on_accept(Listener& l, Worker& w, boost::system::error_code ec, tcp::socket s);
  void start_connection(Worker& w, tcp::socket s, std::unique_ptr<ConnectionHandler> h, PeerInfo peer, uint64_t id);
  Status abandon_start(size_t extras_opened, Status why);
  bool admit();
  void request_stop();
  void shutdown_and_join();
  bool on_worker_thread() const;

  ServerConfig cfg;
  DcerpcFramer framer;
  LogSink log;
  ReplyBudget budget;   // before limits, which points at it
  Admission admission;  // the same
  ConnectionLimits limits;
  std::atomic<size_t> active{0};
  std::atomic<uint64_t> refused{0};  // at max_connections with no untrusted connection to close
  std::atomic<bool> stopping{false};

  // Declared before the objects that use their io_contexts, so destroyed after them.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread::id> worker_ids;
  std::vector<std::unique_ptr<Listener>> listeners;
  std::unique_ptr<asio::signal_set> signals;
  std::vector<BoundListener> bound;

  size_t next_worker = 0;  // accept thread only
  uint64_t next_id = 1;    // accept thread only
  struct Host;
  std::unique_ptr<Host> host;  // lent to extra_listeners

  enum class State { kIdle, kRunning, kDone };
  std::mutex mu;  // guards state and stop_requested (never taken on the data path)
  std::condition_variable cv;
  State state = State::kIdle;
  bool stop_requested = false;
  std::mutex shutdown_mu;  // one shutdown at a time; later callers wait for it to finish
};

// What extra_listeners get to see of the server.
struct Server::Impl::Host final : ListenerHost {
  explicit Host(Impl& impl) : s(impl) {}
  asio::io_context& accept_context() override { return s.workers[0]->ctx; }
  WorkerSlot next_worker() override {
    Worker& w = *s.workers[s.next_worker++ % s.workers.size()];
    return {&w.ctx, &w.conns};
  }
  uint64_t next_connection_id() override { return s.next_id++; }
  bool try_reserve() override {
    if (!s.admit()) return false;
    s.active.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void release() override { s.active.fetch_sub(1, std::memory_order_relaxed); }
  bool stopping() const override { return s.stopping; }
  const ConnectionLimits& limits() const override { return s.limits; }
  const LogSink& log() const override { return s.log; }
  size_t max_pdu_size() const override { return s.cfg.max_pdu_size; }
  Impl& s;
};

Status Server::Impl::bind(const ListenerConfig& lc) {
  std::string address;
  uint16_t port = 0;
  if (!lc.factory) return Status::InvalidArgument("listener '" + lc.address + "' has no handler factory");
  Status st = parse_listen_address(lc.address, cfg.allow_non_loopback, address, port);
  if (!st.ok()) return st;
  auto l = std::make_unique<Listener>(workers[0]->ctx);
  l->name = lc.name.empty() ? lc.address : lc.name;
  l->factory = lc.factory;
  tcp::endpoint ep(asio::ip::make_address(address), port);
  boost::system::error_code ec;
  open_cloexec(l->acceptor, ep.protocol(), ec);
  if (!ec) l->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) l->acceptor.bind(ep, ec);
  if (!ec) l->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::IOError("listen " + lc.address + ": " + ec.message());
  tcp::endpoint actual = l->acceptor.local_endpoint(ec);
  if (ec) return Status::IOError("listen " + lc.address + ": " + ec.message());
  bound.push_back({l->name, actual.address().to_string(), actual.port()});
  LogLine("listen", LogLevel::kDebug).kv("listener", l->name).kv("local", endpoint_string(actual)).emit(log);
  listeners.push_back(std::move(l));
  return Status::Ok();
}

// Closes what start() bound so far: all or nothing.
Status Server::Impl::abandon_start(size_t extras_opened, Status why) {
  for (size_t i = 0; i < extras_opened; ++i) cfg.extra_listeners[i]->close();
  listeners.clear();
  bound.clear();
  workers.clear();
  return why;
}

Status Server::Impl::start() {
  std::lock_guard lk(mu);
  if (state != State::kIdle) return Status::InvalidArgument("server already started");
  if (cfg.listeners.empty() && cfg.extra_listeners.empty()) return Status::InvalidArgument("no listener configured");
  unsigned n = cfg.threads ? cfg.threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i) workers.push_back(std::make_unique<Worker>(&active));
  host = std::make_unique<Host>(*this);
  for (const ListenerConfig& lc : cfg.listeners) {
    Status st = bind(lc);
    if (!st.ok()) return abandon_start(0, st);
  }
  for (size_t i = 0; i < cfg.extra_listeners.size(); ++i) {
    Status st = cfg.extra_listeners[i]->open(*host);
    if (!st.ok()) return abandon_start(i, st);
  }
  if (cfg.handle_signals) {
    signals = std::make_unique<asio::signal_set>(workers[0]->ctx, SIGINT, SIGTERM);
    signals->async_wait([this](boost::system::error_code ec, int sig) {
      if (ec) return;
      LogLine("signal").kv("signal", uint64_t(sig)).emit(log);
      request_stop();
    });
  }
  for (auto& l : listeners) accept_next(*l);
  for (auto& w : workers) {
    w->thread = std::thread([ctx = &w->ctx] { ctx->run(); });
    worker_ids.push_back(w->thread.get_id());
  }
  state = State::kRunning;
  return Status::Ok();
}

void Server::Impl::accept_next(Listener& l) {
  Worker& w = *workers[next_worker++ % workers.size()];
  l.acceptor.async_accept(
      w.ctx, [this, &l, &w](boost::system::error_code ec, tcp::socket s) { on_accept(l, w, ec, std::move(s)); });
}

void Server::Impl::on_accept(Listener& l, Worker& w, boost::system::error_code ec, tcp::socket s) {
  mark_cloexec(s);
  if (stopping || ec == asio::error::operation_aborted) return;
  if (ec) {
    LogLine("accept_error", LogLevel::kError).kv("listener", l.name).kv("detail", ec.message()).emit(log);
    l.retry.expires_after(std::chrono::milliseconds(100));
    l.retry.async_wait([this, &l](boost::system::error_code e) {
      if (!e && !stopping) accept_next(l);
    });
    return;
  }
  PeerInfo peer{endpoint_string_or([&](auto& e) { return s.remote_endpoint(e); }),
                endpoint_string_or([&](auto& e) { return s.local_endpoint(e); }), l.name};
  std::unique_ptr<ConnectionHandler> handler;
  const char* why = nullptr;
  if (!admit()) {
    why = "max_connections";
  } else if (!(handler = l.factory->create(peer))) {
    why = "no_handler";
  }
  if (why) {
    LogLine("conn_refused", LogLevel::kWarn).kv("peer", peer.remote).kv("listener", l.name).kv("reason", why).emit(log);
    s.close(ec);
  } else {
    active.fetch_add(1, std::memory_order_relaxed);
    s.set_option(tcp::no_delay(true), ec);  // request/response traffic: don't wait for Nagle
    asio::post(w.ctx,
               [this, &w, s = std::move(s), h = std::move(handler), peer = std::move(peer), id = next_id++]() mutable {
                 start_connection(w, std::move(s), std::move(h), std::move(peer), id);
               });
  }
  accept_next(l);
}

// Whether a new connection may have a slot (accept thread only; Admission::admit); counts the refusals.
bool Server::Impl::admit() {
  if (admission.admit(active.load(std::memory_order_relaxed), cfg.max_connections)) return true;
  refused.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void Server::Impl::start_connection(Worker& w, tcp::socket s, std::unique_ptr<ConnectionHandler> h, PeerInfo peer,
                                    uint64_t id) {
  if (stopping) {  // accepted while the server was shutting down: close_all may already have run
    boost::system::error_code ignored;
    s.close(ignored);
    active.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  auto c =
      std::make_shared<TcpConnection>(std::move(s), framer, std::move(h), std::move(peer), limits, &log, &w.conns, id);
  w.conns.add(c);
  c->start();
}

bool Server::Impl::on_worker_thread() const {
  return std::find(worker_ids.begin(), worker_ids.end(), std::this_thread::get_id()) != worker_ids.end();
}

void Server::Impl::request_stop() {
  {
    std::lock_guard lk(mu);
    stop_requested = true;
  }
  cv.notify_all();
}

void Server::Impl::shutdown_and_join() {
  std::lock_guard serial(shutdown_mu);
  {
    std::lock_guard lk(mu);
    if (state != State::kRunning) return;
  }
  stopping = true;
  asio::post(workers[0]->ctx, [this] {
    boost::system::error_code ignored;
    for (auto& l : listeners) {
      l->acceptor.close(ignored);
      l->retry.cancel();
    }
    for (auto& x : cfg.extra_listeners) x->close();
    if (signals) signals->cancel();
  });
  for (auto& w : workers) asio::post(w->ctx, [w = w.get()] { w->conns.close_all("shutdown"); });
  // Without work guards each io_context returns once its closed connections' handlers have run.
  for (auto& w : workers) w->guard.reset();
  for (auto& w : workers) w->thread.join();
  signals.reset();  // gives SIGINT/SIGTERM back to their previous disposition
  listeners.clear();
  LogLine("server_stop").emit(log);
  std::lock_guard lk(mu);
  state = State::kDone;
}

Server::Server(ServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Server::~Server() { stop(); }

Status Server::start() { return impl_->start(); }

const std::vector<BoundListener>& Server::bound() const { return impl_->bound; }

Status Server::run() {
  {
    std::unique_lock lk(impl_->mu);
    bool idle = impl_->state == Impl::State::kIdle;
    lk.unlock();
    if (idle) {
      Status st = impl_->start();
      if (!st.ok()) return st;
    }
    lk.lock();
    impl_->cv.wait(lk, [&] { return impl_->stop_requested; });
  }
  impl_->shutdown_and_join();
  return Status::Ok();
}

void Server::stop() {
  impl_->request_stop();
  if (impl_->on_worker_thread()) return;  // joining our own thread would deadlock
  impl_->shutdown_and_join();
}

size_t Server::active_connections() const { return impl_->active.load(std::memory_order_relaxed); }

Server::ReplyStats Server::reply_stats() const {
  if (!impl_->limits.budget) return {};
  const ReplyBudget& b = impl_->budget;
  return {b.queued(), b.peak(), b.limit(), b.evictions()};
}

Server::AdmissionStats Server::admission_stats() const {
  return {impl_->refused.load(std::memory_order_relaxed), impl_->admission.evictions(), impl_->admission.untrusted()};
}

}  // namespace perfsim::server
