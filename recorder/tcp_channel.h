// winreg over ncacn_ip_tcp with our own PDU layer (rpc/): connect, bind winreg + NDR 2.0, with no
// authentication or with NTLMSSP / SPNEGO (rpc/auth.h's client SecurityContext) at connect,
// integrity or privacy, then calls fragmented at the negotiated sizes (signed, sealed, and every
// response fragment verified when the level asks for it). The DCE/RPC part is rpc_channel.h's,
// over a socket here; every network wait is bounded by the timeout given at connect.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "recorder/channel.h"
#include "recorder/rpc_channel.h"

namespace perfsim::recorder {

// Parses "connect" | "sign" | "seal" (also "integrity", "privacy") and "ntlm" | "spnego".
Status parse_auth_level(const std::string& text, uint8_t& level);
Status parse_auth_type(const std::string& text, uint8_t& type);

// `auth` unset: an unauthenticated bind. A refused logon (wrong password, unknown account) fails
// here with a message naming the host and the account, never the password.
Status connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                   std::unique_ptr<Channel>& out, const std::optional<TcpAuth>& auth = std::nullopt);

}  // namespace perfsim::recorder
