// What a collector and a host said to each other, independent of how it was obtained: the live
// recorder performs these exchanges, pcap import (pcap_import.h) finds them on the wire, and
// capture building (build.h) turns either into a capture with its fingerprint.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "core/bytes.h"
#include "rpc/ntlm_challenge.h"

namespace perfsim::recorder {

// One QueryValue round trip.
struct Exchange {
  int64_t time_100ns = 0;   // FILETIME (UTC) when the answer arrived
  uint32_t latency_us = 0;  // request sent -> answer arrived
  std::string key;          // "HKPD", "HKPT", "HKPN", or a path under HKLM ("SOFTWARE\\...\\Perflib")
  std::string value_name;   // as sent ("Global", "238 232", "Counter 009", "Last Counter")
  bool null_data = false;   // the caller sent a NULL data pointer (a size probe)
  uint32_t offered = 0;     // the caller's buffer size (data_size sent)
  uint32_t status = 0;      // WERROR answered
  uint32_t type = 0;        // value type answered (0 when the answer carried none)
  uint32_t size = 0;        // data_size answered
  Bytes data;               // bytes answered
  std::string client;       // the caller's "ADDR:PORT" where it is known (pcap import), else ""
};

// True for exchanges on HKEY_PERFORMANCE_DATA/_TEXT/_NLSTEXT (the others are on HKLM paths).
bool on_perf_key(const Exchange& e);

// The exchanges of one server seen from one or more client connections, in time order.
struct Conversation {
  std::string server;     // address (pcap) or host name (live)
  std::string transport;  // "ncacn_ip_tcp" or "ncacn_np"
  std::vector<Exchange> exchanges;
  std::vector<std::string> problems;  // what could not be read, one line each (e.g. an encrypted SMB3 session)
  // The Windows version and build the server announced in an NTLMSSP CHALLENGE (pcap import:
  // the first of the server's sessions that authenticated with NTLMSSP and gave one).
  std::optional<rpc::NtlmVersion> announced;
};

}  // namespace perfsim::recorder
