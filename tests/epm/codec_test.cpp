// The endpoint mapper's towers and stubs (epm/codec.h) and its answers (epm/service.h), through
// the DCE/RPC association as a client reaches them. Real clients (python3-samba, impacket) and
// tshark judge the same code in serve_test.cpp.
#include <catch2/catch.hpp>

#include "epm/codec.h"
#include "epm/service.h"
#include "rpc/association.h"
#include "tests/rpc/test_util.h"

namespace perfsim::epm {
namespace {

using test::from_hex;

// The winreg tower of 127.0.0.7:49153, laid out by hand from C706 appendix L: 5 floors; floor 1
// 0x0d + winreg's uuid (little-endian fields) + major 1, rhs minor 0; floor 2 the same for NDR
// 2.0; floor 3 0x0b, rhs 0; floor 4 0x07, rhs the port big-endian; floor 5 0x09, rhs the address.
const Bytes kWinregTower = from_hex(
    "0500"
    "1300 0d 01d08c33 4422 f131 aaaa900038001003 0100  0200 0000"
    "1300 0d 045d888a eb1c c911 9fe808002b104860 0200  0200 0000"
    "0100 0b  0200 0000"
    "0100 07  0200 c001"
    "0100 09  0400 7f000007");

Registration winreg_at(uint16_t port) { return {rpc::winreg_syntax(), {127, 0, 0, 7}, port, ""}; }

MapRequest map_request_for(const rpc::SyntaxId& interface, uint16_t port = 0, uint32_t max_towers = 4) {
  MapRequest r;
  r.map_tower = build_floors(tcp_tower_floors({interface, rpc::ndr20_syntax(), port, {0, 0, 0, 0}}));
  r.max_towers = max_towers;
  return r;
}

TEST_CASE("epm: the ncacn_ip_tcp tower is C706 appendix L's layout", "[epm]") {
  const Bytes built =
      build_floors(tcp_tower_floors({rpc::winreg_syntax(), rpc::ndr20_syntax(), 49153, {127, 0, 0, 7}}));
  CHECK(built == kWinregTower);
  std::vector<Floor> floors;
  REQUIRE(parse_floors(kWinregTower, floors).ok());
  REQUIRE(floors.size() == 5);
  rpc::SyntaxId s;
  REQUIRE(parse_syntax_floor(floors[0], s).ok());
  CHECK(s == rpc::winreg_syntax());
  REQUIRE(parse_syntax_floor(floors[1], s).ok());
  CHECK(s == rpc::ndr20_syntax());
  CHECK(floors[3].protocol() == kProtoTcp);

  // A truncated tower names the floor and offset.
  Bytes cut(kWinregTower.begin(), kWinregTower.end() - 2);
  const Status st = parse_floors(cut, floors);
  CHECK_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("floor 5 of 5"));
}

TEST_CASE("epm: ept_map stubs round-trip and refuse more than 500 towers", "[epm]") {
  MapRequest req = map_request_for(rpc::winreg_syntax());
  req.object = rpc::Uuid{};
  MapRequest back;
  REQUIRE(decode(encode(req), back).ok());
  CHECK(back.object.has_value());
  CHECK(*back.map_tower == *req.map_tower);
  CHECK(back.max_towers == 4);

  req.max_towers = 501;
  CHECK_FALSE(decode(encode(req), back).ok());

  MapResponse resp;
  resp.max_towers = 4;
  resp.towers = {kWinregTower};
  MapResponse rback;
  REQUIRE(decode(encode(resp), rback).ok());
  REQUIRE(rback.towers.size() == 1);
  CHECK(rback.towers[0] == kWinregTower);
  CHECK(rback.max_towers == 4);
}

TEST_CASE("epm: ept_map finds winreg's port and nothing else", "[epm]") {
  Service svc({winreg_at(49153)});
  SECTION("winreg v1.0 over ncacn_ip_tcp: this host's tower") {
    const MapResponse r = svc.map(map_request_for(rpc::winreg_syntax()));
    CHECK(r.status == 0);
    REQUIRE(r.towers.size() == 1);
    CHECK(r.towers[0] == kWinregTower);
    CHECK(r.entry_handle.null());
  }
  SECTION("another interface, a newer minor version or a NULL tower: EPT_S_NOT_REGISTERED") {
    rpc::SyntaxId newer = rpc::winreg_syntax();
    newer.version_minor = 1;
    for (const rpc::SyntaxId& s : {epm_syntax(), newer}) {
      const MapResponse r = svc.map(map_request_for(s));
      CHECK(r.status == kEptNotRegistered);
      CHECK(r.towers.empty());
    }
    MapRequest no_tower;
    no_tower.max_towers = 1;
    CHECK(svc.map(no_tower).status == kEptNotRegistered);
  }
  SECTION("winreg over a named pipe tower: not registered (perfsim maps TCP only)") {
    MapRequest r = map_request_for(rpc::winreg_syntax());
    std::vector<Floor> floors;
    REQUIRE(parse_floors(*r.map_tower, floors).ok());
    floors[3] = {{kProtoNamedPipe}, {'\\', 0}};
    r.map_tower = build_floors(floors);
    CHECK(svc.map(r).status == kEptNotRegistered);
  }
  SECTION("max_towers 0 returns no tower") {
    CHECK(svc.map(map_request_for(rpc::winreg_syntax(), 0, 0)).towers.empty());
  }
}

TEST_CASE("epm: ept_lookup lists the entries in batches, the last with a null handle", "[epm]") {
  Service svc({winreg_at(49153), winreg_at(49154)});
  LookupRequest req;
  req.max_ents = 1;
  LookupResponse r1, r2, r3;
  REQUIRE(svc.lookup(req, r1));
  CHECK(r1.status == 0);
  REQUIRE(r1.entries.size() == 1);
  CHECK(r1.entries[0].tower == kWinregTower);
  CHECK_FALSE(r1.entry_handle.null());

  req.entry_handle = r1.entry_handle;
  REQUIRE(svc.lookup(req, r2));
  CHECK(r2.status == 0);
  REQUIRE(r2.entries.size() == 1);
  CHECK(r2.entry_handle.null());  // the list is done: impacket's loop stops here

  // The finished handle is gone: using it again is a context mismatch (a fault).
  CHECK_FALSE(svc.lookup(req, r3));

  // All in one batch: a null handle at once.
  req = {};
  req.max_ents = 500;
  REQUIRE(svc.lookup(req, r3));
  CHECK(r3.entries.size() == 2);
  CHECK(r3.entry_handle.null());

  // By interface: winreg matches; the mapper's own interface does not.
  LookupRequest by_if;
  by_if.inquiry_type = 1;
  by_if.max_ents = 10;
  by_if.interface_id = InterfaceId{epm_syntax().uuid, 3, 0};
  LookupResponse none;
  REQUIRE(svc.lookup(by_if, none));
  CHECK(none.status == kEptNotRegistered);
  by_if.interface_id = InterfaceId{rpc::winreg_syntax().uuid, 1, 0};
  LookupResponse both;
  REQUIRE(svc.lookup(by_if, both));
  CHECK(both.entries.size() == 2);

  // The response stub decodes back (annotation, towers after the inline entries).
  LookupResponse back;
  REQUIRE(decode(encode(both), back).ok());
  REQUIRE(back.entries.size() == 2);
  CHECK(back.entries[1].tower == both.entries[1].tower);
  CHECK(back.entries[0].annotation.empty());
}

TEST_CASE("epm: through the association, bound to the mapper's interface", "[epm]") {
  rpc::AssociationConfig cfg;
  cfg.interface = epm_syntax();
  rpc::Association assoc(cfg);
  Service svc({winreg_at(49153)});
  const rpc::CallHandler call = [&](uint16_t op, ByteView in, Bytes& out) { return svc.call(op, in, out); };

  rpc::Bind bind{5840, 5840, 0, {{0, epm_syntax(), {rpc::ndr20_syntax()}}}, {}};
  rpc::Step s = assoc.process(rpc::build_bind(rpc::PType::kBind, 1, bind), call);
  REQUIRE(s.replies.size() == 1);
  rpc::Header h;
  rpc::BindAck ack;
  REQUIRE(rpc::parse_header(s.replies[0], h).ok());
  REQUIRE(rpc::parse_bind_ack(s.replies[0], h, ack).ok());
  REQUIRE(ack.results.size() == 1);
  CHECK(ack.results[0].result == rpc::kResultAcceptance);

  auto request = [&](uint16_t opnum, const Bytes& stub) {
    rpc::Step st = assoc.process(
        rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, 2, {0, 0, opnum, std::nullopt, stub}), call);
    REQUIRE(st.replies.size() == 1);
    return st.replies[0];
  };
  const Bytes map_pdu = request(kOpMap, encode(map_request_for(rpc::winreg_syntax())));
  REQUIRE(rpc::parse_header(map_pdu, h).ok());
  REQUIRE(h.ptype == rpc::PType::kResponse);
  rpc::Response resp;
  REQUIRE(rpc::parse_response(map_pdu, h, resp).ok());
  MapResponse m;
  REQUIRE(decode(resp.stub, m).ok());
  REQUIRE(m.towers.size() == 1);
  CHECK(m.towers[0] == kWinregTower);

