// Socket-free parts of the transport: the DCE/RPC framer, the read buffer, log lines and
// listen-address validation.
#include <catch2/catch.hpp>

#include "server/framer.h"
#include "server/log.h"
#include "server/read_buffer.h"
#include "server/server.h"
#include "test_support.h"

using namespace perfsim;
using namespace perfsim::server;
using perfsim::server::test::make_pdu;

TEST_CASE("framer finds PDU boundaries at every split point", "[server][framer]") {
  DcerpcFramer framer;
  for (bool le : {true, false}) {
    Bytes pdu = make_pdu(7, 40, le);
    for (size_t cut = 0; cut < pdu.size(); ++cut) {
      FrameResult r = framer.next(ByteView(pdu).first(cut));
      REQUIRE(r.kind == FrameResult::Kind::kNeedMore);
      // Once the length is visible the framer asks for the whole PDU, never more.
      REQUIRE(r.size == (cut >= 10 ? 40u : 16u));
    }
    FrameResult r = framer.next(pdu);
    REQUIRE(r.kind == FrameResult::Kind::kComplete);
    REQUIRE(r.size == 40);
    REQUIRE(r.payload_offset == 0);
  }
}

TEST_CASE("framer reports only the first PDU of coalesced input", "[server][framer]") {
  Bytes two = make_pdu(1, 24);
  Bytes second = make_pdu(2, 300);
  two.insert(two.end(), second.begin(), second.end());
  FrameResult r = DcerpcFramer().next(two);
  REQUIRE(r.kind == FrameResult::Kind::kComplete);
  REQUIRE(r.size == 24);
}

TEST_CASE("framer rejects bad versions and frag_length", "[server][framer]") {
  DcerpcFramer framer(1024);
  Bytes pdu = make_pdu(1, 24);
  pdu[0] = 4;
  REQUIRE(framer.next(ByteView(pdu).first(1)).reason == "bad_version");
  pdu[0] = 5;
  pdu[1] = 1;
  REQUIRE(framer.next(pdu).reason == "bad_version");
  pdu[1] = 0;

  Bytes tiny = make_pdu(1, 24);
  store_le16(&tiny[8], 15);
  FrameResult r = framer.next(ByteView(tiny).first(10));
  REQUIRE(r.kind == FrameResult::Kind::kError);
  REQUIRE(r.reason == "bad_frag_length");
  REQUIRE(r.detail.find("15") != std::string::npos);

  Bytes big = make_pdu(1, 1025);
  REQUIRE(framer.next(ByteView(big).first(16)).reason == "bad_frag_length");
  REQUIRE(framer.next(make_pdu(1, 1024)).kind == FrameResult::Kind::kComplete);
  // Big-endian drep: 0x0018 read as big-endian is 24, as little-endian 6144.
  Bytes be = make_pdu(1, 24, false);
  REQUIRE(framer.next(be).kind == FrameResult::Kind::kComplete);
  be[4] = 0x10;
  REQUIRE(framer.next(be).reason == "bad_frag_length");
}

TEST_CASE("read buffer grows for a large frame and shrinks back when drained", "[server][buffer]") {
  ReadBuffer buf(256);
  auto space = buf.prepare(0);
  REQUIRE(space.size() == 256);
  REQUIRE(buf.capacity() == 256);
  Bytes pdu = make_pdu(3, 5000);
  std::copy_n(pdu.begin(), 100, space.begin());
  buf.commit(100);
  // The rest arrives as reads do, each into the space prepare() gives (doubling as bytes arrive).
  size_t got = 100;
  for (int reads = 0; got < pdu.size() && reads < 32; ++reads) {
    space = buf.prepare_toward(5000);
    REQUIRE(!space.empty());
    const size_t n = std::min(space.size(), pdu.size() - got);
    std::copy_n(pdu.begin() + got, n, space.begin());
    buf.commit(n);
    got += n;
  }
  REQUIRE(buf.data().size() == 5000);
  REQUIRE(std::equal(pdu.begin(), pdu.end(), buf.data().begin()));
  buf.consume(4000);
  REQUIRE(buf.capacity() >= 5000);  // bytes still buffered: keep the memory
  REQUIRE(buf.data()[0] == pdu[4000]);
  buf.consume(1000);
  REQUIRE(buf.data().empty());
  REQUIRE(buf.capacity() == 256);
}

