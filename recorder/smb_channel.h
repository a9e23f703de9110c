// winreg over SMB named pipes (\PIPE\winreg, what every Windows host offers) through Samba's client
// libraries (libdcerpc from samba-dev): SMB1/2/3, NTLM or Kerberos, signing and encryption are
// Samba's; the winreg stubs are ours (winreg/codec.h), carried as raw DCE/RPC calls.
//
// Guarantees: connect and every call end within the timeout given at connect (a call that runs
// out leaves the channel closed: later calls fail at once). Failures come back as a Status a
// person can act on: unreachable host, refused logon, access denied, no RemoteRegistry pipe, a
// dialect or signing/encryption mismatch, a DCE/RPC fault. The password appears in no message
// and not in describe(). Samba reads no smb.conf here: its settings come from SmbTarget only.
// Built without samba-dev, connect_smb returns Unsupported.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "recorder/channel.h"
#include "recorder/credentials.h"

namespace perfsim::recorder {

struct SmbTarget {
  std::string host;  // name (resolved through DNS / hosts) or IPv4/IPv6 address
  uint16_t port = 445;
  // Dialect bounds as Samba names them: "NT1" (SMB1), "SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02",
  // "SMB3_11". Empty: Samba's defaults (SMB2_02..SMB3_11). A range reaching down to NT1 tries
  // SMB2/3 first and SMB1 when the server speaks no SMB2.
  std::string min_protocol;
  std::string max_protocol;
  bool require_signing = false;     // "client signing = required"
  bool require_encryption = false;  // SMB3 encryption ("client smb encrypt = required")
};

// True when this build carries the SMB transport.
bool smb_supported();

Status connect_smb(const SmbTarget& target, const Credentials& credentials, std::chrono::milliseconds timeout,
                   std::unique_ptr<Channel>& out);

}  // namespace perfsim::recorder