  // ept_insert from a remote client: access denied; an opnum past the interface: op_rng_error.
  for (auto [op, want] :
       {std::pair<uint16_t, uint32_t>{0, 5}, {7, rpc::kFaultOpRangeError}, {kOpMap, rpc::kFaultBadStubData}}) {
    const Bytes pdu = request(op, op == kOpMap ? from_hex("01") : Bytes{});
    REQUIRE(rpc::parse_header(pdu, h).ok());
    REQUIRE(h.ptype == rpc::PType::kFault);
    rpc::Fault f;
    REQUIRE(rpc::parse_fault(pdu, h, f).ok());
    CHECK(f.status == want);
  }
}

// C706 appendix O's seven opnums are the table's rows: the four that change or manage the map
// refuse a remote client whatever the stub holds; past them nothing is served.
TEST_CASE("epm: the interface table refuses remote registration and faults past opnum 6", "[epm]") {
  Service svc({winreg_at(49153)});
  const rpc::Interface& e = epm_interface();
  CHECK(e.syntax == epm_syntax());
  CHECK(e.operations.size() == 7);
  Bytes out;
  for (uint16_t op : {0, 1, 5, 6}) CHECK(svc.call(op, Bytes{0xff}, out) == rpc::kFaultAccessDenied);
  CHECK(svc.call(7, {}, out) == rpc::kFaultOpRangeError);
  CHECK(svc.call(kOpMap, Bytes{0xff}, out) == rpc::kFaultBadStubData);
  CHECK(std::string(e.find(kOpMap)->name) == "ept_map");
}

}  // namespace
}  // namespace perfsim::epm
