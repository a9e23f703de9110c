// bench_server: the winreg server's figures of issue 3, on loopback, each against a baseline
// measured in the same run:
//   (a) QueryValue Global (~1 MB) throughput, vs a plain TCP sender/receiver moving the same bytes
//       in the same PDU sizes with the same read sizes (one flat write per response; and, as a
//       second baseline, the same bytes written gathered, a header and a body piece per PDU, as a
//       sender that does not copy the data writes them);
//   (b) small calls per second over 64 concurrent connections, p50/p99 latency, vs a plain TCP
//       server answering the same request with a canned reply of the same size (same load generator);
//   (c) resident memory per idle bound connection (after bind + OpenHKPD), vs the plain server.
//   --objects [calls]: Global bytes and server CPU per answer with and without issue 14's objects.
//   --roles [calls]: the same with and without the iis and mssql roles.
//   --journal [rounds]: (b)'s small calls with issue 15's journal and metrics on vs off (alternating
//       rounds), and the heap bytes per event of a full 10,000-event journal ring.
// Prints a table and one JSON line. Usage: bench_server [--quick | --profile-global [calls] | --objects [calls] |
// --roles [calls] | --journal [rounds] | --small [seconds | cpu | memory]]
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <utility>  // std::exchange, which asio 1.74 uses without including it
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/stats.h"
#include "bench/common/synth_host.h"
#include "perfdata/model.h"
#include "recorder/client.h"
#include "replayer/host.h"
#include "replayer/limits.h"
#include "rpc/association.h"
#include "rpc/pdu.h"
#include "server/server.h"
#include "journal/journal.h"
#include "journal/recorder.h"
#include "serve/run.h"
#include "server/winreg_handler.h"
#include "windows/constants.h"
#include "winreg/codec.h"

using namespace perfsim;
using Clock = std::chrono::steady_clock;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using bench::median;

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_server: %s\n", what.c_str());
  std::exit(1);
}
void check(const Status& s, const char* what) {
  if (!s.ok()) die(std::string(what) + ": " + s.message());
}
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- fixtures -------------------------------------------------------------------------------

// A synthetic 2016 capture whose Global is about 1 MB (520 processes, 1-30 threads each).
captures::Capture make_capture() {
  captures::Capture cap;
  check(bench::synth_bench_host(520, cap), "synthesize");
  return cap;
}

// frozen: sample 0 as recorded; realtime: every answer is a fresh copy with the serving moment's
// clocks patched in, as `perfsim serve` runs by default (slowed down so it stays on sample 0,
// whose size the baseline's wire has: at the slowest pace a host takes, replayer/limits.h, the
// 15 s sample lasts over four hours).
std::shared_ptr<replayer::SimulatedHost> make_host(const captures::Capture& cap, replayer::TimelineMode mode) {
  replayer::HostOptions opt{mode, 0};
  opt.speed = replayer::limits::kSpeed.lo;
  std::shared_ptr<replayer::SimulatedHost> host;
  check(replayer::SimulatedHost::load(cap, opt, host), "load host");
  return host;
}

// A serve run of the one host, as perfsim serve assembles it (serve/run.h).
std::unique_ptr<serve::ServeRun> start_server(std::shared_ptr<replayer::SimulatedHost> host, unsigned threads,
                                              uint16_t& port, std::shared_ptr<journal::Recorder> recorder = nullptr) {
  serve::Config cfg;
  cfg.given.push_back({"127.0.0.1:0", std::move(host), "bench"});
  cfg.recorder = std::move(recorder);
  cfg.threads = threads;
  cfg.handle_signals = false;
  cfg.log = [](std::string_view) {};
  auto srv = std::make_unique<serve::ServeRun>();
  if (serve::Failure f = srv->run(std::move(cfg)); !f.ok()) check(Status::IOError(f.message), "server start");
  port = srv->port(0);
  return srv;
}

// ---- blocking POSIX client pieces (lean client, memory test, plain baseline) -----------------

int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die("connect: " + std::string(strerror(errno)));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Each PDU of `wire` as two pieces, its 24-byte header and its body: how a zero-copy sender
// (perfsim's connection) hands a fragmented answer to the kernel.
std::vector<iovec> pdu_pieces(const Bytes& wire) {
  std::vector<iovec> iov;
  for (size_t at = 0; at + rpc::kHeaderSize <= wire.size();) {
    const size_t len = load_le16(&wire[at + 8]);
    if (len < rpc::kHeaderSize || at + len > wire.size()) die("pdu_pieces: bad wire");
    iov.push_back({const_cast<uint8_t*>(&wire[at]), rpc::kHeaderSize});
    iov.push_back({const_cast<uint8_t*>(&wire[at + rpc::kHeaderSize]), len - rpc::kHeaderSize});
    at += len;
  }
  return iov;
}

// Blocking gathered send, 64 pieces per sendmsg as Asio's gathered writes do.
void send_pieces(int fd, std::vector<iovec> iov) {
  for (size_t i = 0; i < iov.size();) {
    msghdr m{};
    m.msg_iov = &iov[i];
    m.msg_iovlen = std::min<size_t>(64, iov.size() - i);
    ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n <= 0) die("sendmsg failed");
    for (size_t left = size_t(n); left && i < iov.size();) {  // a blocking socket may still send less
      const size_t take = std::min(left, iov[i].iov_len);
      iov[i].iov_base = static_cast<uint8_t*>(iov[i].iov_base) + take;
      iov[i].iov_len -= take;
      left -= take;
      if (iov[i].iov_len == 0) ++i;
    }
  }
}

void send_all(int fd, ByteView b) {
  for (size_t sent = 0; sent < b.size();) {
    ssize_t n = ::send(fd, b.data() + sent, b.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) die("send failed");
    sent += size_t(n);
  }
}

bool recv_exact(int fd, uint8_t* p, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = ::recv(fd, p + got, n - got, MSG_WAITALL);
    if (r <= 0) return false;
    got += size_t(r);
  }
  return true;
}

