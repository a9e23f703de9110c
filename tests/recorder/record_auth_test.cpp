// `perfsim record` and `perfsim query` over ncacn_ip_tcp with credentials (recorder/tcp_channel.h)
// against perfsim's own server serving a host with accounts and require_auth, on 127.0.0.111-112:
// what is recorded at sign and at seal equals what was served; query prints the values; no
// credentials and a wrong password fail with messages naming the host and what was refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <nlohmann/json.hpp>

#include "captures/reader.h"
#include "core/subprocess.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/host_tools.h"
#include "replayer/host.h"
#include "rpc/auth.h"
#include "tests/common/run_command.h"
#include "tests/common/small_synth.h"
#include "tests/common/served_host.h"
#include "tests/common/temp_file.h"

using namespace perfsim;

namespace {

using perfsim::testing::temp_file_path;

constexpr const char* kUser = "alice";
constexpr const char* kPassword = "Secret-1";

// Runs the built perfsim with no PERFSIM_* credentials from the test's own environment. Under
// ASan the child unwinds fully at malloc, so LeakSanitizer sees gss-ntlmssp in the stack of the
// leak tests/lsan-suppressions.txt names (fast unwinding stops inside libcrypto); elsewhere the
// variable is ignored.
testing::CommandResult perfsim_cmd(const std::string& args, const std::string& env = {}) {
  const std::string clean = "-u PERFSIM_USER -u PERFSIM_PASSWORD -u PERFSIM_DOMAIN -u PERFSIM_AUTH_FILE ";
  // Slow unwinding lets LeakSanitizer match gss-ntlmssp's leaks to the suppressions; a command
  // that does not authenticate never loads it and need not pay for it (an unauthenticated Global
  // took 27 s under ASan with it, 0.2 s without).
  const bool authenticates = args.find(" -U ") != std::string::npos || args.find("--auth") != std::string::npos ||
                             args.find("--user") != std::string::npos || env.find("PERFSIM_") != std::string::npos;
  const std::string asan = authenticates ? "ASAN_OPTIONS=\"${ASAN_OPTIONS}:fast_unwind_on_malloc=0\" " : "";
  return testing::run_command("env", clean + asan + env + " " + PERFSIM_EXE + " " + args, 120);
}

// A small 2016 host (frozen at tick 1) served on `address` to accounts alice only, calls without
// authentication refused.
struct AuthServer {
  explicit AuthServer(const std::string& address) {
    replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 1};
    cap = testing::small_synth_capture();
    REQUIRE(replayer::SimulatedHost::load(cap, opt, host).ok());
    std::shared_ptr<const rpc::AuthService> auth;
    const Status s = rpc::AuthService::create({{kUser, kPassword}}, auth);
    INFO(s.ToString());
    REQUIRE(s.ok());
    testing::ServeOptions so;
    so.address = address;
    so.association.auth = auth;
    so.association.require_auth = true;
    served = std::make_unique<testing::ServedHost>(host, so);
    REQUIRE(served->start().ok());
    target = address + ":" + std::to_string(served->port());
  }
  captures::Capture cap;
  std::shared_ptr<replayer::SimulatedHost> host;
  std::unique_ptr<testing::ServedHost> served;
  std::string target;
};

// Records two samples of Global and "238" with `cred_args` and checks every answer is the host's.
void record_and_compare(const AuthServer& srv, const std::string& stem, const std::string& cred_args,
                        const std::string& level_in_source) {
  const std::string path = temp_file_path(stem, ".perfcap");
  std::filesystem::remove(path);
  const testing::CommandResult r = perfsim_cmd("record " + srv.target + " -o " + path +
                                               " --count 2 --interval 0.05 -q Global -q 238 --json " + cred_args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["source"].get<std::string>().find("," + level_in_source + "] as ") != std::string::npos);
  CHECK(j["samples"] == 2);

  captures::Capture got;
  REQUIRE(captures::read_capture(path, got).ok());
  const Bytes global = srv.host->content(replayer::PerfKey::kData, "Global", 1).data.to_bytes();
  const Bytes one = srv.host->content(replayer::PerfKey::kData, "238", 1).data.to_bytes();
  size_t globals = 0, ones = 0;
  for (const captures::QueryRecord& rec : got.records) {
    CHECK(rec.status == 0);
    if (rec.value_name == "Global") {
      ++globals;
      CHECK(rec.payload == global);
    }
    if (rec.value_name == "238") {
      ++ones;
      CHECK(rec.payload == one);
    }
  }
  CHECK(globals == 2);
  CHECK(ones == 2);
  REQUIRE(got.names.size() == 1);
  CHECK(got.names[0].counter == srv.cap.names[0].counter);
  std::filesystem::remove(path);
}

}  // namespace

TEST_CASE("perfsim record over TCP with credentials at sign records a host that requires authentication",
          "[recorder][rpcauth]") {
  AuthServer srv("127.0.0.111");
  record_and_compare(srv, "rec_auth_sign", std::string("-U ") + kUser + " --password " + kPassword, "sign");
}

TEST_CASE("perfsim record over TCP at seal with an authentication file records a host that requires authentication",
          "[recorder][rpcauth]") {
  AuthServer srv("127.0.0.111");
  const std::string file = temp_file_path("rec_auth", ".auth");
  {
    std::ofstream f(file);
    f << "username = WORKGROUP\\" << kUser << "\npassword = " << kPassword << "\n";
  }
  record_and_compare(srv, "rec_auth_seal", "-A " + file + " --auth-level seal", "seal");
  std::filesystem::remove(file);
}

