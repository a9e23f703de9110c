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
#include <string>
#include <memory>
#include <utility>

#include "core/bytes.h"
#include "replayer/host.h"
#include "rpc/pdu.h"
#include "winreg/codec.h"

namespace perfsim::winreg {

// DCE/RPC fault codes the service may ask the PDU layer to send instead of a response (defined
// once, in rpc/pdu.h).
using rpc::kFaultBadStubData;
using rpc::kFaultContextMismatch;
using rpc::kFaultOpRangeError;

// QueryMultipleValues2 answers with an array of the caller's `offered` bytes; larger offers are
// refused (WERR_INVALID_PARAMETER) so a client cannot make the server build a huge reply.
inline constexpr uint32_t kMaxMultipleValuesOffer = 4u << 20;

// What the last call was about, for observers above this layer (the journal, metrics): plain
// facts, no knowledge of where they go. Strings are filled only while observing, so a server
// without observers pays for none of them.
struct CallNote {
  std::string value_name;                       // QueryValue, EnumValue (the value listed), OpenKey (the subkey)
  std::shared_ptr<const std::string> key_path;  // "HKEY_PERFORMANCE_DATA", "HKLM\\SOFTWARE\\..."; null: unknown handle
  bool has_buffer = false;                      // the caller sent a data buffer (QueryValue, EnumValue)
  uint32_t offered = 0;                         // its size (data_size in)
  uint32_t status = 0;                          // WERROR of the response
  uint32_t type = 0;                            // value type returned (QueryValue, EnumValue)
  uint32_t size = 0;                            // data_size returned (the size the server said)
  uint32_t bytes = 0;                           // value bytes returned
  uint32_t delay_ms = 0;                        // the host's delay before this answer leaves
  uint32_t applied = 0;                         // replayer::Applied bits
};

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
  // Observing: every call() leaves its facts in last_call() (reset at each call).
  void observe(bool on) { observing_ = on; }
  const CallNote& last_call() const { return note_; }
  CallNote take_call() { return std::move(note_); }
  // For a call answered above this layer (the SMB account check): its note holds only `status`.
  void noted_elsewhere(uint32_t status) {
    note_ = CallNote{};
    note_.status = status;
  }

 private:
  struct Entry {
    const replayer::RegKey* key = nullptr;  // HKLM or a key below it
    bool perf = false;
    replayer::PerfKey perf_key = replayer::PerfKey::kData;
    std::shared_ptr<const std::string> path;  // for observers (CallNote::key_path)
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
  CallNote note_;
  bool observing_ = false;
  uint32_t note(const replayer::ValueAnswer& a);  // collects a's effects; returns its rpc fault
  void note_key(const Entry* e) {
    if (observing_ && e) note_.key_path = e->path;
  }
};

// The self-relative security descriptor GetKeySecurity returns (owner Administrators, group
// SYSTEM, a DACL granting Administrators and SYSTEM full control and Users read).
Bytes default_key_security(uint32_t sec_info);

}  // namespace perfsim::winreg