// Reads one PDU as our WinregClient does: the 16-byte header, then the rest.
bool read_pdu(int fd, Bytes& pdu) {
  pdu.resize(rpc::kHeaderSize);
  if (!recv_exact(fd, pdu.data(), rpc::kHeaderSize)) return false;
  const size_t len = load_le16(&pdu[8]);
  if (len < rpc::kHeaderSize) return false;
  pdu.resize(len);
  return recv_exact(fd, pdu.data() + rpc::kHeaderSize, len - rpc::kHeaderSize);
}

// Reads PDUs until the last fragment of a response; appends the stubs.
void read_response(int fd, Bytes& pdu, Bytes& stub) {
  stub.clear();
  for (;;) {
    if (!read_pdu(fd, pdu)) die("connection closed while reading a response");
    rpc::Header h;
    rpc::Response r;
    if (!rpc::parse_header(pdu, h).ok() || h.ptype != rpc::PType::kResponse || !rpc::parse_response(pdu, h, r).ok())
      die("expected a response PDU");
    put_bytes(stub, r.stub);
    if (h.pfc_flags & rpc::kPfcLastFrag) return;
  }
}

Bytes bind_pdu() {
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 5840;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  return rpc::build_bind(rpc::PType::kBind, 1, b);
}

Bytes request_pdu(uint32_t call_id, uint16_t opnum, const Bytes& stub) {
  return rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, call_id,
                            {uint32_t(stub.size()), 0, opnum, std::nullopt, stub});
}

Bytes query_value_pdu(uint32_t call_id, const winreg::PolicyHandle& h, const std::string& name, uint32_t size) {
  winreg::QueryValueRequest q;
  q.handle = h;
  q.value_name = std::u16string(name.begin(), name.end());
  q.type = 0;
  q.data = Bytes();
  q.data_size = size;
  q.data_length = 0;
  return request_pdu(call_id, winreg::kQueryValue, winreg::encode(q));
}

// bind + OpenHKPD on a blocking socket; returns the handle.
winreg::PolicyHandle bind_and_open(int fd) {
  Bytes pdu, stub;
  send_all(fd, bind_pdu());
  if (!read_pdu(fd, pdu) || pdu[2] != uint8_t(rpc::PType::kBindAck)) die("bind failed");
  winreg::OpenHiveRequest open;
  open.access_mask = 0x02000000;
  send_all(fd, request_pdu(2, winreg::kOpenHKPD, winreg::encode(open)));
  read_response(fd, pdu, stub);
  winreg::OpenHiveResponse resp;
  if (!winreg::decode(stub, resp).ok() || resp.result) die("OpenHKPD failed");
  return resp.handle;
}

// The bytes the server sends for a QueryValue returning `value`: the response stub in fragments
// of max_xmit_frag (5840), back to back. The plain baselines send exactly these.
Bytes response_wire(const Bytes& value, size_t& fragments) {
  winreg::QueryValueResponse resp;
  resp.type = windows::kRegBinary;
  resp.data = value;
  resp.data_size = resp.data_length = uint32_t(value.size());
  std::vector<Bytes> frags;
  rpc::build_response_fragments(3, 0, winreg::encode(resp), 5840, frags);
  Bytes wire;
  for (const Bytes& f : frags) put_bytes(wire, f);
  fragments = frags.size();
  return wire;
}

// ---- (a) large value throughput --------------------------------------------------------------

struct Throughput {
  size_t value_bytes = 0, wire_bytes = 0, fragments = 0;
  int reps = 0;
  // MB/s of value bytes. same_reads: the baseline's own client against perfsim (frozen or live host).
  double same_reads = 0, same_reads_live = 0, winreg_client = 0, lean_client = 0, baseline = 0, baseline_gathered = 0;
  double handler_us = 0, handler_us_live = 0;  // server CPU per call, in-process
  int rounds = 0;
  std::vector<double> ratio_rounds, ratio_rounds_live;         // same-reads / baseline, per round
  std::vector<double> gathered_rounds, ratio_rounds_gathered;  // gathered baseline / baseline; frozen / gathered
};

double mbps(size_t bytes, int reps, double secs) { return double(bytes) * reps / secs / 1e6; }

double measure_winreg_client(uint16_t port, const Bytes& expected, int reps) {
  std::unique_ptr<recorder::WinregClient> c;
  check(recorder::WinregClient::connect("127.0.0.1", port, std::chrono::seconds(10), c), "connect");
  winreg::PolicyHandle h;
  check(c->open_hive(winreg::kOpenHKPD, h), "OpenHKPD");
  winreg::QueryValueResponse r;
  check(c->query_value(h, "Global", uint32_t(expected.size()), r), "QueryValue");
  if (!r.data || *r.data != expected) die("WinregClient got the wrong Global");
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) {
    check(c->query_value(h, "Global", uint32_t(expected.size()), r), "QueryValue");
    if (!r.data || r.data->size() != expected.size()) die("short Global");
  }
  return mbps(expected.size(), reps, seconds_since(t0));
}

// The same calls with blocking reads and a pre-encoded request: what the transport allows a
// client that does no more than decode. `exact`: the first answer must equal `expected` (else
// only its size: a live host's answers move).
double measure_lean_client(uint16_t port, const Bytes& expected, int reps, bool exact = true) {
  int fd = connect_loopback(port);
  const winreg::PolicyHandle h = bind_and_open(fd);
  const Bytes req = query_value_pdu(3, h, "Global", uint32_t(expected.size()));
  Bytes pdu, stub;
  auto once = [&] {
    send_all(fd, req);
    read_response(fd, pdu, stub);
    winreg::QueryValueResponse r;
    if (!winreg::decode(stub, r).ok() || !r.data || r.data->size() != expected.size()) die("lean client: bad Global");
    return r;
  };
  if (exact && *once().data != expected) die("lean client got the wrong Global");
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) once();
  const double secs = seconds_since(t0);
  ::close(fd);
  return mbps(expected.size(), reps, secs);
}

