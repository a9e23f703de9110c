// `perfsim query` against a hostile server over the wire (tests/recorder/hostile_server.py on
// 127.0.0.1, a free port): a malformed bind_ack, a frag_length shorter than a header, a response
// without end (full fragments past 64 MiB, or empty fragments) each end the query with exit 1 and
// a message naming the host and what was wrong, well inside the time the test allows: no crash,
// no hang, no time-out taken for an answer.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "core/subprocess.h"
#include "tests/common/host_tools.h"
#include "tests/common/run_command.h"

using namespace perfsim;

namespace {

// hostile_server.py in `mode` on 127.0.0.1:port, stopped when this goes out of scope.
struct HostileServer {
  explicit HostileServer(const std::string& mode) : port(testing::free_port()) {
    const std::string script = std::string(PERFSIM_SOURCE_DIR) + "/tests/recorder/hostile_server.py";
    subprocess::Options o;
    o.out = subprocess::Stream::kNull;
    REQUIRE(subprocess::start({PERFSIM_PYTHON, script, std::to_string(port), mode}, o, child).ok());
    for (int i = 0; i < 100 && !testing::tcp_accepts("127.0.0.1", port); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(testing::tcp_accepts("127.0.0.1", port));
  }
  ~HostileServer() { subprocess::stop(child, std::chrono::milliseconds(2000)); }
  std::string target() const { return "127.0.0.1:" + std::to_string(port); }

  uint16_t port;
  subprocess::Child child;
};

// perfsim query against the server with a 20 s step time-out; run_command's 60 s bound turns a
// hang into exit 124.
testing::CommandResult query(const HostileServer& srv, std::chrono::steady_clock::duration& took) {
  const auto t0 = std::chrono::steady_clock::now();
  testing::CommandResult r = testing::run_command(PERFSIM_EXE, "query " + srv.target() + " --timeout 20", 60);
  took = std::chrono::steady_clock::now() - t0;
  return r;
}

void expect_refusal(const std::string& mode, const std::string& words) {
  HostileServer srv(mode);
  std::chrono::steady_clock::duration took{};
  const testing::CommandResult r = query(srv, took);
  INFO(mode << ": exit " << r.code << "\n" << r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find(srv.target()) != std::string::npos);
  CHECK(r.err.find(words) != std::string::npos);
  CHECK(r.err.find("timed out") == std::string::npos);
  CHECK(took < std::chrono::seconds(20));  // refused on what was sent, not after a time-out
}

}  // namespace

TEST_CASE("perfsim query refuses a bind_ack whose result list is truncated", "[recorder][hostile_server]") {
  expect_refusal("truncated-bind-ack", "bind_ack that does not parse");
}

TEST_CASE("perfsim query refuses a PDU whose frag_length is shorter than a header", "[recorder][hostile_server]") {
  expect_refusal("short-frag-length", "not a DCE/RPC PDU");
}

TEST_CASE("perfsim query refuses a response growing past 64 MiB", "[recorder][hostile_server]") {
  expect_refusal("oversized-response", "is larger than");
}

TEST_CASE("perfsim query refuses a response of empty fragments without end", "[recorder][hostile_server]") {
  expect_refusal("endless-fragments", "fragments for one response without a last one");
}
