// The winreg handler's gathered replies (fragments referencing the answer's payload) against the
// flat path (Association::process with a Bytes stub): the same PDUs, byte for byte, for a large
// Global, small values, error answers and faults, at the fragment sizes real clients negotiate.
#include <catch2/catch.hpp>

#include "replayer/host.h"
#include "rpc/association.h"
#include "server/winreg_handler.h"
#include "synth/synth.h"
#include "tests/common/winreg_requests.h"
#include "winreg/codec.h"
#include "winreg/service.h"

using namespace perfsim;

namespace {

std::shared_ptr<replayer::SimulatedHost> big_host() {
  static const captures::Capture cap = [] {
    synth::Spec spec;
    spec.process_count = 40;  // Global ~100 KB: many fragments at every max_frag
    spec.duration_s = 15;
    captures::Capture c;
    REQUIRE(synth::synthesize(spec, c).ok());
    return c;
  }();
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 0}, host).ok());
  return host;
}

Bytes request(uint32_t call_id, uint16_t opnum, const Bytes& stub) {
  return rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, call_id,
                            {uint32_t(stub.size()), 0, opnum, std::nullopt, stub});
}

Bytes query_value(uint32_t call_id, const winreg::PolicyHandle& h, const std::u16string& name,
                  std::optional<uint32_t> buffer) {
  return request(call_id, winreg::kQueryValue, winreg::encode(testing::query_value_request(h, name, buffer)));
}

}  // namespace

TEST_CASE("winreg handler: gathered replies equal the flat path's for every answer shape") {
  auto host = big_host();
  const uint32_t global = uint32_t(host->content(replayer::PerfKey::kData, "Global", 0).data.size());
  REQUIRE(global > 65536);
  for (uint16_t max_frag : {uint16_t(5840), uint16_t(4280), uint16_t(1432), uint16_t(32)}) {
    INFO("max_frag " << max_frag);
    rpc::AssociationConfig cfg;
    cfg.secondary_address = "4135";
    server::WinregHandler handler(cfg, host);
    rpc::Association flat_assoc(cfg);
    winreg::Service flat_service(host);
    const rpc::CallHandler flat_call = [&](uint16_t op, ByteView in, Bytes& out) {
      return flat_service.call(op, in, out);
    };

    // Both sides answer the same PDU; handles differ (each service numbers its own), so each side
    // gets requests carrying its own handle.
    winreg::PolicyHandle h_gather, h_flat;
    auto exchange = [&](const Bytes& to_gather, const Bytes& to_flat, bool same_bytes) {
      std::vector<ByteChain> got;
      CHECK(handler.on_pdu(to_gather, got) == server::Verdict::kContinue);
      rpc::Step want = flat_assoc.process(to_flat, flat_call);
      REQUIRE(got.size() == want.replies.size());
      std::vector<Bytes> flat_got;
      for (size_t i = 0; i < got.size(); ++i) {
        flat_got.push_back(got[i].flatten());
        if (same_bytes)
          CHECK(flat_got.back() == want.replies[i]);
        else
          CHECK(flat_got.back().size() == want.replies[i].size());
      }
      return std::pair{flat_got, want.replies};
    };
    rpc::Bind b;
    b.max_xmit_frag = b.max_recv_frag = max_frag;
    b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
    const Bytes bind = rpc::build_bind(rpc::PType::kBind, 1, b);
    exchange(bind, bind, true);
    winreg::OpenHiveRequest open;
    open.access_mask = 0x02000000;
    auto [opened_g, opened_f] = exchange(request(2, winreg::kOpenHKPD, winreg::encode(open)),
                                         request(2, winreg::kOpenHKPD, winreg::encode(open)), false);
    auto handle_of = [](const std::vector<Bytes>& fragments) {
      Bytes stub;
      for (const Bytes& f : fragments) put_bytes(stub, ByteView(f).subspan(rpc::kResponseHeaderSize));
      winreg::OpenHiveResponse r;
      REQUIRE(winreg::decode(stub, r).ok());
      return r.handle;
    };
    h_gather = handle_of(opened_g);
    h_flat = handle_of(opened_f);

    struct Case {
      std::u16string name;
      std::optional<uint32_t> buffer;
    };
    const std::vector<Case> cases = {
        {u"Global", global},        // ~100 KB: the payload shared across fragments
        {u"Global", global + 13},   // a larger buffer than needed
        {u"Global", 10},            // ERROR_MORE_DATA, no data
        {u"Global", std::nullopt},  // NULL data pointer: the size only
        {u"238", 65536},            // one small object
        {u"NoSuchValue", 100},      // an empty or error answer
    };
    uint32_t call_id = 3;
    for (const Case& c : cases) {
      ++call_id;
      exchange(query_value(call_id, h_gather, c.name, c.buffer), query_value(call_id, h_flat, c.name, c.buffer), true);
    }
    // An unknown handle (the same bytes on both sides), an unknown opnum (fault), undecodable stub (fault).
    exchange(query_value(20, {}, u"Global", global), query_value(20, {}, u"Global", global), true);
    exchange(request(21, 0x7f, {}), request(21, 0x7f, {}), true);
    exchange(request(22, winreg::kQueryValue, {1, 2}), request(22, winreg::kQueryValue, {1, 2}), true);

    // The large answer really is gathered: all fragments but those holding only the stub's
    // prefix or suffix are a header plus a view of the payload.
    std::vector<ByteChain> big;
    handler.on_pdu(query_value(30, h_gather, u"Global", global), big);
    REQUIRE(big.size() > 1);
    size_t gathered = 0;
    for (const ByteChain& f : big) gathered += f.piece_count() >= 2;
    CHECK(gathered + 6 >= big.size());
  }
}