// The baseline's client against perfsim: the same request, the same reads (header, then the rest
// of each PDU into one reused buffer) until the last fragment, nothing else; so the ratio to the
// baseline is the server's alone. The first answer is checked whole (reassembled and decoded);
// every timed one must have the same PDU count and sizes as the baseline's wire.
double measure_same_reads(uint16_t port, const Bytes& expected, size_t fragments, size_t wire_bytes, int reps,
                          bool exact) {
  int fd = connect_loopback(port);
  const winreg::PolicyHandle h = bind_and_open(fd);
  const Bytes req = query_value_pdu(3, h, "Global", uint32_t(expected.size()));
  Bytes pdu, stub;
  send_all(fd, req);
  read_response(fd, pdu, stub);
  winreg::QueryValueResponse r;
  if (!winreg::decode(stub, r).ok() || !r.data || r.data->size() != expected.size() || (exact && *r.data != expected))
    die("same-reads client got the wrong Global");
  auto once = [&] {
    send_all(fd, req);
    size_t n = 0, bytes = 0;
    do {
      if (!read_pdu(fd, pdu)) die("same-reads read");
      ++n;
      bytes += pdu.size();
    } while (!(pdu[3] & rpc::kPfcLastFrag));
    if (n != fragments || bytes != wire_bytes) die("same-reads client: answer shaped unlike the baseline's");
  };
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) once();
  const double secs = seconds_since(t0);
  ::close(fd);
  return mbps(expected.size(), reps, secs);
}

// Server CPU per Global call without sockets: WinregHandler::on_pdu from request PDU to the
// gathered reply fragments, averaged over `reps` calls (microseconds).
double handler_us_per_call(const std::shared_ptr<replayer::SimulatedHost>& host, uint32_t size, int reps,
                           const std::string& value = "Global") {
  server::WinregHandler h(rpc::AssociationConfig{}, host);
  std::vector<ByteChain> out;
  h.on_pdu(bind_pdu(), out);
  winreg::OpenHiveRequest open;
  open.access_mask = 0x02000000;
  out.clear();
  h.on_pdu(request_pdu(2, winreg::kOpenHKPD, winreg::encode(open)), out);
  winreg::OpenHiveResponse opened;
  const Bytes opened_pdu = out.size() == 1 ? out[0].flatten() : Bytes();
  if (opened_pdu.size() < rpc::kResponseHeaderSize ||
      !winreg::decode(ByteView(opened_pdu).subspan(rpc::kResponseHeaderSize), opened).ok())
    die("in-process OpenHKPD");
  const Bytes req = query_value_pdu(3, opened.handle, value, size);
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) {
    out.clear();
    h.on_pdu(req, out);
  }
  return seconds_since(t0) * 1e6 / reps;
}

// Plain TCP: a thread answers each request with the precomputed response bytes (same fragments):
// one flat write per response, or (`gathered`) the PDUs' headers and bodies as separate pieces of
// gathered writes, as perfsim's connection writes them. The client reads header + rest per PDU
// into one reused buffer.
double measure_plain(const Bytes& request, const Bytes& wire, size_t value_bytes, int reps, bool gathered) {
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) || ::listen(lfd, 4) ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &alen))
    die("plain listen");
  std::thread server([&] {
    int fd = ::accept(lfd, nullptr, nullptr);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Bytes req;
    const std::vector<iovec> pieces = pdu_pieces(wire);
    while (read_pdu(fd, req)) {
      if (gathered)
        send_pieces(fd, pieces);
      else
        send_all(fd, wire);
    }
    ::close(fd);
  });
  int fd = connect_loopback(ntohs(a.sin_port));
  Bytes pdu;
  auto once = [&] {
    send_all(fd, request);
    for (size_t got = 0; got < wire.size(); got += pdu.size())
      if (!read_pdu(fd, pdu)) die("plain read");
  };
  once();
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) once();
  const double secs = seconds_since(t0);
  ::close(fd);
  server.join();
  ::close(lfd);
  return mbps(value_bytes, reps, secs);
}

Throughput bench_throughput(const std::shared_ptr<replayer::SimulatedHost>& host,
                            const std::shared_ptr<replayer::SimulatedHost>& live, int reps, int rounds) {
  Throughput t;
  t.reps = reps;
  t.rounds = rounds;
  const Bytes global = host->content(replayer::PerfKey::kData, "Global", host->current_tick()).data.to_bytes();
  t.value_bytes = global.size();
  const Bytes wire = response_wire(global, t.fragments);
  t.wire_bytes = wire.size();
  const Bytes plain_request = query_value_pdu(3, {}, "Global", uint32_t(global.size()));
  t.handler_us = handler_us_per_call(host, uint32_t(global.size()), reps / 4);
  t.handler_us_live = handler_us_per_call(live, uint32_t(global.size()), reps / 4);

  uint16_t port = 0, live_port = 0;
  auto srv = start_server(host, 2, port);
  auto live_srv = start_server(live, 2, live_port);
  // Others share this machine: baseline and perfsim alternate in short rounds so that each ratio
  // compares runs made under the same load; the figures are medians over the rounds.
  std::vector<double> base, gathered, frozen, lv;
  for (int r = 0; r < rounds; ++r) {
    base.push_back(measure_plain(plain_request, wire, global.size(), reps / rounds, false));
    gathered.push_back(measure_plain(plain_request, wire, global.size(), reps / rounds, true));
    frozen.push_back(measure_same_reads(port, global, t.fragments, t.wire_bytes, reps / rounds, true));
    lv.push_back(measure_same_reads(live_port, global, t.fragments, t.wire_bytes, reps / rounds, false));
    t.ratio_rounds.push_back(frozen.back() / base.back());
    t.ratio_rounds_live.push_back(lv.back() / base.back());
    t.gathered_rounds.push_back(gathered.back() / base.back());
    t.ratio_rounds_gathered.push_back(frozen.back() / gathered.back());
  }
  t.baseline = median(base);
  t.baseline_gathered = median(gathered);
  t.same_reads = median(frozen);
  t.same_reads_live = median(lv);
  t.winreg_client = measure_winreg_client(port, global, reps / rounds);
  t.lean_client = measure_lean_client(port, global, reps / rounds);
  return t;
}

