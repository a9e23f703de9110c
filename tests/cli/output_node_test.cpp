// Issue 44 D1: `-o NODE` where NODE is a device node or FIFO. Outputs are written beside their name
// and renamed into place (captures/writer.h write_replacing), which replaced /dev/null with a
// capture when run as root, and convert deleted it on failure. Every such output is refused as a
// usage error naming what to write instead, and the node is left as it was.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "captures/writer.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"
#include "tests/common/test_capture.h"

namespace {

// The node's type bits (S_IFMT), 0 when it is gone.
mode_t output_node_type(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode & S_IFMT : 0;
}

}  // namespace

TEST_CASE("convert and redact and import --perfmon refuse a FIFO or device node as output and leave it in place") {
  perfsim::testing::TempDir d;
  const std::string cap = (d.path / "in.perfcap").string();
  REQUIRE(perfsim::captures::write_capture(cap, perfsim::testing::test_capture()).ok());
  const std::string csv = (d.path / "log.csv").string();
  std::ofstream(csv) << "\"(PDH-CSV 4.0) (UTC)(0)\",\"\\\\HOST\\Memory\\Available Bytes\"\n"
                        "\"01/01/2024 00:00:00.000\",\"100\"\n";

  struct Node {
    std::string path, what;
    mode_t type;
  };
  std::vector<Node> nodes{{(d.path / "fifo").string(), "is a FIFO", S_IFIFO}};
  REQUIRE(::mkfifo(nodes[0].path.c_str(), 0600) == 0);
  // /dev/null's numbers (1, 3); making one needs root (CAP_MKNOD), as the finding's run had.
  const std::string dev = (d.path / "null").string();
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
    nodes.push_back({dev, "is a character device", S_IFCHR});
  else
    WARN("not root: the character device case is not run (mknod: " << std::strerror(errno) << ")");

  for (const Node& n : nodes) {
    for (const std::string& args : {"convert " + cap + " -o " + n.path, "redact " + cap + " -o " + n.path,
                                    "redact " + cap + " -o " + (d.path / "r.perfcap").string() + " --map " + n.path,
                                    "import --perfmon " + csv + " -o " + n.path}) {
      const auto r = perfsim::testing::run_command(PERFSIM_EXE, args, 20);
      INFO(args << "\n" << r.err);
      CHECK(r.code == 2);
      CHECK(r.err.find(n.path + " " + n.what) != std::string::npos);
      CHECK(r.err.find("name a regular file") != std::string::npos);
      CHECK(output_node_type(n.path) == n.type);
    }
  }
  CHECK_FALSE(std::filesystem::exists(d.path / "r.perfcap"));  // nothing half-made beside the refused map
}

TEST_CASE("write_replacing refuses a path that is not a regular file and leaves it") {
  perfsim::testing::TempDir d;
  const std::string fifo = (d.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  bool wrote = false;
  const perfsim::Status s = perfsim::captures::write_replacing(fifo, [&](const std::string&) {
    wrote = true;
    return perfsim::Status::Ok();
  });
  CHECK(s.code() == perfsim::Status::Code::kInvalidArgument);
  CHECK_FALSE(wrote);
  CHECK(output_node_type(fifo) == S_IFIFO);
  CHECK(perfsim::captures::check_replaceable((d.path / "new.perfcap").string()).ok());
  CHECK(perfsim::captures::check_replaceable(d.path.string()).message().find("is a directory") != std::string::npos);
}
