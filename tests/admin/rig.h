// A simulated host of the bundled 2016 capture served over ncacn_ip_tcp on 127.0.0.1, with the
// admin HTTP API over it: what the admin tests with real tools (prometheus, chromium) point at.
#pragma once
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "admin/api.h"
#include "admin/journal_sources.h"
#include "admin/server.h"
#include "replayer/recording.h"
#include "replayer/sample_cache.h"
#include "tests/common/served_host.h"

namespace perfsim::testing {

inline std::shared_ptr<replayer::SimulatedHost> bundled_host(replayer::HostOptions opt) {
  const std::string path = std::string(PERFSIM_SOURCE_DIR) + "/captures/default-2016.perfcap";
  std::shared_ptr<const replayer::Recording> rec;
  REQUIRE(replayer::open_recording(path, std::make_shared<replayer::SampleCache>(), rec).ok());
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::create(rec, opt, host).ok());
  return host;
}

inline ServeOptions serve_options(std::shared_ptr<journal::Recorder> recorder) {
  ServeOptions o;
  o.recorder = std::move(recorder);
  return o;
}

inline admin::AdminConfig admin_config(const std::string& token) {
  admin::AdminConfig c;
  c.token = token;
  return c;
}

struct AdminRig {
  std::shared_ptr<replayer::SimulatedHost> host;
  ServedHost served;
  admin::AdminServer http;
  // With a `recorder`, the host's calls are journaled and the journal endpoints wired to it.
  // With a `token`, every admin request must carry it (admin/token.h).
  explicit AdminRig(replayer::HostOptions opt, admin::WebFiles web = admin::WebFiles{PERFSIM_ADMIN_WEB_DIR},
                    std::shared_ptr<journal::Recorder> recorder = nullptr, const std::string& token = "")
      : host(bundled_host(opt)),
        served(host, serve_options(recorder)),
        http(admin_config(token),
             std::make_shared<admin::AdminApi>(std::vector<admin::AdminHost>{{"", host, {}, "", {}}},
                                               admin::journal_sources(recorder), std::move(web))) {
    REQUIRE(served.start().ok());
    REQUIRE(http.start().ok());
  }
};

// A fresh directory under $TMPDIR, removed with everything in it at the end of the scope.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string t = (std::filesystem::temp_directory_path() / "perfsim-admin-XXXXXX").string();
    REQUIRE(mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace perfsim::testing
