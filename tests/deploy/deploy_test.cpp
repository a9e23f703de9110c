// deploy/ checked offline (check_deploy.py says what). kubectl's client-side dry run is not used:
// kubectl 1.3x asks a server (localhost:8080 by default) for its API groups even with
// --dry-run=client, and a test may only reach ports it opened.
#include <catch2/catch.hpp>

#include <string>

#include "tests/common/run_command.h"

TEST_CASE("deploy: the manifests parse, their shards cover the fleet as perfsim serve --shard does") {
  const auto r = perfsim::testing::run_command(
      PERFSIM_PYTHON, std::string("-B ") + CHECK_DEPLOY + " --repo " + REPO_DIR + " --perfsim " + PERFSIM_EXE, 300);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find("ok   shard 49/50") != std::string::npos);
}
