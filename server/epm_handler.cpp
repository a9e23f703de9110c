#include "server/epm_handler.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/config.h"

namespace perfsim::server {
namespace {

bool ipv4_of(const std::string& address, std::array<uint8_t, 4>& out) {
  in_addr a{};
  if (::inet_pton(AF_INET, address.c_str(), &a) != 1) return false;
  std::memcpy(out.data(), &a, 4);  // in_addr holds network order
  return true;
}

std::string port_of(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  return colon == std::string::npos ? std::string() : endpoint.substr(colon + 1);
}

}  // namespace

void EndpointRegistry::set(const std::string& address, std::vector<epm::Registration> regs) {
  std::lock_guard lock(mu_);
  for (auto& [a, r] : by_address_)
    if (a == address) {
      r = std::move(regs);
      return;
    }
  by_address_.emplace_back(address, std::move(regs));
}

std::vector<epm::Registration> EndpointRegistry::at(const std::string& address) const {
  std::lock_guard lock(mu_);
  for (const auto& [a, r] : by_address_)
    if (a == address) return r;
  return {};
}

std::unique_ptr<ConnectionHandler> EpmHandlerFactory::create(const PeerInfo& peer) {
  rpc::AssociationConfig cfg;  // the interface comes from the table (RpcHandler)
  cfg.secondary_address = port_of(peer.local);
  std::vector<epm::Registration> regs = registry_->at(address_);
  // A host bound to any address (0.0.0.0, --allow-remote) is reached at the connection's own address.
  std::array<uint8_t, 4> local{};
  const std::string local_addr = peer.local.substr(0, peer.local.rfind(':'));
  if (ipv4_of(local_addr, local))
    for (epm::Registration& r : regs)
      if (r.ipv4 == std::array<uint8_t, 4>{}) r.ipv4 = local;
  return std::make_unique<EpmHandler>(cfg, std::move(regs));
}

Status parse_epm_port(const std::string& text, uint16_t& port) {
  if (text.empty() || text == "default") {
    port = 135;  // the well-known port (MS-RPCE 2.1.1.1); binding it needs root
    if (::geteuid() != 0)
      return Status::InvalidArgument("--epm without a port listens on 135, which needs root; give --epm=PORT");
    return Status::Ok();
  }
  uint32_t value = 0;
  if (config::parse_uint_as(text, "--epm", value).ok() && value >= 1 && value <= 65535) {
    port = uint16_t(value);
    return Status::Ok();
  }
  return Status::InvalidArgument("--epm=" + text + ": the port must be a number from 1 to 65535");
}

Status prepare_epm(uint16_t port, ServerConfig& cfg, EpmSetup& out) {
  out.registry = std::make_shared<EndpointRegistry>();
  out.hosts = cfg.listeners.size();
  out.port = port;
  for (size_t i = 0; i < out.hosts; ++i) {
    std::string address;
    uint16_t unused = 0;
    if (Status st = parse_listen_address(cfg.listeners[i].address, cfg.allow_non_loopback, address, unused); !st.ok())
      return st;
    std::array<uint8_t, 4> ip{};
    if (!ipv4_of(address, ip) || std::find(out.addresses.begin(), out.addresses.end(), address) != out.addresses.end())
      continue;
    out.addresses.push_back(address);
  }
  for (const std::string& a : out.addresses)
    cfg.listeners.push_back({a + ":" + std::to_string(port), "epm " + a + ":" + std::to_string(port),
                             std::make_shared<EpmHandlerFactory>(out.registry, a)});
  return Status::Ok();
}

void register_endpoints(const std::vector<BoundListener>& bound, const EpmSetup& e) {
  for (const std::string& a : e.addresses) {
    std::vector<epm::Registration> regs;
    for (size_t i = 0; i < e.hosts && i < bound.size(); ++i) {
      epm::Registration r{rpc::winreg_syntax(), {}, bound[i].port, ""};
      if (bound[i].address == a && ipv4_of(a, r.ipv4)) regs.push_back(r);
    }
    e.registry->set(a, std::move(regs));
  }
}

}  // namespace perfsim::server
