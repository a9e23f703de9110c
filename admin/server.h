// The admin HTTP/1.1 server (Boost.Beast): one listening socket, one session object per
// connection, all on the server's own io_context thread, so nothing it does (a large series, a
// slow client) ever runs on or blocks the winreg workers. Requests go to AdminApi (api.h).
//
// Contract:
//  - start() binds ADDR:PORT (port 0 = any free one; loopback only unless allow_remote, else an
//    error naming --allow-remote) and gives the API the bound address and `hosts` for its Host
//    check (AdminApi::set_access) and starts the thread; stop() (and the destructor) closes the
//    acceptor and every connection and joins the thread.
//  - A request's header is bounded by max_header, its body by max_body: beyond them the answer is
//    413 (body) or 431 (header) with a JSON error, then the connection closes; a request that does
//    not parse gets 400. A connection idle for `timeout` is closed.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admin/api.h"
#include "core/status.h"

namespace perfsim::admin {

struct AdminConfig {
  std::string listen = "127.0.0.1:0";  // ADDR:PORT
  bool allow_remote = false;           // serve a non-loopback address (perfsim serve --allow-remote)
  size_t max_body = size_t(1) << 20;   // request body bytes (a fault plan, quirks)
  size_t max_header = 16384;           // request line and headers
  std::chrono::milliseconds timeout{30'000};
  // Host names the API answers besides loopback and the bound address (perfsim serve --admin-host;
  // api.h, AdminAccess).
  std::vector<std::string> hosts;
  std::string token;  // non-empty: every request must carry it (AdminAccess::token; token.h)
};

class AdminServer {
 public:
  AdminServer(AdminConfig cfg, std::shared_ptr<AdminApi> api);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  Status start();
  void stop();
  const std::string& address() const;  // as bound, after start()
  uint16_t port() const;               // the real port, after start()

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfsim::admin
