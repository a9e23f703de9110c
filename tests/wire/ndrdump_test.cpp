// Every kind of response stub perfsim emits, checked by Samba's ndrdump (samba-testsuite):
// `ndrdump --validate -c REQUEST PIPE FUNCTION out RESPONSE` parses the response with the request
// as context, then pushes it again and compares the bytes, so a stub that only happens to parse
// fails too. Stubs come from the interface tables the servers use (winreg, epmapper, srvsvc,
// wkssvc), called in process; QueryValue answers under each buffer policy of
// replayer/quirk_table.cpp. Requests: our winreg and epm codecs, python3-samba for srvsvc/wkssvc.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "epm/service.h"
#include "netapi/service.h"
#include "rpc/pdu.h"
#include "tests/common/run_command.h"
#include "tests/common/test_capture.h"
#include "tests/common/winreg_requests.h"
#include "windows/constants.h"
#include "winreg/service.h"

using namespace perfsim;
using namespace perfsim::winreg;
namespace fs = std::filesystem;

namespace {

struct Stubs {
  fs::path dir = fs::temp_directory_path() / ("perfsim-ndrdump-" + std::to_string(::getpid()));
  Stubs() { fs::create_directories(dir); }
  ~Stubs() { fs::remove_all(dir); }
  void write(const std::string& name, const Bytes& b) const {
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  }
};

// ndrdump's verdict on one response stub; the output is shown when it fails.
bool ndrdump_validates(const Stubs& s, const std::string& label, const char* pipe, const std::string& function,
                       const Bytes& in, const Bytes& out) {
  s.write(label + ".in", in);
  s.write(label + ".out", out);
  const auto r = testing::run_command("ndrdump",
                                      "--validate -c " + (s.dir / (label + ".in")).string() + " " + pipe + " " +
                                          function + " out " + (s.dir / (label + ".out")).string(),
                                      60);
  const bool ok = r.code == 0 && r.out.find("dump OK") != std::string::npos;
  if (!ok) UNSCOPED_INFO(label << ": ndrdump exit " << r.code << "\n" << r.out << r.err);
  return ok;
}

struct Winreg {
  std::shared_ptr<replayer::SimulatedHost> host;
  std::unique_ptr<Service> svc;
  explicit Winreg(replayer::BufferPolicy policy = replayer::BufferPolicy::kRrpExact) {
    replayer::HostOptions opt{replayer::TimelineMode::kFrozen, 0};
    opt.quirks.buffer = policy;
    REQUIRE(replayer::SimulatedHost::load(testing::test_capture(), opt, host).ok());
    svc = std::make_unique<Service>(host);
  }
  // Calls `opnum` with `req`; the request and response stubs.
  template <class Req>
  std::pair<Bytes, Bytes> call(uint16_t opnum, const Req& req) {
    Bytes in = encode(req), out;
    REQUIRE(svc->call(opnum, in, out) == 0);
    return {in, out};
  }
  PolicyHandle handle_of(const Bytes& open_response) {
    OpenHiveResponse r;
    REQUIRE(decode(open_response, r).ok());
    return r.handle;
  }
};

ValueEntry entry(const std::u16string& name) {
  ValueEntry e;
  e.name = StringBuf{name, uint16_t((name.size() + 1) * 2), 0};
  return e;
}

}  // namespace

