#include "epm/service.h"

#include "core/status.h"

namespace perfsim::epm {
namespace {

using rpc::kFaultAccessDenied;
using rpc::kFaultContextMismatch;  // a lookup handle we never gave

// A requested version is served by a registration of the same major and an equal or newer minor
// (C706 2.5: "compatible").
bool compatible(const rpc::SyntaxId& want, const rpc::SyntaxId& have) {
  return want.uuid == have.uuid && want.version_major == have.version_major && want.version_minor <= have.version_minor;
}

// ept_lookup's vers_option (C706 appendix O: rpc_c_vers_*).
bool version_matches(uint32_t option, const InterfaceId& want, const rpc::SyntaxId& have) {
  switch (option) {
    case 1:  // all
      return true;
    case 2:  // compatible
      return want.version_major == have.version_major && want.version_minor <= have.version_minor;
    case 3:  // exact
      return want.version_major == have.version_major && want.version_minor == have.version_minor;
    case 4:  // major only
      return want.version_major == have.version_major;
    case 5:  // up to
      return have.version_major < want.version_major ||
             (have.version_major == want.version_major && have.version_minor <= want.version_minor);
    default:
      return false;
  }
}

// The tower a client asks ept_map about: interface, NDR, ncacn, TCP.
bool wants_ip_tcp(const std::vector<Floor>& floors, rpc::SyntaxId& interface) {
  rpc::SyntaxId transfer;
  if (floors.size() < 4 || !parse_syntax_floor(floors[0], interface).ok() ||
      !parse_syntax_floor(floors[1], transfer).ok())
    return false;
  return transfer == rpc::ndr20_syntax() && floors[2].protocol() == kProtoNcacn && floors[3].protocol() == kProtoTcp;
}

}  // namespace

Bytes Service::tower_of(const Registration& reg) const {
  return build_floors(tcp_tower_floors({reg.interface, rpc::ndr20_syntax(), reg.port, reg.ipv4}));
}

MapResponse Service::map(const MapRequest& r) const {
  MapResponse resp;
  resp.max_towers = r.max_towers;
  std::vector<Floor> floors;
  rpc::SyntaxId want;
  if (r.map_tower && parse_floors(*r.map_tower, floors).ok() && wants_ip_tcp(floors, want)) {
    for (const Registration& reg : registered_)
      if (compatible(want, reg.interface) && resp.towers.size() < r.max_towers) resp.towers.push_back(tower_of(reg));
  }
  // Every match fits in one answer (a host registers each interface once), so no handle is kept.
  if (resp.towers.empty()) resp.status = kEptNotRegistered;
  return resp;
}

bool Service::matches(const LookupRequest& r, const Registration& reg) const {
  const bool by_if = r.inquiry_type == 1 || r.inquiry_type == 3;
  const bool by_obj = r.inquiry_type == 2 || r.inquiry_type == 3;
  if (by_obj && r.object && !(*r.object == rpc::Uuid{})) return false;  // registrations have the nil object
  if (by_if) {
    if (!r.interface_id || !(r.interface_id->uuid == reg.interface.uuid)) return false;
    if (!version_matches(r.vers_option, *r.interface_id, reg.interface)) return false;
  }
  return true;
}

bool Service::lookup(const LookupRequest& r, LookupResponse& out) {
  out = {};
  out.max_ents = r.max_ents;
  size_t pos = 0;
  if (!r.entry_handle.null()) {
    auto it = lookups_.find(r.entry_handle);
    if (it == lookups_.end()) return false;
    pos = it->second;
    lookups_.erase(it);
  }
  for (; pos < registered_.size() && out.entries.size() < r.max_ents; ++pos) {
    const Registration& reg = registered_[pos];
    if (matches(r, reg)) out.entries.push_back({rpc::Uuid{}, tower_of(reg), reg.annotation});
  }
  bool more = false;
  for (size_t p = pos; p < registered_.size() && !more; ++p) more = matches(r, registered_[p]);
  if (out.entries.empty()) out.status = kEptNotRegistered;  // nothing (more) matches
  if (!more) return true;                                   // done: a null handle ends the client's loop
  ContextHandle h;
  const uint32_t id = next_handle_++;
  store_le32(&h.bytes[4], id);  // attributes 0, then a uuid unique on this association
  h.bytes[8] = 0x45;            // 'E': never all zero
  lookups_[h] = pos;
  out.entry_handle = h;
  return true;
}

uint32_t Service::ept_map(const MapRequest& req, MapResponse& resp) {
  resp = map(req);
  return 0;
}

uint32_t Service::ept_lookup(const LookupRequest& req, LookupResponse& resp) {
  return lookup(req, resp) ? 0 : kFaultContextMismatch;
}

uint32_t Service::ept_lookup_handle_free(const HandleFreeRequest& req, HandleFreeResponse&) {
  if (!req.entry_handle.null() && !lookups_.erase(req.entry_handle)) return kFaultContextMismatch;
  return 0;
}

namespace {

// ept_insert, ept_delete, ept_inq_object, ept_mgmt_delete: a remote client may not change or
// manage the map (Windows refuses remote registration), whatever the stub holds.
uint32_t refuse_remote(rpc::InterfaceSession&, ByteView, ByteChain&) { return kFaultAccessDenied; }

}  // namespace

const rpc::Interface& epm_interface() {
  using rpc::operation;
  static constexpr rpc::Operation kOperations[] = {
      {0, "ept_insert", &refuse_remote},
      {1, "ept_delete", &refuse_remote},
      operation<&Service::ept_lookup>(kOpLookup, "ept_lookup"),
      operation<&Service::ept_map>(kOpMap, "ept_map"),
      operation<&Service::ept_lookup_handle_free>(kOpLookupHandleFree, "ept_lookup_handle_free"),
      {5, "ept_inq_object", &refuse_remote},
      {kOpMgmtDelete, "ept_mgmt_delete", &refuse_remote},
  };
  static const rpc::Interface kEpm{"epmapper", epm_syntax(), kOperations};
  return kEpm;
}

uint32_t Service::call(uint16_t opnum, ByteView in, Bytes& out) {
  ByteChain chain;
  const uint32_t fault = epm_interface().call(*this, opnum, in, chain);
  out = chain.flatten();
  return fault;
}

}  // namespace perfsim::epm
