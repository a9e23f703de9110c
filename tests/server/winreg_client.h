// A bare winreg client over TestClient for the transport tests that need real answers: bind,
// OpenHKPD, then QueryValue requests built once and sent as often as a test likes.
#pragma once
#include <catch2/catch.hpp>

#include <memory>

#include "core/bytes.h"
#include "replayer/host.h"
#include "rpc/pdu.h"
#include "synth/synth.h"
#include "test_support.h"
#include "tests/common/winreg_requests.h"
#include "winreg/codec.h"

namespace perfsim::server::test {

// A default synthetic 2016 host: its Global answer takes ~30 fragments of 5840 bytes.
inline std::shared_ptr<replayer::SimulatedHost> synth_host() {
  static const captures::Capture cap = [] {
    synth::Spec spec;
    spec.duration_s = 60;
    captures::Capture c;
    REQUIRE(synth::synthesize(spec, c).ok());
    return c;
  }();
  std::shared_ptr<replayer::SimulatedHost> host;
  REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 0}, host).ok());
  return host;
}

// Reads one PDU (header + body) from `c`.
inline bool recv_pdu(TestClient& c, Bytes& pdu, int timeout_ms = 10000) {
  Bytes head, body;
  if (!c.recv_exact(16, head, timeout_ms)) return false;
  const size_t len = load_le16(&head[8]);
  if (len < 16 || !c.recv_exact(len - 16, body, timeout_ms)) return false;
  pdu = head;
  pdu.insert(pdu.end(), body.begin(), body.end());
  return true;
}

// Binds winreg and opens HKPD; the handle for QueryValue requests.
inline winreg::PolicyHandle bind_and_open(TestClient& c) {
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 5840;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  REQUIRE(c.send_all(rpc::build_bind(rpc::PType::kBind, 1, b)));
  Bytes ack;
  REQUIRE(recv_pdu(c, ack));
  REQUIRE(ack[2] == uint8_t(rpc::PType::kBindAck));
  winreg::OpenHiveRequest open;
  open.access_mask = 0x02000000;
  const Bytes stub = winreg::encode(open);
  REQUIRE(c.send_all(rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, 2,
                                        {uint32_t(stub.size()), 0, winreg::kOpenHKPD, std::nullopt, stub})));
  Bytes resp;
  REQUIRE(recv_pdu(c, resp));
  REQUIRE(resp.size() >= 24);
  winreg::OpenHiveResponse r;
  REQUIRE(winreg::decode(ByteView(resp).subspan(24), r).ok());
  REQUIRE(r.result == 0);
  return r.handle;
}

// QueryValue("Global") offering a buffer large enough for the whole answer.
inline Bytes query_global(const winreg::PolicyHandle& h, uint32_t call_id) {
  const Bytes stub = winreg::encode(testing::query_value_request(h, u"Global", 16u << 20));
  return rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, call_id,
                            {uint32_t(stub.size()), 0, winreg::kQueryValue, std::nullopt, stub});
}

// Splits a byte stream into PDUs; counts response fragments and those with PFC_LAST_FRAG.
struct FragmentCount {
  size_t fragments = 0, last_frags = 0;
  bool whole = true;  // the stream ends on a PDU boundary
};
inline FragmentCount count_fragments(const Bytes& stream) {
  FragmentCount n;
  size_t at = 0;
  while (at < stream.size()) {
    if (stream.size() - at < 16) return n.whole = false, n;
    const size_t len = load_le16(&stream[at + 8]);
    if (len < 16 || stream.size() - at < len) return n.whole = false, n;
    if (stream[at + 2] == uint8_t(rpc::PType::kResponse)) {
      ++n.fragments;
      if (stream[at + 3] & rpc::kPfcLastFrag) ++n.last_frags;
    }
    at += len;
  }
  return n;
}

}  // namespace perfsim::server::test
