// winreg over ncacn_ip_tcp with our own PDU layer (rpc/): connect, bind winreg + NDR 2.0 with no
// authentication, then calls fragmented at the negotiated sizes. Every network wait is bounded by
// the timeout given at connect.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "recorder/channel.h"

namespace perfsim::recorder {

Status connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                   std::unique_ptr<Channel>& out);

}  // namespace perfsim::recorder
