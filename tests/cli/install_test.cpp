// `cmake --install` of this build into a fresh prefix: the installed perfsim finds its bundled
// captures and dashboard under PREFIX/share/perfsim (core/data_dir.h), and $PERFSIM_DATA_DIR
// overrides both.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "captures/reader.h"
#include "tests/admin/http_client.h"
#include "tests/common/perfsim_serve.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using perfsim::testing::PerfsimServe;
using perfsim::testing::TempDir;

namespace {

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The listening event, then the admin event.
bool two_lines(const std::vector<std::string>& lines) { return lines.size() >= 2; }

}  // namespace

TEST_CASE("cmake --install: the installed perfsim serves its installed default host and dashboard") {
  TempDir d("perfsim-install");
  const fs::path prefix = d.path / "usr";
  const auto installed = perfsim::testing::run_command(
      CMAKE_COMMAND, "--install " + std::string(PERFSIM_BUILD_DIR) + " --prefix " + prefix.string(), 120);
  INFO(installed.out << installed.err);
  REQUIRE(installed.code == 0);
  const fs::path exe = prefix / "bin" / "perfsim";
  const fs::path data = prefix / "share" / "perfsim";
  REQUIRE(fs::is_regular_file(exe));
  REQUIRE(fs::is_regular_file(data / "captures" / "default-2016.perfcap"));
  REQUIRE(fs::is_regular_file(data / "web" / "index.html"));

  PerfsimServe serve;
  perfsim::testing::ServeStart how;
  how.ready = two_lines;
  const perfsim::Status st =
      serve.start(exe.string(), "--listen 127.0.0.1:0 --admin 127.0.0.1:0 --timeline frozen:0", how);
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(serve.host() == "PERFSIM-2016");
  const json listening = json::parse(serve.lines().at(0));
  CHECK(listening.at("capture") == (data / "captures" / "default-2016.perfcap").string());
  const json admin = json::parse(serve.lines().at(1));
  REQUIRE(admin.at("event") == "admin");

  // The page comes from the installed copy, the answer from the installed capture.
  const auto page = perfsim::testing::http_request(admin.at("port").get<uint16_t>(), "GET", "/");
  INFO(page.error);
  CHECK(page.status == 200);
  CHECK(page.body == file_text(data / "web" / "index.html"));
  const auto q = perfsim::testing::run_command(exe.string(), "query --json " + serve.endpoint() + " Global");
  INFO(q.out << q.err);
  REQUIRE(q.code == 0);
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(perfsim::captures::Reader::open((data / "captures" / "default-2016.perfcap").string(), reader).ok());
  perfsim::captures::QueryRecord rec;
  REQUIRE(reader->read_record(0, rec).ok());
  CHECK(json::parse(q.out).at(0).at("bytes") == rec.payload.size());
  CHECK(serve.stop() == 0);
}

TEST_CASE("PERFSIM_DATA_DIR: perfsim serve's default host comes from the folder it names") {
  TempDir d("perfsim-datadir");
  fs::create_directories(d.path / "captures");
  // A 2003 host under the default's name: the host that answers says which file was read.
  fs::copy_file(std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2003.perfcap",
                d.path / "captures" / "default-2016.perfcap");
  PerfsimServe serve;
  const perfsim::Status st = serve.start("env PERFSIM_DATA_DIR=" + d.path.string() + " " + PERFSIM_EXE,
                                         "--listen 127.0.0.1:0 --timeline frozen:0");
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(serve.host() == "PERFSIM-2003");
  CHECK(json::parse(serve.lines().at(0)).at("capture") == (d.path / "captures" / "default-2016.perfcap").string());
  CHECK(serve.stop() == 0);
}
