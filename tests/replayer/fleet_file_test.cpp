// Fleet files (replayer/fleet_file.h) and making a serve run's hosts (replayer/serve_hosts.h).
#include <catch2/catch.hpp>

#include "replayer/fleet_file.h"
#include "replayer/serve_hosts.h"

using namespace perfsim;
using namespace perfsim::replayer;

namespace {

Status fleet(const std::string& text, std::vector<FleetHost>& out) {
  config::Doc doc;
  if (Status s = config::parse_toml(text, "/srv/hosts.toml", doc); !s.ok()) return s;
  return parse_fleet(doc, out);
}

std::string bundled(const char* name) { return std::string(PERFSIM_SOURCE_DIR) + "/captures/" + name; }

}  // namespace

TEST_CASE("a fleet file's hosts: relative captures, expansion, quirk parameters") {
  std::vector<FleetHost> h;
  REQUIRE(fleet("[[host]]\nlisten = \"127.0.0.1:20001\"\ncapture = \"web.perfcap\"\ncount = 3\nname = \"WEB-{n}\"\n"
                "[host.quirks]\nbusy = { every = 10 }\naccess-denied = { on = \"open\" }\ncostly = false\n",
                h)
              .ok());
  REQUIRE(h.size() == 1);
  CHECK(h[0].capture == "/srv/web.perfcap");
  REQUIRE(h[0].replay.quirks.size() == 3);
  for (const QuirkSetting& q : h[0].replay.quirks) {
    if (q.name == "busy") CHECK(q.params.at("every") == "10");
    if (q.name == "access-denied") CHECK((q.on && q.params.at("on") == "open"));
    if (q.name == "costly") CHECK_FALSE(q.on);
  }
  expand_fleet(h);
  REQUIRE(h.size() == 3);
  CHECK(h[2].listen == "127.0.0.1:20003");
  CHECK(h[2].fleet_index == 2);
  CHECK(fleet_listen("127.0.0.1:0", 5) == "127.0.0.1:0");
}

TEST_CASE("a wrongly typed fleet value or an unknown key names the file, line and key") {
  std::vector<FleetHost> h;
  CHECK(fleet("[[host]]\nlisten = \"127.0.0.1:0\"\ncount = \"3\"\n", h).message() ==
        "/srv/hosts.toml:3: host[0].count: expected an integer, got string \"3\"");
  CHECK_THAT(fleet("[[host]]\nlisten = \"127.0.0.1:0\"\n[[host]]\nlisten = \"127.0.0.1:0\"\nseed = -1\n", h).message(),
             Catch::StartsWith("/srv/hosts.toml:5: host[1].seed: must be between 0 and"));
  CHECK_THAT(fleet("[[host]]\nlisten = \"127.0.0.1:0\"\nspeeed = 2\n", h).message(),
             Catch::StartsWith("/srv/hosts.toml:3: host[0].speeed: unknown key (allowed: listen,"));
  CHECK_THAT(fleet("[[host]]\ncapture = \"x\"\n", h).message(), Catch::Contains("host[0].listen: missing"));
  CHECK_THAT(fleet("[[host]]\nlisten = \"127.0.0.1:0\"\n[host.quirks]\nbusy = \"often\"\n", h).message(),
             Catch::StartsWith("/srv/hosts.toml:4: host[0].quirks.busy: expected true, false or a table"));
  CHECK_THAT(fleet("[[host]]\nlisten = \"127.0.0.1:0\"\ncount = 2\n", h).message(), Catch::Contains("needs name"));
  CHECK_THAT(fleet("", h).message(), Catch::Contains("no [[host]] tables"));
}

TEST_CASE("timelines and quirk arguments are checked as text") {
  HostOptions opt;
  CHECK(parse_timeline("frozen:3", opt).ok());
  CHECK(opt.frozen_tick == 3);
  for (const char* bad : {"frozen:-1", "frozen:", "frozen:3x", "sometimes"}) CHECK_FALSE(parse_timeline(bad, opt).ok());
  QuirkSetting q;
  CHECK(parse_quirk_arg("busy:every=10", q).ok());
  CHECK_FALSE(parse_quirk_arg("busy:every=-1", q).ok());
  CHECK_FALSE(parse_quirk_arg("perffreq:hz=fast", q).ok());
}

TEST_CASE("a RecordingCache reads each capture once and its hosts share it") {
  RecordingCache cache;
  std::shared_ptr<const Recording> a, b;
  REQUIRE(cache.get(bundled("default-2016.perfcap"), a).ok());
  REQUIRE(cache.get(bundled("default-2016.perfcap"), b).ok());
  CHECK(a == b);
  RecordingCache other;  // a cache of its own: nothing is shared behind the caller's back
  REQUIRE(other.get(bundled("default-2016.perfcap"), b).ok());
  CHECK(a != b);
  CHECK_THAT(cache.get("/nonexistent.perfcap", b).message(), Catch::Contains("perfsim synth"));

  HostReplay r;
  r.count = 2;
  r.name = "WEB-{n}";
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(make_replayed_host(cache, bundled("default-2016.perfcap"), r, 1, "", HostOptions{}, h).ok());
  CHECK(h->name() == "WEB-0002");
}
