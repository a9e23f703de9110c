#include "load/targets.h"

#include <arpa/inet.h>

#include <filesystem>

#include "core/config.h"
#include "replayer/fleet.h"
#include "replayer/fleet_file.h"

namespace perfsim::load {
namespace {

const char* const kRangeForm =
    "write A.B.C.D-E.F.G.H:PORT (e.g. 127.1.0.1-127.1.0.50:4135), ADDR:PORT for one host, or a fleet file";

bool ipv4(const std::string& text, uint32_t& host_order) {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) return false;
  host_order = ntohl(a.s_addr);
  return true;
}

// "HOSTPART:PORT" -> HOSTPART and port; a bracketed IPv6 address keeps its colons.
// `zero_ok`: a fleet's listen address, where port 0 means "a free one" (refused by the caller).
Status split_port(const std::string& text, bool port_needed, std::string& host, uint16_t& port, bool zero_ok = false) {
  const bool bracketed = !text.empty() && text.front() == '[';
  const size_t close = bracketed ? text.find(']') : std::string::npos;
  const size_t colon = bracketed ? (close == std::string::npos ? close : text.find(':', close)) : text.rfind(':');
  if (bracketed && close == std::string::npos)
    return Status::InvalidArgument("'" + text + "': an IPv6 address needs its closing ']'; " + kRangeForm);
  host = bracketed ? text.substr(1, close - 1) : text.substr(0, colon);
  port = 0;
  if (colon == std::string::npos) {
    if (port_needed) return Status::InvalidArgument("'" + text + "' names no port: " + kRangeForm);
  } else if (!config::parse_uint_as(std::string_view(text).substr(colon + 1), "port", port).ok() ||
             (port == 0 && !zero_ok)) {
    return Status::InvalidArgument("'" + text + "': the port must be 1..65535; " + kRangeForm);
  }
  if (host.empty()) return Status::InvalidArgument("'" + text + "' names no host: " + kRangeForm);
  return Status::Ok();
}

}  // namespace

std::string LoadHost::endpoint() const {
  const std::string a = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  return port ? a + ":" + std::to_string(port) : a;
}

Status hosts_from_range(const std::string& text, bool port_needed, std::vector<LoadHost>& out) {
  std::string host;
  uint16_t port = 0;
  if (Status s = split_port(text, port_needed, host, port); !s.ok()) return s;
  const size_t dash = host.find('-');
  uint32_t lo = 0, hi = 0;
  if (dash == std::string::npos || !ipv4(host.substr(0, dash), lo)) {
    out.push_back({std::string(), host, port});  // one host: a name or an address, as connect resolves it
    return Status::Ok();
  }
  if (!ipv4(host.substr(dash + 1), hi))
    return Status::InvalidArgument("'" + text + "': the range's end must be an IPv4 address; " + kRangeForm);
  if (hi < lo)
    return Status::InvalidArgument("'" + text + "': the range ends before it starts (" + host.substr(dash + 1) + " < " +
                                   host.substr(0, dash) + ")");
  if (uint64_t(hi) - lo + 1 > kMaxRangeHosts)
    return Status::InvalidArgument("'" + text + "' holds " + std::to_string(uint64_t(hi) - lo + 1) +
                                   " addresses; at most " + std::to_string(kMaxRangeHosts) + " in one range");
  for (uint64_t a = lo; a <= hi; ++a) out.push_back({std::string(), replayer::ipv4_text(uint32_t(a)), port});
  return Status::Ok();
}

Status hosts_from_fleet(const std::string& path, bool port_needed, std::vector<LoadHost>& out) {
  std::vector<replayer::FleetHost> fleet;
  if (Status s = replayer::read_fleet(path, fleet); !s.ok()) return s;
  replayer::expand_fleet(fleet);
  for (const replayer::FleetHost& h : fleet) {
    LoadHost lh;
    if (Status s = split_port(h.listen, false, lh.address, lh.port, true); !s.ok()) return s;
    if (!h.replay.name.empty()) lh.name = replayer::fleet_host_name(h.replay.name, h.fleet_index + 1, h.replay.count);
    if (port_needed && lh.port == 0)
      return Status::InvalidArgument(path + ": host " + lh.label() + " listens on port 0 (a free port chosen when " +
                                     "perfsim serve starts), which perfsim load cannot know: give the fleet entry a " +
                                     "fixed port, or poll the ADDR:PORT serve printed");
    if (!port_needed) lh.port = 0;  // over SMB the run's SMB port, not the fleet's TCP one
    out.push_back(std::move(lh));
  }
  return Status::Ok();
}

Status hosts_from_target(const std::string& text, bool port_needed, std::vector<LoadHost>& out) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) return hosts_from_fleet(text, port_needed, out);
  // A path that is not there is a missing input (exit 1), not a range written wrong.
  const bool path_like = text.find('/') != std::string::npos || text.ends_with(".toml") || text.ends_with(".json");
  if (path_like && !std::filesystem::exists(text, ec)) return Status::NotFound(text + ": no such file");
  return hosts_from_range(text, port_needed, out);
}

}  // namespace perfsim::load
