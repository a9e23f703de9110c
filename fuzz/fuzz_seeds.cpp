// Writes the seed corpora of the fuzz targets into OUT/<target>/, from what the repository already
// holds: a winreg session (bind, the calls a collector makes) run against the bundled
// default-2022 capture through the same stack `perfsim serve` uses, its PDUs as a TCP and as an
// SMB2 stream, its stubs, the capture's samples and name tables, the capture itself, the NPA
// requests, lodctr INI and symbol files and the TOML/JSON examples of the docs; the admin API's
// requests (each endpoint, and what its access rule refuses) and the endpoint mapper's calls; for the client,
// what that server answers our own client (perfsim query's and record's calls, unauthenticated
// and with NTLMSSP / SPNEGO) and the handshake tokens of its SecurityContext::server.
// Usage: fuzz_seeds OUT
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>

#include "captures/reader.h"
#include "captures/writer.h"
#include "epm/codec.h"
#include "epm/service.h"
#include "names/backup.h"
#include "fuzz/fuzz_client.h"
#include "fuzz/fuzz_input.h"
#include "replayer/host.h"
#include "rpc/auth.h"
#include "rpc/frame.h"
#include "rpc/pdu.h"
#include "server/winreg_handler.h"
#include "winreg/codec.h"

using namespace perfsim;
namespace fs = std::filesystem;

namespace {

fs::path g_out;

void put(const std::string& target, const std::string& name, ByteView bytes) {
  fs::create_directories(g_out / target);
  std::ofstream(g_out / target / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

Bytes with_prefix(std::initializer_list<uint8_t> prefix, ByteView rest) {
  Bytes b(prefix);
  b.insert(b.end(), rest.begin(), rest.end());
  return b;
}

Bytes read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

// Index of a message's decoder in PERFSIM_WINREG_MESSAGES (request; the response is + 1).
uint8_t message_index(uint16_t opnum) {
  switch (opnum) {
    case winreg::kCloseKey:
      return 2;
    case winreg::kEnumKey:
      return 4;
    case winreg::kEnumValue:
      return 6;
    case winreg::kGetKeySecurity:
      return 8;
    case winreg::kOpenKey:
      return 10;
    case winreg::kQueryInfoKey:
      return 12;
    case winreg::kQueryValue:
      return 14;
    case winreg::kGetVersion:
      return 16;
    case winreg::kQueryMultipleValues:
      return 18;
    case winreg::kQueryMultipleValues2:
      return 20;
    default:
      return 0;  // the Open* hives
  }
}

// One connection to the served host, every PDU kept in both directions.
struct Session {
  std::unique_ptr<server::WinregHandler> handler;
  Bytes client, server;  // the two byte streams
  std::vector<Bytes> client_pdus, server_pdus;
  uint32_t call_id = 1;
  int calls = 0;

  void send(const Bytes& pdu) {
    client_pdus.push_back(pdu);
    client.insert(client.end(), pdu.begin(), pdu.end());
    std::vector<ByteChain> out;
    (void)handler->on_pdu(pdu, out);
    for (const ByteChain& c : out) {
      server_pdus.push_back(c.flatten());
      server.insert(server.end(), server_pdus.back().begin(), server_pdus.back().end());
    }
  }

  template <typename Req, typename Resp>
  Resp call(uint16_t opnum, const Req& req) {
    const Bytes stub = winreg::encode(req);
    put("winreg", "request-" + std::to_string(calls), with_prefix({message_index(opnum)}, stub));
    const size_t first_reply = server_pdus.size();
    rpc::Request r;
    r.opnum = opnum;
    r.alloc_hint = uint32_t(stub.size());
    r.stub = stub;
    send(rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, ++call_id, r));
    Bytes answer;
    for (size_t i = first_reply; i < server_pdus.size(); ++i) {
      rpc::Header h;
      rpc::Response resp;
      if (rpc::parse_header(server_pdus[i], h).ok() && h.ptype == rpc::PType::kResponse &&
          rpc::parse_response(server_pdus[i], h, resp).ok())
        answer.insert(answer.end(), resp.stub.begin(), resp.stub.end());
    }
    if (answer.size() < 4096)
      put("winreg", "response-" + std::to_string(calls), with_prefix({uint8_t(message_index(opnum) + 1)}, answer));
    ++calls;
    Resp out;
    (void)winreg::decode(answer, out);
    return out;
  }
};

std::u16string u16(const char* s) { return std::u16string(s, s + std::char_traits<char>::length(s)); }

winreg::QueryValueRequest query_value(const winreg::PolicyHandle& h, const char* name, uint32_t offer) {
  winreg::QueryValueRequest q;
  q.handle = h;
  q.value_name = u16(name);
  q.type = 0;
  q.data = Bytes();
  q.data_size = offer;
  q.data_length = 0;
  return q;
}

void run_session(const captures::Capture& cap) {
  std::shared_ptr<replayer::SimulatedHost> host;
  fuzz::require(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kStep, 0}, host).ok());
  Session s;
  s.handler = std::make_unique<server::WinregHandler>(rpc::AssociationConfig{}, host);
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 4280;
  b.contexts.push_back({0, rpc::winreg_syntax(), {rpc::ndr20_syntax()}});
  b.contexts.push_back({1, rpc::winreg_syntax(), {rpc::bind_time_feature_syntax(3)}});
  s.send(rpc::build_bind(rpc::PType::kBind, 1, b));
  const size_t after_bind = s.client.size();

