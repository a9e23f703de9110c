// `cmake --install` of this build into a fresh prefix: the installed perfsim finds its bundled
// captures and dashboard under PREFIX/share/perfsim (core/data_dir.h), and $PERFSIM_DATA_DIR
// overrides both. The Debian package (cmake/package.cmake), installed by dpkg, does the same.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

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
  // Served as installed, with the fleet's figures filled into its tiles and its first state into
  // the initial-fleet slot (admin/api.cpp index_page: the first paint shows numbers). The page's
  // head up to the first tile and everything after the slot (the script) are the installed file's.
  const std::string page_file = file_text(data / "web" / "index.html");
  const std::string slot = "<script id=\"initial-fleet\" type=\"application/json\">";
  const size_t tile = page_file.find("id=\"total-");
  const size_t open = page.body.find(slot), installed_open = page_file.find(slot);
  REQUIRE(tile != std::string::npos);
  REQUIRE(open != std::string::npos);
  REQUIRE(installed_open != std::string::npos);
  CHECK(page.body.compare(0, tile, page_file, 0, tile) == 0);
  const size_t close = page.body.find("</script>", open + slot.size());
  REQUIRE(close != std::string::npos);
  CHECK(page.body.substr(open + slot.size(), close - open - slot.size()).find("PERFSIM-2016") != std::string::npos);
  CHECK(page.body.substr(close) == page_file.substr(installed_open + slot.size()));
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

