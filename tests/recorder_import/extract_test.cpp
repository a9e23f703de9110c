// pcap import's layers on handmade bytes: DCE/RPC stream cutting and winreg pairing
// (WinregSniffer), TCP ordering (TcpDirection), SMB2 pipe demultiplexing (Smb2PipeDemux) and
// tshark's time stamps.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "recorder/pcap_import.h"
#include "tests/common/run_command.h"

#include "core/utf16.h"
#include "recorder/smb2_pipes.h"
#include "recorder/tcp_stream.h"
#include "recorder/tshark_segments.h"
#include "recorder/winreg_sniffer.h"
#include "rpc/association.h"
#include "rpc/pdu.h"
#include "windows/constants.h"
#include "winreg/codec.h"
#include "tests/common/nlmp_examples.h"

namespace perfsim::recorder {
namespace {

using namespace perfsim::rpc;

Bytes concat(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(seed + i * 7);
  return b;
}

winreg::PolicyHandle handle(uint8_t id) {
  winreg::PolicyHandle h;
  h.uuid[0] = id;
  h.uuid[8] = 0x50;
  return h;
}

// A client and a server talking winreg, as byte streams: each call is appended to both sides.
struct Dialogue {
  Bytes client, server;
  uint32_t call_id = 1;
  uint16_t frag = 64;                               // small fragments so that stubs span several PDUs
  std::vector<size_t> request_ends, response_ends;  // stream offsets where each call's request / answer ends

