#include "recorder/pcap_import.h"

#include <algorithm>
#include <map>
#include <memory>

#include "recorder/smb2_pipes.h"
#include "recorder/tcp_stream.h"
#include "recorder/tshark_segments.h"
#include "recorder/winreg_sniffer.h"
#include "rpc/pdu.h"

namespace perfsim::recorder {
namespace {

constexpr const char* kTcp = "ncacn_ip_tcp";
constexpr const char* kPipe = "ncacn_np";

std::string endpoint(const std::string& addr, uint16_t port) {
  return (addr.find(':') != std::string::npos ? "[" + addr + "]" : addr) + ":" + std::to_string(port);
}

std::string hex(const FileId& f) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : f) {
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

// One TCP connection: its two directions and what its content turned out to be.
struct Connection {
  enum class Kind { kUndecided, kRpc, kSmb, kOther };
  std::string client_addr, server_addr;
  uint16_t client_port = 0, server_port = 0;
  bool client_known = false;  // endpoints fixed by a SYN or the first data
  TcpDirection dirs[2];       // [0] client -> server, [1] server -> client
  Kind kind = Kind::kUndecided;
  Bytes opening;  // first client bytes while undecided
  int64_t opening_time = 0;
  std::unique_ptr<WinregSniffer> rpc;
  std::unique_ptr<Smb2PipeDemux> smb;
  std::map<FileId, std::unique_ptr<WinregSniffer>> pipes;
  std::vector<FileId> pipe_order;

  std::string label() const { return endpoint(client_addr, client_port) + " -> " + endpoint(server_addr, server_port); }

  void decide() {
    if (opening.size() < 8) return;
    const std::string l = label();
    if (opening[0] == 5 && opening[1] == 0 && opening[2] == uint8_t(rpc::PType::kBind)) {
      kind = Kind::kRpc;
      rpc = std::make_unique<WinregSniffer>(l);
    } else if (Smb2PipeDemux::looks_like_smb(opening)) {
      kind = Kind::kSmb;
      smb = std::make_unique<Smb2PipeDemux>([this, l](const FileId& fid, bool to_server, ByteView data, int64_t t) {
        auto& p = pipes[fid];
        if (!p) {
          p = std::make_unique<WinregSniffer>(l + " pipe " + hex(fid));
          pipe_order.push_back(fid);
        }
        if (to_server)
          p->from_client(data, t);
        else
          p->from_server(data, t);
      });
    } else {
      kind = Kind::kOther;
    }
    Bytes first;
    first.swap(opening);
    data(true, first, opening_time);
  }

  // In-order bytes of one direction.
  void data(bool from_client, ByteView bytes, int64_t t) {
    switch (kind) {
      case Kind::kUndecided:
        if (!from_client) {
          kind = Kind::kOther;  // DCE/RPC and SMB clients speak first
          opening.clear();
          return;
        }
        opening.insert(opening.end(), bytes.begin(), bytes.end());
        opening_time = t;
        decide();
        return;
      case Kind::kRpc:
        if (from_client)
          rpc->from_client(bytes, t);
        else
          rpc->from_server(bytes, t);
        return;
      case Kind::kSmb:
        smb->feed(from_client, bytes, t);
        return;
      case Kind::kOther:
        return;
    }
  }
};

class Importer {
 public:
  void segment(TcpSegment& s) {
    auto& c = conns_[s.stream];
    if (!c) {
      c = std::make_unique<Connection>();
      order_.push_back(s.stream);
    }
    Connection& conn = *c;
    if (!conn.client_known && ((s.syn && !s.ack) || (!s.syn && !s.payload.empty()) || (s.syn && s.ack))) {
      // SYN from the client; else SYN+ACK from the server; else whoever sends data first.
      const bool sender_is_client = !(s.syn && s.ack);
      conn.client_known = true;
      conn.client_addr = sender_is_client ? s.src : s.dst;
      conn.client_port = sender_is_client ? s.sport : s.dport;
      conn.server_addr = sender_is_client ? s.dst : s.src;
      conn.server_port = sender_is_client ? s.dport : s.sport;
    }
    if (!conn.client_known) return;
    const bool from_client = s.src == conn.client_addr && s.sport == conn.client_port;
    conn.dirs[from_client ? 0 : 1].add(s.seq, s.syn, s.payload, s.time_100ns,
                                       [&](ByteView d, int64_t t) { conn.data(from_client, d, t); });
  }

  void finish(std::vector<Conversation>& out) {
    std::map<std::pair<std::string, std::string>, size_t> index;  // (server, transport) -> position in out
    auto conversation = [&](const std::string& server, const char* transport) -> Conversation& {
      auto [it, added] = index.try_emplace({server, transport}, out.size());
      if (added) {
        out.emplace_back();
        out.back().server = server;
        out.back().transport = transport;
      }
      return out[it->second];
    };
    auto take = [&](WinregSniffer& w, Conversation& conv, const Connection& c) {
      w.finish();
      for (Exchange& e : w.exchanges()) {
        e.client = endpoint(c.client_addr, c.client_port);
        conv.exchanges.push_back(std::move(e));
      }
      for (std::string& p : w.problems()) conv.problems.push_back(std::move(p));
    };
    const size_t first_new = out.size();
    for (uint64_t id : order_) {
      Connection& c = *conns_[id];
      for (TcpDirection& d : c.dirs) d.finish();
      const bool gap = c.dirs[0].gap() || c.dirs[1].gap();
      if (c.kind == Connection::Kind::kRpc && c.rpc->winreg()) {
        Conversation& conv = conversation(c.server_addr, kTcp);
        take(*c.rpc, conv, c);
        if (!conv.announced) conv.announced = c.rpc->announced();
        if (gap) conv.problems.push_back(gap_line(c));
      } else if (c.kind == Connection::Kind::kSmb) {
        const bool stopped = c.smb->stopped() != Smb2PipeDemux::Stop::kNone;
        bool any = stopped;
        for (const FileId& f : c.pipe_order) any = any || c.pipes[f]->winreg();
        if (!any) continue;
        Conversation& conv = conversation(c.server_addr, kPipe);
        for (const FileId& f : c.pipe_order)
          if (c.pipes[f]->winreg()) {
            take(*c.pipes[f], conv, c);
            if (!conv.announced) conv.announced = c.pipes[f]->announced();  // RPC-level auth on the pipe
          }
        if (!conv.announced) conv.announced = c.smb->announced();
        if (stopped)
          conv.problems.push_back(std::string(smb_stop_reason(c.smb->stopped())) + " " + c.label() +
                                  ": cannot be read");
        if (gap) conv.problems.push_back(gap_line(c));
      }
    }
    for (size_t i = first_new; i < out.size(); ++i)
      std::stable_sort(out[i].exchanges.begin(), out[i].exchanges.end(),
                       [](const Exchange& a, const Exchange& b) { return a.time_100ns < b.time_100ns; });
  }

 private:
  static std::string gap_line(const Connection& c) {
    std::string s = c.label() + ": frames missing from the capture";
    for (int i = 0; i < 2; ++i)
      if (c.dirs[i].gap())
        s += std::string(i == 0 ? " (client -> server" : " (server -> client") + " after byte " +
             std::to_string(c.dirs[i].gap_at()) + ")";
    return s + "; what follows was not decoded";
  }

  std::map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::vector<uint64_t> order_;
};

}  // namespace

Status read_pcap(const std::string& path, std::vector<Conversation>& out, const PcapImportOptions& options,
                 UnreadFrames* unread) {
  Importer imp;
  uint64_t frames = 0;
  TsharkRun run;
  run.tshark = options.tshark;
  run.timeout = options.timeout;
  const Status s = read_tcp_segments(
      path, run,
      [&](TcpSegment& seg) {
        imp.segment(seg);
        if (++frames % 1000 == 0 && options.progress) options.progress(frames);
      },
      unread);
  imp.finish(out);
  if (options.progress) options.progress(frames);
  return s;
}

}  // namespace perfsim::recorder
