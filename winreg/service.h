// winreg semantics over a simulated host, for one connection.
//
// Decodes each request with the codec, applies Remote Registry semantics (handle table, HKLM keys
// and values, HKEY_PERFORMANCE_DATA/TEXT/NLSTEXT through the host) and encodes the response.
// What a perf value holds and what a caller gets for its buffer is the host's decision
// (replayer/host.h); this layer only carries it. One Service per connection: its handle table is
// that connection's, as Windows scopes context handles to the association.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "core/bytes.h"
#include "replayer/host.h"
#include "winreg/codec.h"

namespace perfsim::winreg {

// DCE/RPC fault codes the service may ask the PDU layer to send instead of a response.
inline constexpr uint32_t kFaultOpRangeError = 0x1C010002;     // nca_op_rng_error: unknown opnum
inline constexpr uint32_t kFaultBadStubData = 0x000006F7;      // RPC_X_BAD_STUB_DATA: undecodable request
inline constexpr uint32_t kFaultContextMismatch = 0x1C00001A;  // nca_s_fault_context_mismatch

// QueryMultipleValues2 answers with an array of the caller's `offered` bytes; larger offers are
// refused (WERR_INVALID_PARAMETER) so a client cannot make the server build a huge reply.
inline constexpr uint32_t kMaxMultipleValuesOffer = 4u << 20;

class Service {
 public:
  explicit Service(std::shared_ptr<replayer::SimulatedHost> host);
  // Executes one request. Returns 0 with the response stub in `out`, or a DCE/RPC fault code.
  // Value data in the stub is shared with the answer, not copied (see encode_shared).
  uint32_t call(uint16_t opnum, ByteView stub, ByteChain& out);
  // The same stub in one buffer.
  uint32_t call(uint16_t opnum, ByteView stub, Bytes& out);
  // What the host asked for besides the answers since the last take: a delay before the replies
  // leave, or closing the connection instead of answering.
  struct Effects {
    uint32_t delay_ms = 0;
    bool drop_connection = false;
  };
  Effects take_effects() { return std::exchange(effects_, Effects{}); }
  size_t open_handles() const { return handles_.size(); }

 private:
  struct Entry {
    const replayer::RegKey* key = nullptr;  // HKLM or a key below it
    bool perf = false;
    replayer::PerfKey perf_key = replayer::PerfKey::kData;
  };
  using Uuid = std::array<uint8_t, 16>;

  PolicyHandle add(Entry e);
  const Entry* find(const PolicyHandle& h) const;

  uint32_t open_hive(ByteView stub, ByteChain& out, Entry e);
  uint32_t close_key(ByteView stub, ByteChain& out);
  uint32_t open_key(ByteView stub, ByteChain& out);
  uint32_t enum_key(ByteView stub, ByteChain& out);
  uint32_t enum_value(ByteView stub, ByteChain& out);
  uint32_t query_info_key(ByteView stub, ByteChain& out);
  uint32_t query_value(ByteView stub, ByteChain& out);
  uint32_t get_key_security(ByteView stub, ByteChain& out);
  uint32_t get_version(ByteView stub, ByteChain& out);
  uint32_t query_multiple_values(ByteView stub, ByteChain& out);
  uint32_t query_multiple_values2(ByteView stub, ByteChain& out);
  uint32_t multiple_values(const PolicyHandle& h, std::vector<ValueEntry>& values, Bytes& packed,
                           uint32_t& needed) const;

  std::shared_ptr<replayer::SimulatedHost> host_;
  std::map<Uuid, Entry> handles_;
  uint64_t next_handle_ = 1;
  Effects effects_;
  uint32_t note(const replayer::ValueAnswer& a);  // collects a's effects; returns its rpc fault
};

// The self-relative security descriptor GetKeySecurity returns (owner Administrators, group
// SYSTEM, a DACL granting Administrators and SYSTEM full control and Users read).
Bytes default_key_security(uint32_t sec_info);

}  // namespace perfsim::winreg
