// Writer of Tcpip's Network Interface: one instance per adapter.
#include "synth/model_state.h"

namespace perfsim::synth {

void Model::State::write_network(ObjState& o) {
  if (o.obj.instances.size() != nics.size()) {
    o.obj.instances.clear();
    for (const Nic& n : nics) o.add_instance(n.name);
  }
  for (size_t i = 0; i < nics.size(); ++i) {
    const Nic& n = nics[i];
    Bytes& b = o.block(i);
    o.set(b, idx::kBytesTotal, n.rbytes + n.sbytes);
    o.set(b, idx::kPackets, n.rucast + n.rnucast + n.sucast + n.snucast);
    o.set(b, idx::kPacketsReceived, n.rucast + n.rnucast);
    o.set(b, idx::kPacketsSent, n.sucast + n.snucast);
    o.set(b, idx::kBandwidth, spec.bandwidth_bps);
    o.set(b, idx::kBytesReceived, n.rbytes);
    o.set(b, idx::kRecvUnicast, n.rucast);
    o.set(b, idx::kRecvNonUnicast, n.rnucast);
    o.set(b, idx::kRecvDiscarded, n.rdiscard);
    o.set(b, idx::kRecvErrors, n.rerrors);
    o.set(b, idx::kRecvUnknown, 0);
    o.set(b, idx::kBytesSent, n.sbytes);
    o.set(b, idx::kSentUnicast, n.sucast);
    o.set(b, idx::kSentNonUnicast, n.snucast);
    o.set(b, idx::kOutDiscarded, 0);
    o.set(b, idx::kOutErrors, 0);
    o.set(b, idx::kOutputQueue, 0);
  }
}

}  // namespace perfsim::synth
