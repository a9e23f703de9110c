// The winreg DCE/RPC server's TCP transport (ncacn_ip_tcp). It listens on any number of
// addresses, each mapped to a HandlerFactory, frames PDUs (DcerpcFramer) and hands them to one
// handler per connection (Connection). Threading: `threads` workers, each running its own
// io_context; the acceptors live on worker 0 and hand accepted sockets to the workers round-robin,
// so a connection lives on one thread for its whole life and nothing on the data path locks.
//
// Guarantees: only loopback addresses are served unless allow_non_loopback is set; start() binds
// every listener or none (and starts no thread on failure); stop() closes listeners and
// connections and joins every thread before it returns, so the ports are free afterwards.
// Asio stays out of this header.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/handler.h"
#include "server/log.h"

namespace perfsim::server {

struct ListenerConfig {
  std::string address;                      // "127.0.0.1:4135", "[::1]:0", "localhost:0"; port 0 = any
  std::string name;                         // log/PeerInfo label; empty = `address`
  std::shared_ptr<HandlerFactory> factory;  // decides which simulated host serves this listener
};

class ExtraListener;  // listener_host.h: another transport on the same workers (e.g. smbd pipes)

struct ServerConfig {
  std::vector<ListenerConfig> listeners;
  std::vector<std::shared_ptr<ExtraListener>> extra_listeners;  // opened after the TCP listeners
  unsigned threads = 0;                                         // 0 = one per core
  bool allow_non_loopback = false;                              // serve addresses beyond this machine
  // Beyond it a new connection closes the oldest that has not authenticated where authentication
  // is required (admission.h), or, when there is none, is closed at accept (logged).
  size_t max_connections = 4096;
  std::chrono::milliseconds idle_timeout{300'000};  // no complete PDU for this long closes; 0 = never
  // Where authentication is required, a connection not authenticated this long after it opened
  // closes (reason=auth_timeout), whatever it sent; 0 = never.
  std::chrono::milliseconds auth_timeout{10'000};
  size_t max_pdu_size = 65535;         // frag_length above this closes the connection
  size_t write_queue_limit = 1 << 20;  // queued reply bytes at which a connection stops reading
  // Unread reply bytes of all connections together (reply_budget.h); 0 = no budget. Beyond it,
  // connections with replies queued stop reading and the longest-stalled readers are closed.
  size_t reply_budget = size_t(512) << 20;
  size_t read_buffer_base = 4096;  // first size of a connection's buffer for a PDU's beginning (idle: none)
  bool handle_signals = true;      // SIGINT/SIGTERM make run() return
  LogSink log;                     // empty = stderr_log_sink()
};

struct BoundListener {
  std::string name;
  std::string address;  // as bound, e.g. "127.0.0.1" or "::1"
  uint16_t port = 0;    // the real port, also when 0 was asked for
};

// Checks "ADDR:PORT" (IPv4, [IPv6] or localhost) and the loopback rule; fills the canonical address
// and port. Used by start(); exposed for command-line validation.
Status parse_listen_address(std::string_view text, bool allow_non_loopback, std::string& address, uint16_t& port);

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listener and starts the worker threads; returns once connections are accepted.
  Status start();
  // Valid after a successful start(): one entry per ServerConfig::listeners, in order.
  const std::vector<BoundListener>& bound() const;
  // start()s if needed, then blocks until stop() or a handled signal, then shuts down and joins.
  Status run();
  // Stops accepting, closes every connection (reason=shutdown), joins the threads. Idempotent;
  // callable from any thread. From a server thread (e.g. inside a handler) it only requests the
  // stop: run() or the destructor finishes it.
  void stop();
  // Connections currently open (accepted and not yet closed).
  size_t active_connections() const;
  // The reply budget's accounting (all zero without a budget).
  struct ReplyStats {
    size_t queued = 0, peak = 0, limit = 0;
    uint64_t evictions = 0;
  };
  ReplyStats reply_stats() const;
  // Connections refused at accept (every slot taken by authenticated ones), and connections closed
  // to make room for a new one because they had not authenticated.
  struct AdmissionStats {
    uint64_t refused = 0, evicted = 0;
    size_t untrusted = 0;  // open now and not yet authenticated where authentication is required
  };
  AdmissionStats admission_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfsim::server
