// Netns: a network namespace with a veth pair for `perfsim serve --netns` (netns.h).
#include "server/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "core/subprocess.h"
#include "replayer/fleet_file.h"

namespace perfsim::server {
namespace {

// Runs `ip` with its commands on stdin (-batch: one process for thousands of addresses).
Status ip_batch(const std::vector<std::string>& prefix, const std::string& commands) {
  std::vector<std::string> argv = {"/usr/sbin/ip"};
  argv.insert(argv.end(), prefix.begin(), prefix.end());
  argv.insert(argv.end(), {"-batch", "-"});
  std::string out;
  subprocess::ExitStatus st;
  if (Status s = subprocess::run(argv, commands, out, st); !s.ok()) return s;
  if (st.code != 0) return Status::IOError("ip -batch failed: " + out);
  return Status::Ok();
}

void ip_quiet(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/sbin/ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out;
  subprocess::ExitStatus st;
  (void)subprocess::run(argv, "", out, st);  // cleaning up: what is missing is already clean
}

bool valid_name(const std::string& n) {
  return !n.empty() && n.size() <= 12 &&
         std::all_of(n.begin(), n.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; });
}

}  // namespace

void remove_netns_leftovers(const std::string& name) {
  ip_quiet({"netns", "delete", name});  // takes the inner end with it
  ip_quiet({"link", "delete", "ps-" + name});
}

Status Netns::create(const NetnsConfig& cfg) {
  if (!valid_name(cfg.name))
    return Status::InvalidArgument("--netns '" + cfg.name + "': 1 to 12 letters, digits, '-' or '_' (it names links)");
  uint32_t first = 0, capacity = 0;
  if (Status s = replayer::parse_address_range(cfg.subnet, first, capacity); !s.ok())
    return Status::InvalidArgument("--subnet: " + s.message());
  if (capacity < 3) return Status::InvalidArgument("--subnet " + cfg.subnet + ": needs room for the pair and a host");
  const size_t slash = cfg.subnet.find('/');
  const std::string prefix = cfg.subnet.substr(slash);
  const uint32_t mask = ~uint32_t(0) << (32 - std::stoi(prefix.substr(1)));
  const std::string outer = replayer::ipv4_text(first), inner = replayer::ipv4_text(first + 1);
  for (const std::string& a : cfg.addresses) {
    uint32_t ip = 0, n = 0;
    if (!replayer::parse_address_range(a + "/32", ip, n).ok() || (ip & mask) != (first & mask))
      return Status::InvalidArgument("host address " + a + " is outside --subnet " + cfg.subnet +
                                     "; give the fleet addresses inside it");
    if (a == outer || a == inner)
      return Status::InvalidArgument("host address " + a + " is the veth pair's (" + outer + ", " + inner +
                                     "); start the fleet's addresses after them");
  }
  if (::geteuid() != 0) return Status::InvalidArgument("--netns needs root (ip netns, ip link)");
  cfg_ = cfg;
  remove_netns_leftovers(cfg.name);  // a killed earlier run of this name
  created_ = true;
  const std::string o = "ps-" + cfg.name, i = "pi-" + cfg.name;
  std::string root = "netns add " + cfg.name + "\nlink add " + o + " type veth peer name " + i + "\nlink set " + i +
                     " netns " + cfg.name + "\n";
  if (cfg.bridge.empty()) {
    root += "addr add " + outer + prefix + " dev " + o + "\n";
    outer_address_ = outer;
  } else {
    root += "link set " + o + " master " + cfg.bridge + "\n";
  }
  root += "link set " + o + " up\n";
  if (Status s = ip_batch({}, root); !s.ok()) {
    destroy();
    return s;
  }
  std::string inside = "link set lo up\naddr add " + inner + prefix + " dev " + i + "\nlink set " + i + " up\n";
  std::vector<std::string> unique = cfg.addresses;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  for (const std::string& a : unique) inside += "addr add " + a + "/32 dev lo\n";
  if (Status s = ip_batch({"-n", cfg.name}, inside); !s.ok()) {
    destroy();
    return s;
  }
  home_fd_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int ns_fd = ::open(("/run/netns/" + cfg.name).c_str(), O_RDONLY | O_CLOEXEC);
  const bool joined = home_fd_ >= 0 && ns_fd >= 0 && ::setns(ns_fd, CLONE_NEWNET) == 0;
  if (ns_fd >= 0) ::close(ns_fd);
  if (!joined) {
    destroy();
    return Status::IOError("cannot enter network namespace " + cfg.name);
  }
  return Status::Ok();
}

void Netns::destroy() {
  if (home_fd_ >= 0) {
    (void)::setns(home_fd_, CLONE_NEWNET);  // back where `ip link` names the outer end
    ::close(home_fd_);
    home_fd_ = -1;
  }
  if (created_) remove_netns_leftovers(cfg_.name);
  created_ = false;
}

}  // namespace perfsim::server
