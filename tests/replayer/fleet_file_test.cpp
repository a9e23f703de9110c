// Fleet files (replayer/fleet_file.h) and making a serve run's hosts (replayer/serve_hosts.h).
#include <catch2/catch.hpp>

#include <limits>
#include <map>
#include <string>

#include "tests/common/test_capture.h"

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
  // By name, each looked up: a misspelt name fails here instead of skipping its check.
  std::map<std::string, QuirkSetting> by_name;
  for (const QuirkSetting& q : h[0].replay.quirks) by_name[q.name] = q;
  REQUIRE(by_name.size() == 3);
  REQUIRE(by_name.count("busy") == 1);
  REQUIRE(by_name.count("access-denied") == 1);
  REQUIRE(by_name.count("costly") == 1);
  CHECK(by_name["busy"].params.at("every") == "10");
  CHECK((by_name["access-denied"].on && by_name["access-denied"].params.at("on") == "open"));
  CHECK_FALSE(by_name["costly"].on);
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

TEST_CASE("a fleet file's speed, clock spread and variation are refused outside their range, naming it") {
  std::vector<FleetHost> h;
  const auto refusal = [&](const std::string& line) {
    return fleet("[[host]]\nlisten = \"127.0.0.1:0\"\n" + line + "\n", h).message();
  };
  CHECK(refusal("speed = 4.9e-324") ==
        "/srv/hosts.toml:3: host[0].speed: must be between 0.001 and 10000, got 5e-324 (recorded seconds per real "
        "second)");
  CHECK_THAT(refusal("speed = 1e5"), Catch::Contains("host[0].speed: must be between 0.001 and 10000, got 100000"));
  CHECK_THAT(refusal("speed = 0"), Catch::Contains("host[0].speed: must be between 0.001 and 10000"));
  CHECK_THAT(refusal("clock_spread_s = 1e300"), Catch::Contains("host[0].clock_spread_s: must be between 0 and"));
  CHECK_THAT(refusal("variation = -0.5"), Catch::Contains("host[0].variation: must be between 0 and 1, got -0.5"));
  CHECK(fleet("[[host]]\nlisten = \"127.0.0.1:0\"\nspeed = 0.001\n[[host]]\nlisten = \"127.0.0.1:0\"\nspeed = 1e4\n", h)
            .ok());
}

TEST_CASE("quirk parameters outside their range are refused naming the quirk, the parameter and the range") {
  QuirkSetting q;
  const auto refusal = [&](const std::string& text) { return parse_quirk_arg(text, q).message(); };
  // every = 0 would silently never fire.
  CHECK(refusal("busy:every=0") == "quirk busy: parameter every: must be between 1 and 4294967295, got 0");
  CHECK_THAT(refusal("empty-names-under-stress:every=0"), Catch::Contains("parameter every: must be between 1"));
  CHECK_THAT(refusal("busy:probability=1.5"), Catch::Contains("parameter probability: must be between 0 and 1"));
  CHECK_THAT(refusal("slow-global:ms=3600001"),
             Catch::Contains("quirk slow-global: parameter ms: must be between 0 and 3600000, got 3600001"));
  CHECK_THAT(refusal("hang:ms=1e15"), Catch::Contains("quirk hang: parameter ms: must be between 0 and 3600000"));
  CHECK_THAT(refusal("hang:every=2.5"), Catch::Contains("parameter every: expected a whole number"));
  CHECK_THAT(refusal("win2000-echo-oversize:overhead=1e9"),
             Catch::Contains("parameter overhead: must be between 0 and"));
  CHECK_THAT(refusal("nt4-unsettled:jitter=67108865"),
             Catch::Contains("parameter jitter: must be between 0 and 67108864"));
  CHECK_THAT(refusal("growth-between-calls:bytes=-1"), Catch::Contains("parameter bytes: must be between 0 and"));
  CHECK_THAT(refusal("object-count-lies:extra=70000"), Catch::Contains("parameter extra: must be between 0 and 65535"));
  CHECK_THAT(refusal("duplicate-instances:count=1"), Catch::Contains("parameter count: must be between 2 and 65535"));
  CHECK_THAT(refusal("duplicate-counter-defs:object=0"), Catch::Contains("parameter object: must be between 1 and"));
  CHECK_THAT(refusal("perffreq:hz=999"), Catch::Contains("parameter hz: must be between 1000 and 4294967295"));
  CHECK_THAT(refusal("localized-partial:share=2"), Catch::Contains("parameter share: must be between 0 and 1"));
  CHECK_THAT(refusal("busy:ms=5"), Catch::Contains("unknown parameter 'ms'"));  // only hang takes ms
  for (const char* edge : {"busy:every=1", "hang:ms=3600000,every=4294967295", "perffreq:hz=1000", "slow-global:ms=0",
                           "win2000-echo-oversize:overhead=67108864"}) {
    INFO(edge);
    CHECK(parse_quirk_arg(edge, q).ok());
  }
  // A fleet file's number becomes the same text, so it is refused the same way when the host is made.
  Quirks quirks;
  CHECK_THAT(apply_setting(quirks, {"slow-global", true, {{"ms", "1e+15"}}}).message(),
             Catch::Contains("parameter ms: must be between 0 and 3600000"));
}

