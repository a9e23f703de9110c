#include "tests/server_fuzz/attacker.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <random>

#include "core/bytes.h"
#include "core/utf16.h"
#include "rpc/association.h"
#include "rpc/pdu.h"
#include "winreg/codec.h"

namespace perfsim::fuzz {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// ---- randomness -------------------------------------------------------------------------------

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t below(uint64_t n) { return n ? std::uniform_int_distribution<uint64_t>(0, n - 1)(g_) : 0; }
  uint64_t in(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
  bool percent(unsigned p) { return below(100) < p; }
  uint32_t u32() { return uint32_t(g_()); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
  Bytes bytes(size_t n) {
    Bytes b(n);
    for (uint8_t& x : b) x = uint8_t(g_());
    return b;
  }
  // Counts and sizes that find off-by-one and overflow mistakes more often than uniform ones.
  uint32_t edgy_u32() {
    static const std::vector<uint32_t> edges = {0,          1,          2,          7,          8,         0xff,
                                                0x100,      0xffff,     0x10000,    0x3ffffff,  0x4000000, 0x4000001,
                                                0x7fffffff, 0x80000000, 0xfffffff8, 0xfffffffe, 0xffffffff};
    return percent(60) ? pick(edges) : u32();
  }

 private:
  std::mt19937_64 g_;
};

// ---- a non-blocking loopback socket with bounded waits ----------------------------------------

enum class Io { kOk, kClosed, kTimeout };

class Socket {
 public:
  explicit Socket(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close();
      return;
    }
    socklen_t len = sizeof a;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) port_ = ntohs(a.sin_port);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // pieces really arrive as pieces
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~Socket() { close(); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool open() const { return fd_ >= 0; }
  uint16_t local_port() const { return port_; }

  // Sends every byte; reads whatever arrives meanwhile into `inbox`, so a server that answers
  // while we send cannot deadlock us both on full socket buffers.
  Io send_all(ByteView data, Bytes& inbox, Clock::time_point deadline) {
    size_t sent = 0;
    while (sent < data.size()) {
      pollfd p{fd_, POLLOUT | POLLIN, 0};
      if (!wait(p, deadline)) return Io::kTimeout;
      if (p.revents & POLLIN) {
        if (receive(inbox) == Io::kClosed) return Io::kClosed;
      }
      if (p.revents & (POLLERR | POLLHUP)) return Io::kClosed;
      if (!(p.revents & POLLOUT)) continue;
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return Io::kClosed;
      sent += size_t(n);
    }
    return Io::kOk;
  }

  // Waits for data (or the end of the stream) until `deadline`.
  Io read_some(Bytes& inbox, Clock::time_point deadline) {
    pollfd p{fd_, POLLIN, 0};
    if (!wait(p, deadline)) return Io::kTimeout;
    return receive(inbox);
  }

  void half_close() { ::shutdown(fd_, SHUT_WR); }
  // Closes with a reset instead of a FIN.
  void abort() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  bool wait(pollfd& p, Clock::time_point deadline) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left < 0) return false;
      int r = ::poll(&p, 1, int(std::min<int64_t>(left + 1, 1000)));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  Io receive(Bytes& inbox) {
    uint8_t buf[16384];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        inbox.insert(inbox.end(), buf, buf + n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return Io::kOk;
      return Io::kClosed;  // EOF or reset
    }
  }

  int fd_ = -1;
  uint16_t port_ = 0;
};

// ---- PDU construction ---------------------------------------------------------------------------

constexpr uint8_t kWhole = rpc::kPfcFirstFrag | rpc::kPfcLastFrag;

void set_frag_length(Bytes& p) {
  if (p.size() >= 10) store_le16(&p[8], uint16_t(std::min<size_t>(p.size(), 0xffff)));
}

rpc::SyntaxId random_syntax(Rng& r) {
  rpc::SyntaxId s;
  s.uuid.time_low = r.u32();
  s.uuid.time_mid = uint16_t(r.u32());
  s.uuid.time_hi = uint16_t(r.u32());
  for (uint8_t& b : s.uuid.rest) b = uint8_t(r.u32());
  s.version_major = uint16_t(r.below(3));
  s.version_minor = uint16_t(r.below(3));
  return s;
}

std::vector<rpc::ContextElem> random_contexts(Rng& r) {
  std::vector<rpc::ContextElem> out;
  const size_t n = r.percent(10) ? r.below(40) : r.in(1, 3);
  for (size_t i = 0; i < n; ++i) {
    rpc::ContextElem c;
    c.context_id = uint16_t(r.percent(70) ? i : r.u32());
    c.abstract_syntax = r.percent(70) ? rpc::winreg_syntax() : random_syntax(r);
    if (r.percent(15)) c.abstract_syntax.version_major = 2;
    switch (r.below(5)) {
      case 0:
        c.transfer_syntaxes = {rpc::ndr64_syntax()};
        break;
      case 1:
        c.transfer_syntaxes = {rpc::bind_time_feature_syntax(uint8_t(r.u32()))};
        break;
      case 2:
        c.transfer_syntaxes = {};
        break;
      case 3:
        c.transfer_syntaxes = {random_syntax(r), rpc::ndr64_syntax(), rpc::ndr20_syntax()};
        break;
      default:
        c.transfer_syntaxes = {rpc::ndr20_syntax()};
        break;
    }
    out.push_back(std::move(c));
  }
  return out;
}

// A well-formed bind for winreg over NDR 2.0 plus samba's feature negotiation.
Bytes good_bind(uint32_t call_id) {
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 5840;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  b.contexts.push_back({1, rpc::winreg_syntax(), {rpc::bind_time_feature_syntax(3)}});
  return rpc::build_bind(rpc::PType::kBind, call_id, b);
}

Bytes random_bind(Rng& r, rpc::PType type, uint32_t call_id) {
  rpc::Bind b;
  static const std::vector<uint16_t> frags = {0, 1, 16, 31, 32, 33, 1432, 4280, 5840, 65535};
  b.max_xmit_frag = r.percent(70) ? r.pick(frags) : uint16_t(r.u32());
  b.max_recv_frag = r.percent(70) ? r.pick(frags) : uint16_t(r.u32());
  b.assoc_group_id = r.percent(50) ? 0 : r.u32();
  b.contexts = random_contexts(r);
  return rpc::build_bind(type, call_id, b);
}

std::u16string random_name(Rng& r) {
  static const std::vector<std::string> names = {"Global",
                                                 "Costly",
                                                 "238",
                                                 "2 238 230",
                                                 "Counter 009",
                                                 "Help 009",
                                                 "Explain 009",
                                                 "Counter",
                                                 "Foreign TESTHOST 238",
                                                 "Foreign OTHER",
                                                 "OLD_Global",
                                                 "",
                                                 " ",
                                                 "999999999999 4294967295 -1",
                                                 "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib",
                                                 "Last Counter",
                                                 "SYSTEM\\..\\..\\x"};
  switch (r.below(4)) {
    case 0: {  // arbitrary UTF-16 code units, lone surrogates included
      std::u16string s(r.below(64), u'\0');
      for (char16_t& c : s) c = char16_t(r.u32());
      return s;
    }
    case 1:
      return std::u16string(r.in(100, 3000), u'A' + char16_t(r.below(26)));
    default:
      return utf8_to_utf16(r.pick(names));
  }
}

winreg::PolicyHandle random_handle(Rng& r, const std::optional<winreg::PolicyHandle>& real) {
  if (real && r.percent(70)) return *real;
  winreg::PolicyHandle h;
  h.attributes = r.percent(80) ? 0 : r.u32();
  for (uint8_t& b : h.uuid) b = uint8_t(r.u32());
  if (real && r.percent(50)) {  // near miss: one byte off a live handle
    h = *real;
    h.uuid[r.below(16)] ^= uint8_t(1 + r.below(255));
  }
  return h;
}

std::optional<uint32_t> maybe_u32(Rng& r) { return r.percent(75) ? std::optional(r.edgy_u32()) : std::nullopt; }

std::optional<Bytes> maybe_bytes(Rng& r) {
  if (r.percent(30)) return std::nullopt;
  return r.bytes(r.percent(80) ? r.below(16) : r.below(2000));
}

winreg::StringBuf random_strbuf(Rng& r) {
  winreg::StringBuf b;
  if (r.percent(70)) b.text = random_name(r);
  b.size = uint16_t(r.edgy_u32());
  return b;
}

std::vector<winreg::ValueEntry> random_values(Rng& r) {
  std::vector<winreg::ValueEntry> v(r.below(6));
  for (winreg::ValueEntry& e : v) {
    if (r.percent(80)) e.name = random_strbuf(r);
    e.valuelen = r.edgy_u32();
    e.valueptr = r.edgy_u32();
    e.type = r.edgy_u32();
  }
  return v;
}

// A request stub shaped like the operation's (often valid, fields drawn from edge values).
Bytes shaped_stub(Rng& r, uint16_t opnum, const std::optional<winreg::PolicyHandle>& real) {
  using namespace winreg;
  switch (opnum) {
    case kOpenHKLM:
    case kOpenHKPD:
    case kOpenHKPT:
    case kOpenHKPN: {
      OpenHiveRequest q;
      if (r.percent(50)) q.system_name = uint16_t(r.u32());
      q.access_mask = r.edgy_u32();
      return encode(q);
    }
    case kCloseKey:
      return encode(CloseKeyRequest{random_handle(r, real)});
    case kOpenKey:
      return encode(OpenKeyRequest{random_handle(r, real), random_name(r), r.edgy_u32(), r.edgy_u32()});
    case kEnumKey: {
      EnumKeyRequest q{random_handle(r, real), r.edgy_u32(), random_strbuf(r), std::nullopt, std::nullopt};
      if (r.percent(50)) q.keyclass = random_strbuf(r);
      if (r.percent(50)) q.last_changed_time = r.u32();
      return encode(q);
    }
    case kEnumValue: {
      EnumValueRequest q{random_handle(r, real), r.edgy_u32() % 4, random_strbuf(r), maybe_u32(r),
                         maybe_bytes(r),         maybe_u32(r),     maybe_u32(r)};
      return encode(q);
    }
    case kGetKeySecurity: {
      GetKeySecurityRequest q{random_handle(r, real), r.edgy_u32(), {maybe_bytes(r), r.edgy_u32(), r.edgy_u32()}};
      return encode(q);
    }
    case kQueryInfoKey: {
      QueryInfoKeyRequest q{random_handle(r, real), std::nullopt};
      if (r.percent(70)) q.classname = random_name(r);
      return encode(q);
    }
    case kQueryValue: {
      QueryValueRequest q{random_handle(r, real), random_name(r), maybe_u32(r),
                          maybe_bytes(r),         maybe_u32(r),   maybe_u32(r)};
      if (r.percent(20)) q.value_name.reset();
      return encode(q);
    }
    case kGetVersion:
      return encode(GetVersionRequest{random_handle(r, real)});
    case kQueryMultipleValues: {
      QueryMultipleValuesRequest q{random_handle(r, real), random_values(r), maybe_bytes(r), r.edgy_u32()};
      return encode(q);
    }
    case kQueryMultipleValues2: {
      // Any offer, up to 4 GiB: the service must refuse the ones it will not send (it sizes the
      // reply by `offered`), not build gigabytes.
      QueryMultipleValues2Request q{random_handle(r, real), random_values(r), maybe_bytes(r), r.edgy_u32()};
      return encode(q);
    }
    default:
      return r.bytes(r.below(300));
  }
}

// Damages a stub the way a broken or hostile client would.
void mutate_stub(Rng& r, Bytes& stub) {
  switch (r.below(8)) {
    case 0:
      stub.resize(r.below(stub.size() + 1));
      break;  // truncated
    case 1:   // a few bytes changed
      for (size_t i = 0, n = r.in(1, 4); i < n && !stub.empty(); ++i) stub[r.below(stub.size())] = uint8_t(r.u32());
      break;
    case 2:
      put_bytes(stub, r.bytes(r.in(1, 64)));
      break;  // trailing junk
    case 3:   // a count or length field lies
      if (stub.size() >= 4) store_le32(&stub[r.below(stub.size() / 4) * 4], r.edgy_u32());
      break;
    case 4:
      stub = r.bytes(r.below(512));
      break;  // nothing like the operation
    default:
      break;  // left valid
  }
}

uint16_t random_opnum(Rng& r) {
  static const std::vector<uint16_t> valid = {winreg::kOpenHKLM,
                                              winreg::kOpenHKPD,
                                              winreg::kCloseKey,
                                              winreg::kEnumKey,
                                              winreg::kEnumValue,
                                              winreg::kGetKeySecurity,
                                              winreg::kOpenKey,
                                              winreg::kQueryInfoKey,
                                              winreg::kQueryValue,
                                              winreg::kGetVersion,
                                              winreg::kQueryMultipleValues,
                                              winreg::kOpenHKPT,
                                              winreg::kOpenHKPN,
                                              winreg::kQueryMultipleValues2};
  switch (r.below(10)) {
    case 0:
      return uint16_t(r.u32());
    case 1:
      return uint16_t(r.below(0x40));
    default:
      return r.pick(valid);
  }
}

// ---- one session -------------------------------------------------------------------------------

enum class Ending { kHalfClose, kAbort, kStall };

class Session {
 public:
  Session(const AttackConfig& cfg, Rng& rng, AttackReport& report, size_t& budget)
      : cfg_(cfg), r_(rng), rep_(report), budget_(budget), sock_(cfg.port) {}

