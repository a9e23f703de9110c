// What a simulated host's endpoint mapper answers (C706 appendix O, MS-RPCE 3.1.1): ept_map for a
// registered interface over ncacn_ip_tcp returns the host's tower (its address and the port its
// winreg listener has); ept_lookup lists the registered entries, one batch per call, through a
// lookup handle; anything not registered gets EPT_S_NOT_REGISTERED. One Service per connection
// (the lookup handles are per association, as context handles are).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "epm/codec.h"
#include "rpc/interface.h"

namespace perfsim::epm {

struct Registration {
  rpc::SyntaxId interface;
  std::array<uint8_t, 4> ipv4{};  // network order
  uint16_t port = 0;
  std::string annotation;
};

// The endpoint mapper interface (C706 appendix O: opnums 0-6) over a Service.
const rpc::Interface& epm_interface();

class Service final : public rpc::InterfaceSession {
 public:
  explicit Service(std::vector<Registration> registered) : registered_(std::move(registered)) {}
  // 0 and the response stub (through epm_interface()), or a fault status for the association to send.
  uint32_t call(uint16_t opnum, ByteView in, Bytes& out);

  // The operations (epm_interface() rows).
  uint32_t ept_map(const MapRequest& req, MapResponse& resp);
  uint32_t ept_lookup(const LookupRequest& req, LookupResponse& resp);
  uint32_t ept_lookup_handle_free(const HandleFreeRequest& req, HandleFreeResponse& resp);
  template <class Resp>
  void reply(const Resp& r, ByteChain& out) {
    out = ByteChain(encode(r));
  }

  MapResponse map(const MapRequest& r) const;
  // Not const: issues, advances and frees lookup handles. A null handle starts a new lookup; a
  // batch that leaves more matches behind returns a handle to go on with, the last batch a null
  // handle (impacket's hept_lookup and rpcclient loop until then); no match at all is
  // EPT_S_NOT_REGISTERED. Returns false for a handle this association never issued (a fault).
  bool lookup(const LookupRequest& r, LookupResponse& out);

 private:
  bool matches(const LookupRequest& r, const Registration& reg) const;
  Bytes tower_of(const Registration& reg) const;

  std::vector<Registration> registered_;
  std::map<ContextHandle, size_t> lookups_;  // handle -> next registration to examine
  uint32_t next_handle_ = 1;
};

}  // namespace perfsim::epm
