// 200 SMB hosts on 200 addresses of 127.1.0.0/16 behind one perfsim serve and one smbd (more than
// kSmbSocketsPerAddressMax addresses: one wildcard socket, routed by the address reached), polled
// at once by python3-samba and impacket (poll_fleet.py): every client gets its own host's name
// (PERF_DATA_BLOCK SystemName), python3-samba in Global (its capture's objects) and an index
// query, impacket in the index query (its Python reads a ~300 KB Global in ~0.8 s, 160 s of a
// loaded CI machine for 200 hosts) with the dialects of the host's OS (the 2003 hosts NT1 only).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <string>

#include "server/smb_serve.h"
#include "tests/common/host_tools.h"
#include "tests/common/perfsim_smb_serve.h"
#include "tests/common/run_command.h"

namespace fs = std::filesystem;

namespace {

constexpr int kPerRange = 100;

// Two entries of one fleet: 100 hosts of a 2016 capture on 127.1.0.1-100 and 100 of a 2003
// capture (NT1 only) on 127.1.1.1-100.
std::string fleet_text() {
  const std::string caps = CAPTURES_DIR;
  return "[[host]]\naddresses = \"127.1.0.0/24\"\ncount = 100\nname = \"WEB-{n}\"\ntimeline = \"frozen:2\"\n"
         "capture = \"" +
         caps +
         "/default-2016.perfcap\"\n\n[[host]]\naddresses = \"127.1.1.0/24\"\ncount = 100\nname = \"OLD-{n}\"\n"
         "timeline = \"frozen:2\"\ncapture = \"" +
         caps + "/default-2003.perfcap\"\n";
}

struct Expected {
  std::string address, name;
  bool old;  // the 2003 range
};

std::vector<Expected> expected_hosts() {
  std::vector<Expected> out;
  for (int n = 1; n <= kPerRange; ++n) {
    char num[8];
    std::snprintf(num, sizeof num, "%04d", n);
    out.push_back({"127.1.0." + std::to_string(n), std::string("WEB-") + num, false});
    out.push_back({"127.1.1." + std::to_string(n), std::string("OLD-") + num, true});
  }
  return out;
}

}  // namespace

TEST_CASE("200 SMB hosts on their own addresses answer python3-samba and impacket at once, each as itself", "[smb]") {
  static_assert(2 * kPerRange > perfsim::server::kSmbSocketsPerAddressMax, "the test is of the one-socket mode");
  const std::string dir = std::string(SMB_WORK_DIR) + "/fleet200";
  perfsim::testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = dir;
  cfg.fleet = fleet_text();
  cfg.smb_hosts = 2 * kPerRange;
  perfsim::testing::PerfsimSmbServe serve;
  const auto started = std::chrono::steady_clock::now();
  perfsim::Status st = serve.start(cfg);
  INFO(st.message());
  REQUIRE(st.ok());
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  WARN("200 SMB hosts ready after " << setup_s << " s");

  // One wildcard socket, loopback clients only.
  const std::string conf = perfsim::testing::read_text(serve.smb_dir() + "/smb.conf");
  CHECK(conf.find("bind interfaces only = no") != std::string::npos);
  CHECK(conf.find("hosts allow = 127.0.0.0/8") != std::string::npos);

  const std::vector<Expected> hosts = expected_hosts();
  std::string addresses;
  for (const Expected& e : hosts) addresses += " " + e.address;
  const std::string port = std::to_string(serve.port());
  const std::string poll = std::string(PERFSIM_PYTHON) + " -B " + POLL_FLEET + " --port " + port + " --workers 6";
  // Both clients at once, bounded.
  const auto polled = std::chrono::steady_clock::now();
  const auto r = perfsim::testing::run_command(
      "/bin/sh",
      "-c '" + poll + " --client samba --values Global,238 --out " + dir + "/samba.json" + addresses + " & " + poll +
          " --client impacket --values 238 --out " + dir + "/impacket.json" + addresses + " & wait'",
      180);
  WARN("400 sessions polled in " << std::chrono::duration<double>(std::chrono::steady_clock::now() - polled).count()
                                 << " s");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);

  std::map<bool, int64_t> objects;  // per range: every host of a capture answers its objects
  for (const char* client : {"samba", "impacket"}) {
    nlohmann::json got;
    std::ifstream(dir + "/" + client + ".json") >> got;
    REQUIRE(got.size() == hosts.size());
    for (const Expected& e : hosts) {
      INFO(client << " at " << e.address << ": " << got.at(e.address).dump());
      const auto& h = got.at(e.address);
      REQUIRE_FALSE(h.contains("error"));
      CHECK(h.at("238").at("name") == e.name);
      if (std::string(client) == "samba") {
        CHECK(h.at("Global").at("name") == e.name);
        const int64_t n = h.at("Global").at("objects").get<int64_t>();
        CHECK(objects.emplace(e.old, n).first->second == n);
      } else {
        CHECK((h.at("dialect") == "NT1") == e.old);
      }
    }
  }
  CHECK(objects.at(false) != objects.at(true));  // the two captures' hosts are told apart
  CHECK(serve.stop() == 0);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Issue 48's SMB fleets in the text a person reads: above ten SMB hosts one line, naming the
