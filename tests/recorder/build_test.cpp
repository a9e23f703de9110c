// Capture building from exchanges (build.h): what pcap import does with a server's conversation,
// checked on conversations made from a simulated host's own answers.
#include <catch2/catch.hpp>

#include "core/utf16.h"
#include "recorder/build.h"
#include "replayer/host.h"
#include "tests/common/test_capture.h"

using namespace perfsim;

namespace {

recorder::Exchange ask(replayer::SimulatedHost& h, const std::string& key, const std::string& name,
                       std::optional<uint32_t> buffer, int64_t time) {
  const replayer::PerfKey pk = key == "HKPT" ? replayer::PerfKey::kText : replayer::PerfKey::kData;
  const replayer::ValueAnswer a = h.query(pk, name, {buffer.has_value(), buffer.value_or(0)});
  recorder::Exchange e;
  e.time_100ns = time;
  e.latency_us = 100;
  e.key = key;
  e.value_name = name;
  e.null_data = !buffer;
  e.offered = buffer.value_or(0);
  e.status = a.status;
  e.type = a.type;
  e.size = a.size;
  e.data = a.data.to_bytes();
  return e;
}

recorder::Exchange hklm(const std::string& name, uint32_t type, Bytes data) {
  recorder::Exchange e;
  e.key = recorder::kPerflibKey;
  e.value_name = name;
  e.type = type;
  e.size = uint32_t(data.size());
  e.data = std::move(data);
  return e;
}

}  // namespace

TEST_CASE("build_capture: a collector's polls become ticks, probes and retries are left out", "[recorder]") {
  captures::Capture cap = testing::test_capture();
  cap.names[0].help.clear();  // this host has no Help 009 ...
  std::shared_ptr<replayer::SimulatedHost> host;
  replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 0};
  REQUIRE(replayer::apply_setting(opt.quirks, {"win2000-echo-oversize", true, {{"overhead", "4096"}}}).ok());
  REQUIRE(replayer::SimulatedHost::load(cap, opt, host).ok());

  recorder::Conversation conv;
  conv.server = "127.0.0.9";
  conv.transport = "ncacn_ip_tcp";
  Bytes last_counter(4, 0);
  last_counter[0] = 0x40;
  conv.exchanges.push_back(hklm("Last Counter", 4, last_counter));
  conv.exchanges.push_back(ask(*host, "HKPD", "Counter 009", 1 << 16, 1));
  recorder::Exchange help = ask(*host, "HKPD", "Help 009", 1 << 16, 2);
  help.status = 2;  // ... it answers WERR_FILE_NOT_FOUND
  help.data.clear();
  conv.exchanges.push_back(help);
  const Bytes global = host->content(replayer::PerfKey::kData, "Global", 0).data.to_bytes();
  for (int poll = 0; poll < 3; ++poll) {
    const int64_t t = 10'000'000LL * (poll + 1) * 15;  // every 15 s
    conv.exchanges.push_back(ask(*host, "HKPD", "Global", std::nullopt, t));
    conv.exchanges.push_back(ask(*host, "HKPD", "Global", 1024, t + 1));
    conv.exchanges.push_back(ask(*host, "HKPD", "Global", 1 << 20, t + 2));
    conv.exchanges.push_back(ask(*host, "HKPD", "238", 1 << 20, t + 3));
  }
  REQUIRE(conv.exchanges[4].status == 234);
  REQUIRE(conv.exchanges[4].size == 1024);  // the echo

  recorder::ImportedCapture got;
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.ticks == 3);
  CHECK(got.fingerprint.more_data == "win2000-echo-oversize");
  const captures::Capture& c = got.capture;
  CHECK(c.host.name == "TESTHOST");
  CHECK(c.host.interval_ms == 15000);
  REQUIRE(c.registry.size() == 1);
  CHECK(c.registry[0].data == last_counter);
  REQUIRE(c.names.size() == 1);
  CHECK(c.names[0].counter == cap.names[0].counter);
  size_t globals = 0, ones = 0;
  for (const captures::QueryRecord& r : c.records) {
    if (r.value_name == "Global") {
      ++globals;
      CHECK(r.payload == global);
      CHECK(r.status == 0);
    }
    if (r.value_name == "238") ++ones;
  }
  CHECK(globals == 3);
  CHECK(ones == 3);

  // Replayed, the missing Help table answers as it did, at every tick, not only the first.
  std::shared_ptr<replayer::SimulatedHost> replay;
  REQUIRE(replayer::SimulatedHost::load(c, {replayer::TimelineMode::kFrozen, 2}, replay).ok());
  CHECK(replay->content(replayer::PerfKey::kData, "Help 009", 2).status == 2);
  CHECK(replay->content(replayer::PerfKey::kData, "Counter 009", 2).data == cap.names[0].counter);
  CHECK(replay->content(replayer::PerfKey::kData, "Global", 2).data == global);
}

TEST_CASE("build_capture refuses a conversation without perf data, naming the server", "[recorder]") {
  recorder::Conversation conv;
  conv.server = "10.1.2.3";
  conv.exchanges.push_back(hklm("Last Counter", 4, Bytes(4, 0)));
  recorder::ImportedCapture got;
  const Status s = recorder::build_capture(conv, got);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("10.1.2.3") != std::string::npos);
}
