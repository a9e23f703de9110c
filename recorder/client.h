// A small synchronous winreg client: the calls a collector makes, encoded with our NDR codec and
// carried by any Channel (TCP or SMB). What `perfsim query` and the recorder use to read a host. A
// DCE/RPC fault or a protocol error comes back as a Status naming it.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/bytes.h"
#include "core/status.h"
#include "recorder/channel.h"
#include "winreg/codec.h"

namespace perfsim::recorder {

// How a collector grows its buffer after ERROR_MORE_DATA (protocol.md lists real collectors').
struct Growth {
  enum class Kind { kReturned, kDouble, kAdd } kind = Kind::kReturned;
  uint32_t initial = 64 * 1024;  // first buffer offered
  uint32_t step = 64 * 1024;     // kAdd
  uint32_t max_tries = 16;       // bounded: a host that never settles must not loop forever
};

struct ValueResult {
  uint32_t status = 0;  // final WERROR
  uint32_t type = 0;
  Bytes data;
  uint32_t tries = 0;         // QueryValue calls made
  uint32_t last_offered = 0;  // buffer size of the final call
  uint32_t last_size = 0;     // data_size of the final answer
};

class WinregClient {
 public:
  explicit WinregClient(std::unique_ptr<Channel> channel) : channel_(std::move(channel)) {}
  // Connects to host:port over ncacn_ip_tcp and binds winreg + NDR 2.0.
  static Status connect(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                        std::unique_ptr<WinregClient>& out);

  // One raw call: opnum + request stub in, response stub out (reassembled). Faults -> Status.
  Status call(uint16_t opnum, ByteView stub, Bytes& out) { return channel_->call(opnum, stub, out); }
  Channel& channel() { return *channel_; }

  Status open_hive(uint16_t opnum, winreg::PolicyHandle& h);  // kOpenHKLM, kOpenHKPD, ...
  Status open_key(const winreg::PolicyHandle& parent, const std::string& path, winreg::PolicyHandle& h, uint32_t& werr);
  Status close_key(const winreg::PolicyHandle& h, uint32_t& werr);
  // The name of subkey `index` of `h` (werr ERROR_NO_MORE_ITEMS past the last), as RegEnumKeyEx asks.
  Status enum_key(const winreg::PolicyHandle& h, uint32_t index, std::string& name, uint32_t& werr);
  // One QueryValue; buffer nullopt sends a NULL data pointer.
  Status query_value(const winreg::PolicyHandle& h, const std::string& name, std::optional<uint32_t> buffer,
                     winreg::QueryValueResponse& out);
  // QueryValue until it succeeds or fails for good, growing the buffer as `g` says.
  Status query_value_growing(const winreg::PolicyHandle& h, const std::string& name, const Growth& g, ValueResult& out);

 private:
  std::unique_ptr<Channel> channel_;
};

}  // namespace perfsim::recorder
