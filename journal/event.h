// One winreg call as observers see it: the journal keeps these, the diagnosis reads them, metrics
// count them. Plain data; the server's handler fills one per call (server/winreg_handler.h) from
// what the winreg service noted (winreg::CallNote) and what the transport knows.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace perfsim::journal {

enum class Transport : uint8_t { kTcp, kSmb };
const char* transport_name(Transport t);  // "tcp", "smb"

// Text shared by every event of a session (host, peer) or of a handle (key path): a pointer copy
// on the hot path instead of a string copy.
using SharedText = std::shared_ptr<const std::string>;
const std::string& text(const SharedText& t);  // "" for null

struct CallEvent {
  uint64_t seq = 0;     // the journal's order, from 1; 0 until recorded
  int64_t time_us = 0;  // wall clock (UTC, microseconds since 1970) when the call arrived
  SharedText host;      // the simulated host's system name
  SharedText peer;      // the client, "127.0.0.1:51234"
  Transport transport = Transport::kTcp;
  uint64_t session = 0;  // one per connection (TCP) or pipe open (SMB), from 1
  uint16_t opnum = 0;
  std::string value_name;   // QueryValue/EnumValue value, OpenKey subkey; "" otherwise
  SharedText key_path;      // "HKEY_PERFORMANCE_DATA", "HKLM\\SOFTWARE\\..."; null: unknown handle
  bool has_buffer = false;  // the caller sent a data buffer
  uint32_t offered = 0;     // its size
  uint32_t status = 0;      // WERROR returned (meaningless when rpc_fault != 0)
  uint32_t type = 0;        // value type returned
  uint32_t size = 0;        // data_size returned: the size the server said
  uint32_t bytes = 0;       // value bytes returned
  uint32_t rpc_fault = 0;   // a DCE/RPC fault answered instead of a response; 0: none
  uint32_t latency_us = 0;  // handling time plus the delay the host imposed (slow-global, faults)
  std::string applied;      // quirks and faults that shaped the answer, comma-separated ("busy,fault:latency")
  bool closed = false;      // no answer at all: the host closed the connection (a reboot, fault:reset); status is moot
  // Non-empty: this entry is no call but an event of the host's timeline (replayer/events.h), as
  // its JSON object ({"kind":"reboot","at_s":30,"down_s":5}); time_us is when it happened, host
  // whose; session, peer and the call fields are unset.
  std::string host_event;
  bool is_host_event() const { return !host_event.empty(); }
};
// The kind of a host-event entry ("reboot"), "" when it is a call or unreadable.
std::string host_event_kind(const CallEvent& e);

// The JSON object of one event (a line of the journal file, an element of the admin API's list):
// seq, time (ISO 8601 UTC, ms), time_us, host, peer, transport, session, opnum, op (name), value,
// key, buffer, offered, status, status_name ("no answer (connection closed)" when closed), type,
// size, bytes, rpc_fault, latency_us, applied, closed. A host event's entry is
// {entry: "event", event: {kind, at_s, ...}, host, seq, time, time_us}.
nlohmann::json to_json(const CallEvent& e);
// The same object as one line of text (no newline), written without building a json value: what
// the journal file's writer uses to keep up with the server.
void append_json_line(const CallEvent& e, std::string& out);
// The reverse; `where` prefixes errors ("journal.jsonl:12").
Status from_json(const nlohmann::json& j, const std::string& where, CallEvent& e);
// A JSON-lines journal file (`perfsim serve --journal FILE`), every line an event or a marker of
// events the writer dropped ({"journal":"dropped","events":N,"time_us":T}). Blank lines are
// skipped; a bad line fails naming its line number and what was wrong.
Status read_journal_file(const std::string& path, std::vector<CallEvent>& out);

// The name of rotated file `k` of the journal `path` (k = 0: path itself; journal.h rotates).
std::string rotated_name(const std::string& path, uint32_t k);
// The files of the journal `path`, oldest first: path.K-1 .. path.1 (each rotated file there,
// counting up from .1 until one is missing), then path.
std::vector<std::string> journal_set(const std::string& path);

// What reading journal files found besides the events.
struct JournalRead {
  static constexpr size_t kNotedSkips = 3;
  std::vector<std::string> files;          // read, in order
  uint64_t skipped = 0;                    // unreadable lines skipped (not JSON, or not an event)
  std::vector<std::string> first_skipped;  // "FILE:LINE: what was wrong" of the first kNotedSkips
  uint64_t dropped = 0;                    // events the server dropped, from its marker lines
};
// Reads `files` in order. strict: the first unreadable line fails, naming it (as
// read_journal_file); else it is skipped and counted, so the file a crashed server left (its last
// line cut) still reads. A file that cannot be opened fails either way.
Status read_journal(const std::vector<std::string>& files, bool strict, std::vector<CallEvent>& out,
                    JournalRead& report);

// "QueryValue", or "opnum 0x2a" for one winreg does not cover.
std::string opnum_label(uint16_t opnum);

}  // namespace perfsim::journal