namespace {

// The words of a comma-separated Debian relationship field, without version constraints:
// "libc6 (>= 2.34), liblz4-1 (>= 0.0~r130)" -> {"libc6", "liblz4-1"}.
std::set<std::string> package_names(const std::string& field) {
  std::set<std::string> out;
  std::stringstream ss(field);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t begin = item.find_first_not_of(" \n");
    if (begin == std::string::npos) continue;
    const size_t end = item.find_first_of(" (\n", begin);
    out.insert(item.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  }
  return out;
}

// The Debian packages that hold the shared libraries `exe` names itself (ELF NEEDED entries, as
// dpkg-shlibdeps reads them; `ldd` says where the loader finds each), by `dpkg -S`: what Depends
// must name, found without cpack.
std::set<std::string> packages_of_needed_libraries(const std::string& exe) {
  const auto dynamic = perfsim::testing::run_command("readelf", "-d -W " + exe);
  REQUIRE(dynamic.code == 0);
  std::set<std::string> needed;  // "liblz4.so.1"
  static const std::regex needed_entry(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (auto it = std::sregex_iterator(dynamic.out.begin(), dynamic.out.end(), needed_entry);
       it != std::sregex_iterator(); ++it)
    needed.insert((*it)[1].str());
  REQUIRE(!needed.empty());
  const auto ldd = perfsim::testing::run_command("ldd", exe);
  REQUIRE(ldd.code == 0);
  // dpkg's database names a file as its package shipped it: the link or its target, under /lib or
  // /usr/lib (Debian 12 merges the two on disk, not in dpkg's lists). One query for all of them.
  std::string patterns;
  std::stringstream lines(ldd.out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t arrow = line.find(" => /");
    if (arrow == std::string::npos) continue;
    const std::string soname = line.substr(line.find_first_not_of(" \t"), arrow - line.find_first_not_of(" \t"));
    if (!needed.count(soname)) continue;
    const std::string path = line.substr(arrow + 4, line.find(" (", arrow) - arrow - 4);
    for (const std::string& p : {path, fs::canonical(path).string()})
      patterns += " " + p + " " + (p.rfind("/usr/", 0) == 0 ? p.substr(4) : "/usr" + p);
  }
  const auto owners = perfsim::testing::run_command("dpkg", "-S" + patterns + " 2>/dev/null; true");
  std::set<std::string> out;
  std::stringstream found(owners.out);
  while (std::getline(found, line))
    if (line.find(": /") != std::string::npos)
      out.insert(line.substr(0, line.find(':')));  // "liblz4-1:amd64: /usr/lib/..."
  return out;
}

}  // namespace

TEST_CASE("cpack -G DEB: dpkg installs the package into a scratch root and its perfsim serves") {
  TempDir d("perfsim-deb");
  const auto packed = perfsim::testing::run_command(
      CPACK_COMMAND, "-G DEB -B " + (d.path / "out").string() + " --config " + PERFSIM_BUILD_DIR + "/CPackConfig.cmake",
      300);
  INFO(packed.out << packed.err);
  REQUIRE(packed.code == 0);
  fs::path deb;
  for (const auto& e : fs::directory_iterator(d.path / "out"))
    if (e.path().extension() == ".deb") deb = e.path();
  REQUIRE(!deb.empty());

  // Declared dependencies: every library the built binary loads, by the package Debian ships it in.
  const auto fields = perfsim::testing::run_command("dpkg-deb", "-f " + deb.string() + " Package Depends Recommends");
  INFO(fields.out << fields.err);
  REQUIRE(fields.code == 0);
  const std::string depends_line = fields.out.substr(fields.out.find("Depends: ") + 9);
  const std::set<std::string> depends = package_names(depends_line.substr(0, depends_line.find('\n')));
  const std::set<std::string> needed = packages_of_needed_libraries(PERFSIM_EXE);
  CHECK(needed.count("liblz4-1") == 1);  // a library perfsim links directly, found the independent way
  for (const std::string& p : needed) {
    INFO("Depends lacks " << p);
    CHECK(depends.count(p) == 1);
  }
  CHECK(fields.out.find("Recommends: samba") != std::string::npos);
  const auto description = perfsim::testing::run_command("dpkg-deb", "-f " + deb.string() + " Description");
  INFO(description.out);
  CHECK(description.out.find("compact capture files, and replays") != std::string::npos);
  CHECK(description.out.find(';') == std::string::npos);  // not a CMake list joined into the text

  // dpkg's own install into an empty root: its database there says installed, its file list has
  // the binary and the bundled hosts.
  const fs::path root = d.path / "root";
  fs::create_directories(root / "var/lib/dpkg/updates");
  fs::create_directories(root / "var/lib/dpkg/info");
  std::ofstream(root / "var/lib/dpkg/status").close();
  const std::string dpkg =
      std::string(geteuid() == 0 ? "" : "fakeroot ") + "env PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg";
  const std::string at_root = " --root=" + root.string() + " --log=" + (d.path / "dpkg.log").string();
  const auto installed = perfsim::testing::run_command(dpkg, at_root + " --force-depends -i " + deb.string(), 120);
  INFO(installed.out << installed.err);
  REQUIRE(installed.code == 0);
  const auto status = perfsim::testing::run_command(dpkg, at_root + " -s perfsim");
  CHECK(status.out.find("Status: install ok installed") != std::string::npos);
  const auto files = perfsim::testing::run_command(dpkg, at_root + " -L perfsim");
  CHECK(files.out.find("/usr/bin/perfsim\n") != std::string::npos);
  CHECK(files.out.find("/usr/share/perfsim/captures/default-2016.perfcap\n") != std::string::npos);

  // Stripped: no DWARF in what was installed.
  const fs::path exe = root / "usr/bin/perfsim";
  const auto sections = perfsim::testing::run_command("readelf", "-S -W " + exe.string());
  REQUIRE(sections.code == 0);
  CHECK(sections.out.find(".debug_info") == std::string::npos);

  // The installed perfsim answers from the installed default host.
  PerfsimServe serve;
  const perfsim::Status st = serve.start(exe.string(), "--listen 127.0.0.1:0 --timeline frozen:0");
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(serve.host() == "PERFSIM-2016");
  const fs::path capture = root / "usr/share/perfsim/captures/default-2016.perfcap";
  CHECK(json::parse(serve.lines().at(0)).at("capture") == capture.string());
  const auto q = perfsim::testing::run_command(exe.string(), "query --json " + serve.endpoint() + " Global");
  INFO(q.out << q.err);
  REQUIRE(q.code == 0);
  std::unique_ptr<perfsim::captures::Reader> reader;
  REQUIRE(perfsim::captures::Reader::open(capture.string(), reader).ok());
  perfsim::captures::QueryRecord rec;
  REQUIRE(reader->read_record(0, rec).ok());
  CHECK(json::parse(q.out).at(0).at("bytes") == rec.payload.size());
  CHECK(serve.stop() == 0);
}
