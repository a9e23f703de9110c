// NPA handshake codec: hand-built level 5/7/8 requests, two requests recorded from smbd 4.17.12
// (tests/npa/data), the reply layout, strict bounds (every truncation and every length field
// pushed past the end fails cleanly) and message-mode framing.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "npa_builder.h"
#include "server/npa.h"

namespace perfsim::server::npa {
namespace {

using npa_test::build_request;
using npa_test::RequestSpec;

Bytes read_file(const std::string& name) {
  std::ifstream f(std::string(NPA_DATA_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

uint32_t be32(const Bytes& b, size_t at) {
  return (uint32_t(b[at]) << 24) | (uint32_t(b[at + 1]) << 16) | (uint32_t(b[at + 2]) << 8) | b[at + 3];
}

TEST_CASE("levels 5, 7 and 8 decode the addresses, ports and account", "[npa]") {
  for (uint32_t level : {5u, 7u, 8u}) {
    INFO("level " << level);
    RequestSpec s;
    s.level = level;
    s.need_idle = level == 5;
    s.local_addr = "127.0.0.3";
    s.local_port = 14455;
    s.remote_port = 51515;
    s.account = "bob";
    const Bytes b = build_request(s);
    const FrameResult f = frame_request(b);
    REQUIRE(f.kind == FrameResult::Kind::kComplete);
    REQUIRE(f.size == b.size());
    Request r;
    const Status st = parse_request(b, r);
    INFO(st.ToString());
    REQUIRE(st.ok());
    CHECK(r.level == level);
    CHECK(r.transport == kTransportNp);
    CHECK(r.remote_client_addr == "127.0.0.1");
    CHECK(r.remote_client_port == 51515);
    CHECK(r.local_server_name == "smbhost");
    CHECK(r.local_server_addr == "127.0.0.3");
    CHECK(r.local_server_port == 14455);
    CHECK(r.need_idle_server == (level == 5));
    CHECK(r.session_info_decoded);
    CHECK(r.account_name == "bob");
    CHECK(r.domain_name == "SMBHOST");
    CHECK(r.authenticated);
  }
}

TEST_CASE("absent strings and session info are fine", "[npa]") {
  RequestSpec s;
  s.remote_name.reset();
  s.local_name.reset();
  s.session_info = false;
  Request r;
  REQUIRE(parse_request(build_request(s), r).ok());
  CHECK(r.remote_client_name.empty());
  CHECK(r.local_server_addr == "127.0.0.2");
  CHECK_FALSE(r.has_session_info);
  CHECK_FALSE(r.session_info_decoded);
  CHECK(r.account_name.empty());
}

TEST_CASE("requests recorded from smbd 4.17.12 decode", "[npa]") {
  SECTION("user daemon") {
    const Bytes b = read_file("smbd-4.17.12-level7-user-daemon.bin");
    REQUIRE(b.size() == 711);
    Request r;
    REQUIRE(parse_request(b, r).ok());
    CHECK(r.level == 7);
    CHECK(r.local_server_addr == "127.0.0.1");
    CHECK(r.local_server_port == 14450);
    CHECK(r.remote_client_addr == "127.0.0.1");
    CHECK(r.remote_client_port == 0x95c8);
    REQUIRE(r.session_info_decoded);
    CHECK(r.account_name == "daemon");
    CHECK(r.domain_name == "VM");
    CHECK(r.authenticated);
  }
  SECTION("anonymous") {
    Request r;
    REQUIRE(parse_request(read_file("smbd-4.17.12-level7-anonymous.bin"), r).ok());
    REQUIRE(r.session_info_decoded);
    CHECK(r.account_name == "ANONYMOUS LOGON");
    CHECK(r.domain_name == "NT AUTHORITY");
    CHECK_FALSE(r.authenticated);
  }
}

TEST_CASE("every truncation fails cleanly, never reads past the end", "[npa]") {
  const Bytes full = build_request(RequestSpec{});
  // The same request without session info ends where the strings end.
  RequestSpec no_info;
  no_info.session_info = false;
  const size_t strings_end = build_request(no_info).size();
  REQUIRE(strings_end < full.size());
  size_t with_account = 0, without_account = 0;
  for (size_t n = 0; n < full.size(); ++n) {
    Bytes cut(full.begin(), full.begin() + n);
    // The length field still says the full size: the framer wants more.
    CHECK(frame_request(cut).kind == FrameResult::Kind::kNeedMore);
    // With the length fixed up to the cut size the parser must reject or degrade, never crash.
    if (n >= 4) {
      const uint32_t len = uint32_t(n - 4);
      for (int i = 0; i < 4; ++i) cut[i] = uint8_t(len >> (8 * (3 - i)));
    }
    Request r;
    const Status st = parse_request(cut, r);
    // Cut inside the fixed part or the strings: an error. Cut inside the session info: the
    // request stands without an account, or (cut after the user info) with the right one.
    CAPTURE(n, strings_end, st.ToString());
    if (n < strings_end) {
      CHECK_FALSE(st.ok());
      continue;
    }
    REQUIRE(st.ok());
    CHECK(r.remote_client_addr == "127.0.0.1");
    if (r.session_info_decoded) {
      CHECK(r.account_name == "alice");
      ++with_account;
    } else {
      ++without_account;
    }
  }
  CHECK(without_account > 0);
  CHECK(with_account > 0);
}

TEST_CASE("lengths inside the request are checked against it", "[npa]") {
  RequestSpec s;
  s.session_info = false;
  s.remote_name.reset();
  s.remote_addr.reset();
  s.local_name.reset();
  Bytes b = build_request(s);
  // Only local_server_addr is present: its string starts right after the scalars.
  const size_t str = b.size() - 12 - 10;  // max, offset, actual, "127.0.0.2\0"
  REQUIRE(load_le32(&b[str]) == 10);
  Request r;
  SECTION("actual count past the end") {
    store_le32(&b[str + 8], 0x7fffffff);
    store_le32(&b[str], 0x7fffffff);
    CHECK_FALSE(parse_request(b, r).ok());
  }
  SECTION("actual > max") {
    store_le32(&b[str + 8], 11);
    CHECK_FALSE(parse_request(b, r).ok());
  }
  SECTION("non-zero offset") {
    store_le32(&b[str + 4], 1);
    CHECK_FALSE(parse_request(b, r).ok());
  }
  SECTION("missing NUL") {
    b[str + 12 + 9] = 'x';
    CHECK_FALSE(parse_request(b, r).ok());
  }
}

TEST_CASE("huge SID or group counts do not make the parser allocate or overrun", "[npa]") {
  RequestSpec s;
  Bytes b = build_request(s);
  Request r;
  REQUIRE(parse_request(b, r).ok());
  REQUIRE(r.session_info_decoded);
  // Find the security_token conformance (2, 2 then SID rev 1, count 2) and inflate it.
  bool patched = false;
  for (size_t i = 0; i + 10 < b.size() && !patched; i += 4) {
    if (load_le32(&b[i]) == 2 && load_le32(&b[i + 4]) == 2 && b[i + 8] == 1 && b[i + 9] == 2) {
      store_le32(&b[i], 0x40000000);
      store_le32(&b[i + 4], 0x40000000);
      patched = true;
    }
  }
  REQUIRE(patched);
  REQUIRE(parse_request(b, r).ok());
  CHECK_FALSE(r.session_info_decoded);
  CHECK(r.account_name.empty());
}

TEST_CASE("the framer refuses bad magic, tiny and oversized lengths", "[npa]") {
  Bytes b = build_request(RequestSpec{});
  SECTION("bad magic is seen as soon as it arrives") {
    b[5] = 'X';
    CHECK(frame_request(ByteView(b).first(6)).kind == FrameResult::Kind::kError);
  }
  SECTION("length below the header") {
    b[0] = b[1] = b[2] = 0;
    b[3] = 4;
    CHECK(frame_request(b).kind == FrameResult::Kind::kError);
  }
  SECTION("length above the limit") {
    b[0] = 0x01;
    CHECK(frame_request(ByteView(b).first(8)).kind == FrameResult::Kind::kError);
  }
  SECTION("unknown level") {
    store_le32(&b[8], 6);
    store_le32(&b[12], 6);
    Request r;
    CHECK(parse_request(b, r).code() == Status::Code::kUnsupported);
  }
  SECTION("union arm differs from the level") {
    store_le32(&b[12], 5);
    Request r;
    CHECK_FALSE(parse_request(b, r).ok());
  }
  SECTION("bytes after the request") {
    b.push_back(0);
    Request r;
    CHECK_FALSE(parse_request(b, r).ok());
  }
}

TEST_CASE("the reply mirrors the level and says message mode", "[npa]") {
  for (uint32_t level : {5u, 7u, 8u}) {
    const Bytes r = encode_reply(level, 0xC0000034);
    REQUIRE(r.size() == 36);
    CHECK(be32(r, 0) == 32);
    CHECK(std::string(r.begin() + 4, r.begin() + 8) == "NPAM");
    CHECK(load_le32(&r[8]) == level);
    CHECK(load_le32(&r[12]) == level);
    CHECK(load_le16(&r[16]) == 2);       // file_type: message mode
    CHECK(load_le16(&r[18]) == 0x05ff);  // device_state
    CHECK(load_le32(&r[20]) == 0);       // padding before the hyper
    CHECK(load_le64(&r[24]) == 4096);    // allocation_size
    CHECK(load_le32(&r[32]) == 0xC0000034);
  }
}

Bytes pdu(uint16_t frag_length) {
  Bytes p(frag_length, 0);
  p[0] = 5;
  p[4] = 0x10;
  store_le16(&p[8], frag_length);
  return p;
}

Bytes message(const Bytes& body, size_t claimed) {
  Bytes m(2);
  store_le16(m.data(), uint16_t(claimed));
  put_bytes(m, body);
  return m;
}

TEST_CASE("message framing: one PDU per u16-prefixed message", "[npa]") {
  const MessageFramer f;
  const Bytes one = message(pdu(24), 24);
  SECTION("complete") {
    const FrameResult r = f.next(one);
    REQUIRE(r.kind == FrameResult::Kind::kComplete);
    CHECK(r.size == 26);
    CHECK(r.payload_offset == 2);
  }
  SECTION("partial messages ask for the rest") {
    CHECK(f.next(ByteView(one).first(1)).size == 2);
    CHECK(f.next(ByteView(one).first(1)).kind == FrameResult::Kind::kNeedMore);
    CHECK(f.next(ByteView(one).first(20)).kind == FrameResult::Kind::kNeedMore);
    CHECK(f.next(ByteView(one).first(20)).size == 26);
  }
  SECTION("two messages back to back: the first is framed alone") {
    Bytes two = one;
    put_bytes(two, message(pdu(32), 32));
    CHECK(f.next(two).size == 26);
  }
  SECTION("a message shorter or longer than its PDU is an error") {
    Bytes longer = pdu(24);
    longer.resize(30);
    CHECK(f.next(message(longer, 30)).kind == FrameResult::Kind::kError);
    CHECK(f.next(message(pdu(24), 20)).kind == FrameResult::Kind::kError);
  }
  SECTION("a bad PDU header is caught before the message is complete") {
    Bytes bad = pdu(24);
    bad[0] = 4;
    CHECK(f.next(ByteView(message(bad, 24)).first(4)).kind == FrameResult::Kind::kError);
  }
  SECTION("replies get a little-endian length prefix") {
    uint8_t prefix[2];
    f.out_prefix(0x1234, prefix);
    CHECK(prefix[0] == 0x34);
    CHECK(prefix[1] == 0x12);
  }
}

}  // namespace
}  // namespace perfsim::server::npa