// ---- (b) small calls, 64 connections -----------------------------------------------------------

// One client connection of the load generator: request, read PDUs to the last fragment, repeat.
struct LoadConn : std::enable_shared_from_this<LoadConn> {
  LoadConn(asio::io_context& io, Bytes req) : sock(io), request(std::move(req)) {}
  tcp::socket sock;
  Bytes request;
  uint8_t header[rpc::kHeaderSize];
  Bytes body;
  Clock::time_point sent;
  uint32_t call_id = 100;
};

struct LoadState {
  bool measuring = false, stopping = false;
  uint64_t calls = 0;
  std::vector<uint32_t> latency_ns;
  int open = 0;
};

void load_call(std::shared_ptr<LoadConn> c, LoadState& st);

void load_read_pdu(std::shared_ptr<LoadConn> c, LoadState& st) {
  asio::async_read(c->sock, asio::buffer(c->header), [c, &st](boost::system::error_code ec, size_t) {
    if (ec) die("load read: " + ec.message());
    const size_t len = load_le16(&c->header[8]);
    if (len < rpc::kHeaderSize) die("load: bad frag_length");
    c->body.resize(len - rpc::kHeaderSize);
    asio::async_read(c->sock, asio::buffer(c->body), [c, &st](boost::system::error_code ec2, size_t) {
      if (ec2) die("load read: " + ec2.message());
      if (c->header[2] != uint8_t(rpc::PType::kResponse)) die("load: expected a response");
      if (!(c->header[3] & rpc::kPfcLastFrag)) return load_read_pdu(c, st);
      if (st.measuring) {
        ++st.calls;
        st.latency_ns.push_back(
            uint32_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - c->sent).count()));
      }
      if (st.stopping) {
        --st.open;
        return;
      }
      load_call(c, st);
    });
  });
}

void load_call(std::shared_ptr<LoadConn> c, LoadState& st) {
  store_le32(&c->request[12], ++c->call_id);
  c->sent = Clock::now();
  asio::async_write(c->sock, asio::buffer(c->request), [c, &st](boost::system::error_code ec, size_t) {
    if (ec) die("load write: " + ec.message());
    load_read_pdu(c, st);
  });
}

struct LoadResult {
  std::string config;
  double calls_per_s = 0, p50_us = 0, p99_us = 0;
};

// Drives `conns` connections from one thread for warmup + window seconds. `setup` runs on each
// blocking fd first and returns the request PDU to repeat.
LoadResult run_load(uint16_t port, int conns, double warmup_s, double window_s,
                    const std::function<Bytes(int fd)>& setup) {
  asio::io_context io(1);
  LoadState st;
  std::vector<std::shared_ptr<LoadConn>> all;
  for (int i = 0; i < conns; ++i) {
    int fd = connect_loopback(port);
    Bytes req = setup(fd);
    auto c = std::make_shared<LoadConn>(io, std::move(req));
    c->sock.assign(tcp::v4(), fd);
    all.push_back(c);
  }
  st.open = conns;
  for (auto& c : all) load_call(c, st);
  st.latency_ns.reserve(1 << 20);
  asio::steady_timer phase(io);
  Clock::time_point t_measure, t_end;
  phase.expires_after(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup_s)));
  phase.async_wait([&](auto) {
    st.measuring = true;
    t_measure = Clock::now();
    phase.expires_after(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(window_s)));
    phase.async_wait([&](auto) {  // calls in flight still complete, uncounted
      t_end = Clock::now();
      st.measuring = false;
      st.stopping = true;
    });
  });
  io.run();
  LoadResult r;
  const double secs = std::chrono::duration<double>(t_end - t_measure).count();
  r.calls_per_s = double(st.calls) / secs;
  r.p50_us = bench::percentile(st.latency_ns, 0.5) / 1e3;
  r.p99_us = bench::percentile(st.latency_ns, 0.99) / 1e3;
  return r;
}

// A plain asio server: every PDU it reads is answered with `reply`, on `threads` threads.
class PlainServer {
 public:
  PlainServer(Bytes reply, unsigned threads)
      : reply_(std::move(reply)), acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    accept();
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~PlainServer() {
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  struct Conn : std::enable_shared_from_this<Conn> {
    explicit Conn(tcp::socket s, const Bytes& r) : sock(std::move(s)), reply(r) {}
    tcp::socket sock;
    const Bytes& reply;
    uint8_t header[rpc::kHeaderSize];
    Bytes body;
    void read() {
      asio::async_read(sock, asio::buffer(header), [self = shared_from_this()](boost::system::error_code ec, size_t) {
        if (ec) return;
        self->body.resize(load_le16(&self->header[8]) - rpc::kHeaderSize);
        asio::async_read(self->sock, asio::buffer(self->body), [self](boost::system::error_code ec2, size_t) {
          if (ec2) return;
          asio::async_write(self->sock, asio::buffer(self->reply), [self](boost::system::error_code ec3, size_t) {
            if (!ec3) self->read();
          });
        });
      });
    }
  };
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket s) {
      if (ec) return;
      s.set_option(tcp::no_delay(true));
      std::make_shared<Conn>(std::move(s), reply_)->read();
      accept();
    });
  }
  Bytes reply_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> threads_;
};

struct SmallCalls {
  std::string value;
  size_t value_bytes = 0, reply_bytes = 0;
  std::vector<LoadResult> perfsim, plain;
};

SmallCalls bench_small_calls(const std::shared_ptr<replayer::SimulatedHost>& host, int conns, double warmup_s,
                             double window_s) {
  SmallCalls s;
  s.value = "238";
  const Bytes value = host->content(replayer::PerfKey::kData, s.value, host->current_tick()).data.to_bytes();
  s.value_bytes = value.size();
  size_t fragments = 0;
  const Bytes canned = response_wire(value, fragments);
  s.reply_bytes = canned.size();
  const uint32_t size = uint32_t(value.size());
  for (unsigned threads : {1u, 2u}) {
    uint16_t port = 0;
    auto srv = start_server(host, threads, port);
    LoadResult r = run_load(port, conns, warmup_s, window_s,
                            [&](int fd) { return query_value_pdu(3, bind_and_open(fd), s.value, size); });
    r.config = "perfsim server, " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : "");
    s.perfsim.push_back(r);
    srv.reset();
    PlainServer plain(canned, threads);
    LoadResult b =
        run_load(plain.port(), conns, warmup_s, window_s, [&](int) { return query_value_pdu(3, {}, s.value, size); });
    b.config = "plain asio server, " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : "");
    s.plain.push_back(b);
  }
  return s;
}

