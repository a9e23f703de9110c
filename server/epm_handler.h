// The endpoint mapper on a host address (`perfsim serve --epm`): one listener per address the
// hosts use, answering ept_map/ept_lookup (epm/) about the winreg listeners bound on that address.
// A client that binds `ncacn_ip_tcp:ADDR` with no port asks here first (MS-RPCE 2.1.1.1).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "epm/service.h"
#include "rpc/association.h"
#include "server/handler.h"
#include "server/rpc_handler.h"
#include "server/server.h"

namespace perfsim::server {

// The registrations of each address, written once the listeners are bound (their ports may be
// ephemeral) and read when a mapper connection opens (on the accepting thread).
class EndpointRegistry {
 public:
  void set(const std::string& address, std::vector<epm::Registration> regs);
  std::vector<epm::Registration> at(const std::string& address) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::vector<epm::Registration>>> by_address_;
};

// A mapper connection: the generic RpcHandler over the epm interface table.
class EpmHandler final : public RpcHandler {
 public:
  EpmHandler(const rpc::AssociationConfig& cfg, std::vector<epm::Registration> registered)
      : RpcHandler(cfg, epm::epm_interface(), std::make_unique<epm::Service>(std::move(registered))) {}
};

class EpmHandlerFactory final : public HandlerFactory {
 public:
  EpmHandlerFactory(std::shared_ptr<const EndpointRegistry> registry, std::string address)
      : registry_(std::move(registry)), address_(std::move(address)) {}
  std::unique_ptr<ConnectionHandler> create(const PeerInfo& peer) override;

 private:
  std::shared_ptr<const EndpointRegistry> registry_;
  std::string address_;  // the address whose registrations this listener answers about
};

struct EpmSetup {
  std::shared_ptr<EndpointRegistry> registry;
  size_t hosts = 0;  // ServerConfig::listeners[0, hosts) are the winreg listeners
  uint16_t port = 0;
  std::vector<std::string> addresses;  // one mapper listener each, ServerConfig::listeners[hosts...]
};

// "" or "default" -> 135 (root only); else a port number. Names the option in its errors.
Status parse_epm_port(const std::string& text, uint16_t& port);
// Adds one mapper listener on `port` per distinct IPv4 address of cfg.listeners (the winreg
// listeners, all of them already there). IPv6 hosts are left out: a tower's IP floor is IPv4.
Status prepare_epm(uint16_t port, ServerConfig& cfg, EpmSetup& out);
// After Server::start(): registers winreg at every bound host endpoint, by address.
void register_endpoints(const std::vector<BoundListener>& bound, const EpmSetup& e);

}  // namespace perfsim::server
