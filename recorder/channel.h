// A bound winreg association, whatever carries it: the recorder and `perfsim query` speak winreg
// through this and never see the transport. Implementations: ncacn_ip_tcp with our own PDU layer
// (tcp_channel.h) and \PIPE\winreg over SMB through Samba's libdcerpc (smb_channel.h).
#pragma once
#include <cstdint>
#include <string>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::recorder {

class Channel {
 public:
  virtual ~Channel() = default;
  // One call: opnum + NDR request stub in, the reassembled NDR response stub out. A DCE/RPC fault,
  // a time-out or a broken connection comes back as a Status that names it.
  virtual Status call(uint16_t opnum, ByteView stub, Bytes& out) = 0;
  // "ncacn_ip_tcp:127.0.0.1[4135]" style, for messages and the capture's notes.
  virtual std::string describe() const = 0;
};

}  // namespace perfsim::recorder
