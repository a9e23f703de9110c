// Reads the TCP segments of a capture file through tshark: one record per TCP frame with its
// time, endpoints, raw sequence number, flags and payload bytes. tshark runs with TCP
// desegmentation off, so each payload is exactly the bytes of that frame; ordering,
// retransmissions and reassembly are left to the caller (tcp_stream.h).
// tshark is started with posix_spawnp (the path is an argv element, never shell text) and killed
// when it runs longer than the timeout.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::recorder {

struct TcpSegment {
  uint64_t frame = 0;      // frame number in the file
  int64_t time_100ns = 0;  // FILETIME (UTC) of the frame
  uint64_t stream = 0;     // tshark's tcp.stream index (one per connection, in order of appearance)
  std::string src, dst;    // IPv4 or IPv6 addresses, as tshark prints them
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0;  // raw (absolute) sequence number
  bool syn = false, ack = false;
  Bytes payload;
};

// Frames tshark printed but we could not take as they are. A frame whose time stamp is out of
// range (tshark prints e.g. "-4294967295.000001") keeps its bytes and takes the previous frame's
// time, so its TCP stream stays whole; a frame whose other fields do not parse is skipped (its
// stream then shows a gap, reported by the caller). The frame numbers of the first kListed of each.
struct UnreadFrames {
  static constexpr size_t kListed = 20;
  uint64_t time_replaced = 0, skipped = 0;
  std::vector<uint64_t> time_replaced_frames, skipped_frames;
  bool any() const { return time_replaced + skipped > 0; }
  std::string describe() const;  // one line; empty when !any()
};

struct TsharkRun {
  std::string tshark = "tshark";
  std::chrono::seconds timeout{600};
};

// Calls `segment` for every TCP frame of `path`, in file order. Fails when tshark cannot be
// started, outlives the timeout or exits non-zero (the message quotes its stderr: a truncated or
// corrupt file); segments delivered before stay delivered. A line that does not parse fails
// nothing: it is counted in `unread` (when given) as above.
Status read_tcp_segments(const std::string& path, const TsharkRun& run, const std::function<void(TcpSegment&)>& segment,
                         UnreadFrames* unread = nullptr);

// Exposed for tests: "1700000000.123456789" (frame.time_epoch) -> FILETIME in 100 ns units.
bool epoch_text_to_filetime(const std::string& text, int64_t& out);

}  // namespace perfsim::recorder