  Dialogue(const SyntaxId& iface = winreg_syntax()) {
    Bind b{frag, frag, 0, {{0, iface, {ndr20_syntax()}}}, {}};
    client = build_bind(PType::kBind, call_id++, b);
    BindAck a{frag, frag, 0x1234, "49152", {ContextResult{kResultAcceptance, kReasonNotSpecified, ndr20_syntax()}}};
    server = build_bind_ack(PType::kBindAck, 1, a);
  }
  void call(uint16_t opnum, const Bytes& req, const Bytes& resp) {
    std::vector<Bytes> out;
    build_request_fragments(call_id, 0, opnum, req, frag, out);
    put_bytes(client, concat(out));
    request_ends.push_back(client.size());
    out.clear();
    build_response_fragments(call_id, 0, resp, frag, out);
    put_bytes(server, concat(out));
    response_ends.push_back(server.size());
    ++call_id;
  }
  void open_hive(uint16_t opnum, uint8_t id) {
    call(opnum, winreg::encode(winreg::OpenHiveRequest{std::nullopt, 0x02000000}),
         winreg::encode(winreg::OpenHiveResponse{handle(id), 0}));
  }
  void open_key(uint8_t parent, const std::string& path, uint8_t id) {
    winreg::OpenKeyRequest r;
    r.parent_handle = handle(parent);
    r.keyname = utf8_to_utf16(path);
    call(winreg::kOpenKey, winreg::encode(r), winreg::encode(winreg::OpenKeyResponse{handle(id), 0}));
  }
  void close(uint8_t id) {
    call(winreg::kCloseKey, winreg::encode(winreg::CloseKeyRequest{handle(id)}),
         winreg::encode(winreg::CloseKeyResponse{winreg::PolicyHandle{}, 0}));
  }
  void query(uint8_t id, const std::string& name, std::optional<uint32_t> offer, uint32_t status, const Bytes& data) {
    winreg::QueryValueRequest q;
    q.handle = handle(id);
    q.value_name = utf8_to_utf16(name);
    q.type = 0;
    if (offer) q.data = Bytes();
    q.data_size = offer.value_or(0);
    q.data_length = 0;
    winreg::QueryValueResponse r;
    r.type = windows::kRegBinary;
    r.data_size = uint32_t(data.size());
    r.data_length = status == 0 ? uint32_t(data.size()) : 0;
    if (status == 0) r.data = data;
    r.result = status;
    call(winreg::kQueryValue, winreg::encode(q), winreg::encode(r));
  }
};

// End offset of the chunk holding byte end - 1 when a stream of `size` bytes is cut every `step`.
int64_t chunk_end(size_t end, size_t step, size_t size) {
  return int64_t(std::min(size, (end + step - 1) / step * step));
}

// Feeds both streams in chunks of `step` bytes, client first, each chunk time-stamped with its end offset.
void feed(WinregSniffer& s, const Dialogue& d, size_t step) {
  for (size_t i = 0; i < d.client.size(); i += step) {
    const size_t n = std::min(step, d.client.size() - i);
    s.from_client(ByteView(d.client).subspan(i, n), int64_t(i + n));
  }
  for (size_t i = 0; i < d.server.size(); i += step) {
    const size_t n = std::min(step, d.server.size() - i);
    s.from_server(ByteView(d.server).subspan(i, n), 1000000 + int64_t(i + n));
  }
  s.finish();
}

TEST_CASE("sniffer: QueryValue exchanges with their key, whatever the segmentation", "[recorder_import]") {
  const Bytes global = pattern(700, 3), counter = pattern(90, 9);
  Dialogue d;
  d.open_hive(winreg::kOpenHKPD, 1);
  d.query(1, "Global", std::nullopt, windows::kErrorMoreData, global);
  d.query(1, "Global", 64, windows::kErrorMoreData, global);
  d.query(1, "Global", 800, 0, global);
  d.open_hive(winreg::kOpenHKPT, 2);
  d.query(2, "238", 4096, 0, counter);
  d.open_hive(winreg::kOpenHKLM, 3);
  d.open_key(3, "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", 4);
  d.open_key(4, "009", 5);
  d.query(4, "Last Counter", 4, 0, pattern(4, 1));
  d.query(5, "Counter", 1000, 0, counter);
  d.close(4);
  d.query(4, "Last Counter", 4, 0, pattern(4, 1));  // a closed handle: the key is no longer known

  for (size_t step : {size_t(1), size_t(7), size_t(64), size_t(1460), d.server.size()}) {
    INFO("chunks of " << step << " bytes");
    WinregSniffer s("c -> s");
    feed(s, d, step);
    REQUIRE(s.winreg());
    const std::vector<Exchange>& ex = s.exchanges();
    REQUIRE(ex.size() == 6);
    CHECK(ex[0].key == "HKPD");
    CHECK(ex[0].value_name == "Global");
    CHECK(ex[0].null_data);
    CHECK(ex[0].status == windows::kErrorMoreData);
    CHECK(ex[0].size == 700);
    CHECK(ex[0].data.empty());
    CHECK(!ex[1].null_data);
    CHECK(ex[1].offered == 64);
    CHECK(ex[2].offered == 800);
    CHECK(ex[2].status == 0);
    CHECK(ex[2].type == windows::kRegBinary);
    CHECK(ex[2].data == global);
    CHECK(ex[3].key == "HKPT");
    CHECK(ex[3].value_name == "238");
    CHECK(ex[3].data == counter);
    CHECK(ex[4].key == "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib");
    CHECK(ex[4].value_name == "Last Counter");
    CHECK(ex[5].key == "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib\\009");
    CHECK(ex[5].data == counter);
    // The time of an answer is that of the chunk holding its last byte.
    const size_t end = d.response_ends[3];  // [0] OpenHKPD, [1..3] Global
    CHECK(ex[2].time_100ns == 1000000 + chunk_end(end, step, d.server.size()));
    const int64_t sent = chunk_end(d.request_ends[3], step, d.client.size());
    CHECK(ex[2].latency_us == uint32_t((ex[2].time_100ns - sent) / 10));
    REQUIRE(s.problems().size() == 1);
    CHECK(s.problems()[0] ==
          "c -> s: 1 QueryValue call(s) on handles opened before the capture began (key unknown): skipped");
  }
}

TEST_CASE("sniffer: other interfaces and non-DCE/RPC streams are ignored silently", "[recorder_import]") {
  Dialogue other(ndr20_syntax());  // a bind to some other interface
  other.open_hive(winreg::kOpenHKPD, 1);
  other.query(1, "Global", 100, 0, pattern(10, 1));
  WinregSniffer a("a");
  feed(a, other, 100);
  CHECK(!a.winreg());
  CHECK(a.exchanges().empty());
  CHECK(a.problems().empty());

  Dialogue d;
  Bytes http = {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r', '\n'};
  WinregSniffer b("b");
  b.from_client(http, 1);
  b.from_client(d.client, 2);
  b.from_server(d.server, 3);
  b.finish();
  CHECK(!b.winreg());
  CHECK(b.problems().empty());
}

TEST_CASE("sniffer: a sealed (packet privacy) association is reported, not decoded", "[recorder_import]") {
  Dialogue d;
  // Same bind with an NTLMSSP sec_trailer at auth level 6.
  Bind b{64, 64, 0, {{0, winreg_syntax(), {ndr20_syntax()}}}, {}};
  Bytes bind = build_bind(PType::kBind, 1, b);
  const Bytes trailer = {10, 6, 0, 0, 0, 0, 0, 0, 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
  put_bytes(bind, trailer);
  store_le16(&bind[8], uint16_t(bind.size()));
  store_le16(&bind[10], 8);
  WinregSniffer s("c -> s");
  s.from_client(bind, 1);
  s.finish();
  CHECK(s.winreg());
  REQUIRE(s.problems().size() == 1);
  CHECK(s.problems()[0] == "c -> s: DCE/RPC with packet privacy (sealed stubs): cannot be read");
}

TEST_CASE("sniffer: the Windows version in the bind_ack's NTLMSSP CHALLENGE is kept", "[recorder_import]") {
  Dialogue d;
  Bind b{64, 64, 0, {{0, winreg_syntax(), {ndr20_syntax()}}}, {}};
  Bytes bind = build_bind(PType::kBind, 1, b);
  BindAck a{64, 64, 0x1234, "49152", {ContextResult{kResultAcceptance, kReasonNotSpecified, ndr20_syntax()}}};
  Bytes ack = build_bind_ack(PType::kBindAck, 1, a);
  // sec_trailer (C706 13.2.6.1): RPC_C_AUTHN_WINNT, integrity, then the CHALLENGE as auth_value.
  const Bytes challenge = test::nlmp_v2_challenge();
  put_bytes(ack, Bytes{10, 5, 0, 0, 0, 0, 0, 0});
  put_bytes(ack, challenge);
  store_le16(&ack[8], uint16_t(ack.size()));
  store_le16(&ack[10], uint16_t(challenge.size()));
  WinregSniffer s("c -> s");
  s.from_client(bind, 1);
  CHECK(s.announced() == std::nullopt);
  s.from_server(ack, 2);
  CHECK(s.winreg());
  CHECK(s.announced() == rpc::NtlmVersion{6, 0, 6000});
  // An association bound without authentication announces nothing.
  WinregSniffer plain("c -> s");
  plain.from_client(d.client, 1);
  plain.from_server(d.server, 2);
  CHECK(plain.announced() == std::nullopt);
}

TEST_CASE("tcp: retransmissions, overlaps, reordering, wrap-around and gaps", "[recorder_import]") {
  const Bytes data = pattern(100, 5);
  auto seg = [&](size_t off, size_t n) { return ByteView(data).subspan(off, n); };
  Bytes got;
  std::vector<int64_t> times;
  const TcpDirection::Deliver out = [&](ByteView b, int64_t t) {
    got.insert(got.end(), b.begin(), b.end());
    times.push_back(t);
  };
  const uint32_t isn = 0xffffffd0;  // the data crosses 2^32
  TcpDirection d;
  d.add(isn, true, {}, 1, out);
  d.add(isn + 1, false, seg(0, 30), 2, out);
  d.add(isn + 1, false, seg(0, 30), 3, out);    // retransmitted whole
  d.add(isn + 61, false, seg(60, 20), 4, out);  // early: waits
  d.add(isn + 21, false, seg(20, 40), 5, out);  // overlaps 10 bytes, fills the hole
  d.add(isn + 81, false, seg(80, 20), 6, out);
  d.finish();
  CHECK(got == data);
  CHECK(times == std::vector<int64_t>{2, 5, 5, 6});
  CHECK(d.resent_bytes() == 40);
  CHECK(!d.gap());

  TcpDirection g;
  got.clear();
  g.add(7, false, seg(0, 10), 1, out);  // no SYN seen: the first segment fixes the start
  g.add(27, false, seg(20, 10), 2, out);
  g.finish();
  CHECK(got == Bytes(data.begin(), data.begin() + 10));
  CHECK(g.gap());
  CHECK(g.gap_at() == 10);
}

// One SMB2 command (header + body + payload at `data_at` from the header start), in a NetBIOS frame.
Bytes smb2(uint16_t command, bool response, uint64_t message_id, uint32_t status, Bytes body,
           const Bytes& payload = {}) {
  Bytes m = {0xfe, 'S', 'M', 'B', 64, 0};
  m.resize(64);
  store_le32(&m[8], status);
  store_le16(&m[12], command);
  store_le32(&m[16], response ? 1 : 0);
  store_le64(&m[24], message_id);
  put_bytes(m, body);
  put_bytes(m, payload);
  Bytes framed = {0, uint8_t(m.size() >> 16), uint8_t(m.size() >> 8), uint8_t(m.size())};
  put_bytes(framed, m);
  return framed;
}

Bytes body_with_fid(size_t size, size_t fid_at, uint8_t fid) {
  Bytes b(size);
  b[fid_at] = fid;
  return b;
}

TEST_CASE("smb2: pipe bytes from WRITE, READ and FSCTL_PIPE_TRANSCEIVE, matched by MessageId", "[recorder_import]") {
  const Bytes in = pattern(40, 1), out1 = pattern(30, 2), out2 = pattern(20, 3), in2 = pattern(16, 4),
              out3 = pattern(12, 5);
  std::vector<std::tuple<uint8_t, bool, Bytes, int64_t>> seen;
  Smb2PipeDemux demux([&](const FileId& f, bool to_server, ByteView d, int64_t t) {
    seen.emplace_back(f[0], to_server, Bytes(d.begin(), d.end()), t);
  });
  Bytes write = body_with_fid(48, 16, 7);  // WRITE: DataOffset 112, Length 40, FileId 7
  store_le16(&write[0], 49);
  store_le16(&write[2], 112);
  store_le32(&write[4], uint32_t(in.size()));
  Bytes read = body_with_fid(48, 16, 7);  // READ of FileId 7
  store_le16(&read[0], 49);
  Bytes read_resp(16);  // DataOffset 80
  read_resp[2] = 80;
  store_le32(&read_resp[4], uint32_t(out1.size()));
  Bytes ioctl = body_with_fid(56, 8, 9);  // TRANSCEIVE on FileId 9, input at 120
  store_le32(&ioctl[4], 0x0011c017);
  store_le32(&ioctl[24], 120);
  store_le32(&ioctl[28], uint32_t(in2.size()));
  Bytes ioctl_resp = body_with_fid(48, 8, 9);  // output at 112, BUFFER_OVERFLOW: more to read
  store_le32(&ioctl_resp[4], 0x0011c017);
  store_le32(&ioctl_resp[32], 112);
  store_le32(&ioctl_resp[36], uint32_t(out3.size()));
  Bytes read2 = read;

  // A negotiate in SMB1 form first, as clients open; it is skipped.
  Bytes smb1 = {0, 0, 0, 8, 0xff, 'S', 'M', 'B', 0x72, 0, 0, 0};
  demux.feed(true, smb1, 1);
  Bytes client = smb2(0x09, false, 5, 0, write, in);
  put_bytes(client, smb2(0x08, false, 6, 0, read));
  put_bytes(client, smb2(0x0b, false, 7, 0, ioctl, in2));
  put_bytes(client, smb2(0x08, false, 8, 0, read2));
  for (size_t i = 0; i < client.size(); i += 5)
    demux.feed(true, ByteView(client).subspan(i, std::min<size_t>(5, client.size() - i)), 10);
  Bytes pending_resp(8);  // interim STATUS_PENDING of READ 6
  Bytes interim = smb2(0x08, true, 6, 0x103, pending_resp);
  interim[4 + 16] = 3;  // response | async
  demux.feed(false, interim, 19);
  demux.feed(false, smb2(0x08, true, 6, 0x80000005, read_resp, out1), 20);  // overflow: partial data
  demux.feed(false, smb2(0x0b, true, 7, 0x80000005, ioctl_resp, out3), 21);
  store_le32(&read_resp[4], uint32_t(out2.size()));
  demux.feed(false, smb2(0x08, true, 8, 0, read_resp, out2), 22);
  CHECK(demux.stopped() == Smb2PipeDemux::Stop::kNone);
  REQUIRE(seen.size() == 5);
  CHECK(seen[0] == std::make_tuple(uint8_t(7), true, in, int64_t(10)));
  CHECK(seen[1] == std::make_tuple(uint8_t(9), true, in2, int64_t(10)));
  CHECK(seen[2] == std::make_tuple(uint8_t(7), false, out1, int64_t(20)));
  CHECK(seen[3] == std::make_tuple(uint8_t(9), false, out3, int64_t(21)));
  CHECK(seen[4] == std::make_tuple(uint8_t(7), false, out2, int64_t(22)));

  // An SMB3 transform header stops the connection.
  Bytes transform = {0, 0, 0, 60, 0xfd, 'S', 'M', 'B'};
  transform.resize(64);
  demux.feed(false, transform, 30);
  CHECK(demux.stopped() == Smb2PipeDemux::Stop::kEncrypted);
  demux.feed(true, smb2(0x09, false, 9, 0, write, in), 31);
  CHECK(seen.size() == 5);
}

TEST_CASE("smb2: the Windows version in SESSION_SETUP's NTLMSSP CHALLENGE is kept", "[recorder_import]") {
  Smb2PipeDemux demux([](const FileId&, bool, ByteView, int64_t) {});
  // SESSION_SETUP response (MS-SMB2 2.2.6): StructureSize 9, SessionFlags, SecurityBuffer at 72.
  Bytes spnego = {0xa1, 0x73, 0x30, 0x71, 0xa0, 0x03, 0x0a, 0x01, 0x01, 0xa2, 0x6a, 0x04, 0x68};
  put_bytes(spnego, test::nlmp_v2_challenge());
  Bytes body(8);
  store_le16(&body[0], 9);
  store_le16(&body[4], 72);
  store_le16(&body[6], uint16_t(spnego.size()));
  demux.feed(true, smb2(0x01, false, 1, 0, Bytes(24)), 1);
  demux.feed(false, smb2(0x01, true, 1, 0xc0000016, body, spnego), 2);  // STATUS_MORE_PROCESSING_REQUIRED
  CHECK(demux.stopped() == Smb2PipeDemux::Stop::kNone);
  CHECK(demux.announced() == rpc::NtlmVersion{6, 0, 6000});
  // A security buffer pointing past its message is not read.
  Smb2PipeDemux other([](const FileId&, bool, ByteView, int64_t) {});
  store_le16(&body[6], uint16_t(spnego.size() + 100));
  other.feed(false, smb2(0x01, true, 1, 0xc0000016, body, spnego), 2);
  CHECK(other.announced() == std::nullopt);
}

// Found by fuzz/fuzz_pcap: a command's NextCommand pointing past its message let the payload
// bounds of that command reach past the buffer.
TEST_CASE("smb2: a NextCommand beyond the message stops the connection before its payload is read",
          "[recorder_import]") {
  std::vector<Bytes> seen;
  Smb2PipeDemux demux([&](const FileId&, bool, ByteView d, int64_t) { seen.emplace_back(d.begin(), d.end()); });
  Bytes write = body_with_fid(48, 16, 7);  // WRITE: DataOffset 112, Length 4000: inside NextCommand only
  store_le16(&write[0], 49);
  store_le16(&write[2], 112);
  store_le32(&write[4], 4000);
  Bytes msg = smb2(0x09, false, 1, 0, write, pattern(16, 1));
  store_le32(&msg[4 + 20], 112 + 4000);  // NextCommand: past the end of the 128-byte message
  demux.feed(true, msg, 1);
  CHECK(seen.empty());
  CHECK(demux.stopped() == Smb2PipeDemux::Stop::kNotSmb);
}

TEST_CASE("tshark time stamps become FILETIMEs exactly", "[recorder_import]") {
  int64_t t = 0;
  REQUIRE(epoch_text_to_filetime("1700000000.123456789", t));
  CHECK(t == (1700000000LL + 11644473600LL) * 10000000 + 1234567);
  REQUIRE(epoch_text_to_filetime("0.5", t));
  CHECK(t == 11644473600LL * 10000000 + 5000000);
  CHECK(!epoch_text_to_filetime("12a.3", t));
  CHECK(!epoch_text_to_filetime("", t));
}

// A classic pcap (Ethernet, IPv4, TCP) of one connection 127.0.0.1:50000 -> 127.0.0.2:4135
// carrying `d`, in segments of 1000 bytes; the segment numbered `bad_time` (0 = none) gets the
// time stamp 0xFFFFFFFF.0xFFFFFFFF, which tshark prints as a negative epoch.
Bytes pcap_of(const Dialogue& d, size_t bad_time) {
  Bytes out;
  const auto u32 = [&](uint32_t v) {
    put_bytes(out, Bytes{uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)});
  };
  const auto u16 = [&](uint16_t v) { put_bytes(out, Bytes{uint8_t(v), uint8_t(v >> 8)}); };
  u32(0xa1b2c3d4), u16(2), u16(4), u32(0), u32(0), u32(65535), u32(1);
  uint32_t seq[2] = {1000, 5000};
  size_t n = 0;
  const auto frame = [&](bool from_client, uint8_t flags, ByteView payload) {
    Bytes f(14, 0);
    f[12] = 0x08;  // IPv4
    const uint16_t ip_len = uint16_t(40 + payload.size());
    const uint8_t a = from_client ? 1 : 2, b = from_client ? 2 : 1;
    const uint16_t sp = from_client ? 50000 : 4135, dp = from_client ? 4135 : 50000;
    put_bytes(
        f, Bytes{0x45, 0, uint8_t(ip_len >> 8), uint8_t(ip_len), 0, 0, 0, 0, 64, 6, 0, 0, 127, 0, 0, a, 127, 0, 0, b});
    uint32_t& s_ = seq[from_client ? 0 : 1];
    const uint32_t ack = seq[from_client ? 1 : 0];
    put_bytes(f, Bytes{uint8_t(sp >> 8),
                       uint8_t(sp),
                       uint8_t(dp >> 8),
                       uint8_t(dp),
                       uint8_t(s_ >> 24),
                       uint8_t(s_ >> 16),
                       uint8_t(s_ >> 8),
                       uint8_t(s_),
                       uint8_t(ack >> 24),
                       uint8_t(ack >> 16),
                       uint8_t(ack >> 8),
                       uint8_t(ack),
                       0x50,
                       flags,
                       0xff,
                       0xff,
                       0,
                       0,
                       0,
                       0});
    put_bytes(f, Bytes(payload.begin(), payload.end()));
    s_ += uint32_t(payload.size()) + ((flags & 0x02) ? 1 : 0);
    ++n;
    const bool bad = n == bad_time;
    u32(bad ? 0xffffffff : 1700000000 + uint32_t(n)), u32(bad ? 0xffffffff : 0), u32(uint32_t(f.size())),
        u32(uint32_t(f.size()));
    put_bytes(out, f);
  };
  frame(true, 0x02, {});
  frame(false, 0x12, {});
  frame(true, 0x10, {});
  for (size_t i = 0; i < d.client.size(); i += 1000)
    frame(true, 0x18, ByteView(d.client).subspan(i, std::min<size_t>(1000, d.client.size() - i)));
  for (size_t i = 0; i < d.server.size(); i += 1000)
    frame(false, 0x18, ByteView(d.server).subspan(i, std::min<size_t>(1000, d.server.size() - i)));
  return out;
}

// Before, the one bad time stamp failed the whole import ("tshark printed a line that does not parse").
TEST_CASE("import: a frame with an out-of-range time stamp is counted and named, the rest imported",
          "[recorder_import]") {
  Dialogue d;
  d.open_hive(winreg::kOpenHKPD, 1);
  for (int i = 0; i < 4; ++i) d.query(1, "Global", 8000, 0, pattern(3000, uint8_t(i)));
  const std::string dir = std::filesystem::temp_directory_path() / ("perfsim-badtime-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, size_t bad) {
    const Bytes b = pcap_of(d, bad);
    std::ofstream(dir + "/" + name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), long(b.size()));
    return dir + "/" + name;
  };
  const size_t victim = 3 + (d.client.size() + 999) / 1000 + 2;  // the server's second data segment
  std::vector<Conversation> good, bad;
  UnreadFrames none, unread;
  REQUIRE(read_pcap(write("good.pcap", 0), good, {}, &none).ok());
  CHECK_FALSE(none.any());
  const std::string bad_pcap = write("bad.pcap", victim);
  const Status st = read_pcap(bad_pcap, bad, {}, &unread);
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(unread.time_replaced == 1);
  CHECK(unread.time_replaced_frames == std::vector<uint64_t>{victim});
  CHECK(unread.describe().find("frame " + std::to_string(victim) + ")") != std::string::npos);
  REQUIRE(good.size() == 1);
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].problems == good[0].problems);
  REQUIRE(good[0].exchanges.size() == 4);
  REQUIRE(bad[0].exchanges.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(bad[0].exchanges[i].data == good[0].exchanges[i].data);

  // perfsim import says it too (--json: unread_frames). The payloads are no perf data, so nothing is written.
  const auto r = testing::run_command(PERFSIM_EXE, "import --json -o " + dir + "/out " + bad_pcap);
  INFO(r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("unread_frames").at("time_replaced") == 1);
  CHECK(j.at("unread_frames").at("time_replaced_frames").at(0) == victim);
  CHECK(j.at("captures").size() == 1);
  CHECK(j.at("captures").at(0).at("exchanges") == 4);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfsim::recorder
