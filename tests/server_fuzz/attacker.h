// Hostile DCE/RPC clients for the server fuzz test. An attacker opens connection after connection
// to a loopback server and throws malformed, truncated, reordered or simply random PDUs at it
// (a deterministic mix drawn from a seeded RNG), then closes, aborts or stalls.
//
// Guarantees: every wait is bounded; the attacker stops once it has sent `pdu_budget` PDUs.
// It checks what the server sends back: a sequence of well-formed DCE/RPC PDUs (response, fault,
// bind_ack, bind_nak, alter_context_resp) naming call ids it was sent, or a closed connection,
// and a stalled connection closed by the server within the idle timeout (plus slack). Anything
// else is recorded as a violation, one line each.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace perfsim::fuzz {

struct AttackConfig {
  uint16_t port = 0;
  uint64_t seed = 1;
  size_t pdu_budget = 500;  // PDUs (whole or partial) this attacker sends in all
  std::chrono::milliseconds idle_timeout{500};
  std::chrono::milliseconds close_slack{5000};  // how late a close may come (shared, slow machines)
  size_t server_max_pdu = 65535;                // the server's frag_length limit
  uint16_t server_max_frag = 5840;              // the largest PDU the server may send
};

struct AttackReport {
  size_t sessions = 0, pdus_sent = 0, replies = 0;
  std::map<std::string, size_t> replies_by_type;  // "response", "fault", "bind_ack", ...
  size_t closed_by_server = 0;  // sessions the server ended (protocol error, idle timeout, EOF answer)
  size_t stalls = 0;            // sessions that went quiet and waited for the server to close
  size_t idle_closes = 0;       // stalls the server closed no earlier than the idle timeout
  std::chrono::milliseconds slowest_stall_close{0};
  std::vector<std::string> violations;
};

AttackReport run_attacker(const AttackConfig& cfg);

}  // namespace perfsim::fuzz