TEST_CASE("ndrdump validates every winreg response stub perfsim emits", "[ndrdump]") {
  Stubs s;
  Winreg w;
  std::map<std::string, std::pair<Bytes, Bytes>> stubs;  // label -> (request, response)
  const std::pair<uint16_t, const char*> hives[] = {
      {kOpenHKCR, "OpenHKCR"}, {kOpenHKCU, "OpenHKCU"}, {kOpenHKLM, "OpenHKLM"}, {kOpenHKPD, "OpenHKPD"},
      {kOpenHKU, "OpenHKU"},   {kOpenHKPT, "OpenHKPT"}, {kOpenHKPN, "OpenHKPN"}};
  for (auto [op, name] : hives) {
    OpenHiveRequest r;
    r.system_name = u'\\';
    r.access_mask = 0x02000000;
    stubs[name] = w.call(op, r);
  }
  const PolicyHandle hklm = w.handle_of(stubs["OpenHKLM"].second);
  const PolicyHandle hkpd = w.handle_of(stubs["OpenHKPD"].second);
  const PolicyHandle hku = w.handle_of(stubs["OpenHKU"].second);

  OpenKeyRequest ok;
  ok.parent_handle = hklm;
  ok.keyname = u"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib";
  ok.access_mask = 0x20019;
  stubs["OpenKey"] = w.call(kOpenKey, ok);
  OpenKeyResponse perflib_r;
  REQUIRE(decode(stubs["OpenKey"].second, perflib_r).ok());
  const PolicyHandle perflib = perflib_r.handle;
  ok.keyname = u"SOFTWARE\\Nope";
  stubs["OpenKey_missing"] = w.call(kOpenKey, ok);

  QueryInfoKeyRequest qi;
  qi.handle = perflib;
  qi.classname = std::u16string();
  stubs["QueryInfoKey"] = w.call(kQueryInfoKey, qi);
  qi.handle = hkpd;
  stubs["QueryInfoKey_hkpd"] = w.call(kQueryInfoKey, qi);

  EnumKeyRequest ek;
  ek.handle = hku;
  ek.name = StringBuf{std::u16string(), 512, 0};
  ek.keyclass = StringBuf{std::u16string(), 512, 0};
  ek.last_changed_time = 0;
  stubs["EnumKey"] = w.call(kEnumKey, ek);
  ek.enum_index = 99;
  stubs["EnumKey_no_more"] = w.call(kEnumKey, ek);
  ek.enum_index = 0;
  ek.name.size = 2;
  stubs["EnumKey_name_too_small"] = w.call(kEnumKey, ek);

  EnumValueRequest ev;
  ev.handle = perflib;
  ev.name = StringBuf{std::u16string(), 512, 0};
  ev.type = 0;
  ev.value = Bytes();
  ev.size = 4096;
  ev.length = 0;
  stubs["EnumValue"] = w.call(kEnumValue, ev);
  ev.size = 1;
  stubs["EnumValue_more_data"] = w.call(kEnumValue, ev);
  ev.handle = hkpd;
  ev.size = 1 << 20;
  stubs["EnumValue_hkpd"] = w.call(kEnumValue, ev);

  GetKeySecurityRequest gs;
  gs.handle = perflib;
  gs.sec_info = 7;
  gs.sd.data = Bytes();
  gs.sd.size = 4096;
  stubs["GetKeySecurity"] = w.call(kGetKeySecurity, gs);
  gs.sd.size = 8;
  stubs["GetKeySecurity_insufficient"] = w.call(kGetKeySecurity, gs);

  stubs["QueryValue"] = w.call(kQueryValue, testing::query_value_request(perflib, u"Last Counter", 64));
  stubs["QueryValue_more_data"] = w.call(kQueryValue, testing::query_value_request(perflib, u"Last Counter", 2));
  stubs["QueryValue_missing"] = w.call(kQueryValue, testing::query_value_request(perflib, u"IDoNotExist", 64));
  QueryValueRequest null_name = testing::query_value_request(perflib, u"", 64);
  null_name.value_name.reset();
  stubs["QueryValue_null_name"] = w.call(kQueryValue, null_name);

  GetVersionRequest gv;
  gv.handle = hklm;
  stubs["GetVersion"] = w.call(kGetVersion, gv);

  // "Last Counter" (26 bytes with its NUL) before "Last Help": the padding of issue 30.
  QueryMultipleValuesRequest qm;
  qm.key_handle = perflib;
  qm.values = {entry(u"Last Counter"), entry(u"Last Help")};
  qm.buffer = Bytes(64, 0);
  qm.buffer_size = 64;
  stubs["QueryMultipleValues"] = w.call(kQueryMultipleValues, qm);
  qm.buffer = Bytes();
  qm.buffer_size = 0;
  stubs["QueryMultipleValues_more_data"] = w.call(kQueryMultipleValues, qm);
  QueryMultipleValues2Request q2;
  q2.key_handle = perflib;
  q2.values = qm.values;
  q2.buffer = Bytes(64, 0);
  q2.offered = 64;
  stubs["QueryMultipleValues2"] = w.call(kQueryMultipleValues2, q2);
  q2.buffer.reset();
  q2.offered = 0;
  stubs["QueryMultipleValues2_more_data"] = w.call(kQueryMultipleValues2, q2);

  // The writes a read-only account is refused.
  CreateKeyRequest cr;
  cr.handle = hku;
  cr.name = u"winreg_torture_test";
  cr.keyclass = std::u16string();
  cr.access_mask = 0x02000000;
  cr.action_taken = 0;
  stubs["CreateKey"] = w.call(kCreateKey, cr);
  DeleteKeyRequest dk;
  dk.handle = perflib;
  dk.name = u"Last Counter";
  stubs["DeleteKey"] = w.call(kDeleteKey, dk);
  stubs["DeleteValue"] = w.call(kDeleteValue, dk);
  SetValueRequest sv;
  sv.handle = perflib;
  sv.name = u"Last Counter";
  sv.type = windows::kRegDword;
  sv.data = Bytes{1, 0, 0, 0};
  sv.size = 4;
  stubs["SetValue"] = w.call(kSetValue, sv);
  SetKeySecurityRequest ss;
  ss.handle = perflib;
  ss.sec_info = 4;
  ss.sd.data = default_key_security(4);
  ss.sd.size = ss.sd.len = uint32_t(ss.sd.data->size());
  stubs["SetKeySecurity"] = w.call(kSetKeySecurity, ss);

  CloseKeyRequest ck;
  ck.handle = perflib;
  stubs["CloseKey"] = w.call(kCloseKey, ck);
  stubs["CloseKey_invalid"] = w.call(kCloseKey, ck);

  // Every row of the table has at least one stub here.
  for (const rpc::Operation& op : winreg_interface().operations) {
    bool covered = false;
    for (const auto& [label, io] : stubs) covered = covered || label.rfind(opnum_name(op.opnum), 0) == 0;
    CHECK(covered);
  }
  for (const auto& [label, io] : stubs) {
    const std::string fn = "winreg_" + label.substr(0, label.find('_'));
    CHECK(ndrdump_validates(s, label, "winreg", fn, io.first, io.second));
  }
}

