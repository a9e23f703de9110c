// `perfsim load` against a real `perfsim serve` fleet on loopback: its counts are the server's own
// (/metrics per host, itself checked against an impacket client's count), errors land on the host
// that faults, --reconnect and --interval keep their model, and command lines it cannot run are
// usage errors saying what to write.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "tests/common/host_tools.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"
#include "tests/load/checks.h"

namespace fs = std::filesystem;
using nlohmann::json;
using perfsim::testing::calls_by_host;
using perfsim::testing::load_json;
using perfsim::testing::run_command;
using perfsim::testing::TempDir;

namespace {

constexpr int kHosts = 6;

// A /24 of loopback addresses of this process's own (tests run in parallel), on a free port.
struct Fleet {
  TempDir dir;
  uint16_t port = perfsim::testing::free_port();
  std::string net = "127.94." + std::to_string(getpid() % 250);
  std::string path = (dir.path / "fleet.toml").string();
  std::string faults = (dir.path / "faults.toml").string();
  explicit Fleet(const std::string& fault_plan = "") {
    std::ofstream(path) << "[[host]]\naddresses = \"" << net << ".0/24\"\nport = " << port << "\ncount = " << kHosts
                        << "\nname = \"LD-{n}\"\ntimeline = \"frozen:0\"\n";
    std::ofstream(faults) << fault_plan;
  }
  std::string address(int n) const { return net + "." + std::to_string(n); }  // LD-000n
};

// perfsim serve of the fleet with its admin API; ready once the admin line is out.
struct Served {
  perfsim::testing::PerfsimServe serve;
  uint16_t admin_port = 0;
  explicit Served(const Fleet& f) {
    perfsim::testing::ServeStart how;
    how.err_path = (f.dir.path / "serve.err").string();
    how.ready = [](const std::vector<std::string>& lines) {
      return !lines.empty() && json::parse(lines.back()).value("event", "") == "admin";
    };
    const perfsim::Status s =
        serve.start(PERFSIM_EXE, "--fleet " + f.path + " --faults " + f.faults + " --admin 127.0.0.1:0", how);
    INFO(s.message());
    REQUIRE(s.ok());
    admin_port = uint16_t(json::parse(serve.lines().back()).at("port").get<int>());
  }
  std::map<std::string, uint64_t> per_host(const std::string& metric) const {
    return perfsim::testing::per_host_counts(admin_port, metric);
  }
  std::map<std::string, uint64_t> calls_when(const std::map<std::string, uint64_t>& want) const {
    return perfsim::testing::server_calls_when(admin_port, want);
  }
};

}  // namespace

TEST_CASE("perfsim load's calls per host are the server's own count") {
  Fleet f;
  Served s(f);
  // An independent client first: the server's count of LD-0001 must be impacket's plus perfsim load's.
  const auto imp = run_command(PERFSIM_PYTHON, std::string(LOAD_SCRIPTS_DIR) + "/impacket_poll.py --addr " +
                                                   f.address(1) + " --port " + std::to_string(f.port) + " --reads 25");
  INFO(imp.err);
  REQUIRE(imp.code == 0);
  const uint64_t impacket_calls = json::parse(imp.out).at("calls");
  CHECK(impacket_calls == 27);  // OpenHKPD, 25 reads, CloseKey
  CHECK(s.calls_when({{"LD-0001", impacket_calls}}) == std::map<std::string, uint64_t>{{"LD-0001", impacket_calls}});

  // Two values a poll; an 8 KiB first buffer holds 238 (5,736 bytes) but not Global (153,048).
  const json r = load_json(f.path + " --collectors 2 --duration 2 --query 238 --query Global --initial 8192", 0);
  CHECK(r.at("hosts") == kHosts);
  CHECK(r.at("sessions") == 2 * kHosts);
  std::map<std::string, uint64_t> want = calls_by_host(r);
  REQUIRE(want.size() == size_t(kHosts));
  uint64_t total = 0;
  for (const json& h : r.at("per_host")) {
    perfsim::testing::check_kept_buffer_host(h, 2);
    total += h.at("calls").get<uint64_t>();
  }
  CHECK(r.at("overall").at("calls") == total);
  CHECK(r.at("overall").at("calls_per_s").get<double>() > 0);
  want["LD-0001"] += impacket_calls;
  CHECK(s.calls_when(want) == want);
  std::map<std::string, uint64_t> sessions;
  for (const auto& [host, n] : want) sessions[host] = host == "LD-0001" ? 3 : 2;
  CHECK(s.per_host("perfsim_sessions_total") == sessions);
}