  using namespace winreg;
  OpenHiveRequest open;
  open.access_mask = 0x02000000;
  const PolicyHandle hkpd = s.call<OpenHiveRequest, OpenHiveResponse>(kOpenHKPD, open).handle;
  s.call<QueryValueRequest, QueryValueResponse>(kQueryValue, query_value(hkpd, "Global", 0));
  s.call<QueryValueRequest, QueryValueResponse>(kQueryValue, query_value(hkpd, "238", 256 * 1024));
  const PolicyHandle hkpt = s.call<OpenHiveRequest, OpenHiveResponse>(kOpenHKPT, open).handle;
  s.call<QueryValueRequest, QueryValueResponse>(kQueryValue, query_value(hkpt, "Counter", 16));
  const PolicyHandle hklm = s.call<OpenHiveRequest, OpenHiveResponse>(kOpenHKLM, open).handle;
  OpenKeyRequest ok;
  ok.parent_handle = hklm;
  ok.keyname = u16("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib");
  ok.access_mask = 0x20019;
  const PolicyHandle perflib = s.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).handle;
  s.call<QueryValueRequest, QueryValueResponse>(kQueryValue, query_value(perflib, "Last Counter", 4));
  EnumKeyRequest ek;
  ek.handle = perflib;
  ek.name = {u16(""), 512, 0};
  ek.keyclass = StringBuf{u16(""), 512, 0};
  ek.last_changed_time = 0;
  s.call<EnumKeyRequest, EnumKeyResponse>(kEnumKey, ek);
  EnumValueRequest ev;
  ev.handle = perflib;
  ev.name = {u16(""), 512, 0};
  ev.type = 0;
  ev.value = Bytes();
  ev.size = 64;
  ev.length = 0;
  s.call<EnumValueRequest, EnumValueResponse>(kEnumValue, ev);
  QueryInfoKeyRequest qi;
  qi.handle = perflib;
  qi.classname = u16("");
  s.call<QueryInfoKeyRequest, QueryInfoKeyResponse>(kQueryInfoKey, qi);
  GetKeySecurityRequest ks;
  ks.handle = hklm;
  ks.sec_info = 4;
  ks.sd.data = Bytes();
  ks.sd.size = 4096;
  s.call<GetKeySecurityRequest, GetKeySecurityResponse>(kGetKeySecurity, ks);
  s.call<GetVersionRequest, GetVersionResponse>(kGetVersion, GetVersionRequest{hklm});
  QueryMultipleValuesRequest qm;
  qm.key_handle = perflib;
  qm.values = {{StringBuf{u16("Last Counter"), 26, 26}, 0, 0, 0}, {StringBuf{u16("Version"), 16, 16}, 0, 0, 0}};
  qm.buffer = Bytes(64);
  qm.buffer_size = 64;
  s.call<QueryMultipleValuesRequest, QueryMultipleValuesResponse>(kQueryMultipleValues, qm);
  QueryMultipleValues2Request qm2;
  qm2.key_handle = perflib;
  qm2.values = qm.values;
  qm2.buffer = Bytes(64);
  qm2.offered = 64;
  s.call<QueryMultipleValues2Request, QueryMultipleValues2Response>(kQueryMultipleValues2, qm2);
  for (const PolicyHandle& h : {perflib, hklm, hkpt, hkpd})
    s.call<CloseKeyRequest, CloseKeyResponse>(kCloseKey, CloseKeyRequest{h});

  // rpc: each PDU alone (both directions), the client stream whole.
  for (size_t i = 0; i < s.client_pdus.size(); ++i) put("rpc", "client-" + std::to_string(i), s.client_pdus[i]);
  for (size_t i = 0; i < s.server_pdus.size() && i < 24; ++i)
    if (s.server_pdus[i].size() < 4096) put("rpc", "server-" + std::to_string(i), s.server_pdus[i]);
  put("rpc", "client-stream", s.client);
  // session: bind included (first byte even), and bind added by the target (odd).
  put("session", "with-bind", with_prefix({0}, s.client));
  put("session", "calls", with_prefix({1}, ByteView(s.client).subspan(after_bind)));

  // pcap: the session as TCP segments of at most 1460 bytes, client and server turn about.
  auto segments = [](Bytes& out, uint8_t flags, uint32_t& seq, ByteView data) {
    for (size_t at = 0; at < data.size(); at += 1460) {
      const ByteView piece = data.subspan(at, std::min<size_t>(1460, data.size() - at));
      out.push_back(flags);
      for (int k = 0; k < 4; ++k) out.push_back(uint8_t(seq >> (8 * k)));
      out.push_back(uint8_t(piece.size()));
      out.push_back(uint8_t(piece.size() >> 8));
      out.insert(out.end(), piece.begin(), piece.end());
      seq += uint32_t(piece.size());
    }
  };
  Bytes tcp = {0, 3, 0, 0, 0, 0, 0, 0, 2, 0, 0x10, 0, 0, 0, 0};  // client SYN (seq 0), server SYN (seq 0x1000 - 1)
  tcp[10] = 0xff;
  tcp[11] = 0x0f;
  uint32_t cseq = 1, sseq = 0x1000;
  const size_t client_end = std::min<size_t>(s.client.size(), 4096);
  segments(tcp, 1, cseq, ByteView(s.client).first(client_end));
  segments(tcp, 0, sseq, ByteView(s.server).first(std::min<size_t>(s.server.size(), 8192)));
  put("pcap", "tcp-session", tcp);

  // The same PDUs inside SMB2 WRITE requests and READ responses of one pipe (FileId 7).
  auto smb2 = [](uint16_t command, bool response, uint64_t mid, ByteView body, ByteView payload) {
    Bytes m = {0xfe, 'S', 'M', 'B', 64, 0};
    m.resize(64);
    store_le16(&m[12], command);
    store_le32(&m[16], response ? 1 : 0);
    store_le64(&m[24], mid);
    m.insert(m.end(), body.begin(), body.end());
    m.insert(m.end(), payload.begin(), payload.end());
    Bytes framed = {0, uint8_t(m.size() >> 16), uint8_t(m.size() >> 8), uint8_t(m.size())};
    framed.insert(framed.end(), m.begin(), m.end());
    return framed;
  };
  Bytes client_smb, server_smb;
  for (size_t i = 0; i < s.client_pdus.size() && i < 6; ++i) {
    Bytes write(48);
    store_le16(&write[0], 49);
    store_le16(&write[2], 112);
    store_le32(&write[4], uint32_t(s.client_pdus[i].size()));
    write[16] = 7;
    Bytes w = smb2(0x09, false, 2 * i, write, s.client_pdus[i]);
    client_smb.insert(client_smb.end(), w.begin(), w.end());
    Bytes read(48);
    store_le16(&read[0], 49);
    read[16] = 7;
    Bytes r = smb2(0x08, false, 2 * i + 1, read, {});
    client_smb.insert(client_smb.end(), r.begin(), r.end());
    if (i < s.server_pdus.size() && s.server_pdus[i].size() < 4096) {
      Bytes resp(16);
      resp[2] = 80;
      store_le32(&resp[4], uint32_t(s.server_pdus[i].size()));
      Bytes rr = smb2(0x08, true, 2 * i + 1, resp, s.server_pdus[i]);
      server_smb.insert(server_smb.end(), rr.begin(), rr.end());
    }
  }
  Bytes smb = {1};
  cseq = 1;
  sseq = 1;
  segments(smb, 1, cseq, client_smb);
  segments(smb, 0, sseq, server_smb);
  put("pcap", "smb2-session", smb);
}