  void run();

 private:
  // Sends one PDU (or a prefix of it); false once the server has closed.
  bool send(const Bytes& pdu, size_t prefix = SIZE_MAX);
  bool send_all(const std::vector<Bytes>& pdus);
  // Reads until a complete reply to `call_id` arrived (its stub in `stub`), the server closed or
  // the deadline passed. Returns true for a response.
  bool await_reply(uint32_t call_id, Bytes& stub);
  // Checks and removes every complete PDU at the front of inbox_.
  void drain_inbox();
  void check_pdu(ByteView pdu);
  void violation(std::string what);
  bool was_sent(uint32_t call_id) const;
  void finish(Ending e);

  uint32_t next_call() { return call_id_++; }
  void bind_and_open(bool open);
  void bound_actions();
  void fragment_chaos();
  void random_request();
  void odd_ptype();
  void header_lies();

  const AttackConfig& cfg_;
  Rng& r_;
  AttackReport& rep_;
  size_t& budget_;
  Socket sock_;
  Bytes inbox_;
  bool closed_ = false;   // the server closed (or reset) the connection
  bool partial_ = false;  // the last thing sent was a prefix of a PDU
  bool reported_ = false;
  Bytes sent_;  // the whole stream sent: where the server may have read a call id from
  uint32_t call_id_ = 1;
  std::optional<winreg::PolicyHandle> handle_;
  std::optional<uint32_t> awaited_;
  Bytes awaited_stub_;
  bool awaited_done_ = false;
  Clock::time_point last_send_ = Clock::now();
};

// Prefixed with our port, which the server logs as peer=127.0.0.1:<port>.
// The first violation of a session also carries what was sent so far, to replay it.
void Session::violation(std::string what) {
  if (rep_.violations.size() >= 50) return;
  std::string line = "[port " + std::to_string(sock_.local_port()) + "] " + what;
  if (!reported_) {
    static const char* hex = "0123456789abcdef";
    line += "; sent (hex):";
    for (size_t i = 0; i < std::min<size_t>(sent_.size(), 1024); ++i) {
      line += hex[sent_[i] >> 4];
      line += hex[sent_[i] & 15];
    }
  }
  reported_ = true;
  rep_.violations.push_back(std::move(line));
}

// Where the server frames the stream differs from ours once we lie about lengths, so a call id
// is accepted when its bytes appear anywhere in what we sent, in either byte order.
bool Session::was_sent(uint32_t call_id) const {
  uint8_t le[4], be[4];
  store_le32(le, call_id);
  for (int i = 0; i < 4; ++i) be[i] = le[3 - i];
  for (const uint8_t* pat : {le, be})
    if (std::search(sent_.begin(), sent_.end(), pat, pat + 4) != sent_.end()) return true;
  return false;
}

bool Session::send(const Bytes& pdu, size_t prefix) {
  if (closed_ || budget_ == 0) return false;
  --budget_;
  ++rep_.pdus_sent;
  const size_t n = std::min(prefix, pdu.size());
  sent_.insert(sent_.end(), pdu.begin(), pdu.begin() + n);
  partial_ = n < pdu.size();
  last_send_ = Clock::now();
  Io io = sock_.send_all(ByteView(pdu).first(n), inbox_, Clock::now() + cfg_.idle_timeout + cfg_.close_slack);
  if (io == Io::kTimeout) violation("server neither read nor closed for longer than the idle timeout");
  if (io != Io::kOk) closed_ = true;
  drain_inbox();
  return !closed_;
}

bool Session::send_all(const std::vector<Bytes>& pdus) {
  for (const Bytes& p : pdus)
    if (!send(p)) return false;
  return true;
}

void Session::check_pdu(ByteView pdu) {
  rpc::Header h;
  if (Status s = rpc::parse_header(pdu, h); !s.ok()) return violation("malformed reply header: " + s.message());
  if (!h.little_endian() || h.rpc_vers_minor != 0) violation("reply not in DCE/RPC 5.0 little-endian");
  if (pdu.size() > cfg_.server_max_frag) violation("reply of " + std::to_string(pdu.size()) + " bytes");
  if (!was_sent(h.call_id)) violation("reply for call id " + std::to_string(h.call_id) + " which was never sent");
  Status st;
  switch (h.ptype) {
    case rpc::PType::kResponse: {
      rpc::Response resp;
      st = rpc::parse_response(pdu, h, resp);
      if (st.ok() && awaited_ && h.call_id == *awaited_) {
        put_bytes(awaited_stub_, resp.stub);
        awaited_done_ = h.pfc_flags & rpc::kPfcLastFrag;
      }
      break;
    }
    case rpc::PType::kFault: {
      rpc::Fault f;
      st = rpc::parse_fault(pdu, h, f);
      if (st.ok() && f.status == 0) violation("fault with status 0");
      if (awaited_ && h.call_id == *awaited_) awaited_done_ = true;
      break;
    }
    case rpc::PType::kBindAck:
    case rpc::PType::kAlterContextResp: {
      rpc::BindAck a;
      st = rpc::parse_bind_ack(pdu, h, a);
      if (awaited_ && h.call_id == *awaited_) awaited_done_ = true;
      break;
    }
    case rpc::PType::kBindNak: {
      rpc::BindNak n;
      st = rpc::parse_bind_nak(pdu, h, n);
      if (awaited_ && h.call_id == *awaited_) awaited_done_ = true;
      break;
    }
    default:
      return violation(std::string("server sent a ") + rpc::ptype_name(h.ptype));
  }
  if (!st.ok()) violation(std::string("malformed ") + rpc::ptype_name(h.ptype) + ": " + st.message());
  ++rep_.replies;
  ++rep_.replies_by_type[rpc::ptype_name(h.ptype)];
}

void Session::drain_inbox() {
  size_t pos = 0;
  while (inbox_.size() - pos >= 10) {
    const size_t len = load_le16(&inbox_[pos + 8]);
    if (inbox_[pos] != 5 || len < rpc::kHeaderSize) {
      violation("reply stream is not DCE/RPC");
      pos = inbox_.size();
      break;
    }
    if (inbox_.size() - pos < len) break;
    check_pdu(ByteView(inbox_).subspan(pos, len));
    pos += len;
  }
  inbox_.erase(inbox_.begin(), inbox_.begin() + pos);
}

bool Session::await_reply(uint32_t call_id, Bytes& stub) {
  awaited_ = call_id;
  awaited_stub_.clear();
  awaited_done_ = false;
  const auto deadline = Clock::now() + cfg_.close_slack;
  drain_inbox();
  while (!awaited_done_ && !closed_) {
    Io io = sock_.read_some(inbox_, deadline);
    if (io == Io::kTimeout) {
      violation("no reply to call " + std::to_string(call_id) + " within " + std::to_string(cfg_.close_slack.count()) +
                " ms");
      break;
    }
    if (io == Io::kClosed) closed_ = true;
    drain_inbox();
  }
  awaited_.reset();
  stub = std::move(awaited_stub_);
  return awaited_done_ && !stub.empty();
}

// Requests of every shape on a bound connection.
void Session::random_request() {
  const uint16_t opnum = random_opnum(r_);
  Bytes stub = shaped_stub(r_, opnum, handle_);
  mutate_stub(r_, stub);
  std::vector<Bytes> frags;
  const uint16_t frag = r_.percent(70) ? 5840 : uint16_t(r_.in(rpc::kMinFragSize, 5840));
  rpc::build_request_fragments(next_call(), r_.percent(90) ? 0 : uint16_t(r_.below(4)), opnum, stub, frag, frags);
  if (r_.percent(10)) store_le32(&frags.front()[16], r_.edgy_u32());  // alloc_hint lies
  if (r_.percent(5)) frags.front()[3] |= rpc::kPfcObjectUuid;         // claims an object uuid it lacks
  if (r_.percent(5)) frags.front()[3] |= uint8_t(r_.u32()) & 0xfc;    // odd flag bits
  if (r_.percent(3)) frags.front()[4] = 0x00;                         // big-endian / EBCDIC drep
  send_all(frags);
}

// Fragments out of order, missing, duplicated, interleaved, oversized.
void Session::fragment_chaos() {
  const uint16_t opnum = r_.percent(80) ? uint16_t(winreg::kQueryValue) : random_opnum(r_);
  Bytes stub = shaped_stub(r_, opnum, handle_);
  const bool big = r_.percent(30);
  if (big) put_bytes(stub, r_.bytes(r_.in(100, 40000)));  // may pass the server's reassembly bound
  std::vector<Bytes> a, b;
  const uint16_t frag = big ? 5840 : uint16_t(r_.in(rpc::kMinFragSize, 256));
  rpc::build_request_fragments(next_call(), 0, opnum, stub, frag, a);
  rpc::build_request_fragments(next_call(), 0, opnum, stub, frag, b);
  if (a.size() > 10) a.resize(10);  // bounded PDU count per action
  if (b.size() > 10) b.resize(10);
  std::vector<Bytes> out;
  switch (r_.below(7)) {
    case 0:
      std::reverse(a.begin(), a.end());
      out = a;
      break;
    case 1:
      out.assign(a.begin() + 1, a.end());
      break;  // first fragment missing
    case 2:   // two calls interleaved
      for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i < a.size()) out.push_back(a[i]);
        if (i < b.size()) out.push_back(b[i]);
      }
      break;
    case 3:
      out = a;
      out.insert(out.begin() + r_.below(out.size()), a[r_.below(a.size())]);
      break;  // duplicate
    case 4:
      out = a;
      out.pop_back();
      out.insert(out.end(), b.begin(), b.end());
      break;  // last one missing
    case 5:   // first fragment asks for a huge reassembly buffer, then the call is orphaned
      store_le32(&a.front()[16], 0xffffffff);
      out.push_back(a.front());
      out.push_back(rpc::build_empty(r_.percent(50) ? rpc::PType::kOrphaned : rpc::PType::kCoCancel, kWhole,
                                     load_le32(&a.front()[12])));
      break;
    default:
      out = a;
      std::shuffle(out.begin(), out.end(), std::mt19937(r_.u32()));
      break;
  }
  send_all(out);
}

