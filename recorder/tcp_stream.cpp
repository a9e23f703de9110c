#include "recorder/tcp_stream.h"

namespace perfsim::recorder {

void TcpDirection::add(uint32_t seq, bool syn, ByteView payload, int64_t time_100ns, const Deliver& deliver) {
  if (gap_) return;
  if (!started_) {
    if (!syn && payload.empty()) return;  // a bare ACK says nothing about where data starts
    started_ = true;
    next_seq_ = syn ? seq + 1 : seq;
    if (syn) return;
  }
  if (syn || payload.empty()) return;
  // Offsets relative to next_ by 32-bit serial arithmetic, so sequence wrap-around is harmless.
  const int64_t rel = int32_t(seq - next_seq_);
  if (rel + int64_t(payload.size()) <= 0) {
    resent_ += payload.size();
    return;
  }
  if (rel > 0) {
    const uint64_t off = next_ + uint64_t(rel);
    auto [it, inserted] = waiting_.try_emplace(off, payload.begin(), payload.end());
    if (!inserted && it->second.size() < payload.size()) {
      waiting_bytes_ -= it->second.size();
      it->second.assign(payload.begin(), payload.end());
      inserted = true;
    }
    if (inserted) waiting_bytes_ += it->second.size();
    if (waiting_bytes_ > kMaxWaiting) gap_ = true;
    return;
  }
  const size_t skip = size_t(-rel);
  resent_ += skip;
  const ByteView fresh = payload.subspan(skip);
  next_ += fresh.size();
  next_seq_ += uint32_t(fresh.size());
  deliver(fresh, time_100ns);
  deliver_waiting(time_100ns, deliver);
}

void TcpDirection::deliver_waiting(int64_t time_100ns, const Deliver& deliver) {
  while (!waiting_.empty() && waiting_.begin()->first <= next_) {
    auto node = waiting_.extract(waiting_.begin());
    waiting_bytes_ -= node.mapped().size();
    const uint64_t end = node.key() + node.mapped().size();
    if (end <= next_) {
      resent_ += node.mapped().size();
      continue;
    }
    const size_t skip = size_t(next_ - node.key());
    resent_ += skip;
    const ByteView fresh = ByteView(node.mapped()).subspan(skip);
    next_ += fresh.size();
    next_seq_ += uint32_t(fresh.size());
    deliver(fresh, time_100ns);
  }
}

void TcpDirection::finish() {
  if (!waiting_.empty()) gap_ = true;
}

}  // namespace perfsim::recorder
