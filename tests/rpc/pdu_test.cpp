#include <catch2/catch.hpp>

#include "rpc/frame.h"
#include "rpc/pdu.h"
#include "test_util.h"

using namespace perfsim;
using namespace perfsim::rpc;
using perfsim::test::from_hex;

// BIND as samba-python sends it over TCP: max_xmit/recv 5840, ctx0 winreg + NDR 2.0,
// ctx1 winreg + bind-time feature negotiation with bitmask 0x03 (written out from C706 12.6.4.3).
const char* kSambaBindHex =
    "05 00 0b 03 10 00 00 00 74 00 00 00 01 00 00 00"
    "d0 16 d0 16 00 00 00 00 02 00 00 00"
    "00 00 01 00 01 d0 8c 33 44 22 f1 31 aa aa 90 00 38 00 10 03 01 00 00 00"
    "04 5d 88 8a eb 1c c9 11 9f e8 08 00 2b 10 48 60 02 00 00 00"
    "01 00 01 00 01 d0 8c 33 44 22 f1 31 aa aa 90 00 38 00 10 03 01 00 00 00"
    "2c 1c b7 6c 12 98 40 45 03 00 00 00 00 00 00 00 01 00 00 00";

TEST_CASE("uuid text round trip and well-known syntaxes") {
  auto u = Uuid::parse("338cd001-2244-31f1-aaaa-900038001003");
  REQUIRE(u);
  CHECK(u->time_low == 0x338cd001u);
  CHECK(u->time_mid == 0x2244);
  CHECK(u->rest[0] == 0xaa);
  CHECK(u->to_string() == "338cd001-2244-31f1-aaaa-900038001003");
  CHECK_FALSE(Uuid::parse("338cd001-2244-31f1-aaaa-90003800100"));
  CHECK_FALSE(Uuid::parse("338cd001x2244-31f1-aaaa-900038001003"));
  CHECK(ndr20_syntax().version_major == 2);
}

TEST_CASE("parse samba-python bind with two contexts") {
  Bytes pdu = from_hex(kSambaBindHex);
  REQUIRE(pdu.size() == 0x74);
  Header h;
  REQUIRE(parse_header(pdu, h).ok());
  CHECK(h.ptype == PType::kBind);
  CHECK(h.call_id == 1);
  CHECK(h.pfc_flags == 3);
  Bind b;
  REQUIRE(parse_bind(pdu, h, b).ok());
  CHECK(b.max_xmit_frag == 5840);
  CHECK(b.max_recv_frag == 5840);
  CHECK(b.assoc_group_id == 0);
  REQUIRE(b.contexts.size() == 2);
  CHECK(b.contexts[0].abstract_syntax == winreg_syntax());
  REQUIRE(b.contexts[0].transfer_syntaxes.size() == 1);
  CHECK(b.contexts[0].transfer_syntaxes[0] == ndr20_syntax());
  CHECK(b.contexts[1].context_id == 1);
  REQUIRE(is_bind_time_feature_syntax(b.contexts[1].transfer_syntaxes[0]));
  CHECK(bind_time_features(b.contexts[1].transfer_syntaxes[0]) == 3);
  CHECK(b.auth_verifier.empty());
}

TEST_CASE("built bind equals the hand-written bytes") {
  Bind b{
      5840, 5840, 0, {{0, winreg_syntax(), {ndr20_syntax()}}, {1, winreg_syntax(), {bind_time_feature_syntax(3)}}}, {}};
  CHECK(build_bind(PType::kBind, 1, b) == from_hex(kSambaBindHex));
}

TEST_CASE("bind_ack layout: secondary address, padding, results") {
  BindAck a{5840, 5840, 0x1234, "\\PIPE\\winreg", {{0, 0, ndr20_syntax()}, {3, 2, {}}}};
  Bytes pdu = build_bind_ack(PType::kBindAck, 7, a);
  // 16 header + 8 + 2 + 13 address bytes -> 39, padded to 40, + 4 + 2 * 24.
  REQUIRE(pdu.size() == 16 + 8 + 2 + 13 + 1 + 4 + 48);
  CHECK(load_le16(&pdu[8]) == pdu.size());
  CHECK(load_le16(&pdu[24]) == 13);
  CHECK(pdu[26 + 12] == 0);  // NUL terminator
  CHECK(pdu[40] == 2);       // num_results after 4-byte alignment
  CHECK(load_le16(&pdu[44 + 24]) == 3);
  CHECK(load_le16(&pdu[46 + 24]) == 2);
  Header h;
  REQUIRE(parse_header(pdu, h).ok());
  BindAck back;
  REQUIRE(parse_bind_ack(pdu, h, back).ok());
  CHECK(back.secondary_address == "\\PIPE\\winreg");
  CHECK(back.assoc_group_id == 0x1234);
  REQUIRE(back.results.size() == 2);
  CHECK(back.results[0].transfer_syntax == ndr20_syntax());
}