// ---- --journal: small calls with the journal and metrics on vs off ----------------------------

// Alternating rounds (off first in odd rounds, on first in even ones), so load on the shared
// machine falls on both alike; the ratio is on/off per round.
struct JournalBench {
  std::vector<double> off, on, on_file, ratio, ratio_file;
  double bytes_per_event = 0;
  uint64_t drops = 0;
};

JournalBench bench_journal(const std::shared_ptr<replayer::SimulatedHost>& host, int rounds, double window_s) {
  JournalBench jb;
  const std::string value = "238";
  const uint32_t size = uint32_t(host->content(replayer::PerfKey::kData, value, host->current_tick()).data.size());
  const std::string file = "/tmp/bench_server-journal-" + std::to_string(getpid()) + ".jsonl";
  auto run = [&](int mode) {  // 0 off, 1 journal + metrics, 2 ... and the journal file
    std::shared_ptr<journal::Recorder> rec;
    if (mode) check(server::make_recorder(10000, mode == 2 ? file : "", rec), "recorder");
    uint16_t port = 0;
    auto srv = start_server(host, 2, port, rec);
    const LoadResult r =
        run_load(port, 64, 0.5, window_s, [&](int fd) { return query_value_pdu(3, bind_and_open(fd), value, size); });
    srv.reset();
    if (rec && rec->journal()) jb.drops += rec->journal()->drops();
    return r.calls_per_s;
  };
  for (int i = 0; i < rounds; ++i) {
    double off = 0, on = 0, on_file = 0;
    if (i % 2 == 0) {
      off = run(0);
      on = run(1);
      on_file = run(2);
    } else {
      on_file = run(2);
      on = run(1);
      off = run(0);
    }
    jb.off.push_back(off);
    jb.on.push_back(on);
    jb.on_file.push_back(on_file);
    jb.ratio.push_back(on / off);
    jb.ratio_file.push_back(on_file / off);
  }
  std::remove(file.c_str());
  // A full default ring of events like the ones above: heap in use before and after filling it.
  std::shared_ptr<journal::Recorder> rec;
  check(server::make_recorder(10000, "", rec), "recorder");
  {
    uint16_t port = 0;
    auto srv = start_server(host, 1, port, rec);
    run_load(port, 4, 0.0, 0.3, [&](int fd) { return query_value_pdu(3, bind_and_open(fd), value, size); });
  }
  const journal::CallEvent sample = rec->journal()->query({}).back();
  rec.reset();
  malloc_trim(0);
  const size_t heap0 = mallinfo2().uordblks;
  {
    journal::Journal j(10000);
    for (int i = 0; i < 10000; ++i) {
      journal::CallEvent e = sample;
      j.record(std::move(e));
    }
    jb.bytes_per_event = double(mallinfo2().uordblks - heap0) / 10000;
  }
  return jb;
}

// ---- (c) memory per idle connection -----------------------------------------------------------

size_t rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  return 0;
}

struct Memory {
  int conns = 0;
  double perfsim_per_conn = 0, plain_per_conn = 0;  // bytes of RSS growth
  double perfsim_heap = 0, plain_heap = 0;          // bytes of malloc'd memory in use
};

struct PerConnection {
  double rss = 0, heap = 0;
};

// Opens `n` connections that each bind and open HKPD (or, for the plain server, send one PDU and
// read the reply), then reports the RSS growth per connection. Client sockets are bare fds, so
// the growth is the server's.
// RSS growth depends on the heap's history (freed memory of earlier benchmarks gets reused, and
// untouched pages of a read buffer do not count), so the bytes malloc holds are reported too.
PerConnection rss_per_connection(uint16_t port, int n, const std::function<void(int)>& setup,
                                 const std::function<size_t()>& server_conns) {
  std::vector<int> warm;  // first touches of pools and arenas are not per-connection costs
  for (int i = 0; i < 50; ++i) {
    warm.push_back(connect_loopback(port));
    setup(warm.back());
  }
  ::malloc_trim(0);  // earlier benchmarks' freed memory would otherwise be reused without showing up
  const size_t before = rss_bytes();
  const size_t heap_before = mallinfo2().uordblks;
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    fds.push_back(connect_loopback(port));
    setup(fds.back());
  }
  for (int i = 0; i < 200 && server_conns() < size_t(n + 50); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const size_t after = rss_bytes();
  const size_t heap_after = mallinfo2().uordblks;
  for (int fd : fds) ::close(fd);
  for (int fd : warm) ::close(fd);
  return {double(after) / n - double(before) / n, double(heap_after) / n - double(heap_before) / n};
}

Memory bench_memory(const std::shared_ptr<replayer::SimulatedHost>& host, int n) {
  Memory m;
  m.conns = n;
  uint16_t port = 0;
  auto srv = start_server(host, 2, port);
  const PerConnection p = rss_per_connection(
      port, n, [](int fd) { bind_and_open(fd); }, [&] { return srv->server().active_connections(); });
  m.perfsim_per_conn = p.rss;
  m.perfsim_heap = p.heap;
  srv.reset();
  // The plain server answers the bind with a canned PDU; it counts as bound.
  PlainServer plain(rpc::build_bind_ack(rpc::PType::kBindAck, 1, {5840, 5840, 1, "0", {}}), 2);
  const PerConnection q = rss_per_connection(
      plain.port(), n,
      [](int fd) {
        Bytes pdu;
        send_all(fd, bind_pdu());
        if (!read_pdu(fd, pdu)) die("plain bind");
      },
      [&] { return size_t(n + 50); });
  m.plain_per_conn = q.rss;
  m.plain_heap = q.heap;
  return m;
}