TEST_CASE("a timeline's speed is within 0.001 and 10000 when the host is made and when it changes") {
  std::shared_ptr<SimulatedHost> h;
  HostOptions opt;
  opt.speed = 4.9e-324;
  const captures::Capture cap = testing::test_capture();
  CHECK_THAT(SimulatedHost::load(cap, opt, h).message(), Catch::Contains("timeline speed: must be between 0.001 and"));
  opt.speed = 1;
  REQUIRE(SimulatedHost::load(cap, opt, h).ok());
  for (double bad : {0.0, 4.9e-324, 1e-4, 10001.0, 1e9, std::numeric_limits<double>::quiet_NaN()}) {
    INFO(bad);
    CHECK_THAT(h->control({TimelineOpKind::kSpeed, 0, bad}).message(),
               Catch::StartsWith("speed: must be between 0.001 and 10000"));
  }
  CHECK(h->timeline_speed() == 1);  // every refusal left the pace alone
  CHECK(h->control({TimelineOpKind::kSpeed, 0, 1e-3}).ok());
  CHECK(h->control({TimelineOpKind::kSpeed, 0, 1e4}).ok());
  CHECK(h->timeline_speed() == 1e4);
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

TEST_CASE("address ranges: the first host address and how many the range holds") {
  using perfsim::replayer::ipv4_text;
  using perfsim::replayer::parse_address_range;
  uint32_t first = 0, capacity = 0;
  REQUIRE(parse_address_range("127.1.0.0/16", first, capacity).ok());
  CHECK(ipv4_text(first) == "127.1.0.1");  // the network address is skipped
  CHECK(capacity == 65534);                // and the broadcast address is no host's
  REQUIRE(parse_address_range("127.1.0.10/24", first, capacity).ok());
  CHECK(ipv4_text(first) == "127.1.0.10");  // a host address given: the range starts there
  CHECK(capacity == 245);                   // .10 .. .254
  REQUIRE(parse_address_range("127.1.0.7/32", first, capacity).ok());
  CHECK(ipv4_text(first) == "127.1.0.7");
  CHECK(capacity == 1);
  REQUIRE(parse_address_range("127.1.0.6/31", first, capacity).ok());  // RFC 3021: both are hosts
  CHECK(ipv4_text(first) == "127.1.0.6");
  CHECK(capacity == 2);
  CHECK_FALSE(parse_address_range("127.1.0.255/24", first, capacity).ok());  // only the broadcast is left
  for (const char* bad : {"127.1.0.0", "127.1.0.0/33", "127.1.0/16", "127.1.0.0/x", "::1/128", ""})
    CHECK(parse_address_range(bad, first, capacity).message().find("is not an IPv4 range") != std::string::npos);
}

TEST_CASE("shards are contiguous blocks whose sizes differ by one at most") {
  for (const uint32_t n : {1u, 2u, 3u, 7u, 10u}) {
    size_t next = 0;
    for (uint32_t k = 0; k < n; ++k) {
      std::vector<perfsim::replayer::FleetHost> hosts(10);
      for (size_t i = 0; i < hosts.size(); ++i) hosts[i].fleet_index = uint32_t(i);
      perfsim::replayer::keep_shard(hosts, k, n);
      INFO(k << "/" << n);
      CHECK((hosts.size() == 10 / n || hosts.size() == 10 / n + 1));
      for (const auto& h : hosts) CHECK(h.fleet_index == next++);  // in order, continuing the previous shard
    }
    CHECK(next == 10);
  }
}

TEST_CASE("a host's identity is resolved once: the profile's OS row (else the capture's), quirk profile, base quirks") {
  RecordingCache cache;
  HostReplay r;
  r.profile = "win2000";
  r.quirks.push_back({"busy", true, {{"every", "10"}}});
  std::shared_ptr<SimulatedHost> h;
  REQUIRE(make_replayed_host(cache, bundled("default-2016.perfcap"), r, 0, "", HostOptions{}, h).ok());
  const HostIdentity& id = h->options().identity;
  REQUIRE(id.os != nullptr);
  // One profile, one host: the profile's row, not the capture's, is what the host is (SMB dialects,
  // logon policy and srvsvc versions follow it).
  CHECK(id.os->name == "win2000");
  CHECK(id.quirk_profile == "win2000");  // where its quirks come from
  Quirks win2000;
  REQUIRE(profile_quirks("win2000", win2000).ok());
  CHECK(id.base_quirks.buffer == win2000.buffer);
  CHECK(!id.base_quirks.busy.active());  // explicit settings are not base quirks ...
  CHECK(h->quirks().busy.every == 10);   // ... but the host has them

  // rrp-exact names no OS: the capture's row stays.
  HostReplay exact;
  exact.profile = "rrp-exact";
  REQUIRE(make_replayed_host(cache, bundled("default-2016.perfcap"), exact, 0, "", HostOptions{}, h).ok());
  CHECK(h->options().identity.os == windows::find_os("2016"));

  // Without a profile the fingerprint names it, and a fleet member keeps the whole identity.
  HostReplay fleet;
  fleet.count = 2;
  REQUIRE(make_replayed_host(cache, bundled("default-2016.perfcap"), fleet, 1, "", HostOptions{}, h).ok());
  CHECK(h->options().identity.quirk_profile == "2016");
  CHECK(h->options().identity.os == windows::find_os("2016"));
  CHECK(!h->options().identity.system_name.empty());
}

TEST_CASE("a fleet expands entry by entry, so every shard holds one run of each entry it touches") {
  std::vector<FleetHost> h;
  REQUIRE(fleet("[[host]]\naddresses = \"127.1.0.0/16\"\nport = 4135\ncount = 3\nname = \"A-{n}\"\n"
                "[[host]]\nlisten = \"127.0.0.9:5000\"\ncount = 2\nname = \"B-{n}\"\n",
                h)
              .ok());
  expand_fleet(h);
  std::vector<std::string> order;
  for (const FleetHost& m : h) order.push_back(m.listen + "#" + std::to_string(m.fleet_index));
  CHECK(order == std::vector<std::string>{"127.1.0.1:4135#0", "127.1.0.2:4135#1", "127.1.0.3:4135#2",
                                          "127.0.0.9:5000#0", "127.0.0.9:5001#1"});
  std::vector<FleetHost> second = h;
  perfsim::replayer::keep_shard(second, 1, 2);  // hosts 2..4 of 5: A's third, then both of B
  REQUIRE(second.size() == 3);
  CHECK(second[0].listen == "127.1.0.3:4135");
  CHECK(second[1].listen == "127.0.0.9:5000");
  CHECK(second[2].listen == "127.0.0.9:5001");
}
