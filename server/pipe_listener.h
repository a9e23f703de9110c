// The named-pipe backend smbd hands `\PIPE\<name>` opens to: a unix stream socket at
// `<external_rpc_pipe:socket_dir>/np/<name>`. Each accepted socket must belong to root (smbd;
// SO_PEERCRED), sends one NPA request (npa.h), gets the reply mirroring its level, and then
// carries DCE/RPC PDUs in message mode through the same Connection and handler stack as TCP.
//
// Guarantees: runs on a Server's worker threads (ServerConfig::extra_listeners); a peer that is
// not allowed, a malformed or oversized request, or no request within handshake_timeout closes
// that socket only (logged with event=pipe_refused); the router picks the handler factory per
// request (by local_server_addr: one simulated host per address) or refuses the open with an
// NTSTATUS. open() creates the socket (replacing a stale one) and close() removes it.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "server/handler.h"
#include "server/listener_host.h"
#include "server/npa.h"

namespace perfsim::server {

// What to do with one open: a factory to serve it, or an NTSTATUS refusing it.
struct PipeRoute {
  std::shared_ptr<HandlerFactory> factory;  // null: refuse with `status`
  uint32_t status = 0xC0000034;             // STATUS_OBJECT_NAME_NOT_FOUND
  std::string name;                         // listener_name for logs and PeerInfo
};
using PipeRouter = std::function<PipeRoute(const npa::Request&)>;

struct PipeListenerConfig {
  std::string socket_path;  // ".../np/winreg"
  PipeRouter router;
  int allowed_peer_uid = 0;  // smbd runs as root; -1 = anyone (tests)
  std::chrono::milliseconds handshake_timeout{10'000};
};

class PipeListener final : public ExtraListener {
 public:
  explicit PipeListener(PipeListenerConfig cfg);
  ~PipeListener() override;
  Status open(ListenerHost& host) override;
  void close() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfsim::server