TEST_CASE("ndrdump validates QueryValue answers under every buffer policy", "[ndrdump]") {
  Stubs s;
  using P = replayer::BufferPolicy;
  const std::pair<P, const char*> policies[] = {{P::kRrpExact, "rrp-exact"},
                                                {P::kWin32Undefined, "win32-undefined"},
                                                {P::kWin2000Echo, "win2000-echo-oversize"},
                                                {P::kNt4Unsettled, "nt4-unsettled"},
                                                {P::kSambaTruncate, "samba-truncate"},
                                                {P::kEchoOffered, "echo-offered"}};
  for (auto [policy, name] : policies) {
    Winreg w(policy);
    OpenHiveRequest open;
    const PolicyHandle hkpd = w.handle_of(w.call(kOpenHKPD, open).second);
    const std::pair<std::optional<uint32_t>, const char*> offers[] = {
        {std::nullopt, "null"}, {0, "0"}, {100, "100"}, {1 << 20, "1M"}};
    for (auto [offer, offer_name] : offers) {
      for (const char16_t* value : {u"Global", u"Costly", u"238"}) {
        const auto io = w.call(kQueryValue, testing::query_value_request(hkpd, value, offer));
        const std::string label = std::string(name) + "-" + offer_name + "-" + utf16_to_utf8(value);
        CHECK(ndrdump_validates(s, label, "winreg", "winreg_QueryValue", io.first, io.second));
      }
    }
  }
}

TEST_CASE("ndrdump validates the endpoint mapper's, srvsvc's and wkssvc's response stubs", "[ndrdump]") {
  Stubs s;
  // Two entries, so a lookup of one returns a handle to go on with.
  epm::Service mapper(
      {{rpc::winreg_syntax(), {127, 0, 0, 1}, 49153, ""}, {rpc::winreg_syntax(), {127, 0, 0, 2}, 49153, ""}});
  auto epm_call = [&](const std::string& label, uint16_t opnum, const Bytes& in) {
    Bytes out;
    REQUIRE(mapper.call(opnum, in, out) == 0);
    const char* fn = opnum == 2 ? "epm_Lookup" : opnum == 3 ? "epm_Map" : "epm_LookupHandleFree";
    CHECK(ndrdump_validates(s, label, "epmapper", fn, in, out));
    return out;
  };
  epm::MapRequest map;
  map.map_tower =
      epm::build_floors(epm::tcp_tower_floors({rpc::winreg_syntax(), rpc::ndr20_syntax(), 0, {0, 0, 0, 0}}));
  map.max_towers = 4;
  epm_call("ept_map", 3, epm::encode(map));
  map.map_tower =
      epm::build_floors(epm::tcp_tower_floors({netapi::srvsvc_syntax(), rpc::ndr20_syntax(), 0, {0, 0, 0, 0}}));
  epm_call("ept_map_not_registered", 3, epm::encode(map));
  epm::LookupRequest lookup;
  lookup.max_ents = 1;
  epm::LookupResponse first;
  REQUIRE(epm::decode(epm_call("ept_lookup", 2, epm::encode(lookup)), first).ok());
  REQUIRE_FALSE(first.entry_handle.null());
  lookup.inquiry_type = 1;
  lookup.interface_id = epm::InterfaceId{netapi::srvsvc_syntax().uuid, 3, 0};
  epm_call("ept_lookup_not_registered", 2, epm::encode(lookup));
  epm_call("ept_lookup_handle_free", 4, Bytes(first.entry_handle.bytes.begin(), first.entry_handle.bytes.end()));

  const auto listed =
      testing::run_command(PERFSIM_PYTHON, std::string(WIRE_SCRIPTS_DIR) + "/netapi_requests.py " + s.dir.string(), 60);
  REQUIRE(listed.code == 0);
  const netapi::HostIdentity host{u"WIN2016-01", u"WORKGROUP", 10, 0, true};
  std::istringstream names(listed.out);
  int count = 0;
  for (std::string name; std::getline(names, name);) {
    std::ifstream f(s.dir / (name + ".bin"), std::ios::binary);
    const Bytes in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const bool srvsvc = name.rfind("srvsvc_", 0) == 0;
    const std::string fn = name.substr(0, name.rfind('_'));
    const uint16_t opnum = fn == "srvsvc_NetSrvGetInfo"     ? netapi::kOpNetrServerGetInfo
                           : fn == "srvsvc_NetShareEnumAll" ? netapi::kOpNetrShareEnum
                                                            : netapi::kOpNetrWkstaGetInfo;
    Bytes out;
    REQUIRE(netapi::call(srvsvc ? netapi::Pipe::kSrvsvc : netapi::Pipe::kWkssvc, host, opnum, in, out) == 0);
    CHECK(ndrdump_validates(s, name, srvsvc ? "srvsvc" : "wkssvc", fn, in, out));
    ++count;
  }
  CHECK(count == 10);
}