// PDU types a client has no business sending, and the ones it may send with nothing to say.
void Session::odd_ptype() {
  const uint32_t id = next_call();
  switch (r_.below(9)) {
    case 0:
      send(rpc::build_empty(rpc::PType::kAuth3, kWhole, id));
      break;
    case 1:
      send(rpc::build_empty(rpc::PType::kShutdown, kWhole, id));
      break;
    case 2:
      send(rpc::build_empty(rpc::PType::kCoCancel, kWhole, id));
      break;
    case 3:
      send(rpc::build_empty(rpc::PType::kOrphaned, kWhole, id));
      break;
    case 4:
      send(rpc::build_response(kWhole, id, {0, 0, 0, {}}));
      break;
    case 5:
      send(rpc::build_fault(kWhole, id, {0, 0, 0, 0, rpc::kFaultProtoError}));
      break;
    case 6:
      send(rpc::build_bind_ack(rpc::PType::kBindAck, id, {5840, 5840, 1, "135", {}}));
      break;
    case 7: {  // alter_context: sometimes sensible, sometimes garbage after the header
      Bytes p = random_bind(r_, rpc::PType::kAlterContext, id);
      if (r_.percent(50)) {
        p.resize(rpc::kHeaderSize);
        put_bytes(p, r_.bytes(r_.below(200)));
        set_frag_length(p);
      }
      send(p);
      break;
    }
    default: {  // a ptype that does not exist
      Bytes p = rpc::build_empty(rpc::PType::kShutdown, kWhole, id);
      p[2] = uint8_t(r_.percent(50) ? r_.in(20, 255) : r_.pick(std::vector<uint64_t>{1, 4, 5, 6, 7, 8, 9, 10}));
      send(p);
      break;
    }
  }
}

