// The gathered response path (ByteChain stubs, fragments referencing a shared payload) against the
// flat path it replaces: byte-identical PDUs, and the payload really not copied.
#include <catch2/catch.hpp>

#include <memory>

#include "core/byte_chain.h"
#include "rpc/association.h"
#include "tests/common/byte_views.h"

using namespace perfsim;
using namespace perfsim::rpc;

namespace {

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 13 + seed);
  return b;
}

// A stub as the winreg codec gathers it: owned prefix, shared payload, owned suffix.
struct GatheredStub {
  std::shared_ptr<const Bytes> payload;
  ByteChain chain;
  Bytes flat;
};

GatheredStub make_stub(size_t prefix, size_t payload, size_t suffix) {
  GatheredStub s;
  const Bytes pre = pattern(prefix, 1), post = pattern(suffix, 2);
  s.payload = std::make_shared<const Bytes>(pattern(payload, 3));
  s.chain.append(pre);
  s.chain.append_shared(s.payload, *s.payload);
  s.chain.append(post);
  s.flat = pre;
  put_bytes(s.flat, *s.payload);
  put_bytes(s.flat, post);
  return s;
}

uint32_t echo_flat(uint16_t, ByteView in, Bytes& out) {
  out.assign(in.begin(), in.end());
  return 0;
}

}  // namespace

TEST_CASE("ByteChain: owned and shared pieces, ranges, flatten") {
  ByteChain empty;
  CHECK(empty.size() == 0);
  CHECK(empty.piece_count() == 0);
  CHECK(empty.flatten().empty());

  ByteChain owned(Bytes{1, 2, 3});
  owned.append(Bytes{4});
  CHECK(owned.piece_count() == 1);  // own bytes stay one piece until something is shared
  CHECK(owned.flatten() == Bytes{1, 2, 3, 4});

  GatheredStub s = make_stub(5, 100, 7);
  CHECK(s.chain.size() == 112);
  CHECK(s.chain.piece_count() == 3);
  CHECK(s.chain.flatten() == s.flat);
  for (size_t pos : {0, 1, 4, 5, 6, 104, 105, 106, 111, 112})
    for (size_t n : {0, 1, 3, 50, 200}) {
      if (pos + n > s.chain.size()) continue;
      ByteChain part;
      part.append_range(s.chain, pos, n);
      CHECK(part.size() == n);
      CHECK(part.flatten() == Bytes(s.flat.begin() + pos, s.flat.begin() + pos + n));
    }
  ByteChain mid;
  mid.append_range(s.chain, 10, 20);
  size_t pieces = 0;
  mid.for_each([&](ByteView v) {
    CHECK(testing::lies_within(v, *s.payload));
    ++pieces;
  });
  CHECK(pieces == 1);  // a range inside the payload is a view of it, not a copy

  ByteChain moved = std::move(s.chain);
  CHECK(moved.flatten() == s.flat);  // owned pieces survive a move
}

TEST_CASE("gathered response fragments are byte-identical to the flat ones") {
  for (uint16_t max_frag :
       {uint16_t(32), uint16_t(33), uint16_t(1432), uint16_t(4280), uint16_t(5840), uint16_t(65535)}) {
    const size_t room = (max_frag - kResponseHeaderSize) & ~size_t(7);
    // Around the boundaries: a stub (prefix 20 + payload + suffix 16) ending exactly at, one byte
    // before and one byte after a fragment end.
    for (long signed_payload : {0L, 1L, 7L, 8L, long(room) + 1, 2L * long(room) - 36, 2L * long(room) - 37,
                                2L * long(room) - 35, 3L * long(room), 100000L}) {
      if (signed_payload < 0) continue;
      const size_t payload = size_t(signed_payload);
      for (auto [prefix, suffix] : {std::pair<size_t, size_t>{20, 16}, {0, 0}, {3, 1}, {20, 0}}) {
        INFO("max_frag " << max_frag << " payload " << payload << " prefix " << prefix << " suffix " << suffix);
        GatheredStub s = make_stub(prefix, payload, suffix);
        std::vector<Bytes> flat;
        build_response_fragments(7, 1, s.flat, max_frag, flat);
        std::vector<ByteChain> gathered;
        build_response_fragments(7, 1, s.chain, max_frag, gathered);
        REQUIRE(gathered.size() == flat.size());
        size_t referenced = 0;
        for (size_t i = 0; i < flat.size(); ++i) {
          REQUIRE(gathered[i].flatten() == flat[i]);
          referenced += testing::referenced_from(gathered[i], *s.payload);
        }
        CHECK(referenced == payload);  // every payload byte goes out from the shared buffer
      }
    }
  }
}

TEST_CASE("a payload ending exactly at a fragment boundary: no empty trailing fragment") {
  const uint16_t max_frag = 5840;
  const size_t room = (max_frag - kResponseHeaderSize) & ~size_t(7);
  GatheredStub s = make_stub(20, 2 * room - 20 - 16, 16);  // stub is exactly two fragments
  REQUIRE(s.flat.size() == 2 * room);
  std::vector<ByteChain> gathered;
  build_response_fragments(3, 0, s.chain, max_frag, gathered);
  REQUIRE(gathered.size() == 2);
  const Bytes last = gathered[1].flatten();
  CHECK(last[3] == kPfcLastFrag);
  CHECK(load_le16(&last[8]) == kResponseHeaderSize + room);
}

TEST_CASE("Association: gathered process answers exactly as the flat one") {
  AssociationConfig cfg;
  cfg.max_frag = 1024;
  Association flat_assoc(cfg), gather_assoc(cfg);
  const Bytes bind = build_bind(PType::kBind, 1, {1024, 1024, 0, {{0, winreg_syntax(), {ndr20_syntax()}}}, {}});
  GatheredStub s = make_stub(20, 5000, 12);
  const GatherCallHandler gather_handler = [&](uint16_t opnum, ByteView, ByteChain& out) -> uint32_t {
    if (opnum == 0x30) return kFaultOpRangeError;
    out.append(Bytes(s.flat.begin(), s.flat.begin() + 20));
    out.append_shared(s.payload, *s.payload);
    out.append(Bytes(s.flat.end() - 12, s.flat.end()));
    return 0;
  };
  const CallHandler flat_handler = [&](uint16_t opnum, ByteView, Bytes& out) -> uint32_t {
    if (opnum == 0x30) return kFaultOpRangeError;
    out = s.flat;
    return 0;
  };
  auto request = [](uint32_t call_id, uint16_t opnum) {
    return build_request(kPfcFirstFrag | kPfcLastFrag, call_id, {0, 0, opnum, std::nullopt, ByteView()});
  };
  // bind, a multi-fragment answer, a fault, a request on an unknown context, a protocol error
  const std::vector<Bytes> inputs = {
      bind, request(2, 0x11), request(3, 0x30),
      build_request(kPfcFirstFrag | kPfcLastFrag, 4, {0, 9, 0x11, std::nullopt, ByteView()}),
      build_empty(PType::kResponse, kPfcFirstFrag | kPfcLastFrag, 5)};
  for (const Bytes& in : inputs) {
    Step want = flat_assoc.process(in, flat_handler);
    std::vector<ByteChain> got;
    const bool close = gather_assoc.process(in, gather_handler, got);
    CHECK(close == want.close);
    REQUIRE(got.size() == want.replies.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].flatten() == want.replies[i]);
  }
  // The flat handler of the old path, via the CallHandler overload, still echoes as before.
  Association a(cfg);
  a.process(bind, echo_flat);
  CHECK(a.process(request(2, 1), echo_flat).replies.size() == 1);
}
