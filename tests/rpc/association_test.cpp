#include <catch2/catch.hpp>

#include "rpc/association.h"
#include "test_util.h"

using namespace perfsim;
using namespace perfsim::rpc;

namespace {

Bytes bind_pdu(std::vector<ContextElem> ctx, uint16_t max_frag = 5840, uint32_t call_id = 1) {
  return build_bind(PType::kBind, call_id, {max_frag, max_frag, 0, std::move(ctx), {}});
}

ContextElem winreg_ctx(uint16_t id = 0) { return {id, winreg_syntax(), {ndr20_syntax()}}; }

struct Parsed {
  Header h;
  Bytes bytes;
};

Parsed header_of(const Bytes& pdu) {
  Parsed p{{}, pdu};
  REQUIRE(parse_header(p.bytes, p.h).ok());
  return p;
}

BindAck ack_of(const Step& s) {
  REQUIRE(s.replies.size() == 1);
  Parsed p = header_of(s.replies[0]);
  BindAck a;
  REQUIRE(parse_bind_ack(p.bytes, p.h, a).ok());
  return a;
}

Fault fault_of(const Bytes& pdu, Header* out_h = nullptr) {
  Parsed p = header_of(pdu);
  REQUIRE(p.h.ptype == PType::kFault);
  Fault f;
  REQUIRE(parse_fault(p.bytes, p.h, f).ok());
  if (out_h) *out_h = p.h;
  return f;
}

// Handler that echoes its input and rejects opnums above 0x22 like an interface would.
uint32_t echo(uint16_t opnum, ByteView in, Bytes& out) {
  if (opnum > 0x22) return kFaultOpRangeError;
  out.assign(in.begin(), in.end());
  return 0;
}

Bytes pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 7 + 3);
  return b;
}

}  // namespace

TEST_CASE("samba-python bind: winreg accepted, feature negotiation acknowledged") {
  Association a({winreg_syntax(), "49152", 5840, 4 << 20, 0x4711, 0x02, nullptr, false, {}});
  Step s =
      a.receive(test::from_hex("05 00 0b 03 10 00 00 00 74 00 00 00 01 00 00 00 d0 16 d0 16 00 00 00 00 02 00 00 00"
                               "00 00 01 00 01 d0 8c 33 44 22 f1 31 aa aa 90 00 38 00 10 03 01 00 00 00"
                               "04 5d 88 8a eb 1c c9 11 9f e8 08 00 2b 10 48 60 02 00 00 00"
                               "01 00 01 00 01 d0 8c 33 44 22 f1 31 aa aa 90 00 38 00 10 03 01 00 00 00"
                               "2c 1c b7 6c 12 98 40 45 03 00 00 00 00 00 00 00 01 00 00 00"));
  CHECK_FALSE(s.close);
  Parsed p = header_of(s.replies.at(0));
  CHECK(p.h.ptype == PType::kBindAck);
  CHECK(p.h.call_id == 1);
  BindAck ack = ack_of(s);
  CHECK(ack.secondary_address == "49152");
  CHECK(ack.max_xmit_frag == 5840);
  CHECK(ack.max_recv_frag == 5840);
  CHECK(ack.assoc_group_id == 0x4711);
  REQUIRE(ack.results.size() == 2);
  CHECK(ack.results[0].result == kResultAcceptance);
  CHECK(ack.results[0].transfer_syntax == ndr20_syntax());
  CHECK(ack.results[1].result == kResultNegotiateAck);
  CHECK(ack.results[1].reason == 0x02);  // client offered 0x03, we accept keep-connection-on-orphan
  CHECK(ack.results[1].transfer_syntax == SyntaxId{});
  CHECK(a.bound());
}

TEST_CASE("impacket bind: one context, smaller fragments, client's assoc group kept") {
  AssociationConfig pipe_cfg;
  pipe_cfg.secondary_address = "\\PIPE\\winreg";
  Association a(pipe_cfg);
  Step s = a.receive(build_bind(PType::kBind, 1, {4280, 4280, 0x99, {winreg_ctx()}, {}}));
  BindAck ack = ack_of(s);
  CHECK(ack.max_xmit_frag == 4280);
  CHECK(ack.assoc_group_id == 0x99);
  CHECK(ack.secondary_address == "\\PIPE\\winreg");
  REQUIRE(ack.results.size() == 1);
  CHECK(ack.results[0].result == kResultAcceptance);
}