// Header fields that disagree with the PDU: auth_length, frag_length within the server's limit,
// a second bind.
void Session::header_lies() {
  Bytes p = r_.percent(30) ? random_bind(r_, rpc::PType::kBind, next_call())
                           : rpc::build_request(kWhole, next_call(),
                                                {0, 0, winreg::kQueryValue, std::nullopt,
                                                 shaped_stub(r_, winreg::kQueryValue, handle_)});
  switch (r_.below(3)) {
    case 0:
      store_le16(&p[10], uint16_t(r_.percent(50) ? r_.below(p.size()) : r_.u32()));
      break;  // auth_length
    case 1:   // auth trailer that is present but meaningless
      put_bytes(p, r_.bytes(8 + r_.below(64)));
      store_le16(&p[10], uint16_t(p.size() - rpc::kHeaderSize - r_.below(16)));
      set_frag_length(p);
      break;
    default:  // frag_length smaller than the bytes that follow: the rest is read as the next PDU
      store_le16(&p[8], uint16_t(r_.in(rpc::kHeaderSize, p.size())));
      break;
  }
  send(p);
}

void Session::bound_actions() {
  const size_t n = r_.in(1, 20);
  for (size_t i = 0; i < n && !closed_ && budget_ > 0; ++i) {
    // Most actions keep the association alive (faults, not closes), so later ones still land.
    switch (r_.below(20)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5:
      case 6:
      case 7:
      case 8:
      case 9:
      case 10:
      case 11:
        random_request();
        break;
      case 12:
      case 13:
      case 14:
        fragment_chaos();
        break;
      case 15:
      case 16:
        odd_ptype();
        break;
      case 17:
        header_lies();
        break;
      case 18:
        send(random_bind(r_, rpc::PType::kBind, next_call()));
        break;    // a second bind
      default: {  // a truncated request, the stream continues with garbage
        Bytes p = rpc::build_request(
            kWhole, next_call(),
            {0, 0, winreg::kQueryValue, std::nullopt, shaped_stub(r_, winreg::kQueryValue, handle_)});
        send(p, r_.below(p.size()));
        if (r_.percent(50)) send(r_.bytes(r_.in(1, 100)));
        break;
      }
    }
  }
}

