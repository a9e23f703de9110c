// Providers on a simulated host: the Transfer/Peer example installed with its collect spec,
// served through the replayer; disabled, timed-out and bad providers.
#include <catch2/catch.hpp>

#include "helpers.h"
#include "lodctr/providers.h"
#include "perfdata/model.h"
#include "perfdata/select.h"
#include "perfdata/validate.h"
#include "perfdata/winperf.h"
#include "replayer/host.h"

namespace perfsim::lodctr {
namespace {

using namespace test;
using namespace winperf;

struct Installed {
  captures::Capture cap;
  InstallReport names;
  ProviderReport provider;
  Status status;
};

CollectSpec transfer_spec() {
  CollectSpec cs;
  const Status s = load_collect_spec(example("transfer.collect.toml"), cs);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return cs;
}

Installed install_transfer(const CollectSpec& cs) {
  Installed x;
  x.cap = host();
  CounterIni ini;
  Symbols syms;
  REQUIRE(load_ini(example("transfer.ini"), ini, syms).ok());
  REQUIRE(install(x.cap, ini, syms, &x.names).ok());
  x.status = add_provider(x.cap, ini.driver, syms, cs, &x.provider);
  return x;
}

perfdata::DataBlock decode(ByteView b) {
  perfdata::DataBlock d;
  REQUIRE(perfdata::parse(b, d, {.tolerant = false}).ok());
  return d;
}

const captures::QueryRecord& record(const captures::Capture& c, uint32_t tick, const std::string& name) {
  for (const captures::QueryRecord& r : c.records)
    if (r.tick == tick && r.value_name == name) return r;
  FAIL("no " << name << " at tick " << tick);
  return c.records.front();
}

TEST_CASE("the Transfer/Peer example serves its objects at the lodctr indices, laid out as Collect does") {
  const Installed x = install_transfer(transfer_spec());
  INFO(x.status.ToString());
  REQUIRE(x.status.ok());
  const uint32_t fc = x.names.range.first_counter, fh = x.names.range.first_help;
  CHECK(x.provider.objects == std::vector<uint32_t>{fc, fc + 6});
  CHECK(x.provider.records_changed == 3);  // Global of each tick; Costly holds none of them
  const perfdata::NameTable names = served(x.cap, "009", false);

  for (uint32_t tick = 0; tick < 3; ++tick) {
    const captures::QueryRecord& g = record(x.cap, tick, "Global");
    CHECK(g.size == g.payload.size());
    const std::vector<perfdata::Finding> findings = perfdata::validate(g.payload);
    for (const perfdata::Finding& f : findings) INFO(perfdata::to_string(f));
    CHECK(!perfdata::has_errors(findings));
    const perfdata::DataBlock d = decode(g.payload);
    const perfdata::Object* transfer = d.find(fc);
    const perfdata::Object* peer = d.find(fc + 6);
    REQUIRE(transfer != nullptr);
    REQUIRE(peer != nullptr);
    CHECK(text_at(names, transfer->name_index) == "Transfer");
    CHECK(transfer->help_index == fh);
    CHECK(transfer->num_instances == PERF_NO_INSTANCES);
    REQUIRE(transfer->counters.size() == 3);
    CHECK(text_at(names, transfer->counters[0].name_index) == "Bytes Sent");
    CHECK(transfer->counters[0].help_index == fh + 2);
    CHECK(transfer->counters[0].type == PERF_COUNTER_RAWCOUNT);
    CHECK(transfer->counters[0].size == 4);
    CHECK(text_at(names, transfer->counters[1].name_index) == "Available Bandwidth");
    CHECK(transfer->counters[1].type == PERF_RAW_FRACTION);
    CHECK(transfer->counters[2].type == PERF_RAW_BASE);  // Total Bandwidth: no title index
    CHECK(transfer->counters[2].name_index == 0);
    CHECK(transfer->counters[2].help_index == 0);
    CHECK(perfdata::read_counter(transfer->counter_block, transfer->counters[2]) == 1000000);
    const uint64_t avail = perfdata::read_counter(transfer->counter_block, transfer->counters[1]);
    CHECK(avail >= 400000);  // sine 60 +- 20 %
    CHECK(avail <= 800000);
    // Bytes Sent: rate 125000/s from the first sample, 15 s apart.
    const uint64_t sent = perfdata::read_counter(transfer->counter_block, transfer->counters[0]);
    CHECK(sent >= uint64_t(tick) * 15 * 125000);
    CHECK(sent <= (uint64_t(tick) * 15 + 1) * 125000);
    CHECK(transfer->perf_time == d.perf_time);  // the host's clock
    REQUIRE(peer->instances.size() == 2);
    CHECK(peer->num_instances == 2);
    CHECK(peer->instances[0].name() == u"Peer 1");
    CHECK(peer->instances[1].name() == u"Peer 2");
    CHECK(text_at(names, peer->counters.at(0).name_index) == "Bytes Served");
    CHECK(&d.objects[d.objects.size() - 2] == transfer);  // appended after the host's own
  }
  // Nothing else changed: the recorded objects are still there, in order.
  const perfdata::DataBlock before = decode(record(host(), 1, "Global").payload);
  const perfdata::DataBlock after = decode(record(x.cap, 1, "Global").payload);
  REQUIRE(after.objects.size() == before.objects.size() + 2);
  for (size_t i = 0; i < before.objects.size(); ++i) CHECK(after.objects[i].name_index == before.objects[i].name_index);
  CHECK(record(x.cap, 1, "Costly").payload == record(host(), 1, "Costly").payload);
}

TEST_CASE("index queries: the provider answers only the objects it owns") {
  const Installed x = install_transfer(transfer_spec());
  REQUIRE(x.status.ok());
  const uint32_t fc = x.names.range.first_counter;
  std::shared_ptr<replayer::SimulatedHost> h;
  REQUIRE(replayer::SimulatedHost::load(x.cap, {replayer::TimelineMode::kFrozen, 1}, h).ok());
  auto objects = [&](const std::string& q) {
    const replayer::ValueContent c = h->content(replayer::PerfKey::kData, q, 1);
    std::vector<uint32_t> out;
    for (const perfdata::Object& o : decode(c.data).objects) out.push_back(o.name_index);
    return out;
  };
  CHECK(objects(std::to_string(fc + 6)) == std::vector<uint32_t>{fc, fc + 6});  // asking for Peer returns Transfer too
  // PerfOS: System, Memory, Processor, Objects, Paging File and its Cache counter set (synth/README.md).
  const std::vector<uint32_t> perfos = objects("238");
  REQUIRE(perfos.size() == 6);
  const uint32_t cache = perfos.back();
  CHECK(text_at(served(x.cap, "009", false), cache) == "Cache");
  CHECK(perfos == std::vector<uint32_t>{2, 4, 238, 260, 700, cache});  // PerfOS only: no provider objects
  CHECK(objects("238 " + std::to_string(fc)) == std::vector<uint32_t>{2, 4, 238, 260, 700, cache, fc, fc + 6});
  const std::vector<uint32_t> global = objects("Global");
  CHECK(std::count(global.begin(), global.end(), fc) == 1);
  // The registry says who the provider is.
  const std::string key = performance_key("Transfer");
  REQUIRE(find_value(x.cap, key, "Collect") != nullptr);
  CHECK(find_value(x.cap, key, "Collect")->data == reg_sz("CollectTransferPerformanceData"));
  CHECK(find_value(x.cap, key, "Disable Performance Counters") == nullptr);
}

TEST_CASE("a disabled provider is in the registry but in no answer") {
  CollectSpec cs = transfer_spec();
  cs.disabled = true;
  const Installed x = install_transfer(cs);
  REQUIRE(x.status.ok());
  CHECK(dword(x.cap, performance_key("Transfer"), "Disable Performance Counters") == 1);
  for (const captures::QueryRecord& r : x.cap.records)
    CHECK(decode(r.payload).find(x.names.range.first_counter) == nullptr);
  CHECK(x.cap.catalog.size() == host().catalog.size());
}

TEST_CASE("a provider that times out is missing from that tick's answers only") {
  CollectSpec cs = transfer_spec();
  cs.timeout_ticks = {1};
  const Installed x = install_transfer(cs);
  REQUIRE(x.status.ok());
  CHECK(x.provider.ticks_timed_out == 1);
  const uint32_t fc = x.names.range.first_counter;
  CHECK(decode(record(x.cap, 0, "Global").payload).find(fc) != nullptr);
  CHECK(record(x.cap, 1, "Global").payload == record(host(), 1, "Global").payload);
  CHECK(decode(record(x.cap, 2, "Global").payload).find(fc) != nullptr);
  CollectSpec every = transfer_spec();
  every.timeout_every = 3;
  CHECK(every.timed_out(2));
  CHECK(every.timed_out(5));
  CHECK(!every.timed_out(3));
}

TEST_CASE("a bad provider's data fails the validator with the defect its mode names") {
  const std::pair<BadMode, const char*> modes[] = {{BadMode::kCounterOutsideBlock, perfdata::kCounterOutsideBlock},
                                                   {BadMode::kSizeMismatch, perfdata::kCounterSizeType},
                                                   {BadMode::kMissingBase, perfdata::kCounterBaseMissing}};
  for (const auto& [mode, check] : modes) {
    INFO(bad_mode_name(mode));
    CollectSpec cs = transfer_spec();
    cs.bad = mode;
    const Installed x = install_transfer(cs);
    REQUIRE(x.status.ok());
    bool flagged = false;
    for (const perfdata::Finding& f : perfdata::validate(record(x.cap, 0, "Global").payload))
      flagged |= f.check == check && f.severity == perfdata::Severity::kError;
    CHECK(flagged);
    CHECK(!perfdata::has_errors(perfdata::validate(record(host(), 0, "Global").payload)));
  }
}

TEST_CASE("unlodctr takes the provider's objects out of every answer") {
  Installed x = install_transfer(transfer_spec());
  REQUIRE(x.status.ok());
  REQUIRE(uninstall(x.cap, "Transfer").ok());
  REQUIRE(x.cap.records.size() == host().records.size());
  for (size_t i = 0; i < x.cap.records.size(); ++i) CHECK(x.cap.records[i].payload == host().records[i].payload);
  CHECK(x.cap.catalog.size() == host().catalog.size());
}

TEST_CASE("a wrongly typed collect spec value is refused with its key and line") {
  CollectSpec cs;
  const std::string objects =
      "[[objects]]\nsymbol = \"A\"\n[[objects.counters]]\nsymbol = \"B\"\ntype = \"PERF_COUNTER_RAWCOUNT\"\n";
  CHECK(parse_collect_spec_toml("[provider]\nseed = \"5\"\n" + objects, cs).message() ==
        "collect spec:2: provider.seed: expected an integer, got string \"5\"");
  CHECK_THAT(parse_collect_spec_toml("[provider]\ntimeout = { every = -1 }\n" + objects, cs).message(),
             Catch::StartsWith("collect spec:2: provider.timeout.every: must be between 0 and"));
  CHECK_THAT(parse_collect_spec_toml("[provider]\ncolour = 1\n" + objects, cs).message(),
             Catch::StartsWith("collect spec:2: provider.colour: unknown key (allowed: library,"));
  // Errors synth finds in the objects keep the collect spec's lines.
  CHECK_THAT(parse_collect_spec_toml(objects + "scale = \"2\"\n", cs).message(),
             Catch::StartsWith("collect spec:6: objects[0].counters[0].scale: expected an integer"));
  CHECK_THAT(parse_collect_spec_toml("[[objects]]\nsymbol = 7\n", cs).message(),
             Catch::StartsWith("collect spec:2: objects[0].symbol: expected a string, got integer 7"));
}

TEST_CASE("collect spec errors name the key, symbols must exist") {
  CollectSpec cs;
  CHECK(parse_collect_spec_json(R"({"objects": [{"symbol": "A", "counters": [{"symbol": "B", "type": "NOPE"}]}]})", cs)
            .message()
            .find("type") != std::string::npos);
  CHECK(parse_collect_spec_json(R"({"objects": [{"name": "A", "counters": []}]})", cs)
            .message()
            .find("objects[0].name") != std::string::npos);
  CHECK(
      parse_collect_spec_json(R"({"provider": {"bad": "worse"}, "objects": []})", cs).message().find("provider.bad") !=
      std::string::npos);
  REQUIRE(
      parse_collect_spec_json(
          R"({"objects": [{"symbol": "TRANSFER_OBJECT", "counters": [{"symbol": "NOT_A_SYMBOL", "type": "PERF_COUNTER_RAWCOUNT"}]}]})",
          cs)
          .ok());
  const Installed x = install_transfer(cs);
  CHECK(x.status.message().find("NOT_A_SYMBOL") != std::string::npos);
}

}  // namespace
}  // namespace perfsim::lodctr
