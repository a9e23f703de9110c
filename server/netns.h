// `perfsim serve --netns NAME --subnet CIDR`: the run's hosts inside a network namespace perfsim
// creates, joined to the outside by a veth pair, so a collector elsewhere (another namespace, a
// VM or container on a bridge) reaches each host at its own address.
//
// Guarantees: create() first removes what a killed earlier run of the same NAME left (the
// namespace and the outer veth end), then makes the namespace, the pair (outer end `ps-NAME`:
// the subnet's first address, or enslaved to a bridge the user names; inner end `pi-NAME` in
// the namespace with the second address), puts every host address on the namespace's lo, and
// moves the calling thread into the namespace, so call it before any other thread or child
// exists (they inherit it). destroy() (also the destructor) moves back and deletes both: nothing
// stays in `ip netns` or `ip link`. After SIGKILL the next create() of the NAME cleans up.
// Root only.
#pragma once
#include <string>
#include <vector>

#include "core/status.h"

namespace perfsim::server {

struct NetnsConfig {
  std::string name;                    // namespace name; 1-12 characters [A-Za-z0-9_-]
  std::string subnet;                  // "A.B.C.D/P": the pair's addresses and every host's
  std::string bridge;                  // outer end enslaved to this bridge (no address); empty: none
  std::vector<std::string> addresses;  // the hosts' IPv4 addresses, all inside `subnet`
};

class Netns {
 public:
  Netns() = default;
  ~Netns() { destroy(); }
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;

  Status create(const NetnsConfig& cfg);
  void destroy();
  // The address of the outer veth end (empty with a bridge): how this machine reaches the hosts.
  const std::string& outer_address() const { return outer_address_; }

 private:
  NetnsConfig cfg_;
  int home_fd_ = -1;  // the network namespace the process started in
  bool created_ = false;
  std::string outer_address_;
};

// Removes what a run of `name` left (namespace and outer veth end); missing ones are fine.
void remove_netns_leftovers(const std::string& name);

}  // namespace perfsim::server