// Global of two hosts, same run, rounds alternating: bytes per answer and server CPU per answer
// (WinregHandler::on_pdu, live host); `after` is measured against `before`.
void compare_globals(const char* bench, const std::string& title, const captures::Capture& before,
                     const char* before_label, const captures::Capture& after, const char* after_label, int calls,
                     int rounds) {
  auto old_host = make_host(before, replayer::TimelineMode::kRealtime);
  auto new_host = make_host(after, replayer::TimelineMode::kRealtime);
  const size_t old_bytes = old_host->content(replayer::PerfKey::kData, "Global", 0).data.size();
  const size_t new_bytes = new_host->content(replayer::PerfKey::kData, "Global", 0).data.size();
  std::vector<double> old_us, new_us, ratio;
  for (int k = 0; k < rounds; ++k) {
    old_us.push_back(handler_us_per_call(old_host, uint32_t(old_bytes), calls));
    new_us.push_back(handler_us_per_call(new_host, uint32_t(new_bytes), calls));
    ratio.push_back(new_us.back() / old_us.back());
  }
  std::printf("%s; %d rounds of %d calls\n", title.c_str(), rounds, calls);
  std::printf("  %-28s %12s %14s\n", "", "bytes", "us per answer");
  std::printf("  %-28s %12zu %14.1f\n", before_label, old_bytes, bench::median(old_us));
  std::printf("  %-28s %12zu %14.1f\n", after_label, new_bytes, bench::median(new_us));
  std::printf("  ratio %s/%s: bytes %.4f, CPU %s (median of rounds, range)\n", after_label, before_label,
              double(new_bytes) / double(old_bytes), bench::median_range(ratio, "%.3f").c_str());
  std::printf(
      "{\"bench\":\"%s\",\"before_bytes\":%zu,\"after_bytes\":%zu,\"before_us\":%.2f,\"after_us\":%.2f,"
      "\"cpu_ratio\":%.4f}\n",
      bench, old_bytes, new_bytes, bench::median(old_us), bench::median(new_us), bench::median(ratio));
}

// Issue 14's objects (Objects 260 and the counter sets above Base Index, e.g. Processor
// Information): Global of a 2016 host with 300 processes with them ("after", what synth makes now)
// and without them ("before": the same samples with those objects cut out).
void bench_objects(int calls, int rounds) {
  captures::Capture after;
  check(bench::synth_bench_host(300, after), "synthesize");
  captures::Capture before = after;
  size_t cut = 0;
  for (captures::QueryRecord& r : before.records) {
    if (r.value_name != "Global") continue;
    perfdata::DataBlock b;
    check(perfdata::parse(r.payload, b), "parse Global");
    const size_t n = b.objects.size();
    std::erase_if(b.objects, [](const perfdata::Object& o) { return o.name_index == 260 || o.name_index > 1847; });
    cut = n - b.objects.size();
    perfdata::fix_counts(b);
    r.payload = perfdata::build(b);
    r.size = uint32_t(r.payload.size());
  }
  compare_globals("objects",
                  "Global of synth 2016, 300 processes, live host; " + std::to_string(cut) + " objects added", before,
                  "before (objects cut out)", after, "after", calls, rounds);
}

// The iis and mssql roles (synth/roles): Global of the same 2016 host, 300 processes, synthesized
// with and without them.
void bench_roles(int calls, int rounds) {
  captures::Capture plain, roles;
  check(bench::synth_bench_host(300, plain), "synthesize");
  check(bench::synth_bench_host(300, roles, {"iis", "mssql"}), "synthesize with roles");
  compare_globals("roles", "Global of synth 2016, 300 processes, live host, roles iis + mssql", plain, "no roles",
                  roles, "iis + mssql", calls, rounds);
}

