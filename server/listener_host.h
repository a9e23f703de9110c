// The seam through which a listener of another transport (smbd's named pipes, pipe_listener.h)
// runs on a Server's worker threads. The server owns the threads and the connection accounting;
// the listener owns its socket and its handshake. Asio is visible here, unlike in server.h.
//
// Contract: open() is called from Server::start() before any thread runs and must bind or fail
// (start() then fails as a whole); close() is called on the accept context's thread at shutdown,
// before the workers' connections are closed. A connection counts toward max_connections from
// try_reserve() until its Connection leaves the worker's ConnectionSet, or until release() when
// it never gets that far.
#pragma once
#include <cstdint>
#include <string>
#include <utility>  // before Asio: Boost 1.74 uses std::exchange without including it

#include <boost/asio.hpp>

#include "core/status.h"
#include "server/connection.h"
#include "server/log.h"

namespace perfsim::server {

struct WorkerSlot {
  boost::asio::io_context* ctx = nullptr;
  ConnectionSet* conns = nullptr;  // touch only on ctx's thread
};

class ListenerHost {
 public:
  virtual ~ListenerHost() = default;
  virtual boost::asio::io_context& accept_context() = 0;  // worker 0
  virtual WorkerSlot next_worker() = 0;                   // round-robin; accept thread only
  virtual uint64_t next_connection_id() = 0;              // accept thread only
  virtual bool try_reserve() = 0;                         // false at max_connections
  virtual void release() = 0;
  virtual bool stopping() const = 0;
  virtual const ConnectionLimits& limits() const = 0;
  virtual const LogSink& log() const = 0;
  virtual size_t max_pdu_size() const = 0;
};

class ExtraListener {
 public:
  virtual ~ExtraListener() = default;
  virtual Status open(ListenerHost& host) = 0;
  virtual void close() = 0;
};

}  // namespace perfsim::server