// Issue 54: a peer that sends a 16-byte header announcing 65,535 bytes, then nothing, held 64 KiB
// of ours per connection (4,000 connections: 245 MB). Memory now follows what was sent.
TEST_CASE("read buffer: a header announcing a large frame costs memory only as its bytes arrive", "[server][buffer]") {
  ReadBuffer buf(256);
  const Bytes header = make_pdu(3, 65535);
  auto space = buf.prepare(0);
  std::copy_n(header.begin(), 16, space.begin());
  buf.commit(16);
  space = buf.prepare_toward(65535);
  CHECK(buf.capacity() == 256);  // 16 bytes buffered: the base capacity still serves
  CHECK(space.size() == 240);
  // Fill to 4,000 bytes: the capacity stays within twice what is held.
  size_t held = 16;
  while (held < 4000) {
    space = buf.prepare_toward(65535);
    const size_t n = std::min(space.size(), size_t(4000) - held);
    std::fill_n(space.begin(), n, uint8_t(0));
    buf.commit(n);
    held += n;
    CHECK(buf.capacity() <= std::max<size_t>(256, 2 * held));
  }
  CHECK(buf.data().size() == 4000);
}

// An idle connection frees its buffer (issue 29: < 2 KiB per idle connection); one that still
// holds a frame's beginning keeps it.
TEST_CASE("read buffer frees its storage on release only when nothing is buffered", "[server][buffer]") {
  ReadBuffer buf(256);
  buf.release();
  CHECK(buf.capacity() == 0);
  auto space = buf.prepare(0);
  REQUIRE(space.size() == 256);
  space[0] = 7;
  buf.commit(1);
  buf.release();
  CHECK(buf.capacity() == 256);  // a byte is buffered: kept
  CHECK(buf.data()[0] == 7);
  buf.consume(1);
  buf.release();
  CHECK(buf.capacity() == 0);
  CHECK(buf.data().empty());
  CHECK(buf.prepare(10).size() == 256);  // allocates again at the base size
}

TEST_CASE("read buffer compacts instead of growing when room is at the front", "[server][buffer]") {
  ReadBuffer buf(64);
  auto space = buf.prepare(0);
  for (size_t i = 0; i < 64; ++i) space[i] = uint8_t(i);
  buf.commit(64);
  buf.consume(60);
  space = buf.prepare(32);
  REQUIRE(buf.capacity() == 64);
  REQUIRE(space.size() == 60);
  REQUIRE(buf.data().size() == 4);
  REQUIRE(buf.data()[0] == 60);
}

TEST_CASE("log lines are key=value with quoting where needed", "[server][log]") {
  LogLine line("conn_close");
  line.kv("peer", "127.0.0.1:5").kv("bytes_in", uint64_t(42)).kv("detail", "a \"b\" c").kv("empty", "");
  const std::string& s = line.str();
  REQUIRE(s.rfind("ts=", 0) == 0);
  REQUIRE(s.find(" event=conn_close peer=127.0.0.1:5 bytes_in=42 detail=\"a \\\"b\\\" c\" empty=\"\"") !=
          std::string::npos);
  REQUIRE(s.find('\n') == std::string::npos);
}

TEST_CASE("listen addresses: loopback only unless allowed", "[server][listen]") {
  std::string addr;
  uint16_t port = 1;
  REQUIRE(parse_listen_address("127.0.0.1:0", false, addr, port).ok());
  REQUIRE(addr == "127.0.0.1");
  REQUIRE(port == 0);
  REQUIRE(parse_listen_address("[::1]:4135", false, addr, port).ok());
  REQUIRE(addr == "::1");
  REQUIRE(port == 4135);
  REQUIRE(parse_listen_address("localhost:9", false, addr, port).ok());
  REQUIRE(addr == "127.0.0.1");
  REQUIRE(parse_listen_address("127.3.4.5:9", false, addr, port).ok());

  Status refused = parse_listen_address("0.0.0.0:4135", false, addr, port);
  REQUIRE(!refused.ok());
  REQUIRE(refused.message().find("loopback") != std::string::npos);
  REQUIRE(!parse_listen_address("[::]:4135", false, addr, port).ok());
  REQUIRE(!parse_listen_address("192.0.2.1:4135", false, addr, port).ok());
  REQUIRE(parse_listen_address("0.0.0.0:4135", true, addr, port).ok());
  REQUIRE(addr == "0.0.0.0");

  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x", "::1:4135", "host:1"})
    REQUIRE(!parse_listen_address(bad, true, addr, port).ok());
}