TEST_CASE("perfsim load counts errors on the hosts that fault and nowhere else") {
  Fleet f(
      "[[fault]]\nhost = \"LD-0002\"\nvalue = \"Global\"\nkind = \"busy\"\n\n"
      "[[fault]]\nhost = \"LD-0003\"\nkind = \"rpc-fault\"\ncode = 1726\nevery = 3\n");
  Served s(f);
  const json r = load_json(f.path + " --duration 2 --query Global --query 238", 1);
  CHECK(r.at("overall").at("errors").at("total").get<uint64_t>() > 0);
  for (const json& h : r.at("per_host")) {
    INFO(h.dump());
    const json& e = h.at("errors");
    if (h.at("host") == "LD-0002") {  // every Global answered ERROR_BUSY, 238 fine
      CHECK(e.at("status") == h.at("polls"));
      CHECK(e.at("by_status").at("WERR_BUSY (170)") == h.at("polls"));
      CHECK(e.at("call") == 0);
      CHECK(h.at("first_error").get<std::string>().find("Global") != std::string::npos);
    } else if (h.at("host") == "LD-0003") {  // every third perf query faults: the session is made again
      CHECK(e.at("call").get<uint64_t>() > 0);
      CHECK(e.at("status") == 0);
      // A session is made again at the poll after each fault: one connect more than faults, or as
      // many when the run's time ended right after the last fault, before the next poll.
      const uint64_t connects = h.at("connects").get<uint64_t>(), faults = e.at("call").get<uint64_t>();
      CHECK((connects == faults + 1 || connects == faults));
    } else {
      CHECK(e.at("total") == 0);
      CHECK(h.at("connects") == 1);
    }
  }
  // Faulted and refused calls were made all the same: the counts still add up.
  const auto want = calls_by_host(r);
  CHECK(s.calls_when(want) == want);
}

TEST_CASE("perfsim load --reconnect makes a session per poll and --interval paces the polls") {
  Fleet f;
  Served s(f);
  const json r = load_json(f.path + " --reconnect --duration 1 --query 238 --threads 3", 0);
  CHECK(r.at("threads") == 3);
  for (const json& h : r.at("per_host")) {
    INFO(h.dump());
    CHECK(h.at("connects") == h.at("polls"));
    CHECK(h.at("calls") == 3 * h.at("polls").get<uint64_t>());  // OpenHKPD, 238, CloseKey
  }
  // 200 ms apart within 1 s: at most 5 polls a session whatever the machine's load, and none late
  // unless the machine stalled a whole interval.
  const json paced = load_json(f.path + " --collectors 2 --interval 200ms --duration 1 --query 238", 0);
  for (const json& h : paced.at("per_host")) {
    INFO(h.dump());
    CHECK(h.at("polls").get<uint64_t>() >= 1);
    CHECK(h.at("polls").get<uint64_t>() <= 2 * 5);
  }
}

