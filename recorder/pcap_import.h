// pcap import: the winreg conversations of a packet capture (pcap or pcapng), as Exchanges.
// tshark reads the file and hands over each TCP segment's bytes (tshark_segments.h); our own code
// puts the segments back in order (tcp_stream.h), finds SMB2 named-pipe traffic
// (smb2_pipes.h) and cuts and decodes DCE/RPC + winreg (winreg_sniffer.h). DCE/RPC is recognised
// by content (a version 5.0 bind to the winreg interface), on any port.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "recorder/exchange.h"
#include "recorder/tshark_segments.h"

namespace perfsim::recorder {

struct PcapImportOptions {
  std::string tshark = "tshark";      // executable, looked up on PATH
  std::chrono::seconds timeout{600};  // tshark is killed after this long
  // Called every 1,000 frames and once at the end with the number of frames read so far.
  std::function<void(uint64_t frames)> progress;
};

// Appends to `out` one Conversation per server address and transport ("ncacn_ip_tcp" or
// "ncacn_np"; a host read both ways gives two), in order of first appearance, each holding every
// QueryValue on HKPD/HKPT/HKPN (key "HKPD"...) or on a key opened from HKLM (key = the path under
// HKLM) in time order, and one problem line per thing that could not be read: an SMB3-encrypted
// session, DCE/RPC with packet privacy, SMB1, a gap in a TCP stream, QueryValue calls on handles
// opened before the capture began, an undecodable stub.
// Fails when tshark cannot be run, times out or reports an error (a truncated or corrupt file:
// the message quotes tshark); `out` then still holds what was read before the failure. A frame
// with an out-of-range time stamp or one tshark prints unreadably fails nothing: it is counted
// in `unread` (tshark_segments.h) and the rest is imported.
Status read_pcap(const std::string& path, std::vector<Conversation>& out, const PcapImportOptions& options = {},
                 UnreadFrames* unread = nullptr);

}  // namespace perfsim::recorder
