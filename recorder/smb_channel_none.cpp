// Built when CMake finds no Samba client libraries (samba-dev): the SMB transport is absent.
#include "recorder/smb_channel.h"

namespace perfsim::recorder {

bool smb_supported() { return false; }

Status connect_smb(const SmbTarget&, const Credentials&, std::chrono::milliseconds, std::unique_ptr<Channel>&) {
  return Status::Unsupported(
      "this perfsim was built without Samba's client libraries (samba-dev), so it cannot "
      "record over SMB; install samba-dev (scripts/install-deps.sh) and rebuild, or record over TCP");
}

}  // namespace perfsim::recorder
