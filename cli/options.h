// Option groups several subcommands share, registered the same way by each.
#pragma once
#include <cstdint>

#include "cli/target.h"

namespace CLI {
class App;
}

namespace perfsim::cli {

// Who logs on and how, for subcommands that reach a host over SMB or ncacn_ip_tcp.
void add_smb_options(CLI::App* c, SmbOptions& o);
// Which capture format a writing subcommand makes (captures/FORMAT.md).
void add_format_option(CLI::App* c, uint32_t& version);

}  // namespace perfsim::cli
