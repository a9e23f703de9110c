// Acceptance: real winreg clients nobody here wrote (python3-samba, impacket) run a collector's
// sequence against the in-process server on 127.0.0.1, and what they received is compared with
// what the simulated host holds and with the capture itself. Each session is recorded with
// dumpcap and must decode in tshark as clean DCE/RPC + WINREG.

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "captures/capture.h"
#include "captures/registry_values.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "replayer/host.h"
#include "server/server.h"
#include "server/winreg_handler.h"
#include "support.h"
#include "tests/common/served_host.h"
#include "windows/constants.h"
#include "perfdata/view.h"

namespace perfsim::interop {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kPerflibKey = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib";
constexpr uint32_t kWinregVersion = 5;  // what Windows answers to BaseRegGetVersion
// Opnums of the collector sequence: OpenHKLM, OpenHKPD, CloseKey, EnumValue, OpenKey,
// QueryInfoKey, QueryValue, GetVersion.
const std::set<unsigned> kSequenceOpnums = {0x02, 0x03, 0x05, 0x0a, 0x0f, 0x10, 0x11, 0x1a};

// Session artefacts (client output, pcapng) stay in the build tree for diagnostics; each run
// replaces the previous one's.
std::string scratch_root() {
  static const std::string dir = [] {
    fs::create_directories(INTEROP_WORK_DIR);
    return std::string(INTEROP_WORK_DIR);
  }();
  return dir;
}

Bytes read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The capture and the host every session is served from, loaded once per process.
struct Env {
  captures::Capture cap;
  std::string source;
  std::shared_ptr<replayer::SimulatedHost> host;
  uint32_t tick = 0;
};

const Env& env() {
  static Env e = [] {
    Env x;
    const Status s = load_capture(x.cap, x.source);
    INFO("capture: " << x.source << ": " << s.ToString());
    REQUIRE(s.ok());
    REQUIRE(!x.cap.records.empty());
    x.tick = x.cap.records.back().tick / 2;  // a middle tick: usually rebuilt from deltas, not a keyframe
    replayer::HostOptions opt;
    opt.mode = replayer::TimelineMode::kFrozen;
    opt.frozen_tick = x.tick;
    REQUIRE(replayer::SimulatedHost::load(x.cap, opt, x.host).ok());
    return x;
  }();
  return e;
}

// Fails (never skips) when a client or tool is missing: CI installs them all.
void require_tools() {
  auto need = [](const std::string& what, const std::string& probe) {
    const CommandResult r = run_command(probe);
    INFO(what << " is missing (" << probe << ": " << r.output << "): run scripts/install-deps.sh");
    REQUIRE(r.exit_status == 0);
  };
  const std::string py = PERFSIM_PYTHON;
  need("python3-samba", py + " -c 'from samba.dcerpc import winreg'");
  need("python3-impacket", py + " -c 'from impacket.dcerpc.v5 import rrp'");
  need("tshark", "tshark -v");
  need("dumpcap (package wireshark-common, installed with tshark)", "dumpcap -v");
}

struct Session {
  std::string script, dir;
  uint16_t port = 0;
  CommandResult client;
  json result;
  WireReport wire;
  std::string dumpcap_log;
  std::vector<std::string> server_log;
};

// Serves env() on 127.0.0.1:<any> while dumpcap records the port; `client(port)` runs in between.
// Fills everything in `s` but the client's own results.
void serve_recorded(Session& s, const std::string& name, const std::function<void(uint16_t)>& client) {
  s.dir = scratch_root() + "/" + name;
  fs::remove_all(s.dir);
  fs::create_directories(s.dir);

  auto log_mu = std::make_shared<std::mutex>();
  testing::ServeOptions opt;
  opt.threads = 2;
  opt.log = [&s, log_mu](std::string_view line) {
    std::lock_guard<std::mutex> lock(*log_mu);
    s.server_log.emplace_back(line);
  };
  testing::ServedHost srv(env().host, opt);
  const Status started = srv.start();
  INFO(started.ToString());
  REQUIRE(started.ok());
  s.port = srv.port();

  const std::string pcap = s.dir + "/session.pcapng";
  {
    PacketRecorder rec;
    const Status st = rec.start(s.port, pcap);
    INFO(st.ToString());
    REQUIRE(st.ok());
    client(s.port);
    rec.stop();
    s.dumpcap_log = rec.log();
  }
  srv.stop();
  s.wire = check_wire(pcap, s.port);
}

// Runs one collector script against the recorded server.
Session run_client(const std::string& script) {
  Session s;
  s.script = script;
  serve_recorded(s, fs::path(script).stem().string(), [&](uint16_t port) {
    // -B: no __pycache__ in the source tree.
    s.client = run_command("timeout 120 " + std::string(PERFSIM_PYTHON) + " -B " +
                           shell_quote(std::string(INTEROP_SCRIPTS_DIR) + "/" + script) + " --port " +
                           std::to_string(port) + " --out " + shell_quote(s.dir));
  });
  std::ifstream f(s.dir + "/result.json");
  if (f) s.result = json::parse(f, nullptr, false);
  return s;
}

std::string server_log_text(const Session& s) {
  std::string out;
  for (const std::string& l : s.server_log) out += l + "\n";
  return out;
}

const json* find_value(const Session& s, const std::string& name) {
  for (const json& v : s.result["values"])
    if (v["name"] == name) return &v;
  return nullptr;
}

Bytes value_bytes(const Session& s, const json& v) { return read_bytes(s.dir + "/" + v["file"].get<std::string>()); }

const captures::QueryRecord* recorded(const Env& e, const std::string& name) {
  for (const captures::QueryRecord& r : e.cap.records)
    if (r.tick == e.tick && r.value_name == name) return &r;
  return nullptr;
}

std::vector<uint32_t> object_indices(const perfdata::DataBlock& b) {
  std::vector<uint32_t> out;
  for (const perfdata::Object& o : b.objects) out.push_back(o.name_index);
  return out;
}

// The objects a provider owns, read straight from the catalog (independent of select_objects).
std::vector<uint32_t> provider_objects(const Env& e, const std::vector<uint32_t>& named) {
  std::set<std::string> providers;
  for (const auto& o : e.cap.catalog)
    if (std::find(named.begin(), named.end(), o.index) != named.end()) providers.insert(o.provider);
  std::vector<uint32_t> out;
  for (const auto& o : e.cap.catalog)
    if (providers.count(o.provider) && !o.costly) out.push_back(o.index);
  return out;
}

void check_perf_value(const Env& e, const Session& s, const std::string& name) {
  INFO(s.script << ": HKPD value '" << name << "'");
  const json* v = find_value(s, name);
  REQUIRE(v != nullptr);
  const replayer::ValueContent want = e.host->content(replayer::PerfKey::kData, name, e.tick);
  REQUIRE((*v)["status"].get<uint32_t>() == want.status);
  REQUIRE((*v)["type"].get<uint32_t>() == want.type);
  const Bytes got = value_bytes(s, *v);
  CHECK(got.size() == want.data.size());
  CHECK(got == want.data);
  const perfdata::Query q = perfdata::parse_query(name);
  if (q.kind == perfdata::QueryKind::kGlobal || q.kind == perfdata::QueryKind::kCostly) {
    const captures::QueryRecord* r = recorded(e, name);
    REQUIRE(r != nullptr);
    CHECK(got == r->payload);  // byte for byte as recorded
  }
  perfdata::DataBlock block;
  const Status parsed = perfdata::parse(got, block, {.tolerant = false});
  INFO(parsed.ToString());
  REQUIRE(parsed.ok());
  CHECK(block.system_name() == utf8_to_utf16(e.cap.host.name));
  if (q.kind == perfdata::QueryKind::kIndexList) {
    CHECK(object_indices(block) == perfdata::select_objects(q, e.cap.catalog));
    CHECK(object_indices(block) == provider_objects(e, q.indices));
  }
  if (q.kind == perfdata::QueryKind::kGlobal || q.kind == perfdata::QueryKind::kCostly) {
    std::vector<uint32_t> got_sorted = object_indices(block), want_sorted = perfdata::select_objects(q, e.cap.catalog);
    std::sort(got_sorted.begin(), got_sorted.end());
    std::sort(want_sorted.begin(), want_sorted.end());
    CHECK(got_sorted == want_sorted);
  }
}

void check_names(const Env& e, const Session& s, const std::string& name) {
  INFO(s.script << ": name table '" << name << "'");
  const json* v = find_value(s, name);
  REQUIRE(v != nullptr);
  const captures::NameTable* table = nullptr;
  for (const captures::NameTable& t : e.cap.names)
    if (t.lang == "009") table = &t;
  REQUIRE(table != nullptr);
  const bool counter = name.rfind("Counter", 0) == 0;
  const Bytes& want = counter ? table->counter : table->help;
  CHECK((*v)["type"].get<uint32_t>() == windows::kRegMultiSz);
  CHECK(value_bytes(s, *v) == want);
  perfdata::NameTable parsed;
  REQUIRE(perfdata::parse_names(want, parsed).ok());
  const json& decoded = s.result["names"][name];
  REQUIRE(decoded.size() == parsed.entries.size());
  for (size_t i = 0; i < parsed.entries.size(); ++i) {
    INFO("entry " << i);
    CHECK(decoded[i][0].get<std::string>() == utf16_to_utf8(parsed.entries[i].index_text));
    CHECK(decoded[i][1].get<std::string>() == utf16_to_utf8(parsed.entries[i].text));
  }
  if (counter) {
    CHECK(parsed.find(238) != nullptr);  // Processor, which the sequence asks for by index
    CHECK(parsed.find(230) != nullptr);
    CHECK(parsed.find(232) != nullptr);
  }
}

void check_unknown(const Env& e, const Session& s) {
  INFO(s.script << ": unknown value name");
  const json* v = find_value(s, "NoSuchValue");
  REQUIRE(v != nullptr);
  REQUIRE((*v)["status"].get<uint32_t>() == windows::kErrorSuccess);
  CHECK((*v)["type"].get<uint32_t>() == windows::kRegBinary);
  perfdata::DataBlock block;
  const Bytes got = value_bytes(s, *v);
  REQUIRE(perfdata::parse(got, block, {.tolerant = false}).ok());
  CHECK(block.num_object_types == 0);
  CHECK(block.objects.empty());
  CHECK(block.system_name() == utf8_to_utf16(e.cap.host.name));
  CHECK(perfdata::block_field32(got, winperf::data_block::kHeaderLength) ==
        got.size());  // HeaderLength == TotalByteLength
  CHECK(got.size() % 8 == 0);
}

void check_hklm(const Env& e, const Session& s) {
  INFO(s.script << ": HKLM");
  const json* v = find_value(s, "Last Counter");
  REQUIRE(v != nullptr);
  const captures::RegistryValue* last = captures::find_value(e.cap, kPerflibKey, "Last Counter");
  REQUIRE(last != nullptr);
  CHECK((*v)["status"].get<uint32_t>() == windows::kErrorSuccess);
  CHECK((*v)["type"].get<uint32_t>() == last->type);
  CHECK(value_bytes(s, *v) == last->data);

  const replayer::RegKey* perflib = e.host->registry().open(e.host->registry().root(), kPerflibKey);
  REQUIRE(perflib != nullptr);
  const json& info = s.result["query_info"]["Perflib"];
  CHECK(info["num_values"].get<size_t>() == perflib->values.size());
  CHECK(info["num_subkeys"].get<size_t>() == perflib->subkeys.size());
  const json& listed = s.result["enum_values"]["Perflib"];
  REQUIRE(listed.size() == perflib->values.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    INFO("Perflib EnumValue " << i << ": " << listed[i].dump());
    REQUIRE(listed[i]["status"].get<uint32_t>() == windows::kErrorSuccess);
    CHECK(iequals(listed[i]["name"].get<std::string>(), perflib->values[i].name));
    CHECK(listed[i]["type"].get<uint32_t>() == perflib->values[i].type);
    CHECK(read_bytes(s.dir + "/" + listed[i]["file"].get<std::string>()) == perflib->values[i].data);
  }
  CHECK(s.result["version"].get<uint32_t>() == kWinregVersion);
}

void check_hkpd_enum(const Env& e, const Session& s) {
  INFO(s.script << ": HKPD QueryInfoKey/EnumValue");
  const std::vector<std::string> names = e.host->perf_value_names();
  CHECK(s.result["query_info"]["HKPD"]["num_values"].get<size_t>() == names.size());
  const json& listed = s.result["enum_values"]["HKPD"];
  REQUIRE(listed.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    INFO("HKPD EnumValue " << i << ": " << listed[i].dump());
    REQUIRE(listed[i]["status"].get<uint32_t>() == windows::kErrorSuccess);
    CHECK(listed[i]["name"].get<std::string>() == names[i]);
    CHECK(read_bytes(s.dir + "/" + listed[i]["file"].get<std::string>()) ==
          e.host->content(replayer::PerfKey::kData, names[i], e.tick).data);
  }
}

void check_wire_report(const Session& s) {
  INFO(s.script << ": tshark on " << s.dir << "/session.pcapng (port " << s.port << ")\n"
                << "frame\ttcp.len\tprotocols\tpkt_type\topnum\ttcp.reasm_in\tdcerpc.reasm_"
                   "in\tseverity\tmessage\tmalformed\tgroup\tretrans\tfast_retrans\n"
                << s.wire.table << "dumpcap: " << s.dumpcap_log);
  std::string problems;
  for (const std::string& p : s.wire.problems) problems += p + "\n";
  INFO("problems:\n" << problems);
  CHECK(s.wire.problems.empty());
  CHECK(s.wire.payload_frames > 0);
  CHECK(s.wire.winreg_frames >= 2 * kSequenceOpnums.size());
  for (unsigned op : kSequenceOpnums) {
    INFO("opnum " << op << " on the wire");
    CHECK(s.wire.opnums.count(op) == 1);
  }
}

// Everything both clients must have received.
void check_session(const Session& s) {
  const Env& e = env();
  INFO("capture: " << e.source << ", frozen tick " << e.tick << "; session files in " << s.dir);
  {
    INFO(s.script << " exited " << s.client.exit_status << ", output:\n" << s.client.output);
    INFO("server log:\n" << server_log_text(s));
    CHECK(s.client.exit_status == 0);
    REQUIRE(!s.result.is_discarded());
    REQUIRE(s.result.contains("values"));
    CHECK(s.result["failures"].empty());
  }
  for (const char* name : {"Counter 009", "Help 009"}) check_names(e, s, name);
  for (const char* name : {"Global", "238", "230 232", "Costly"}) check_perf_value(e, s, name);
  check_unknown(e, s);
  check_hklm(e, s);
  check_hkpd_enum(e, s);
  CHECK(s.result["close"] == json::array({0, 0, 0}));
  CHECK(s.result["close_again"].get<uint32_t>() == windows::kErrorInvalidHandle);
  check_wire_report(s);
}

}  // namespace