void Session::finish(Ending e) {
  if (closed_) {
    ++rep_.closed_by_server;
    if (!inbox_.empty()) violation("connection closed after a partial reply PDU");
    return;
  }
  switch (e) {
    case Ending::kAbort:
      sock_.abort();
      return;
    case Ending::kHalfClose: {
      // The server must notice the end of the stream and close its side.
      sock_.half_close();
      const auto deadline = Clock::now() + cfg_.close_slack;
      Io io = Io::kOk;
      while (io == Io::kOk) {
        io = sock_.read_some(inbox_, deadline);
        drain_inbox();
      }
      if (io == Io::kTimeout)
        violation("server kept a half-closed connection open");
      else
        ++rep_.closed_by_server;
      // A reply cut short is fine here: the server may close while a write is in flight.
      return;
    }
    case Ending::kStall: {
      ++rep_.stalls;
      const auto deadline = last_send_ + cfg_.idle_timeout + cfg_.close_slack;
      Io io = Io::kOk;
      while (io == Io::kOk) {
        io = sock_.read_some(inbox_, deadline);
        drain_inbox();
      }
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_send_);
      if (io == Io::kTimeout) {
        violation("stalled connection still open " + std::to_string(waited.count()) + " ms after the last byte");
      } else {
        ++rep_.closed_by_server;
        if (waited >= cfg_.idle_timeout) ++rep_.idle_closes;
        rep_.slowest_stall_close = std::max(rep_.slowest_stall_close, waited);
        if (!inbox_.empty()) violation("connection closed after a partial reply PDU");
      }
      return;
    }
  }
}

