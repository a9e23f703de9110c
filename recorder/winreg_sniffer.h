// Listens to one DCE/RPC association from the side (a TCP connection or an SMB named pipe):
// cuts each direction's byte stream into PDUs by frag_length (rpc/frame.h), reassembles
// fragmented requests and responses per call_id, pairs them, and decodes the winreg calls a
// collector makes with our codec. It tracks policy handles (OpenHKPD/HKPT/HKPN, OpenHKLM and
// OpenKey relative to a known handle, CloseKey) so that every QueryValue gets the key it was
// made on.
// Recognition is by content: the client's first PDU must be a version 5.0 bind offering the
// winreg interface; anything else makes the sniffer ignore the association silently.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "recorder/exchange.h"
#include "rpc/ntlm_challenge.h"
#include "winreg/codec.h"

namespace perfsim::recorder {

class WinregSniffer {
 public:
  // `label` names the association in problem lines ("127.0.0.1:40000 -> 127.0.0.2:49152").
  explicit WinregSniffer(std::string label) : label_(std::move(label)) {}

  // Bytes in order, each batch with the time its last byte was captured.
  void from_client(ByteView data, int64_t time_100ns);
  void from_server(ByteView data, int64_t time_100ns);
  // End of capture: adds problem lines for what was left incomplete.
  void finish();

  bool winreg() const { return state_ == State::kWinreg || state_ == State::kSealed; }
  std::vector<Exchange>& exchanges() { return exchanges_; }
  std::vector<std::string>& problems() { return problems_; }
  // The version in the NTLMSSP CHALLENGE of this association's bind_ack/alter_context_resp.
  const std::optional<rpc::NtlmVersion>& announced() const { return announced_; }

 private:
  enum class State { kStart, kWinreg, kIgnored, kSealed };
  struct Direction {
    Bytes buffer;
    bool dead = false;
  };
  struct Call {
    uint16_t opnum = 0;
    Bytes stub;
    bool complete = false;
    int64_t sent = 0;  // time the last request fragment was captured
  };

  void feed(Direction& d, bool client, ByteView data, int64_t time);
  void client_pdu(ByteView pdu, int64_t time);
  void server_pdu(ByteView pdu, int64_t time);
  void answered(const Call& call, ByteView stub, int64_t time);
  void on_query_value(const Call& call, ByteView stub, int64_t time);
  void problem(const std::string& what);

  std::string label_;
  State state_ = State::kStart;
  Direction client_, server_;
  std::vector<uint16_t> winreg_contexts_;
  std::map<uint32_t, Call> calls_;                          // by call_id, request seen
  std::map<uint32_t, Bytes> responses_;                     // by call_id, response fragments so far
  std::map<std::array<uint8_t, 20>, std::string> handles_;  // open handle -> key ("" = HKLM itself)
  size_t unknown_handle_queries_ = 0;
  std::vector<Exchange> exchanges_;
  std::vector<std::string> problems_;
  std::optional<rpc::NtlmVersion> announced_;
};

}  // namespace perfsim::recorder
