// A simulated host served over ncacn_ip_tcp on 127.0.0.1 (any free port) by a serve run in this
// process (serve/run.h): what most tests point their clients at, instead of each building one.
//
// Guarantees: start() binds and starts the workers, or says why not; stop() (also the destructor)
// joins every thread, so the port is free afterwards. The server never touches signal handling and
// logs nowhere unless `log` is given.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>

#include "core/status.h"
#include "journal/recorder.h"
#include "replayer/host.h"
#include "rpc/association.h"
#include "serve/run.h"
#include "server/server.h"

namespace perfsim::testing {

struct ServeOptions {
  unsigned threads = 1;
  std::string address = "127.0.0.1";   // the loopback address to listen on (any free port)
  server::LogSink log;                 // empty: discard the server's log lines
  rpc::AssociationConfig association;  // per-connection DCE/RPC limits
  std::chrono::milliseconds idle_timeout{300'000};
  size_t max_connections = 4096;
  double auth_timeout_s = 10;  // under require_auth: how long a connection may stay unauthenticated
  size_t max_pdu_size = 65535;
  std::shared_ptr<journal::Recorder> recorder;  // journal and metrics of every call; null: none
};

class ServedHost {
 public:
  explicit ServedHost(std::shared_ptr<replayer::SimulatedHost> host, ServeOptions opt = {});
  ~ServedHost() { stop(); }
  ServedHost(const ServedHost&) = delete;
  ServedHost& operator=(const ServedHost&) = delete;

  Status start();
  void stop();
  uint16_t port() const { return port_; }
  server::Server& server();  // after start()
  const std::shared_ptr<replayer::SimulatedHost>& host() const { return host_; }

 private:
  std::shared_ptr<replayer::SimulatedHost> host_;
  ServeOptions opt_;
  std::unique_ptr<serve::ServeRun> run_;
  uint16_t port_ = 0;
};

}  // namespace perfsim::testing
