// The hosts `perfsim load` polls: a fleet file's hosts, expanded exactly as `perfsim serve
// --fleet F --list-hosts` expands them (replayer/fleet_file.h), or an address range written on the
// command line. Syntax (README.md): A.B.C.D-E.F.G.H:PORT (IPv4, both ends included), ADDR:PORT (one
// host; a name, an IPv4 address or [IPv6]), the port left out only over SMB.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace perfsim::load {

struct LoadHost {
  std::string name;              // the fleet's name for it ("WEB-0001"); empty when unknown (a range)
  std::string address;           // as connect takes it: 127.1.0.1, ::1, a host name
  uint16_t port = 0;             // 0: the transport's own (SMB's port)
  std::string endpoint() const;  // ADDR:PORT, [ADDR]:PORT for IPv6; ADDR with port 0
  std::string label() const { return name.empty() ? endpoint() : name; }
};

// At most this many addresses in one range (a /15 and more; the sessions bound in run.h applies too).
inline constexpr size_t kMaxRangeHosts = 100000;

// `port_needed`: false over SMB, where a target's port may be left out (the SMB port is the run's).
Status hosts_from_range(const std::string& text, bool port_needed, std::vector<LoadHost>& out);
// Every [[host]] of the fleet file at `path`, count = N entries expanded, addresses ranges included.
// A host on port 0 (a free port picked at serve time) cannot be found: refused unless !port_needed.
Status hosts_from_fleet(const std::string& path, bool port_needed, std::vector<LoadHost>& out);
// A fleet file when `text` names an existing file, else a range (either's errors then); NotFound
// for a path (a '/', or .toml/.json) that does not exist.
Status hosts_from_target(const std::string& text, bool port_needed, std::vector<LoadHost>& out);

}  // namespace perfsim::load
