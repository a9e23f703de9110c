// `perfsim serve --fleet F --shard K/N --list-hosts`: the fleet file's address ranges expanded, and
// shards that together are the fleet: disjoint, their union every host, each host with the same
// name, address and capture on its shard as in the whole fleet.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "tests/common/run_command.h"

namespace fs = std::filesystem;

namespace {

struct Listed {
  std::string name, listen, capture;
  bool operator==(const Listed&) const = default;
};

// name -> what --list-hosts --json printed for it.
std::map<std::string, Listed> list_hosts(const std::string& args) {
  const auto r = perfsim::testing::run_command(PERFSIM_EXE, "serve --list-hosts --json " + args);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
  std::map<std::string, Listed> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    REQUIRE(j.at("event") == "host");
    const Listed l{j.at("host"), j.at("listen"), j.at("capture")};
    CHECK(out.emplace(l.name, l).second);  // names are unique within a listing
  }
  return out;
}

struct FleetDir {
  fs::path dir = fs::temp_directory_path() / ("perfsim-fleet-cli-" + std::to_string(getpid()));
  FleetDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~FleetDir() { fs::remove_all(dir); }
  std::string write(const std::string& text) const {
    const fs::path p = dir / "fleet.toml";
    std::ofstream(p) << text;
    return p.string();
  }
};

}  // namespace