// count, the addresses, the port and the real smbd serving them; a client nobody here wrote then
// reads the span's last host as itself.
TEST_CASE("perfsim serve --smb without --json: twelve SMB hosts are one line naming addresses, port and smbd",
          "[smb]") {
  const std::string dir = std::string(SMB_WORK_DIR) + "/fleet12-text";
  perfsim::testing::ServeSmbConfig cfg;
  cfg.perfsim = PERFSIM_EXE;
  cfg.dir = dir;
  cfg.fleet =
      "[[host]]\naddresses = \"127.1.2.0/24\"\ncount = 12\nname = \"TXT-{n}\"\ntimeline = \"frozen:2\"\n"
      "capture = \"" +
      std::string(CAPTURES_DIR) + "/default-2016.perfcap\"\n";
  cfg.smb_hosts = 12;
  cfg.json = false;
  perfsim::testing::PerfsimSmbServe serve;
  const perfsim::Status st = serve.start(cfg);
  INFO(st.message());
  REQUIRE(st.ok());

  const std::string out = perfsim::testing::read_text(dir + "/serve.out");
  INFO(out);
  size_t smb_lines = 0;
  for (size_t p = 0; (p = out.find(" on SMB ", p)) != std::string::npos; ++p) ++smb_lines;
  CHECK(smb_lines == 1);
  const std::regex line(R"(perfsim serve: (\d+) hosts on SMB (\S+), port (\d+) \(ncacn_np:ADDR\[\\pipe\\winreg\]\) )"
                        R"(through smbd pid (\d+) \(--json lists each\))");
  std::smatch m;
  REQUIRE(std::regex_search(out, m, line));
  CHECK(m[1] == "12");
  CHECK(m[2] == "127.1.2.1-127.1.2.12");
  CHECK(m[3] == std::to_string(serve.port()));
  std::string comm;
  std::getline(std::ifstream("/proc/" + m[4].str() + "/comm"), comm);
  CHECK(comm == "smbd");

  const auto r =
      perfsim::testing::run_command(std::string(PERFSIM_PYTHON),
                                    "-B " + std::string(POLL_FLEET) + " --port " + std::to_string(serve.port()) +
                                        " --client samba --values 238 --out " + dir + "/samba.json 127.1.2.12",
                                    60);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  nlohmann::json got;
  std::ifstream(dir + "/samba.json") >> got;
  INFO(got.dump());
  CHECK(got.at("127.1.2.12").at("238").at("name") == "TXT-0012");
  CHECK(serve.stop() == 0);
  std::error_code ec;
  fs::remove_all(dir, ec);
}