TEST_CASE("unsupported syntaxes are rejected per context") {
  Association a;
  ContextElem other{0, {*Uuid::parse("12345778-1234-abcd-ef00-0123456789ab"), 0, 0}, {ndr20_syntax()}};
  ContextElem ndr64_only{1, winreg_syntax(), {ndr64_syntax()}};
  ContextElem both{2, winreg_syntax(), {ndr64_syntax(), ndr20_syntax()}};
  BindAck ack = ack_of(a.receive(bind_pdu({other, ndr64_only, both})));
  REQUIRE(ack.results.size() == 3);
  CHECK(ack.results[0].result == kResultProviderRejection);
  CHECK(ack.results[0].reason == kReasonAbstractSyntaxNotSupported);
  CHECK(ack.results[1].result == kResultProviderRejection);
  CHECK(ack.results[1].reason == kReasonTransferSyntaxesNotSupported);
  CHECK(ack.results[2].result == kResultAcceptance);
  // A request on a rejected context faults without closing.
  std::vector<Bytes> req;
  build_request_fragments(2, 1, 0x11, pattern(8), 5840, req);
  Step s = a.process(req[0], echo);
  CHECK_FALSE(s.close);
  CHECK(fault_of(s.replies.at(0)).status == kFaultUnknownInterface);
}

TEST_CASE("bind with auth gets bind_nak invalid auth type") {
  Association a;
  Bytes pdu = bind_pdu({winreg_ctx()});
  // Append a sec_trailer + 8 credential bytes and patch frag_length / auth_length.
  Bytes trailer = test::from_hex("0a 05 00 00 00 00 00 00 4e 54 4c 4d 53 53 50 00");
  put_bytes(pdu, trailer);
  store_le16(&pdu[8], uint16_t(pdu.size()));
  store_le16(&pdu[10], 8);
  Step s = a.receive(pdu);
  Parsed p = header_of(s.replies.at(0));
  REQUIRE(p.h.ptype == PType::kBindNak);
  BindNak nak;
  REQUIRE(parse_bind_nak(p.bytes, p.h, nak).ok());
  CHECK(nak.reject_reason == kNakInvalidAuthType);
  CHECK_FALSE(a.bound());
}

TEST_CASE("bad version in bind gets bind_nak with supported versions, then close") {
  Association a;
  Bytes pdu = bind_pdu({winreg_ctx()});
  pdu[1] = 7;
  Step s = a.receive(pdu);
  CHECK(s.close);
  Parsed p = header_of(s.replies.at(0));
  BindNak nak;
  REQUIRE(parse_bind_nak(p.bytes, p.h, nak).ok());
  CHECK(nak.reject_reason == kNakProtocolVersionNotSupported);
  REQUIRE(nak.versions.size() == 1);
  CHECK(nak.versions[0] == std::pair<uint8_t, uint8_t>{5, 0});
}

TEST_CASE("request before bind is a protocol error") {
  Association a;
  std::vector<Bytes> req;
  build_request_fragments(1, 0, 2, pattern(12), 5840, req);
  Step s = a.process(req[0], echo);
  CHECK(s.close);
  CHECK(fault_of(s.replies.at(0)).status == kFaultProtoError);
}

TEST_CASE("fragmented request is reassembled, response fragmented at max_recv_frag") {
  Association a;
  REQUIRE(ack_of(a.receive(bind_pdu({winreg_ctx()}, 160))).max_xmit_frag == 160);
  Bytes stub = pattern(1000);
  std::vector<Bytes> req;
  build_request_fragments(5, 0, 0x11, stub, 100, req);
  REQUIRE(req.size() > 5);
  Step s;
  for (size_t i = 0; i + 1 < req.size(); ++i) {
    s = a.process(req[i], echo);
    REQUIRE(s.replies.empty());
    REQUIRE_FALSE(s.close);
  }
  s = a.process(req.back(), echo);
  REQUIRE(s.replies.size() > 1);
  Bytes joined;
  for (size_t i = 0; i < s.replies.size(); ++i) {
    Parsed p = header_of(s.replies[i]);
    CHECK(p.bytes.size() <= 160);
    CHECK(p.h.ptype == PType::kResponse);
    CHECK(p.h.call_id == 5);
    CHECK(bool(p.h.pfc_flags & kPfcFirstFrag) == (i == 0));
    CHECK(bool(p.h.pfc_flags & kPfcLastFrag) == (i + 1 == s.replies.size()));
    Response r;
    REQUIRE(parse_response(p.bytes, p.h, r).ok());
    CHECK(r.alloc_hint == stub.size() - joined.size());
    if (i + 1 < s.replies.size()) CHECK(r.stub.size() % 8 == 0);
    put_bytes(joined, r.stub);
  }
  CHECK(joined == stub);
}

