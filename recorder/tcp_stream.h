// One direction of a captured TCP connection put back in order by sequence number: bytes seen
// again (retransmissions, overlaps) are dropped, segments that arrive early wait for the ones
// before them. Bytes are handed on as soon as they are contiguous, with the time of the frame
// that made them so (the moment the receiver could have read them).
// A hole the capture never fills (a frame dumpcap missed) ends the direction: nothing after it
// is handed on, and gap() says so.
#pragma once
#include <cstdint>
#include <functional>
#include <map>

#include "core/bytes.h"

namespace perfsim::recorder {

class TcpDirection {
 public:
  using Deliver = std::function<void(ByteView data, int64_t time_100ns)>;
  // Early segments kept while waiting for a missing one; beyond this the hole counts as a gap.
  static constexpr size_t kMaxWaiting = 16 * 1024 * 1024;

  // `seq` is the segment's raw sequence number; a SYN's sequence number is the one before the
  // first data byte. The first segment seen fixes the start when no SYN was captured.
  void add(uint32_t seq, bool syn, ByteView payload, int64_t time_100ns, const Deliver& deliver);
  // Call at the end of the capture: segments still waiting mean a gap.
  void finish();

  bool gap() const { return gap_; }
  uint64_t gap_at() const { return next_; }          // stream offset where the hole starts
  uint64_t delivered() const { return next_; }       // bytes handed on
  uint64_t resent_bytes() const { return resent_; }  // bytes dropped as already seen

 private:
  void deliver_waiting(int64_t time_100ns, const Deliver& deliver);

  bool started_ = false;
  bool gap_ = false;
  uint32_t next_seq_ = 0;  // sequence number of byte next_
  uint64_t next_ = 0;      // stream offset of the next byte to hand on
  uint64_t resent_ = 0;
  size_t waiting_bytes_ = 0;
  std::map<uint64_t, Bytes> waiting_;  // stream offset -> early segment
};

}  // namespace perfsim::recorder