void perfdata_seeds(const captures::Capture& cap) {
  const std::string path = fuzz::source_path("captures/default-2022.perfcap");
  std::unique_ptr<captures::Reader> r;
  fuzz::require(captures::Reader::open(path, r).ok());
  Bytes prev;
  for (size_t i = 0; i < r->records().size() && i < 64; ++i) {
    ByteView p;
    if (!r->payload(i, p).ok() || p.size() > 64 * 1024) continue;
    if (prev.empty()) {
      put("perfdata", "block", with_prefix({0}, p));
      prev.assign(p.begin(), p.end());
    } else {
      Bytes two = {1, uint8_t(prev.size()), uint8_t(prev.size() >> 8), uint8_t(prev.size() >> 16), 0};
      two.insert(two.end(), prev.begin(), prev.end());
      two.insert(two.end(), p.begin(), p.end());
      put("perfdata", "two-blocks", two);
      break;
    }
  }
  for (const captures::NameTable& t : cap.names) {
    put("perfdata", "counter-" + t.lang,
        with_prefix({2}, ByteView(t.counter).first(std::min<size_t>(t.counter.size(), 8192))));
    put("perfdata", "help-" + t.lang, with_prefix({2}, ByteView(t.help).first(std::min<size_t>(t.help.size(), 8192))));
  }
  int n = 0;
  for (const char* q :
       {"Global", "Costly", "238 230 232", "Foreign HOST 2 4", "Counter 009", "Help", "Explain 009", " 2  4 "}) {
    const std::string text(q);
    put("perfdata", "query-" + std::to_string(n++),
        with_prefix({3}, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
  }
}

// replay: three Globals (u32 length each) and a Costly of each bundled capture that has them.
void replay_seeds() {
  for (const char* name : {"default-2016", "default-win2000", "default-2003"}) {
    captures::Capture cap;
    fuzz::require(captures::read_capture(fuzz::source_path(std::string("captures/") + name + ".perfcap"), cap).ok());
    std::vector<const Bytes*> globals;
    const Bytes* costly = nullptr;
    for (const captures::QueryRecord& r : cap.records) {
      if (r.value_name == "Global" && globals.size() < 3) globals.push_back(&r.payload);
      if (r.value_name == "Costly" && !costly) costly = &r.payload;
    }
    if (globals.size() < 3) continue;
    Bytes in;
    for (const Bytes* g : globals) {
      for (int shift = 0; shift < 32; shift += 8) in.push_back(uint8_t(g->size() >> shift));
      in.insert(in.end(), g->begin(), g->end());
    }
    if (costly) in.insert(in.end(), costly->begin(), costly->end());
    put("replay", name, in);
  }
}

void file_seeds() {
  const fs::path src(PERFSIM_SOURCE_DIR);
  const Bytes cap = read_file(src / "captures/default-2022.perfcap");
  put("capture", "default-2022", cap);
  put("capture", "no-trailer", ByteView(cap).first(cap.size() * 3 / 5));
  // Format v2 (split codec): short keyframe intervals and structure references, both entropy coders,
  // with cross-column relations (codec 5, mode table 2) and without (codec 4, mode table 1).
  struct V2Seed {
    const char* name;
    captures::Entropy entropy;
    bool cross;
  };
  for (const V2Seed& seed :
       {V2Seed{"v2-zstd", captures::Entropy::kZstd, true}, V2Seed{"v2-lz4", captures::Entropy::kLz4, true},
        V2Seed{"v2-codec4", captures::Entropy::kZstd, false}}) {
    const std::string name = seed.name;
    captures::WriterOptions opt;
    opt.keyframe_interval = 3;
    opt.structure_every = 2;
    opt.entropy = seed.entropy;
    opt.cross_columns = seed.cross;
    const fs::path tmp = fs::temp_directory_path() / ("perfsim-fuzz-seed-" + name + ".perfcap");
    fuzz::require(captures::convert_capture((src / "captures/default-2022.perfcap").string(), tmp.string(), opt).ok());
    std::unique_ptr<captures::Reader> r;
    fuzz::require(captures::Reader::open(tmp.string(), r).ok());
    size_t cross = 0;
    for (size_t i = 0; i < r->records().size(); ++i) {
      captures::QueryHeader h;
      fuzz::require(r->head(i, h).ok());
      cross += h.codec == captures::Codec::kSplitCross;
    }
    fuzz::require((cross > 0) == seed.cross);  // the seed holds the mode table it is named for
    r.reset();
    const Bytes v2 = read_file(tmp);
    fs::remove(tmp);
    put("capture", name, v2);
    put("capture", std::string(name) + "-no-trailer", ByteView(v2).first(v2.size() * 3 / 5));
  }
  for (const auto& e : fs::directory_iterator(src / "tests/npa/data"))
    put("npa", e.path().filename(), read_file(e.path()));

  // names: default-2022's tables as a lodctr /s backup, and its 009 tables as a .dat pair.
  {
    captures::Capture meta;
    if (captures::read_capture((src / "captures/default-2022.perfcap").string(), meta).ok() && !meta.names.empty()) {
      Bytes backup{0};
      const Bytes b = names::write_backup(names::from_capture(meta));
      backup.insert(backup.end(), b.begin(), b.end());
      put("names", "default-2022-backup", backup);
      Bytes dat{1};
      dat.insert(dat.end(), meta.names[0].counter.begin(), meta.names[0].counter.end());
      dat.insert(dat.end(), {0, 0, 0, 0});
      dat.insert(dat.end(), meta.names[0].help.begin(), meta.names[0].help.end());
      put("names", "default-2022-dat", dat);
    }
  }

  // lodctr: each INI with the symbol file it names.
  const fs::path lod = src / "tests/lodctr/data";
  const std::regex symbolfile("symbolfile\\s*=\\s*([^\\r\\n]+)", std::regex::icase);
  for (const auto& e : fs::directory_iterator(lod)) {
    if (e.path().extension() != ".ini") continue;
    Bytes ini = read_file(e.path());
    const std::string text(ini.begin(), ini.end());
    std::smatch m;
    ini.push_back(0);
    if (std::regex_search(text, m, symbolfile) && fs::exists(lod / m[1].str())) {
      const Bytes sym = read_file(lod / m[1].str());
      ini.insert(ini.end(), sym.begin(), sym.end());
    }
    put("lodctr", e.path().filename(), ini);
  }

  // config: every example file and every ```toml / ```json block of the docs, under every reader.
  std::vector<std::string> texts;
  for (const char* dir : {"synth/examples", "lodctr/examples"})
    for (const auto& e : fs::directory_iterator(src / dir)) {
      const Bytes b = read_file(e.path());
      texts.emplace_back(b.begin(), b.end());
    }
  const std::regex block("```(toml|json)\\n([\\s\\S]*?)```");
  for (const char* doc :
       {"README.md", "replayer/README.md", "synth/README.md", "lodctr/README.md", "server/README.md"}) {
    const Bytes b = read_file(src / doc);
    const std::string text(b.begin(), b.end());
    for (std::sregex_iterator it(text.begin(), text.end(), block), end; it != end; ++it)
      texts.push_back((*it)[2].str());
  }
  for (const char* arg : {"slow-global:ms=200", "rrp-exact=off", "frozen:3", "step", "realtime"})
    texts.emplace_back(arg);
  for (size_t i = 0; i < texts.size(); ++i)
    for (uint8_t mode = 0; mode < 10; ++mode)
      put("config", std::to_string(i) + "-" + std::to_string(mode),
          with_prefix({mode}, ByteView(reinterpret_cast<const uint8_t*>(texts[i].data()), texts[i].size())));
}

Bytes text_seed(uint8_t selector, const std::string& text) {
  return with_prefix({selector}, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

// admin: selector byte (AdminAccess) + "METHOD TARGET\n" + headers + "\n" + body, as fuzz_admin reads
// them: every endpoint as curl and the dashboard call it, and what the access rule refuses.
void admin_seeds(const captures::Capture& cap) {
  std::shared_ptr<replayer::SimulatedHost> host;
  fuzz::require(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kStep, 0}, host).ok());
  const std::string h = "/api/hosts/" + host->name();
  const std::string own = "Host: 127.0.0.1:8135\n", change = own + "X-Perfsim: 1\n";
  struct Seed {
    uint8_t selector;
    std::string text;
  };
  const std::vector<Seed> seeds = {
      {0, "GET /\nHost: localhost:8135\n\n"},
      {0, "GET /dashboard.js\n" + own + "\n"},
      {0, "HEAD /metrics\n" + own + "\n"},
      {0, "GET /api/hosts\n" + own + "Origin: http://127.0.0.1:8135\n\n"},
      {0, "GET " + h + "\n" + own + "\n"},
      {0, "GET " + h + "/quirks\n" + own + "\n"},
      {0, "GET " + h + "/counters\n" + own + "\n"},
      {0,
       "GET " + h + "/series?object=Processor&instance=_Total&counter=%25%20Processor%20Time&points=10\n" + own + "\n"},
      {0, "GET /api/faults\n" + own + "\n"},
      {0, "GET /api/journal?host=H%201&session=1&since=3&limit=5\n" + own + "\n"},
      {0, "GET /api/sessions\n" + own + "\n"},
      {0, "PUT /api/faults\n" + change +
              "Content-Type: application/toml\n\n[[fault]]\nvalue = \"Global\"\nkind = \"busy\"\n"},
      {0,
       "PUT /api/faults\n" + own + "Content-Type: application/json\n\n{\"fault\":[{\"kind\":\"latency\",\"ms\":200}]}"},
      {0, "PUT " + h + "/quirks\n" + change + "\nbusy:every=3 slow-global:ms=500\nrestrict-remote-clients"},
      {0, "POST " + h + "/timeline\n" + change + "\npause"},
      {0, "POST " + h + "/timeline?seek=3\n" + change + "\n"},
      {0, "POST " + h + "/timeline\n" + change + "\nstep"},
      {0, "POST " + h + "/timeline\n" + change + "\nspeed=2"},
      {0, "DELETE /api/journal\n" + change + "\n"},
      {0, "POST " + h + "/timeline\n" + own + "Origin: http://evil.example\nContent-Type: text/plain\n\npause"},
      {0, "POST " + h + "/timeline\n" + own + "Content-Type: application/x-www-form-urlencoded\n\npause"},
      {0, "GET /api/hosts\nHost: evil.example:8135\n\n"},
      {0, "GET /api/hosts\nOrigin: null\n\n"},
      {2, "GET /api/hosts\nHost: 198.51.100.7:8135\n\n"},
      {3, "GET /api/hosts\nHost: [2001:db8::1]:8135\n\n"},
      {4, "GET /api/hosts\nHost: PERFSIM.example\n\n"},
      {5, "POST " + h + "/timeline\nHost: [2001:db8:0::5]:80\nX-Perfsim: 1\n\nresume"},
      // With fuzz_admin's token (selector bit 3, "c0ffee"): Bearer, the cookie, ?token=, wrong ones.
      {8, "GET /api/hosts\n" + own + "Authorization: Bearer c0ffee\n\n"},
      {8, "GET /api/hosts\n" + own + "Authorization: bearer c0ffeE\n\n"},
      {8, "POST " + h + "/timeline\n" + change + "Cookie: a=1; perfsim_admin_token=c0ffee\n\npause"},
      {8, "GET /?token=c0ffee&x=1\n" + own + "\n"},
      {8, "GET /api/hosts?token=c0ffe\n" + own + "\n"},
      {8, "POST " + h + "/timeline?token=c0ffee\n" + change + "\npause"},
      {8, "GET /api/hosts\n" + own + "Cookie: perfsim_admin_token=c0ffe; x=c0ffee\n\n"},
      {8, "GET /api/hosts\n" + own + "\n"},
  };
  for (size_t i = 0; i < seeds.size(); ++i)
    put("admin", "request-" + std::to_string(i), text_seed(seeds[i].selector, seeds[i].text));
}

// admission: a slot limit, then events (fuzz_admission.cpp): a flood of connections at a limit of
// 4, some authenticating, some closing, the posted closes run now and then.
void admission_seeds() {
  put("admission", "flood", Bytes{3, 0, 0, 0, 0, 0, 0, 4, 0, 2, 1, 0, 0, 4, 3, 0, 0, 0, 4});
  put("admission", "collectors", Bytes{1, 1, 2, 0, 1, 2, 1, 0, 0, 4, 1, 2, 3, 3, 1, 0, 4});
}

// epm: a stub call as fuzz_epm reads it (u8 opnum, u16 length, stub).
void add_call(Bytes& out, uint8_t opnum, const Bytes& stub) {
  out.push_back(opnum);
  out.push_back(uint8_t(stub.size()));
  out.push_back(uint8_t(stub.size() >> 8));
  out.insert(out.end(), stub.begin(), stub.end());
}

// The handle epm::Service issues as its `id`-th (service.cpp): a lookup can go on with it.
epm::ContextHandle lookup_handle(uint32_t id) {
  epm::ContextHandle h;
  store_le32(&h.bytes[4], id);
  h.bytes[8] = 0x45;
  return h;
}

// epm: the calls rpcclient and impacket make (ept_map of winreg, ept_lookup in batches with its
// handle, by interface, lookup_handle_free), as stubs on one Service and as PDUs of a connection.
void epm_seeds() {
  epm::MapRequest map;
  map.map_tower = epm::build_floors(epm::tcp_tower_floors({rpc::winreg_syntax(), rpc::ndr20_syntax(), 0, {}}));
  map.max_towers = 4;
  epm::LookupRequest all;
  all.max_ents = 1;
  epm::LookupRequest next = all;
  next.entry_handle = lookup_handle(1);
  epm::LookupRequest by_if;
  by_if.inquiry_type = 1;
  by_if.interface_id = epm::InterfaceId{rpc::winreg_syntax().uuid, 1, 0};
  by_if.vers_option = 2;
  by_if.max_ents = 10;
  const std::array<uint8_t, 20> handle = lookup_handle(2).bytes;
  const std::vector<std::pair<uint8_t, Bytes>> calls = {{epm::kOpMap, epm::encode(map)},
                                                        {epm::kOpLookup, epm::encode(all)},
                                                        {epm::kOpLookup, epm::encode(next)},
                                                        {epm::kOpLookup, epm::encode(all)},
                                                        {epm::kOpLookupHandleFree, Bytes(handle.begin(), handle.end())},
                                                        {epm::kOpLookup, epm::encode(by_if)}};
  Bytes stubs{0}, pdus;
  uint32_t call_id = 1;
  for (const auto& [opnum, stub] : calls) {
    add_call(stubs, opnum, stub);
    rpc::Request r;
    r.opnum = opnum;
    r.alloc_hint = uint32_t(stub.size());
    r.stub = stub;
    const Bytes pdu = rpc::build_request(rpc::kPfcFirstFrag | rpc::kPfcLastFrag, ++call_id, r);
    pdus.insert(pdus.end(), pdu.begin(), pdu.end());
  }
  put("epm", "stubs", stubs);
  put("epm", "calls", with_prefix({3}, pdus));  // fuzz_epm binds first
  rpc::Bind b;
  b.max_xmit_frag = b.max_recv_frag = 5840;
  b.contexts.push_back({0, epm::epm_syntax(), {rpc::ndr20_syntax()}});
  Bytes with_bind = with_prefix({1}, rpc::build_bind(rpc::PType::kBind, 1, b));
  with_bind.insert(with_bind.end(), pdus.begin(), pdus.end());
  put("epm", "with-bind", with_bind);

  // The answers, as stubs for the response decoders.
  epm::Service svc(
      {{rpc::winreg_syntax(), {127, 0, 0, 7}, 49153, ""}, {rpc::winreg_syntax(), {127, 0, 0, 7}, 49154, ""}});
  Bytes answers{0};
  for (const auto& [opnum, stub] : calls) {
    Bytes out;
    if (svc.call(opnum, stub, out) == 0) add_call(answers, 0xff, out);  // opnum 255: only the decoders
  }
  put("epm", "answers", answers);
}

// The server's side of a connection our client makes to perfsim's own serving stack in memory:
// what the client writes goes to a WinregHandler, its answers are read back and kept in `sent`.
class Loopback final : public recorder::ByteStream {
 public:
  Loopback(const rpc::AssociationConfig& cfg, std::shared_ptr<replayer::SimulatedHost> host, Bytes& sent)
      : handler_(cfg, std::move(host)), sent_(sent) {}
  Status write(ByteView b) override {
    in_.insert(in_.end(), b.begin(), b.end());
    size_t len = 0;
    while (rpc::next_pdu_length(in_, 0xffff, len).ok() && len && len <= in_.size()) {
      std::vector<ByteChain> out;
      (void)handler_.on_pdu(ByteView(in_).first(len), out);
      in_.erase(in_.begin(), in_.begin() + len);
      for (const ByteChain& c : out) {
        const Bytes reply = c.flatten();
        sent_.insert(sent_.end(), reply.begin(), reply.end());
      }
    }
    return Status::Ok();
  }
  Status read_exact(size_t n, Bytes& out) override {
    if (n > sent_.size() - pos_) return Status::IOError("closed");
    out.assign(sent_.begin() + pos_, sent_.begin() + pos_ + n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  server::WinregHandler handler_;
  Bytes& sent_;
  Bytes in_;
  size_t pos_ = 0;
};

// The first `n` strings of a REG_MULTI_SZ (UTF-16LE), still terminated: name tables of a few
// entries keep the recording seeds small.
Bytes first_strings(const Bytes& multi_sz, size_t n) {
  Bytes out;
  for (size_t i = 0; i + 1 < multi_sz.size() && n; i += 2) {
    out.push_back(multi_sz[i]);
    out.push_back(multi_sz[i + 1]);
    if (multi_sz[i] == 0 && multi_sz[i + 1] == 0) --n;
  }
  out.insert(out.end(), {0, 0});
  return out;
}

// client, session mode: [0, auth, program] + what the server sent while the client ran it.
void client_sessions(const captures::Capture& full, std::shared_ptr<const rpc::AuthService> auth) {
  captures::Capture cap = full;
  for (captures::NameTable& t : cap.names) {
    t.counter = first_strings(t.counter, 40);
    t.help = first_strings(t.help, 40);
  }
  for (uint8_t sel : {0, 3, 6})
    for (uint8_t program : {0, 1}) {
      std::shared_ptr<replayer::SimulatedHost> host;
      fuzz::require(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 1}, host).ok());
      rpc::AssociationConfig cfg;
      cfg.auth = auth;
      const std::optional<recorder::TcpAuth> who = fuzz::auth_of(sel);
      std::unique_ptr<rpc::SecurityContext> sec;
      if (who) fuzz::require(rpc::SecurityContext::client(who->who, who->auth_type, sec).ok());
      Bytes sent;
      std::unique_ptr<recorder::Channel> ch;
      fuzz::require(recorder::bind_rpc_channel(std::make_unique<Loopback>(cfg, host, sent), "seed:135", "seed", who,
                                               std::move(sec), ch)
                        .ok());
      recorder::WinregClient c(std::move(ch));
      program ? fuzz::record_one(c) : fuzz::collector(c);
      put("client", "session-" + std::to_string(sel) + "-" + std::to_string(program),
          with_prefix({0, sel, program}, sent));
    }
}

Bytes with_token(std::initializer_list<uint8_t> prefix, ByteView token) {
  Bytes b(prefix);
  put_le16(b, uint16_t(token.size()));
  b.insert(b.end(), token.begin(), token.end());
  return b;
}

// The fields fuzz_client's built_challenge lays out again into `challenge` (a real one): its
// flags, nonce, target name and AV pairs, every declared length and offset true.
Bytes built_challenge_fields(ByteView challenge) {
  Bytes b = {1, 1};
  b.insert(b.end(), challenge.begin() + 20, challenge.begin() + 32);  // flags, nonce
  const ByteView name = challenge.subspan(load_le32(&challenge[16]), load_le16(&challenge[12]));
  b.push_back(uint8_t(name.size() / 2));
  b.insert(b.end(), name.begin(), name.end());
  ByteView info = challenge.subspan(load_le32(&challenge[44]), load_le16(&challenge[40]));
  Bytes pairs;
  uint8_t n = 0;
  while (info.size() >= 4 && load_le16(&info[0]) != 0) {
    const size_t len = load_le16(&info[2]);
    put_le16(pairs, load_le16(&info[0]));
    pairs.push_back(uint8_t(len));
    pairs.insert(pairs.end(), info.begin() + 4, info.begin() + 4 + len);
    pairs.push_back(0);  // declared length adjustment
    info = info.subspan(4 + len);
    ++n;
  }
  b.push_back(n);
  b.insert(b.end(), pairs.begin(), pairs.end());
  b.insert(b.end(), {1, 0, 0, 0, 0});  // MsvAvEOL; name and info fields as they are
  return b;
}

// client, challenge and spnego modes: the tokens perfsim's server answers our client's first
// (and second) leg with.
void client_tokens(std::shared_ptr<const rpc::AuthService> auth) {
  for (uint8_t type : {rpc::kAuthTypeNtlmssp, rpc::kAuthTypeSpnego}) {
    std::unique_ptr<rpc::SecurityContext> client;
    fuzz::require(rpc::SecurityContext::client(fuzz::kWho, type, client).ok());
    std::unique_ptr<rpc::SecurityContext> server = rpc::SecurityContext::server(auth, type);
    Bytes c1, s1, c2, s2;
    fuzz::require(client->step({}, c1).ok() && server->step(c1, s1).ok());
    fuzz::require(client->step(s1, c2).ok() && server->step(c2, s2).ok());
    if (type == rpc::kAuthTypeNtlmssp) {
      put("client", "challenge", with_token({1, 0}, s1));
      Bytes pdu = with_token({1, 0}, s1);
      pdu.insert(pdu.end(), 64, 0x5a);
      put("client", "challenge-and-pdu", pdu);
      put("client", "challenge-built", built_challenge_fields(s1));
    } else {
      Bytes b = with_token({2, 0}, s1);
      put_le16(b, uint16_t(s2.size()));
      b.insert(b.end(), s2.begin(), s2.end());
      put("client", "spnego", b);
      static const uint8_t sig[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
      const ByteView inner(std::search(s1.begin(), s1.end(), sig, sig + 8), s1.end());
      Bytes built = built_challenge_fields(inner);
      built[0] = 2;
      built.insert(built.begin() + 2, 1);  // negState accept-incomplete
      put("client", "spnego-built", built);
    }
  }
}

// client, tamper mode: [3, auth, max_frag, at, flip, repeat] + a stub the live server answers.
void client_tamper_seeds() {
  const Bytes stub(600, 0x42);
  for (uint8_t sel = 0; sel < 4; ++sel)
    for (uint8_t flip : {0, 1}) {
      Bytes b = {3, sel};
      put_le16(b, sel & 1 ? 256 : 5840);
      put_le16(b, 40);
      b.push_back(flip);
      b.push_back(3);
      b.insert(b.end(), stub.begin(), stub.end());
      put("client", "tamper-" + std::to_string(sel) + "-" + std::to_string(flip), b);
    }
}

void client_seeds(const captures::Capture& cap) {
  std::shared_ptr<const rpc::AuthService> auth;
  fuzz::require(rpc::AuthService::create({{fuzz::kWho.user, fuzz::kWho.password}}, auth).ok());
  client_sessions(cap, auth);
  client_tokens(auth);
  client_tamper_seeds();
}

}  // namespace

// auth (fuzz_auth.cpp): [options u16][NEGOTIATE flags u32][flags xor u32][lm, key, extra AV pairs,
// user units][units...][domain units / 2][units...][workstation units][units...][target][edits]*.
// Clean logons of each kind (NTLMv2 and v1, raw and SPNEGO, auth3 and alter_context, each level,
// a MIC), and issue 44's crashes: A2 (a wrong password, 200 x U+FFFF as domain) and A1' (NTLMv1
// without ESS asking LM_KEY, an LmChallengeResponse of 0 bytes).
Bytes auth_plan(uint16_t options, uint32_t ask, uint8_t lm, uint8_t domain_pairs, uint8_t unit) {
  Bytes b;
  put_le16(b, options);
  put_le32(b, ask);
  put_le32(b, 0);
  b.insert(b.end(), {lm, 0, 0, 0, domain_pairs});
  b.insert(b.end(), size_t(domain_pairs) * 2, unit);
  b.insert(b.end(), {0, 0});  // no workstation units; target 0, no edits
  return b;
}

void auth_seeds() {
  constexpr uint32_t kAsk = 0xe2088297;  // impacket's NEGOTIATE with signing and sealing
  for (uint16_t options : {0, 1, 8, 16, 32, 33, 0x40, 0x80, 0xc0, 0xd0})
    put("auth", "clean-" + std::to_string(options), auth_plan(options, kAsk, 0, 0, 0));
  put("auth", "a2-ffff-wrong-password", auth_plan(0x6, kAsk, 0, 100, 2));
  put("auth", "a2-6f22-spnego", auth_plan(0x16, kAsk, 0, 88, 3));
  put("auth", "a1-lm-key-no-lm", auth_plan(1, (kAsk | 0x80) & ~0x00080000u, 129, 0, 0));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds OUT\n";
    return 2;
  }
  g_out = argv[1];
  captures::Capture cap;
  fuzz::require(captures::read_capture(fuzz::source_path("captures/default-2022.perfcap"), cap).ok());
  run_session(cap);
  perfdata_seeds(cap);
  file_seeds();
  replay_seeds();
  auth_seeds();
  admin_seeds(cap);
  admission_seeds();
  epm_seeds();
  client_seeds(cap);
  return 0;
}
