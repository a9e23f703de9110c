// Capture building from exchanges (build.h): what pcap import does with a server's conversation,
// checked on conversations made from a simulated host's own answers.
#include <catch2/catch.hpp>

#include "core/utf16.h"
#include "recorder/build.h"
#include "replayer/host.h"
#include "tests/common/small_synth.h"

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

recorder::Exchange hklm(const std::string& name, uint32_t type, Bytes data,
                        const std::string& key = recorder::kPerflibKey) {
  recorder::Exchange e;
  e.key = key;
  e.value_name = name;
  e.type = type;
  e.size = uint32_t(data.size());
  e.data = std::move(data);
  return e;
}

}  // namespace

TEST_CASE("build_capture: a collector's polls become ticks, probes and retries are left out", "[recorder]") {
  captures::Capture cap = testing::small_synth_capture(4, 2);  // its counters move from sample to sample
  cap.names[0].help.clear();                                   // this host has no Help 009 ...
  std::shared_ptr<replayer::SimulatedHost> host;
  replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 0};
  REQUIRE(replayer::apply_setting(opt.quirks, {"win2000-echo-oversize", true, {{"overhead", "4096"}}}).ok());
  REQUIRE(replayer::SimulatedHost::load(cap, opt, host).ok());
  // Each poll reads the host at its own recorded sample, as a real host's counters move.
  std::vector<std::shared_ptr<replayer::SimulatedHost>> at(3);
  for (uint32_t i = 0; i < 3; ++i) {
    opt.frozen_tick = i;
    REQUIRE(replayer::SimulatedHost::load(cap, opt, at[i]).ok());
  }

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
  std::vector<Bytes> global;
  for (int poll = 0; poll < 3; ++poll) {
    const int64_t t = 10'000'000LL * (poll + 1) * 15;  // every 15 s
    replayer::SimulatedHost& h = *at[size_t(poll)];
    global.push_back(h.content(replayer::PerfKey::kData, "Global", uint32_t(poll)).data.to_bytes());
    conv.exchanges.push_back(ask(h, "HKPD", "Global", std::nullopt, t));
    conv.exchanges.push_back(ask(h, "HKPD", "Global", 1024, t + 1));
    conv.exchanges.push_back(ask(h, "HKPD", "Global", 1 << 20, t + 2));
    conv.exchanges.push_back(ask(h, "HKPD", "238", 1 << 20, t + 3));
  }
  REQUIRE(global[0] != global[1]);
  REQUIRE(conv.exchanges[4].status == 234);
  REQUIRE(conv.exchanges[4].size == 1024);  // the echo

  recorder::ImportedCapture got;
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.ticks == 3);
  CHECK(got.fingerprint.more_data == "win2000-echo-oversize");
  const captures::Capture& c = got.capture;
  CHECK(c.host.name == cap.host.name);
  CHECK(c.host.interval_ms == 15000);
  REQUIRE(c.registry.size() == 1);
  CHECK(c.registry[0].data == last_counter);
  REQUIRE(c.names.size() == 1);
  CHECK(c.names[0].counter == cap.names[0].counter);
  size_t globals = 0, ones = 0;
  for (const captures::QueryRecord& r : c.records) {
    if (r.value_name == "Global") {
      REQUIRE(globals < 3);
      CHECK(r.payload == global[globals]);
      CHECK(r.status == 0);
      ++globals;
    }
    if (r.value_name == "238") ++ones;
  }
  CHECK(globals == 3);
  CHECK(ones == 3);
  CHECK(got.notes.empty());

  // Replayed, the missing Help table answers as it did, at every tick, not only the first.
  std::shared_ptr<replayer::SimulatedHost> replay;
  REQUIRE(replayer::SimulatedHost::load(c, {replayer::TimelineMode::kFrozen, 2}, replay).ok());
  CHECK(replay->content(replayer::PerfKey::kData, "Help 009", 2).status == 2);
  CHECK(replay->content(replayer::PerfKey::kData, "Counter 009", 2).data == cap.names[0].counter);
  CHECK(replay->content(replayer::PerfKey::kData, "Global", 2).data == global[2]);
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