TEST_CASE("empty response stub still yields one first|last PDU") {
  std::vector<Bytes> out;
  build_response_fragments(3, 0, {}, 5840, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].size() == kResponseHeaderSize);
  CHECK(out[0][3] == (kPfcFirstFrag | kPfcLastFrag));
}

TEST_CASE("unknown opnum becomes nca_op_rng_error with did-not-execute") {
  Association a;
  a.receive(bind_pdu({winreg_ctx()}));
  std::vector<Bytes> req;
  build_request_fragments(2, 0, 0x40, pattern(4), 5840, req);
  Step s = a.process(req[0], echo);
  Header h;
  CHECK(fault_of(s.replies.at(0), &h).status == 0x1c010002u);
  CHECK(h.call_id == 2);
  CHECK(h.pfc_flags & kPfcDidNotExecute);
  CHECK_FALSE(s.close);
}

TEST_CASE("request larger than the reassembly bound faults with access denied") {
  AssociationConfig cfg;
  cfg.max_request_stub = 256;
  Association a(cfg);
  a.receive(bind_pdu({winreg_ctx()}));
  std::vector<Bytes> req;
  build_request_fragments(2, 0, 1, pattern(600), 200, req);
  Step s;
  for (const Bytes& pdu : req) s = a.process(pdu, echo);
  CHECK(fault_of(s.replies.at(0)).status == kFaultAccessDenied);
  // The association stays usable.
  req.clear();
  build_request_fragments(3, 0, 1, pattern(16), 5840, req);
  s = a.process(req[0], echo);
  CHECK(header_of(s.replies.at(0)).h.ptype == PType::kResponse);
}

TEST_CASE("fragments out of sequence are protocol errors, orphaned discards a call") {
  Association a;
  a.receive(bind_pdu({winreg_ctx()}));
  std::vector<Bytes> req;
  build_request_fragments(2, 0, 1, pattern(300), 100, req);
  REQUIRE(req.size() >= 3);
  SECTION("middle fragment without a first") { CHECK(a.process(req[1], echo).close); }
  SECTION("another call interleaved") {
    a.process(req[0], echo);
    std::vector<Bytes> other;
    build_request_fragments(9, 0, 1, pattern(300), 100, other);
    CHECK(a.process(other[1], echo).close);
  }
  SECTION("orphaned then a new call") {
    a.process(req[0], echo);
    Step s = a.receive(build_empty(PType::kOrphaned, kPfcFirstFrag | kPfcLastFrag, 2));
    CHECK(s.replies.empty());
    CHECK_FALSE(s.close);
    std::vector<Bytes> next;
    build_request_fragments(3, 0, 1, pattern(8), 5840, next);
    s = a.process(next[0], echo);
    CHECK(header_of(s.replies.at(0)).h.call_id == 3);
  }
}

TEST_CASE("alter_context adds a context, second bind is refused") {
  Association a;
  a.receive(bind_pdu({winreg_ctx(0)}));
  Bytes alter = build_bind(PType::kAlterContext, 2, {5840, 5840, 0, {winreg_ctx(4)}, {}});
  Step s = a.receive(alter);
  CHECK(header_of(s.replies.at(0)).h.ptype == PType::kAlterContextResp);
  BindAck ack = ack_of(s);
  CHECK(ack.secondary_address.empty());
  CHECK(ack.results.at(0).result == kResultAcceptance);
  std::vector<Bytes> req;
  build_request_fragments(3, 4, 1, pattern(8), 5840, req);
  CHECK(header_of(a.process(req[0], echo).replies.at(0)).h.ptype == PType::kResponse);
  CHECK(a.receive(bind_pdu({winreg_ctx()}, 5840, 5)).close);
}

TEST_CASE("client-only PDUs and auth3 close the connection") {
  Association a;
  a.receive(bind_pdu({winreg_ctx()}));
  CHECK(a.receive(build_empty(PType::kAuth3, 3, 2)).close);
  Association b;
  b.receive(bind_pdu({winreg_ctx()}));
  CHECK(b.receive(build_response(3, 2, {0, 0, 0, {}})).close);
  Association c;
  c.receive(bind_pdu({winreg_ctx()}));
  Step s = c.receive(build_empty(PType::kCoCancel, 3, 2));
  CHECK(s.replies.empty());
  CHECK_FALSE(s.close);
}