TEST_CASE("samba-python collector reads the capture's values over ncacn_ip_tcp", "[interop][samba]") {
  require_tools();
  const Session s = run_client("collector_samba.py");
  check_session(s);
  // The dance went as MS-RRP says: the NULL-buffer probe gives the size, a small buffer
  // ERROR_MORE_DATA, and the probed size is enough.
  const json* global = find_value(s, "Global");
  REQUIRE(global != nullptr);
  const json& a = (*global)["attempts"];
  INFO("Global attempts: " << a.dump());
  REQUIRE(a.size() == 3);
  CHECK(a[0]["status"] == 0);
  CHECK(a[0]["size"] == (*global)["length"]);
  CHECK(a[1]["status"] == windows::kErrorMoreData);
  CHECK(a[2]["offered"] == (*global)["length"]);
  CHECK(a[2]["status"] == 0);
}

TEST_CASE("impacket collector reads the capture's values over ncacn_ip_tcp", "[interop][impacket]") {
  require_tools();
  check_session(run_client("collector_impacket.py"));
}

}  // namespace perfsim::interop

namespace perfsim::interop {

// The wire check must be able to fail: bytes that are not DCE/RPC on the port are flagged.
TEST_CASE("the wire check flags TCP payload that is not DCE/RPC", "[interop][wire]") {
  require_tools();
  Session s;
  serve_recorded(s, "not-dcerpc", [](uint16_t port) { send_and_close(port, "GET / HTTP/1.0\r\n\r\n"); });
  INFO(s.wire.table);
  REQUIRE(s.wire.payload_frames >= 1);
  bool flagged = false;
  for (const std::string& p : s.wire.problems)
    flagged |= p.find("not decoded as DCE/RPC") != std::string::npos || p.find("malformed") != std::string::npos;
  CHECK(flagged);
}

}  // namespace perfsim::interop