// Issue 30 item 9: two collectors polling one host made one series of both (a 5,001 ms interval
// from two 10 s polls), and answers repeated by a replay or a cache were samples in which no
// counter moved (dump then showed 100 % processor time).
TEST_CASE("build_capture: one client's polls make the series and repeated answers are not samples", "[recorder]") {
  const captures::Capture cap = testing::small_synth_capture(4, 2);
  std::vector<std::shared_ptr<replayer::SimulatedHost>> at(3);
  for (uint32_t i = 0; i < 3; ++i)
    REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, i}, at[i]).ok());
  recorder::Conversation conv;
  conv.server = "10.0.0.5";
  conv.transport = "ncacn_ip_tcp";
  auto poll = [&](uint32_t tick, const std::string& client, int64_t t) {
    recorder::Exchange e = ask(*at[tick], "HKPD", "Global", 1 << 20, t);
    e.client = client;
    conv.exchanges.push_back(std::move(e));
  };
  constexpr int64_t kSecond = 10'000'000;
  // A polls every 10 s (ticks 0, 1, 2; tick 1 answered twice, 1 s apart); B polls twice, 5 s after A.
  poll(0, "10.0.0.9:50001", 10 * kSecond);
  poll(0, "10.0.0.7:50002", 15 * kSecond);
  poll(1, "10.0.0.9:50001", 20 * kSecond);
  poll(1, "10.0.0.9:50001", 21 * kSecond);
  poll(1, "10.0.0.7:50002", 25 * kSecond);
  poll(2, "10.0.0.9:50001", 30 * kSecond);
  recorder::ImportedCapture got;
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.ticks == 3);
  CHECK(got.capture.host.interval_ms == 10000);  // not 5,000: B's polls are not in the series
  std::vector<Bytes> payloads;
  for (const captures::QueryRecord& r : got.capture.records) payloads.push_back(r.payload);
  REQUIRE(payloads.size() == 3);
  for (uint32_t i = 0; i < 3; ++i)
    CHECK(payloads[i] == at[i]->content(replayer::PerfKey::kData, "Global", i).data.to_bytes());
  REQUIRE(got.notes.size() == 2);
  CHECK(got.notes[0].find("the series is 10.0.0.9:50001's 4 answers; left out: 10.0.0.7:50002 (2)") !=
        std::string::npos);
  CHECK(got.notes[1].find("1 answer(s) left out") == 0);
}

TEST_CASE("build_capture: the NTLMSSP CHALLENGE's Version gives the profile when no CurrentVersion was read",
          "[recorder]") {
  const captures::Capture cap = testing::small_synth_capture(4, 2);
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 0}, host).ok());
  recorder::Conversation conv;
  conv.server = "10.0.0.6";
  conv.transport = "ncacn_np";
  conv.exchanges.push_back(ask(*host, "HKPD", "Global", 1 << 20, 1));
  recorder::ImportedCapture got;
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.capture.host.profile.empty());  // nothing says which Windows this was

  conv.announced = rpc::NtlmVersion{10, 0, 17763};
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.capture.host.profile == "2019");
  CHECK(got.capture.host.build_number == "17763");
  REQUIRE(got.notes.size() == 1);
  CHECK(got.notes[0] ==
        "profile 2019 from the NTLMSSP CHALLENGE's Version (MS-NLMP 2.2.2.10) says Windows 10.0 build 17763 (the "
        "collector read no CurrentVersion)");

  // A version no profile has is said, and the profile stays unknown.
  conv.announced = rpc::NtlmVersion{3, 51, 1057};
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.capture.host.profile.empty());
  REQUIRE(got.notes.size() == 1);
  CHECK(got.notes[0].find("which no profile matches") != std::string::npos);

  // CurrentVersion, where the collector read it, stays; a disagreement is noted.
  conv.announced = rpc::NtlmVersion{6, 1, 7601};
  for (const auto& [name, text] : {std::pair{"CurrentVersion", u"6.3"}, std::pair{"CurrentBuildNumber", u"14393"}}) {
    Bytes sz;
    put_utf16le(sz, std::u16string(text) + u'\0');
    conv.exchanges.push_back(hklm(name, 1, sz, recorder::kCurrentVersionKey));  // REG_SZ
  }
  REQUIRE(recorder::build_capture(conv, got).ok());
  CHECK(got.capture.host.profile == "2016");
  REQUIRE(got.notes.size() == 1);
  CHECK(got.notes[0].find("(profile 2008r2), CurrentVersion says profile 2016: CurrentVersion kept") !=
        std::string::npos);
}