// Issue 31: an interpolated Global (counters moved between two recorded samples) against a
// stepped one, same run: the bench host over two samples 15 s apart, two realtime hosts at the
// slowest pace (both stay between sample 0 and 1), one per `between`; server CPU per answer in
// process (WinregHandler::on_pdu), rounds alternating.
void bench_between(int calls, int rounds) {
  synth::Spec spec;
  spec.profile = "2016";
  spec.process_count = 520;
  spec.threads_min = 1;
  spec.threads_max = 30;
  spec.duration_s = 30;
  spec.interval_ms = 15000;
  captures::Capture cap;
  check(synth::synthesize(spec, cap), "synthesize");
  std::shared_ptr<const replayer::Recording> rec;
  check(replayer::build_recording(std::move(cap), rec), "prepare recording");
  std::shared_ptr<replayer::SimulatedHost> hosts[2];
  for (replayer::Between b : {replayer::Between::kStep, replayer::Between::kInterpolate}) {
    replayer::HostOptions opt{replayer::TimelineMode::kRealtime, 0};
    opt.speed = replayer::limits::kSpeed.lo;
    opt.between = b;
    check(replayer::SimulatedHost::create(rec, opt, hosts[int(b)]), "make host");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a moment past the sample
  const uint32_t size = uint32_t(hosts[0]->content(replayer::PerfKey::kData, "Global", 0).data.size());
  size_t patched = 0;
  for (uint32_t pos = 0; pos < 1; ++pos)
    for (const replayer::ObjectSlice& s :
         rec->sample(pos, replayer::Series::kGlobal, replayer::Patches::kSteps)->objects)
      patched += s.counters.size();
  const replayer::ValueAnswer a = hosts[1]->query(replayer::PerfKey::kData, "Global", {true, 64u << 20});
  if (!(a.applied & (1u << replayer::kAppliedBetween))) die("the interpolating host did not interpolate");
  std::vector<double> stepped, interpolated, ratio;
  for (int k = 0; k < rounds; ++k) {
    stepped.push_back(handler_us_per_call(hosts[0], size, calls));
    interpolated.push_back(handler_us_per_call(hosts[1], size, calls));
    ratio.push_back(stepped.back() / interpolated.back());
  }
  // End to end: what one collector sees, each host served over loopback TCP (one server thread)
  // and read by the lean client (request, blocking reads, decode), rounds alternating.
  uint16_t ports[2] = {0, 0};
  auto step_srv = start_server(hosts[0], 1, ports[0]);
  auto interp_srv = start_server(hosts[1], 1, ports[1]);
  const Bytes sized(size);
  std::vector<double> wire_ratio;
  for (int k = 0; k < rounds; ++k) {
    const double s = measure_lean_client(ports[0], sized, calls / 3, false);
    const double i = measure_lean_client(ports[1], sized, calls / 3, false);
    wire_ratio.push_back(i / s);
  }
  std::printf(
      "Global of synth 2016, 520 processes (%u bytes, %zu counters moved), realtime between samples 0 and 1; "
      "%d rounds of %d calls\n",
      size, patched, rounds, calls);
  std::printf("  stepped      %8.1f us per answer\n", bench::median(stepped));
  std::printf("  interpolated %8.1f us per answer\n", bench::median(interpolated));
  std::printf("  answers per second, interpolated / stepped: %s (median of rounds, range)\n",
              bench::median_range(ratio, "%.3f").c_str());
  std::printf("  end to end over loopback TCP (one collector, %d calls a round): %s\n", calls / 3,
              bench::median_range(wire_ratio, "%.3f").c_str());
  std::printf(
      "{\"bench\":\"between\",\"stepped_us\":%.2f,\"interpolated_us\":%.2f,\"ratio\":%.4f,\"wire_ratio\":%.4f}\n",
      bench::median(stepped), bench::median(interpolated), bench::median(ratio), bench::median(wire_ratio));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (argc > 1 && std::string(argv[1]) == "--journal") {
    const captures::Capture cap = make_capture();
    auto host = make_host(cap, replayer::TimelineMode::kFrozen);
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
    const JournalBench jb = bench_journal(host, rounds, 3.0);
    auto range = [](const std::vector<double>& v, const char* f) { return bench::median_range(v, f); };
    std::printf("small calls (QueryValue \"238\"), 64 connections, 2 server threads, %d alternating rounds of 3 s:\n",
                rounds);
    std::printf("  %-40s %s calls/s\n", "journal and metrics off", range(jb.off, "%.0f").c_str());
    std::printf("  %-40s %s calls/s, ratio %s\n", "journal (10,000) and metrics on", range(jb.on, "%.0f").c_str(),
                range(jb.ratio, "%.3f").c_str());
    std::printf("  %-40s %s calls/s, ratio %s, %llu events dropped from the file\n", "... and --journal FILE",
                range(jb.on_file, "%.0f").c_str(), range(jb.ratio_file, "%.3f").c_str(), (unsigned long long)jb.drops);
    std::printf("full 10,000-event ring: %.0f bytes per event (heap)\n", jb.bytes_per_event);
    std::printf("{\"journal_ratio\":%.3f,\"journal_file_ratio\":%.3f,\"journal_bytes_per_event\":%.0f}\n",
                bench::median(jb.ratio), bench::median(jb.ratio_file), jb.bytes_per_event);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--objects") {
    bench_objects(argc > 2 ? std::atoi(argv[2]) : 300, 15);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--between") {
    bench_between(argc > 2 ? std::atoi(argv[2]) : 300, 15);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--roles") {
    bench_roles(argc > 2 ? std::atoi(argv[2]) : 300, 15);
    return 0;
  }
  // --profile-global: only the in-process Global path, long enough for perf/callgrind.
  if (argc > 1 && std::string(argv[1]) == "--profile-global") {
    const captures::Capture cap = make_capture();
    auto live = make_host(cap, replayer::TimelineMode::kRealtime);
    const size_t size = live->content(replayer::PerfKey::kData, "Global", 0).data.size();
    std::printf("%.0f us per call\n", handler_us_per_call(live, uint32_t(size), argc > 2 ? std::atoi(argv[2]) : 2000));
    return 0;
  }
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  // --small [seconds | cpu | memory]: only (b) and (c), the per-call path and the
  // per-connection memory (issue 29), so several runs fit in the time one full run takes on a
  // shared machine; first the server's CPU per small call in process (no sockets, no load
  // generator: the figure a shared machine disturbs least). "cpu": only that; "memory": only (c).
  if (argc > 1 && std::string(argv[1]) == "--small") {
    const captures::Capture cap = make_capture();
    auto host = make_host(cap, replayer::TimelineMode::kFrozen);
    if (argc > 2 && std::string(argv[2]) == "memory") {
      const Memory m = bench_memory(host, 2000);
      std::printf("idle bound connection: perfsim %.0f B RSS, %.0f B heap; plain asio %.0f B RSS, %.0f B heap\n",
                  m.perfsim_per_conn, m.perfsim_heap, m.plain_per_conn, m.plain_heap);
      return 0;
    }
    const uint32_t size =
        uint32_t(host->content(replayer::PerfKey::kData, "238", host->current_tick()).data.to_bytes().size());
    std::vector<double> cpu;
    for (int i = 0; i < 5; ++i) cpu.push_back(handler_us_per_call(host, size, 200000, "238"));
    std::printf("server CPU per small call without sockets (on_pdu), 5 x 200,000: %s us\n",
                bench::median_range(cpu, "%.3f").c_str());
    if (argc > 2 && std::string(argv[2]) == "cpu") return 0;
    const SmallCalls s = bench_small_calls(host, 64, 1.0, argc > 2 ? std::atof(argv[2]) : 3.0);
    const Memory m = bench_memory(host, 2000);
    for (size_t i = 0; i < s.perfsim.size(); ++i)
      std::printf("%s: %.0f calls/s (p50 %.0f, p99 %.0f us); %s: %.0f calls/s; ratio %.3f\n",
                  s.perfsim[i].config.c_str(), s.perfsim[i].calls_per_s, s.perfsim[i].p50_us, s.perfsim[i].p99_us,
                  s.plain[i].config.c_str(), s.plain[i].calls_per_s, s.perfsim[i].calls_per_s / s.plain[i].calls_per_s);
    std::printf("idle bound connection: perfsim %.0f B RSS, %.0f B heap; plain asio %.0f B RSS, %.0f B heap\n",
                m.perfsim_per_conn, m.perfsim_heap, m.plain_per_conn, m.plain_heap);
    return 0;
  }
  const auto t0 = Clock::now();
  const captures::Capture cap = make_capture();
  auto host = make_host(cap, replayer::TimelineMode::kFrozen);
  auto live = make_host(cap, replayer::TimelineMode::kRealtime);
  std::printf("host: synth 2016, 520 processes, 1-30 threads each; Global %zu bytes\n",
              host->content(replayer::PerfKey::kData, "Global", 0).data.size());

  const Throughput t = bench_throughput(host, live, quick ? 60 : 1000, quick ? 3 : 25);
  const SmallCalls s = bench_small_calls(host, 64, quick ? 0.3 : 1.0, quick ? 1.0 : 5.0);
  const Memory m = bench_memory(host, quick ? 500 : 2000);

  auto range = [](const std::vector<double>& v) { return bench::median_range(v, "%.2f"); };
  std::printf(
      "\n(a) QueryValue Global: %zu value bytes, %zu bytes on the wire in %zu fragments, %d calls in %d rounds\n",
      t.value_bytes, t.wire_bytes, t.fragments, t.reps, t.rounds);
  std::printf("  %-44s %10s  %s\n", "client", "MB/s", "ratio: median of rounds (min-max)");
  std::printf("  %-44s %10.0f  %s\n", "plain TCP, same PDU and read sizes (baseline)", t.baseline, "1.00");
  std::printf("  %-44s %10.0f  %s\n", "plain TCP, same bytes written gathered", t.baseline_gathered,
              range(t.gathered_rounds).c_str());
  std::printf("  %-44s %10.0f  %s\n", "same reads as baseline, frozen host", t.same_reads,
              range(t.ratio_rounds).c_str());
  std::printf("  %-44s %10.0f  %s\n", "same reads as baseline, live host", t.same_reads_live,
              range(t.ratio_rounds_live).c_str());
  std::printf("  %-44s %10s  %s\n", "  frozen host vs the gathered plain sender", "",
              range(t.ratio_rounds_gathered).c_str());
  std::printf("  %-44s %10.0f  %.2f\n", "recorder::WinregClient (one round)", t.winreg_client,
              t.winreg_client / t.baseline);
  std::printf("  %-44s %10.0f  %.2f\n", "lean blocking client (one round)", t.lean_client, t.lean_client / t.baseline);
  std::printf("  server CPU per call without sockets (WinregHandler::on_pdu): frozen %.0f us, live %.0f us\n",
              t.handler_us, t.handler_us_live);

  std::printf("\n(b) QueryValue \"%s\" (%zu value bytes, %zu-byte reply), 64 connections, 1 load thread\n",
              s.value.c_str(), s.value_bytes, s.reply_bytes);
  std::printf("  %-34s %10s %9s %9s %8s\n", "server", "calls/s", "p50 us", "p99 us", "ratio");
  for (size_t i = 0; i < s.perfsim.size(); ++i) {
    const LoadResult& p = s.plain[i];
    const LoadResult& r = s.perfsim[i];
    std::printf("  %-34s %10.0f %9.0f %9.0f %8s\n", p.config.c_str(), p.calls_per_s, p.p50_us, p.p99_us, "1.00");
    std::printf("  %-34s %10.0f %9.0f %9.0f %8.2f\n", r.config.c_str(), r.calls_per_s, r.p50_us, r.p99_us,
                r.calls_per_s / p.calls_per_s);
  }

  std::printf("\n(c) memory per idle bound connection (%d connections, server RSS growth)\n", m.conns);
  std::printf("  %-34s %10s %14s\n", "server", "RSS", "malloc in use");
  std::printf("  %-34s %6.1f KiB %10.1f KiB\n", "plain asio server (baseline)", m.plain_per_conn / 1024,
              m.plain_heap / 1024);
  std::printf("  %-34s %6.1f KiB %10.1f KiB\n", "perfsim server (bind + OpenHKPD)", m.perfsim_per_conn / 1024,
              m.perfsim_heap / 1024);

  // The best of the configurations tried, for the goals.
  const LoadResult* best = &s.perfsim[0];
  size_t best_i = 0;
  for (size_t i = 0; i < s.perfsim.size(); ++i)
    if (s.perfsim[i].calls_per_s > best->calls_per_s) best = &s.perfsim[(best_i = i)];
  std::printf(
      "\nJSON {\"global_bytes\":%zu,\"global_ratio_same_reads\":%.3f,\"global_ratio_same_reads_live\":%.3f,"
      "\"global_ratio_gathered_plain\":%.3f,\"global_ratio_same_reads_vs_gathered\":%.3f,"
      "\"global_mbps_winreg_client\":%.1f,\"global_mbps_lean_client\":%.1f,"
      "\"global_mbps_plain\":%.1f,\"global_ratio_winreg_client\":%.3f,\"global_ratio_lean_client\":%.3f,"
      "\"small_calls_per_s\":%.0f,\"small_p50_us\":%.1f,\"small_p99_us\":%.1f,\"small_config\":\"%s\","
      "\"small_ratio\":%.3f,\"idle_conn_bytes\":%.0f,\"idle_conn_bytes_plain\":%.0f,\"idle_conn_heap\":%.0f,\"runtime_"
      "s\":%.1f}\n",
      t.value_bytes, median(t.ratio_rounds), median(t.ratio_rounds_live), median(t.gathered_rounds),
      median(t.ratio_rounds_gathered), t.winreg_client, t.lean_client, t.baseline, t.winreg_client / t.baseline,
      t.lean_client / t.baseline, best->calls_per_s, best->p50_us, best->p99_us, best->config.c_str(),
      best->calls_per_s / s.plain[best_i].calls_per_s, m.perfsim_per_conn, m.plain_per_conn, m.perfsim_heap,
      seconds_since(t0));
  return 0;
}
