// The endpoint mapper's wire forms: protocol towers (C706 appendix L: a floor count, then per
// floor a left-hand side naming a protocol and a right-hand side holding its data) and the NDR
// stubs of ept_lookup (opnum 2), ept_map (3) and ept_lookup_handle_free (4) (C706 appendix O,
// MS-RPCE 2.2.1.2 and 3.1.1 for the range limits). No semantics: service.h decides the answers.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"
#include "rpc/pdu.h"

namespace perfsim::epm {

// The endpoint mapper interface: e1af8308-5d1f-11c9-91a4-08002b14a0fa v3.0.
rpc::SyntaxId epm_syntax();

inline constexpr uint16_t kOpLookup = 2;
inline constexpr uint16_t kOpMap = 3;
inline constexpr uint16_t kOpLookupHandleFree = 4;
inline constexpr uint16_t kOpMgmtDelete = 6;  // the last opnum of the interface

// ept_* status values (C706 appendix O: ept_s_*; MS-RPCE 2.2.1.2.5 for EPT_S_NOT_REGISTERED).
inline constexpr uint32_t kEptNotRegistered = 0x16c9a0d6;
inline constexpr uint32_t kEptMaxEntries = 500;  // MS-RPCE: max_towers / max_ents are range(0,500)

// Floor protocol identifiers (C706 appendix I / L, MS-RPCE 2.2.1.1.x).
inline constexpr uint8_t kProtoUuid = 0x0d;       // an interface or transfer syntax, with version
inline constexpr uint8_t kProtoNcacn = 0x0b;      // connection-oriented RPC
inline constexpr uint8_t kProtoTcp = 0x07;        // TCP port (big-endian)
inline constexpr uint8_t kProtoIp = 0x09;         // IPv4 address (big-endian)
inline constexpr uint8_t kProtoNamedPipe = 0x0f;  // ncacn_np pipe name

struct Floor {
  Bytes lhs;  // protocol id octet, then its data
  Bytes rhs;
  uint8_t protocol() const { return lhs.empty() ? 0 : lhs[0]; }
};

// The parts of a tower perfsim answers about: an ncacn_ip_tcp binding of one interface.
struct TcpTower {
  rpc::SyntaxId interface;
  rpc::SyntaxId transfer;
  uint16_t port = 0;
  std::array<uint8_t, 4> ipv4{};  // network order
};

// A tower's octet string <-> floors. Parsing is bounds-checked and names the offset of a problem.
Status parse_floors(ByteView tower, std::vector<Floor>& out);
Bytes build_floors(const std::vector<Floor>& floors);
// Floors 1-2 (interface, transfer syntax) of any tower; the protocol floors stay in `rest`.
Status parse_syntax_floor(const Floor& f, rpc::SyntaxId& out);
Floor syntax_floor(const rpc::SyntaxId& s);
// The five floors of ncacn_ip_tcp: interface, transfer syntax, ncacn (minor 0), TCP port, IP.
std::vector<Floor> tcp_tower_floors(const TcpTower& t);

// policy_handle / ept_lookup_handle_t: 4-byte attributes + 16-byte uuid; all zero = none.
struct ContextHandle {
  std::array<uint8_t, 20> bytes{};
  bool null() const;
  auto operator<=>(const ContextHandle&) const = default;
};

struct MapRequest {
  std::optional<rpc::Uuid> object;
  std::optional<Bytes> map_tower;  // the tower's octet string; nullopt = NULL pointer
  ContextHandle entry_handle;
  uint32_t max_towers = 0;
};
struct MapResponse {
  ContextHandle entry_handle;
  uint32_t max_towers = 0;    // the array's size_is (the request's max_towers)
  std::vector<Bytes> towers;  // octet strings, num_towers of them
  uint32_t status = 0;
};

// rpc_if_id_t
struct InterfaceId {
  rpc::Uuid uuid;
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
};
struct LookupRequest {
  uint32_t inquiry_type = 0;  // 0 all, 1 by interface, 2 by object, 3 by both
  std::optional<rpc::Uuid> object;
  std::optional<InterfaceId> interface_id;
  uint32_t vers_option = 1;  // 1 all, 2 compatible, 3 exact, 4 major only, 5 up to
  ContextHandle entry_handle;
  uint32_t max_ents = 0;
};
struct Entry {
  rpc::Uuid object;
  Bytes tower;             // octet string
  std::string annotation;  // at most 63 characters
};
struct LookupResponse {
  ContextHandle entry_handle;
  uint32_t max_ents = 0;
  std::vector<Entry> entries;
  uint32_t status = 0;
};
struct HandleFreeRequest {
  ContextHandle entry_handle;
};
struct HandleFreeResponse {
  ContextHandle entry_handle;
  uint32_t status = 0;
};

// Decoders refuse trailing garbage only where NDR would (they ignore bytes after the last
// parameter, as a verification trailer may follow). Encoders cannot fail.
Status decode(ByteView stub, MapRequest& out);
Status decode(ByteView stub, LookupRequest& out);
Status decode(ByteView stub, HandleFreeRequest& out);
Status decode(ByteView stub, MapResponse& out);  // for tests and our own clients
Status decode(ByteView stub, LookupResponse& out);
Bytes encode(const MapRequest& r);
Bytes encode(const LookupRequest& r);
Bytes encode(const MapResponse& r);
Bytes encode(const LookupResponse& r);
Bytes encode(const HandleFreeResponse& r);

}  // namespace perfsim::epm
