// winreg semantics over a simulated host, for one connection.
//
// Decodes each request with the codec, applies Remote Registry semantics (handle table, HKLM keys
// and values, HKEY_PERFORMANCE_DATA/TEXT/NLSTEXT through the host) and encodes the response.
// What a perf value holds and what a caller gets for its buffer is the host's decision
// (replayer/host.h); this layer only carries it. One Service per connection: its handle table is
// that connection's, as Windows scopes context handles to the association. Who may open
// HKEY_PERFORMANCE_DATA is decided here too (the transport only says which account it is).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <memory>
#include <utility>

#include "core/bytes.h"
#include "replayer/host.h"
#include "rpc/interface.h"
#include "rpc/pdu.h"
#include "winreg/codec.h"

namespace perfsim::winreg {

// DCE/RPC fault codes the service may ask the PDU layer to send instead of a response (defined
// once, in rpc/pdu.h).
using rpc::kFaultBadStubData;
using rpc::kFaultContextMismatch;
using rpc::kFaultOpRangeError;

// QueryMultipleValues2 answers with an array of the caller's `offered` bytes; larger offers are
// refused (WERR_INVALID_PARAMETER) so a client cannot make the server build a huge reply. It is
// also the most either QueryMultipleValues packs: a call holds at most this many data bytes.
inline constexpr uint32_t kMaxMultipleValuesOffer = 4u << 20;

// The facts of the last call, for the journal (rpc/interface.h).
using CallNote = rpc::CallNote;

// The winreg interface (MS-RRP, 338cd001-2244-31f1-aaaa-900038001003 v1.0): its table of
// operations over a Service (one row per opnum this server implements; any other opnum faults
// nca_op_rng_error).
const rpc::Interface& winreg_interface();

// What the connection's account may open, as Windows decides it (the transport knows the account;
// winreg/README.md has the sources):
// - kPerfData: Administrators and Performance Monitor Users: every hive and every perf key.
// - kRegistry: another account: the registry hives, but no perf key (HKEY_PERFORMANCE_DATA, _TEXT
//   and _NLSTEXT answer WERR_ACCESS_DENIED).
// - kNone: a null session, which Windows keeps off \PIPE\winreg altogether (its CREATE fails with
//   STATUS_ACCESS_DENIED; smbd cannot fail it, so every open of a hive or perf key is refused).
enum class Access : uint8_t { kPerfData, kRegistry, kNone };

class Service final : public rpc::InterfaceSession {
 public:
  explicit Service(std::shared_ptr<replayer::SimulatedHost> host, Access access = Access::kPerfData);
  // Executes one request through winreg_interface(). Returns 0 with the response stub in `out`,
  // or a DCE/RPC fault code. Value data in the stub is shared with the answer, not copied (see
  // encode_shared).
  uint32_t call(uint16_t opnum, ByteView stub, ByteChain& out);
  // The same stub in one buffer.
  uint32_t call(uint16_t opnum, ByteView stub, Bytes& out);
  size_t open_handles() const { return handles_.size(); }
  bool gone() override;

  // The operations (winreg_interface() rows): 0 with `resp` filled, or a fault.
  uint32_t open_hkcr(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t open_hkcu(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t open_hklm(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t open_hku(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t open_hkpd(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t open_hkpt(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t open_hkpn(const OpenHiveRequest& req, OpenHiveResponse& resp);
  uint32_t close_key(const CloseKeyRequest& req, CloseKeyResponse& resp);
  uint32_t open_key(const OpenKeyRequest& req, OpenKeyResponse& resp);
  uint32_t enum_key(const EnumKeyRequest& req, EnumKeyResponse& resp);
  uint32_t enum_value(const EnumValueRequest& req, EnumValueResponse& resp);
  uint32_t query_info_key(const QueryInfoKeyRequest& req, QueryInfoKeyResponse& resp);
  uint32_t query_value(const QueryValueRequest& req, QueryValueResponse& resp);
  uint32_t get_key_security(const GetKeySecurityRequest& req, GetKeySecurityResponse& resp);
  uint32_t get_version(const GetVersionRequest& req, GetVersionResponse& resp);
  uint32_t create_key(const CreateKeyRequest& req, CreateKeyResponse& resp);
  uint32_t delete_key(const DeleteKeyRequest& req, StatusResponse& resp);
  uint32_t delete_value(const DeleteKeyRequest& req, StatusResponse& resp);
  uint32_t set_key_security(const SetKeySecurityRequest& req, StatusResponse& resp);
  uint32_t set_value(const SetValueRequest& req, StatusResponse& resp);
  uint32_t query_multiple_values(const QueryMultipleValuesRequest& req, QueryMultipleValuesResponse& resp);
  uint32_t query_multiple_values2(const QueryMultipleValues2Request& req, QueryMultipleValues2Response& resp);
  // The encoder of every row: notes the WERROR and moves the response into the stub's shared
  // pieces, so its data buffers are referenced, not copied.
  template <class Resp>
  void reply(Resp& r, ByteChain& out) {
    note_.status = r.result;
    out = encode_shared(std::make_shared<const Resp>(std::move(r)));
  }

 private:
  struct Entry {
    const replayer::RegKey* key = nullptr;  // a hive's key or a key below it
    bool perf = false;
    replayer::PerfKey perf_key = replayer::PerfKey::kData;
    std::shared_ptr<const std::string> path;  // for observers (CallNote::key_path)
  };
  using Uuid = std::array<uint8_t, 16>;

  PolicyHandle add(Entry e);
  const Entry* find(const PolicyHandle& h) const;
  uint32_t open_hive(OpenHiveResponse& resp, Entry e);
  uint32_t open_registry_hive(OpenHiveResponse& resp, replayer::Hive h);
  uint32_t refuse_write(const PolicyHandle& h);
  uint32_t multiple_values(const PolicyHandle& h, std::vector<ValueEntry>& values, std::vector<SharedBytes>& data,
                           uint64_t& needed) const;

  std::shared_ptr<replayer::SimulatedHost> host_;
  std::map<Uuid, Entry> handles_;
  uint64_t next_handle_ = 1;
  Access access_;
  uint32_t boots_ = 0;  // the host's reboots when this connection was made (replayer/events.h)
  uint32_t note(const replayer::ValueAnswer& a);  // collects a's effects; returns its rpc fault
  void note_key(const Entry* e) {
    if (observing_ && e) note_.key_path = e->path;
  }
};

// The self-relative security descriptor GetKeySecurity returns (owner Administrators, group
// SYSTEM, a DACL granting Administrators and SYSTEM full control and Users read).
Bytes default_key_security(uint32_t sec_info);

}  // namespace perfsim::winreg