TEST_CASE("perfsim query over TCP with credentials from the environment prints the host's values (SPNEGO, seal)",
          "[recorder][rpcauth]") {
  AuthServer srv("127.0.0.112");
  const testing::CommandResult r =
      perfsim_cmd("query " + srv.target + " --auth-type spnego --auth-level seal --json Global",
                  std::string("PERFSIM_USER=") + kUser + " PERFSIM_PASSWORD=" + kPassword);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 1);
  CHECK(j[0]["status"] == 0);
  CHECK(j[0]["bytes"] == srv.host->content(replayer::PerfKey::kData, "Global", 1).data.size());
  CHECK(j[0]["objects"].size() > 10);
}

TEST_CASE("perfsim query over TCP without credentials against a host requiring authentication fails clearly",
          "[recorder][rpcauth]") {
  AuthServer srv("127.0.0.112");
  const testing::CommandResult r = perfsim_cmd("query " + srv.target + " Global");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find(srv.target + " refused an unauthenticated call") != std::string::npos);
  CHECK(r.err.find("--user") != std::string::npos);
}

TEST_CASE("perfsim query and record over TCP with a wrong password fail naming the host and the account",
          "[recorder][rpcauth]") {
  AuthServer srv("127.0.0.112");
  for (const char* type : {"ntlm", "spnego"}) {
    INFO(type);
    const testing::CommandResult q =
        perfsim_cmd("query " + srv.target + " -U " + kUser + " --password Wrong-1 --auth-type " + type + " Global");
    INFO(q.out << q.err);
    CHECK(q.code == 1);
    CHECK(q.err.find(srv.target + " refused the logon of alice") != std::string::npos);
    CHECK(q.err.find("Wrong-1") == std::string::npos);
  }
  const std::string path = temp_file_path("rec_auth_wrong", ".perfcap");
  const testing::CommandResult r =
      perfsim_cmd("record " + srv.target + " -o " + path + " --count 1 -U " + kUser + " --password Wrong-1");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("refused the logon of alice") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("perfsim query with credentials against a host taking no logons says so and how to go without",
          "[recorder][rpcauth]") {
  replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 1};
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(testing::small_synth_capture(), opt, host).ok());
  testing::ServeOptions so;
  so.address = "127.0.0.112";
  testing::ServedHost served(host, so);
  REQUIRE(served.start().ok());
  const std::string target = "127.0.0.112:" + std::to_string(served.port());
  const testing::CommandResult r =
      perfsim_cmd("query " + target + " Global", std::string("PERFSIM_USER=") + kUser + " PERFSIM_PASSWORD=x");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find(target + " refused the authenticated bind") != std::string::npos);
  CHECK(r.err.find("--anonymous") != std::string::npos);
  const testing::CommandResult anon = perfsim_cmd("query " + target + " --anonymous Global",
                                                  std::string("PERFSIM_USER=") + kUser + " PERFSIM_PASSWORD=x");
  INFO(anon.out << anon.err);
  CHECK(anon.code == 0);
}

TEST_CASE("perfsim query rejects --auth-level without an account and SMB-only options over TCP",
          "[recorder][rpcauth]") {
  CHECK(perfsim_cmd("query 127.0.0.112:1 --auth-level seal Global").code == 2);
  CHECK(perfsim_cmd("query 127.0.0.112:1 -U alice --password x --encrypt Global").code == 2);
  CHECK(perfsim_cmd("query smb:127.0.0.112 -U alice --password x --auth-level seal Global").code == 2);
  CHECK(perfsim_cmd("query 127.0.0.112:1 -U alice --password x --auth-level privatest Global").code == 2);
}

// `perfsim serve --profile P --user alice:...` on address (any port), stopped at scope exit.
struct ServeProcess {
  ServeProcess(const std::string& address, const std::string& profile) {
    testing::ServeStart how;
    how.err_path = temp_file_path("serve_" + profile, ".err");
    const Status st = serve.start(
        PERFSIM_EXE,
        "-l " + address + ":0 --profile " + profile + " --user " + kUser + ":" + kPassword + " --timeline frozen:1",
        how);
    INFO(st.ToString());
    REQUIRE(st.ok());
    err_path = how.err_path;
    target = serve.endpoint();
  }
  ~ServeProcess() {
    serve.stop();
    std::filesystem::remove(err_path);
  }
  testing::PerfsimServe serve;
  std::string target, err_path;
};

TEST_CASE("restrict-remote-clients: an XP host refuses unauthenticated TCP calls, a 2003 server does not",
          "[recorder][rpcauth]") {
  {
    ServeProcess xp("127.0.0.115", "xp");
    const testing::CommandResult anon = perfsim_cmd("query " + xp.target + " --json Global");
    INFO(anon.out << anon.err);
    CHECK(anon.code == 1);
    CHECK(anon.err.find("refused an unauthenticated call") != std::string::npos);
    const testing::CommandResult user =
        perfsim_cmd("query " + xp.target + " --json -U " + kUser + " --password " + kPassword + " Global");
    INFO(user.out << user.err);
    CHECK(user.code == 0);
    CHECK(testing::read_text(xp.err_path).find("refuses unauthenticated calls over TCP") != std::string::npos);
  }
  ServeProcess server("127.0.0.116", "2003");
  const testing::CommandResult anon = perfsim_cmd("query " + server.target + " --json Global");
  INFO(anon.out << anon.err);
  CHECK(anon.code == 0);
}