TEST_CASE("a fleet entry's addresses range gives each member its own address on one port") {
  FleetDir d;
  const auto hosts = list_hosts("--fleet " + d.write(R"([[host]]
addresses = "127.1.0.0/16"
port = 4135
count = 300
name = "WEB-{n}"
)"));
  REQUIRE(hosts.size() == 300);
  CHECK(hosts.at("WEB-0001").listen == "127.1.0.1:4135");
  CHECK(hosts.at("WEB-0255").listen == "127.1.0.255:4135");
  CHECK(hosts.at("WEB-0256").listen == "127.1.1.0:4135");  // inside a /16, .0 and .255 are host addresses
  CHECK(hosts.at("WEB-0300").listen == "127.1.1.44:4135");
}

TEST_CASE("a single-host fleet entry keeps its name, and a name without {n} is numbered only for several hosts") {
  FleetDir d;
  const auto hosts = list_hosts("--fleet " + d.write(R"([[host]]
listen = "127.0.0.1:0"
name = "W2K3"

[[host]]
listen = "127.0.0.1:0"
name = "EXCH"
count = 1

[[host]]
listen = "127.0.0.1:0"
name = "WEB"
count = 2
)"));
  std::set<std::string> names;
  for (const auto& [name, l] : hosts) names.insert(name);
  CHECK(names == std::set<std::string>{"W2K3", "EXCH", "WEB-0001", "WEB-0002"});
}

TEST_CASE("a fleet's addresses are refused with the fix when the range is too small or not a range") {
  FleetDir d;
  auto r = perfsim::testing::run_command(
      PERFSIM_EXE, "serve --list-hosts --fleet " +
                       d.write("[[host]]\naddresses = \"127.1.0.0/24\"\ncount = 300\nname = \"H-{n}\"\n"));
  CHECK(r.code == 2);
  CHECK(r.err.find("fleet.toml:") != std::string::npos);
  CHECK(r.err.find("300 hosts do not fit in addresses \"127.1.0.0/24\" (254 addresses from 127.1.0.1)") !=
        std::string::npos);
  r = perfsim::testing::run_command(PERFSIM_EXE,
                                    "serve --list-hosts --fleet " + d.write("[[host]]\naddresses = \"127.1.0.0\"\n"));
  CHECK(r.code == 2);
  CHECK(r.err.find("is not an IPv4 range A.B.C.D/P") != std::string::npos);
  r = perfsim::testing::run_command(
      PERFSIM_EXE,
      "serve --list-hosts --fleet " + d.write("[[host]]\naddresses = \"127.1.0.0/16\"\nlisten = \"127.0.0.1:1\"\n"));
  CHECK(r.code == 2);
  CHECK(r.err.find("not both") != std::string::npos);
}

TEST_CASE("serve --shard K/N: the N shards are disjoint and together the fleet, each host unchanged") {
  FleetDir d;
  const std::string fleet = "--fleet " + d.write(R"([[host]]
addresses = "127.1.0.0/16"
count = 100
name = "WEB-{n}"

[[host]]
listen = "127.0.0.101:0"
count = 3
name = "DC-{n}"
)");
  const auto whole = list_hosts(fleet);
  REQUIRE(whole.size() == 103);
  for (const int n : {1, 3, 7}) {
    std::map<std::string, Listed> seen;
    for (int k = 0; k < n; ++k) {
      const auto shard = list_hosts(fleet + " --shard " + std::to_string(k) + "/" + std::to_string(n));
      CHECK(shard.size() >= 103 / size_t(n));  // contiguous blocks: sizes differ by one at most
      CHECK(shard.size() <= 103 / size_t(n) + 1);
      for (const auto& [name, l] : shard) {
        INFO(n << " shards, shard " << k << ", host " << name);
        CHECK(seen.emplace(name, l).second);  // on no other shard
      }
    }
    CHECK(seen == whole);  // every host, with the name, address and capture of the whole fleet
  }
}

TEST_CASE("serve --shard: entries on adjacent address ranges give each shard one range of addresses") {
  FleetDir d;  // A on 127.1.0.1-5, B on 127.1.0.6-10: any contiguous block of A then B is one range
  const std::string fleet = "--fleet " + d.write(R"([[host]]
addresses = "127.1.0.0/24"
port = 4135
count = 5
name = "A-{n}"

[[host]]
addresses = "127.1.0.6/24"
port = 4135
count = 5
name = "B-{n}"
)");
  for (const int n : {2, 3, 4}) {
    size_t hosts = 0;
    for (int k = 0; k < n; ++k) {
      std::set<int> last_octets;
      for (const auto& [name, l] : list_hosts(fleet + " --shard " + std::to_string(k) + "/" + std::to_string(n))) {
        REQUIRE(l.listen.rfind("127.1.0.", 0) == 0);
        last_octets.insert(std::stoi(l.listen.substr(8)));
      }
      INFO(n << " shards, shard " << k);
      REQUIRE_FALSE(last_octets.empty());
      CHECK(*last_octets.rbegin() - *last_octets.begin() + 1 == int(last_octets.size()));
      hosts += last_octets.size();
    }
    CHECK(hosts == 10);
  }
}

TEST_CASE("serve --shard refuses K/N that is not a shard of N with usage status 2 and the fix") {
  for (const char* bad : {"3/3", "1", "a/2", "0/0"}) {
    const auto r = perfsim::testing::run_command(PERFSIM_EXE, std::string("serve --list-hosts --shard ") + bad);
    INFO(bad << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("give K/N with 0 <= K < N") != std::string::npos);
  }
  // One host and two shards: the second would serve nothing.
  const auto r = perfsim::testing::run_command(PERFSIM_EXE, "serve --list-hosts --shard 0/2");
  CHECK(r.code == 2);
  CHECK(r.err.find("holds none of the fleet's hosts") != std::string::npos);
}

TEST_CASE("serve prints one summary line for a fleet instead of a line per host") {
  FleetDir d;
  const std::string fleet = d.write(R"([[host]]
addresses = "127.1.9.0/24"
port = 0
count = 12
name = "S-{n}"
timeline = "frozen:1"
)");
  const std::string out = (d.dir / "out").string();
  // Waits (at most 30 s, polling) for the summary, then stops serve: the line is printed once all
  // listeners are bound.
  const auto r = perfsim::testing::run_command(
      "/bin/sh", "-c '" + std::string(PERFSIM_EXE) + " serve --fleet " + fleet + " >" + out +
                     " 2>/dev/null & p=$!; i=0; while [ $i -lt 300 ] && ! grep -q \"hosts listening\" " + out +
                     "; do sleep 0.1; i=$((i+1)); done; kill $p; wait $p; cat " + out + "'");
  INFO(r.out);
  size_t lines = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines += line.rfind("perfsim serve:", 0) == 0;
  CHECK(lines == 1);
  CHECK_THAT(r.out, Catch::Contains("perfsim serve: 12 hosts listening on 127.1.9.1-127.1.9.12, port"));
  CHECK_THAT(r.out, Catch::Contains("--list-hosts or --json lists each"));
}