TEST_CASE("perfsim load says what to write when it cannot run, and fails on hosts it cannot reach") {
  const auto usage = [](const std::string& args, const std::string& says) {
    const auto r = run_command(PERFSIM_EXE, "load " + args);
    INFO("perfsim load " << args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(says) != std::string::npos);
  };
  usage("127.0.0.1-127.0.0.x:4135", "A.B.C.D-E.F.G.H:PORT");
  usage("127.0.0.9-127.0.0.1:4135", "ends before it starts");
  usage("127.0.0.1-127.0.0.9", "names no port");
  usage("127.0.0.1:99999", "port must be 1..65535");
  usage("10.0.0.0-10.9.0.0:4135", "at most 100000");
  usage("127.0.0.1:4135 --collectors 0", "--collectors must be at least 1");
  usage("127.0.0.1-127.0.1.255:4135 --collectors 200", "at most 100000");
  usage("127.0.0.1:4135 --duration 0", "--duration must be more than 0");
  usage("127.0.0.1:4135 --sign", "apply to SMB targets");
  usage("127.0.0.1:4135 --growth triple", "not one of returned, double, add:N");
  usage("127.0.0.1:4135 --colectors 2", "did you mean --collectors");
  usage("", "targets is required");
  TempDir d;
  const std::string zero = (d.path / "zero.toml").string();
  std::ofstream(zero) << "[[host]]\nlisten = \"127.0.0.1:0\"\nname = \"Z\"\n";
  usage(zero, "fixed port");
  // Issue 57: 200 hosts x 2 collectors under ulimit -n 600 aborted (exit 134, an uncaught
  // EMFILE from Asio): a session holds 4 descriptors, not 1, and the pre-flight counted 1.
  {
    const auto r = run_command("/bin/sh", "-c 'ulimit -n 600 && exec " + std::string(PERFSIM_EXE) +
                                              " load 127.0.0.1-127.0.0.200:4135 --collectors 2 --duration 1s'");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("ulimit -n") != std::string::npos);
    CHECK(r.err.find("but the limit is 600") != std::string::npos);
  }

  const auto help = run_command(PERFSIM_EXE, "load --help");
  CHECK(help.code == 0);
  CHECK(help.out.find("--collectors") != std::string::npos);

  // Nothing listens there: every poll's connect fails, counted, and the run fails.
  const uint16_t closed = perfsim::testing::free_port();
  const json r = load_json("127.0.0.1:" + std::to_string(closed) + " --duration 500ms --timeout 2s", 1);
  const json& o = r.at("overall");
  CHECK(o.at("calls") == 0);
  CHECK(o.at("errors").at("connect").get<uint64_t>() >= 1);
  CHECK(o.at("errors").at("connect") == o.at("connects"));
  CHECK(o.at("first_error").get<std::string>().find(std::to_string(closed)) != std::string::npos);
  CHECK(o.at("latency_ms").is_null());  // no call was timed: no figure, not zeros
  const auto text =
      run_command(PERFSIM_EXE, "load 127.0.0.1:" + std::to_string(closed) + " --duration 500ms --timeout 2s");
  INFO(text.out);
  CHECK(text.code == 1);
  CHECK(text.out.find("errors: ") != std::string::npos);
  CHECK(text.out.find("latency ms") == std::string::npos);
}

namespace {

// A connection that sends nothing: it holds a slot until the server closes it.
struct Silent {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  Silent(const std::string& address, uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Silent() { ::close(fd); }
  // Whether the server closed it within `ms` (EOF or a reset).
  bool closed_within(int ms) const {
    pollfd p{fd, POLLIN, 0};
    char c;
    return ::poll(&p, 1, ms) == 1 && ::recv(fd, &c, 1, 0) <= 0;
  }
};

// The value of an unlabelled series in /metrics; -1 when absent.
double metric(uint16_t admin_port, const std::string& name) {
  const auto r = perfsim::testing::http_request(admin_port, "GET", "/metrics");
  REQUIRE(r.status == 200);
  std::smatch m;
  return std::regex_search(r.body, m, std::regex("\\n" + name + " ([0-9.e+]+)\\n")) ? std::stod(m[1]) : -1;
}

}  // namespace

// Issue 57 (and 54): a connection refused at --max-connections was a log line only; /metrics,
// /api/fleet and the dashboard said nothing of it.
TEST_CASE("connections refused at --max-connections are counted in /metrics beside those open") {
  Fleet f;
  perfsim::testing::PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.err_path = (f.dir.path / "serve.err").string();
  how.ready = [](const std::vector<std::string>& lines) {
    return !lines.empty() && json::parse(lines.back()).value("event", "") == "admin";
  };
  REQUIRE(serve.start(PERFSIM_EXE, "--fleet " + f.path + " --max-connections 2 --admin 127.0.0.1:0", how).ok());
  const uint16_t admin = uint16_t(json::parse(serve.lines().back()).at("port").get<int>());
  Silent a(f.address(1), f.port), b(f.address(2), f.port);
  // Accepted in any order across the hosts' listeners: the third connects once both are open.
  for (int i = 0; i < 100 && metric(admin, "perfsim_connections_open") != 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(metric(admin, "perfsim_connections_open") == 2);
  Silent c(f.address(3), f.port);
  CHECK(c.closed_within(10000));  // refused at accept
  CHECK_FALSE(a.closed_within(0));
  CHECK_FALSE(b.closed_within(0));
  CHECK(metric(admin, "perfsim_connections_open") == 2);
  CHECK(metric(admin, "perfsim_connections_refused_total") == 1);
  CHECK(metric(admin, "perfsim_connections_evicted_total") == 0);  // no --require-auth: every client is trusted
}