void Session::run() {
  if (!sock_.open()) return violation("cannot connect to the server");
  ++rep_.sessions;
  switch (r_.below(12)) {
    case 0:  // random bytes, half of them starting like a DCE/RPC header
    {
      Bytes junk = r_.bytes(r_.in(1, 400));
      if (r_.percent(50)) junk[0] = 5;
      if (junk.size() > 1 && r_.percent(50)) junk[1] = 0;
      send(junk);
      break;
    }
    case 1: {  // wrong version, or frag_length outside what the server accepts
      Bytes p = good_bind(next_call());
      switch (r_.below(4)) {
        case 0:
          p[0] = uint8_t(r_.percent(50) ? 4 : r_.u32());
          break;
        case 1:
          p[1] = uint8_t(r_.in(1, 255));
          break;
        case 2:
          store_le16(&p[8], uint16_t(r_.below(rpc::kHeaderSize)));
          break;
        default:
          store_le16(&p[8], uint16_t(r_.in(std::min<size_t>(cfg_.server_max_pdu + 1, 0xffff), 0xffff)));
          break;
      }
      send(p);
      break;
    }
    case 2:  // requests (and everything else) before any bind
      random_request();
      if (r_.percent(50)) odd_ptype();
      break;
    case 3: {  // a damaged or odd bind, then whatever follows
      send(random_bind(r_, rpc::PType::kBind, next_call()));
      if (r_.percent(50)) header_lies();
      bound_actions();
      break;
    }
    case 4: {  // a healthy association goes quiet, maybe in the middle of a PDU
      bind_and_open(r_.percent(50));
      if (r_.percent(50)) {
        Bytes p = rpc::build_request(
            kWhole, next_call(),
            {0, 0, winreg::kQueryValue, std::nullopt, shaped_stub(r_, winreg::kQueryValue, handle_)});
        send(p, r_.below(p.size()));
      }
      return finish(Ending::kStall);
    }
    default:  // a proper bind (and often a live handle), then the abuse
      bind_and_open(r_.percent(60));
      bound_actions();
      break;
  }
  Ending e = partial_         ? (r_.percent(60) ? Ending::kStall : Ending::kAbort)
             : r_.percent(4)  ? Ending::kStall
             : r_.percent(20) ? Ending::kAbort
                              : Ending::kHalfClose;
  finish(e);
}

void Session::bind_and_open(bool open) {
  const uint32_t bind_id = next_call();
  Bytes stub;
  if (!send(good_bind(bind_id))) return;
  await_reply(bind_id, stub);  // a bind_ack carries no stub
  if (!open) return;
  const uint32_t id = next_call();
  const uint16_t op = r_.percent(70) ? winreg::kOpenHKPD : winreg::kOpenHKLM;
  if (send(rpc::build_request(kWhole, id, {0, 0, op, std::nullopt, shaped_stub(r_, op, {})})) &&
      await_reply(id, stub)) {
    winreg::OpenHiveResponse resp;
    if (winreg::decode(stub, resp).ok() && resp.result == 0)
      handle_ = resp.handle;
    else
      violation("OpenHive on a fresh association failed");
  }
}

}  // namespace

AttackReport run_attacker(const AttackConfig& cfg) {
  AttackReport rep;
  Rng rng(cfg.seed);
  size_t budget = cfg.pdu_budget;
  while (budget > 0) {
    Session s(cfg, rng, rep, budget);
    s.run();
  }
  return rep;
}

}  // namespace perfsim::fuzz
