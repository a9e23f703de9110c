// perfsim serve --netns NAME --subnet CIDR --netns-bridge BR: 100 hosts (10.231.1.1-100) inside a
// namespace perfsim makes, its veth's outer end on a bridge the test makes, polled over SMB and
// TCP from a client namespace the test makes on that bridge (10.231.0.3): each address answers as
// its own host. Then tear-down: nothing in `ip netns` or `ip link` after SIGTERM; after SIGKILL
// the leftovers are there and the next start removes them. Addresses exist only inside the
// test's namespaces and on its bridge.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/common/perfsim_smb_serve.h"
#include "tests/common/run_command.h"

namespace {

using perfsim::testing::run_command;

struct Names {
  std::string id = std::to_string(getpid());
  std::string served = "pf" + id, client = "pc" + id, bridge = "pb" + id;
  std::string outer = "ps-" + served;
};

int sh(const std::string& script) { return run_command("/bin/sh", "-c '" + script + "'", 60).code; }

bool netns_exists(const std::string& n) { return sh("ip netns list | grep -qw " + n) == 0; }
bool link_exists(const std::string& n) { return sh("ip link show " + n + " >/dev/null 2>&1") == 0; }

// The client side: a namespace with 10.231.0.3/16 on a veth whose other end is on the bridge.
struct ClientSide {
  Names n;
  ClientSide() {
    const std::string v = "pv" + n.id, w = "pw" + n.id;
    REQUIRE(sh("ip link add " + n.bridge + " type bridge && ip link set " + n.bridge + " up && ip netns add " +
               n.client + " && ip link add " + v + " type veth peer name " + w + " && ip link set " + v + " master " +
               n.bridge + " && ip link set " + v + " up && ip link set " + w + " netns " + n.client + " && ip -n " +
               n.client + " addr add 10.231.0.3/16 dev " + w + " && ip -n " + n.client + " link set " + w +
               " up && ip -n " + n.client + " link set lo up") == 0);
  }
  ~ClientSide() { sh("ip netns delete " + n.client + "; ip link delete " + n.bridge + "; ip link delete pv" + n.id); }
};

perfsim::testing::ServeSmbConfig serve_config(const Names& n) {
  perfsim::testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = std::string(SMB_WORK_DIR) + "/netns";
  cfg.fleet =
      "[[host]]\naddresses = \"10.231.1.0/24\"\nport = 4135\ncount = 100\nname = \"NS-{n}\"\n"
      "timeline = \"frozen:2\"\ncapture = \"" CAPTURES_DIR "/default-2016.perfcap\"\n";
  cfg.smb_hosts = 100;
  cfg.extra_args = {"--netns", n.served, "--subnet", "10.231.0.0/16", "--netns-bridge", n.bridge};
  return cfg;
}

}  // namespace

TEST_CASE("serve --netns: a client namespace polls 100 hosts over SMB and TCP, then tears down completely", "[smb]") {
  ClientSide client;
  const Names& n = client.n;
  perfsim::testing::PerfsimSmbServe serve;
  perfsim::Status st = serve.start(serve_config(n));
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(netns_exists(n.served));
  CHECK(link_exists(n.outer));

  std::string addresses;
  for (int k = 1; k <= 100; ++k) addresses += " 10.231.1." + std::to_string(k);
  const std::string poll = "ip netns exec " + n.client + " " + PERFSIM_PYTHON + " -B " + POLL_FLEET +
                           " --client samba --values 238 --workers 4";
  const std::string dir = serve.dir();
  const auto smb = run_command(
      "/bin/sh",
      "-c '" + poll + " --port " + std::to_string(serve.port()) + " --out " + dir + "/smb.json" + addresses + "'", 120);
  const auto tcp = run_command(
      "/bin/sh", "-c '" + poll + " --transport tcp --port 4135 --out " + dir + "/tcp.json" + addresses + "'", 120);
  INFO(smb.err << tcp.err);
  REQUIRE(smb.code == 0);
  REQUIRE(tcp.code == 0);
  for (const char* what : {"smb", "tcp"}) {
    nlohmann::json got;
    std::ifstream(dir + "/" + what + ".json") >> got;
    REQUIRE(got.size() == 100);
    for (int k = 1; k <= 100; ++k) {
      const std::string a = "10.231.1." + std::to_string(k);
      char name[16];
      std::snprintf(name, sizeof name, "NS-%04d", k);
      INFO(what << " " << a << ": " << got.at(a).dump());
      REQUIRE_FALSE(got.at(a).contains("error"));
      CHECK(got.at(a).at("238").at("name") == name);
    }
  }

  // SIGTERM: perfsim removes its namespace and veth pair.
  CHECK(serve.stop() == 0);
  CHECK_FALSE(netns_exists(n.served));
  CHECK_FALSE(link_exists(n.outer));

  // SIGKILL leaves them; the next start of the same name removes them first, its stop the rest.
  REQUIRE(serve.start(serve_config(n)).ok());
  ::kill(serve.pid(), SIGKILL);
  serve.stop();
  CHECK(netns_exists(n.served));
  CHECK(link_exists(n.outer));
  st = serve.start(serve_config(n));
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(serve.stop() == 0);
  CHECK_FALSE(netns_exists(n.served));
  CHECK_FALSE(link_exists(n.outer));
}
