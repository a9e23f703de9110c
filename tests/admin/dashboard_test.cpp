// The dashboard in Debian's chromium, headless: the page loads Chart.js from libjs-chart.js
// through perfsim, lists the hosts, plots a counter's formatted values, shows the sessions' state;
// a screenshot is saved. Without Chart.js the page says so instead of drawing nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "recorder/client.h"
#include "server/winreg_handler.h"
#include "tests/admin/http_client.h"
#include "tests/admin/rig.h"
#include "tests/common/host_tools.h"
#include "tests/interop/support.h"

namespace {

namespace fs = std::filesystem;

// chromium --headless on the page: the DOM after `budget_ms` of virtual time (or a screenshot).
perfsim::interop::CommandResult chromium(const fs::path& dir, const std::string& url, const std::string& what) {
  return perfsim::interop::run_command(
      "timeout 120 " + std::string(CHROMIUM_EXE) + " --headless --no-sandbox --disable-gpu --no-first-run" +
      " --user-data-dir=" + perfsim::interop::shell_quote((dir / "profile").string()) +
      " --virtual-time-budget=5000 --window-size=1200,1600 " + what + " " + url + " 2>/dev/null");
}

long attribute(const std::string& dom, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(pattern))) return -1;
  return std::stol(m[1].str());
}

}  // namespace

TEST_CASE("headless chromium: the dashboard lists the host, plots a counter, shows a session and saves a screenshot") {
  perfsim::testing::ScratchDir dir;
  std::shared_ptr<perfsim::journal::Recorder> recorder;
  REQUIRE(perfsim::server::make_recorder(1000, "", recorder).ok());
  perfsim::testing::AdminRig rig(perfsim::replayer::HostOptions{perfsim::replayer::TimelineMode::kRealtime, 0},
                                 perfsim::admin::WebFiles{PERFSIM_ADMIN_WEB_DIR}, recorder);
  {  // one collector session: OpenHKPD, Global from a 4 KB buffer up, CloseKey
    std::unique_ptr<perfsim::recorder::WinregClient> client;
    REQUIRE(perfsim::recorder::WinregClient::connect("127.0.0.1", rig.served.port(), std::chrono::seconds(10), client)
                .ok());
    perfsim::winreg::PolicyHandle hkpd;
    REQUIRE(client->open_hive(perfsim::winreg::kOpenHKPD, hkpd).ok());
    perfsim::recorder::Growth g;
    g.initial = 4096;
    perfsim::recorder::ValueResult v;
    REQUIRE(client->query_value_growing(hkpd, "Global", g, v).ok());
    uint32_t werr = 1;
    REQUIRE(client->close_key(hkpd, werr).ok());
    REQUIRE(werr == 0);
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(rig.http.port()) + "/";
  const auto r = chromium(dir.path, url, "--dump-dom");
  INFO(r.output.substr(0, 4000));
  REQUIRE(r.exit_status == 0);
  const std::string& dom = r.output;
  CHECK(dom.find("data-ready=\"yes\"") != std::string::npos);
  CHECK(dom.find("<tr class=\"host\" data-host=\"" + rig.host->name() + "\"") != std::string::npos);
  CHECK(dom.find("chart-missing") == std::string::npos);
  // The series chart drew every formatted value of % Processor Time (_Total): one per sample but the first.
  CHECK(attribute(dom, "id=\"series-chart\"[^>]*data-points=\"(\\d+)\"") == long(rig.host->ticks()) - 1);
  CHECK(attribute(dom, "id=\"series-chart\"[^>]*data-drawn=\"(\\d+)\"") == long(rig.host->ticks()) - 1);
  // The session's diagnosis: one row, the growth the client used after ERROR_MORE_DATA.
  CHECK(dom.find("data-state=\"enabled\"") != std::string::npos);
  CHECK(dom.find("<tr class=\"session\" data-session=\"1\" data-growth=\"exact\"") != std::string::npos);
  CHECK(dom.find("1/1 closed") != std::string::npos);

  const fs::path png = dir.path / "dashboard.png";
  const auto s = chromium(dir.path, url, "--screenshot=" + perfsim::interop::shell_quote(png.string()));
  REQUIRE(s.exit_status == 0);
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 10000);
  CHECK(perfsim::testing::read_text(png.string()).substr(1, 3) == "PNG");
}

TEST_CASE("without libjs-chart.js the dashboard says what to install, and /chart.js is a 404 saying so") {
  perfsim::testing::ScratchDir dir;
  perfsim::testing::AdminRig rig(perfsim::replayer::HostOptions{perfsim::replayer::TimelineMode::kFrozen, 0},
                                 perfsim::admin::WebFiles{PERFSIM_ADMIN_WEB_DIR, "/nonexistent/chart.min.js"});
  const auto js = perfsim::testing::http_request(rig.http.port(), "GET", "/chart.js");
  CHECK(js.status == 404);
  CHECK(js.body.find("apt-get install libjs-chart.js") != std::string::npos);
  const auto r = chromium(dir.path, "http://127.0.0.1:" + std::to_string(rig.http.port()) + "/", "--dump-dom");
  REQUIRE(r.exit_status == 0);
  CHECK(r.output.find("id=\"chart-missing\"") != std::string::npos);
  CHECK(r.output.find("libjs-chart.js") != std::string::npos);
  CHECK(r.output.find("data-host=\"" + rig.host->name() + "\"") != std::string::npos);  // tables still work
}