TEST_CASE("request with object uuid and auth trailer exposes only the stub") {
  // request, flags first|last|object, auth_length 8, 4-byte stub, 4 pad bytes, 8-byte sec_trailer, 8 creds
  Bytes pdu = from_hex(
      "05 00 00 83 10 00 00 00 40 00 08 00 05 00 00 00"
      "04 00 00 00 00 00 11 00"
      "00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff"
      "de ad be ef 00 00 00 00"
      "0a 02 04 00 00 00 00 00"
      "01 02 03 04 05 06 07 08");
  Header h;
  REQUIRE(parse_header(pdu, h).ok());
  Request r;
  REQUIRE(parse_request(pdu, h, r).ok());
  CHECK(r.opnum == 0x11);
  REQUIRE(r.object);
  CHECK(r.object->time_low == 0x33221100u);
  REQUIRE(r.stub.size() == 4);
  CHECK(r.stub[0] == 0xde);
}

TEST_CASE("header errors: version, ptype, frag_length, auth_length") {
  Bytes good = from_hex(kSambaBindHex);
  Header h;
  Bytes bad = good;
  bad[0] = 4;
  CHECK(parse_header(bad, h).code() == Status::Code::kUnsupported);
  bad = good;
  bad[2] = 1;  // connectionless ping
  CHECK_FALSE(parse_header(bad, h).ok());
  bad = good;
  bad[8] = 0x70;
  CHECK_FALSE(parse_header(bad, h).ok());
  bad = good;
  bad[10] = 0xff;
  CHECK_FALSE(parse_header(bad, h).ok());
  CHECK_FALSE(parse_header(ByteView(good).first(10), h).ok());
  // A context count larger than the body is truncation, not a crash.
  bad = good;
  bad[24] = 9;
  REQUIRE(parse_header(bad, h).ok());
  Bind b;
  CHECK_FALSE(parse_bind(bad, h, b).ok());
}

TEST_CASE("fault round trip") {
  Bytes pdu = build_fault(kPfcFirstFrag | kPfcLastFrag | kPfcDidNotExecute, 9, {0, 0, 0, 0, kFaultOpRangeError});
  REQUIRE(pdu.size() == kFaultSize);
  CHECK(load_le32(&pdu[24]) == 0x1c010002u);
  Header h;
  REQUIRE(parse_header(pdu, h).ok());
  Fault f;
  REQUIRE(parse_fault(pdu, h, f).ok());
  CHECK(f.status == kFaultOpRangeError);
  CHECK(h.call_id == 9);
  Response r;
  CHECK_FALSE(parse_response(pdu, h, r).ok());
}

TEST_CASE("frame extractor") {
  Bytes pdu = from_hex(kSambaBindHex);
  size_t len = 99;
  REQUIRE(next_pdu_length(ByteView(pdu).first(9), 65535, len).ok());
  CHECK(len == 0);
  REQUIRE(next_pdu_length(ByteView(pdu).first(10), 65535, len).ok());
  CHECK(len == 0x74);
  CHECK_FALSE(next_pdu_length(pdu, 100, len).ok());  // above the limit
  Bytes bad = pdu;
  bad[8] = 8;
  bad[9] = 0;
  CHECK_FALSE(next_pdu_length(bad, 65535, len).ok());  // shorter than a header
  bad = pdu;
  bad[0] = 4;
  CHECK_FALSE(next_pdu_length(bad, 65535, len).ok());
  bad = pdu;
  bad[4] = 0x00;  // big-endian sender
  bad[8] = 0x00;
  bad[9] = 0x74;
  REQUIRE(next_pdu_length(bad, 65535, len).ok());
  CHECK(len == 0x74);
}
