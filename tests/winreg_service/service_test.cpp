// winreg semantics driven through the codec, as the PDU layer drives them.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/utf16.h"
#include "tests/common/byte_views.h"
#include "tests/common/small_synth.h"
#include "tests/common/test_capture.h"
#include "tests/common/winreg_requests.h"
#include "windows/constants.h"
#include "rpc/ndr.h"
#include "winreg/service.h"

using namespace perfsim;
using namespace perfsim::winreg;

namespace {

struct Fixture {
  std::shared_ptr<replayer::SimulatedHost> host;
  std::unique_ptr<Service> svc;
  Fixture() {
    REQUIRE(replayer::SimulatedHost::load(testing::test_capture(), {replayer::TimelineMode::kFrozen, 0}, host).ok());
    svc = std::make_unique<Service>(host);
  }
  template <class Req, class Resp>
  Resp call(uint16_t opnum, const Req& req) {
    Bytes out;
    REQUIRE(svc->call(opnum, encode(req), out) == 0);
    Resp resp;
    REQUIRE(decode(out, resp).ok());
    return resp;
  }
  PolicyHandle open(uint16_t opnum) {
    auto r = call<OpenHiveRequest, OpenHiveResponse>(opnum, OpenHiveRequest{});
    REQUIRE(r.result == windows::kErrorSuccess);
    return r.handle;
  }
  PolicyHandle open_perflib() {
    OpenKeyRequest ok;
    ok.parent_handle = open(kOpenHKLM);
    ok.keyname = u"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib";
    auto r = call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok);
    REQUIRE(r.result == windows::kErrorSuccess);
    return r.handle;
  }
  QueryValueResponse query(const PolicyHandle& h, const std::u16string& name, std::optional<uint32_t> buffer) {
    return call<QueryValueRequest, QueryValueResponse>(kQueryValue, testing::query_value_request(h, name, buffer));
  }
};

// Samba's own NDR must accept our response stub (python3-samba, via the codec tests' bridge).
bool samba_accepts_out(const char* op, const Bytes& stub, const std::string& preset) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("perfsim-svc-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "stub.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(stub.data()), std::streamsize(stub.size()));
  std::ofstream(dir / "preset.json") << preset;
  const std::string cmd = "timeout 60 /usr/bin/python3 " PERFSIM_SOURCE_DIR
                          "/tests/winreg_codec/samba_ndr.py unpack-out " +
                          std::string(op) + " " + (dir / "stub.bin").string() + " " + (dir / "preset.json").string() +
                          " " + (dir / "out.json").string();
  const int rc = std::system(cmd.c_str());
  fs::remove_all(dir);
  return rc == 0;
}

const char16_t* kPerflib = u"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib";

// A QueryMultipleValues entry naming `name`, as clients send it.
ValueEntry value_entry(const std::u16string& name) {
  StringBuf n;
  n.text = name;
  n.size = n.length = uint16_t((name.size() + 1) * 2);
  ValueEntry e;
  e.name = n;
  return e;
}

}  // namespace

TEST_CASE("handles are per service, closed handles become invalid") {
  Fixture f;
  PolicyHandle h = f.open(kOpenHKPD);
  PolicyHandle h2 = f.open(kOpenHKLM);
  CHECK_FALSE(h == h2);
  CHECK(f.svc->open_handles() == 2);
  auto c = f.call<CloseKeyRequest, CloseKeyResponse>(kCloseKey, CloseKeyRequest{h});
  CHECK(c.result == windows::kErrorSuccess);
  CHECK(c.handle == PolicyHandle{});
  CHECK(f.call<CloseKeyRequest, CloseKeyResponse>(kCloseKey, CloseKeyRequest{h}).result ==
        windows::kErrorInvalidHandle);
  CHECK(f.query(h, u"Global", 1 << 20).result == windows::kErrorInvalidHandle);
  Fixture other;  // another connection does not know this connection's handles
  CHECK(other.query(h2, u"Last Counter", 16).result == windows::kErrorInvalidHandle);
}

TEST_CASE("QueryValue on HKPD follows the host's rrp-exact policy and mirrors NULL pointers") {
  Fixture f;
  PolicyHandle h = f.open(kOpenHKPD);
  const Bytes global = testing::test_capture().records[0].payload;
  auto probe = f.query(h, u"Global", std::nullopt);
  CHECK(probe.result == windows::kErrorSuccess);
  CHECK_FALSE(probe.data.has_value());
  CHECK(probe.data_size == global.size());
  auto small = f.query(h, u"Global", 100);
  CHECK(small.result == windows::kErrorMoreData);
  CHECK(small.data_size == global.size());
  auto ok = f.query(h, u"Global", 1 << 20);
  CHECK(ok.result == windows::kErrorSuccess);
  REQUIRE(ok.data.has_value());
  CHECK(*ok.data == global);
  CHECK(ok.type == windows::kRegBinary);
  CHECK(ok.data_length == global.size());
  auto names = f.query(h, u"Counter 009", 1 << 20);
  CHECK(names.type == windows::kRegMultiSz);
  CHECK(*names.data == testing::test_capture().names[0].counter);
}

TEST_CASE("HKLM: OpenKey, QueryValue, missing keys and values, wrong key type") {
  Fixture f;
  PolicyHandle hklm = f.open(kOpenHKLM);
  OpenKeyRequest ok;
  ok.parent_handle = hklm;
  ok.keyname = kPerflib;
  auto opened = f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok);
  REQUIRE(opened.result == windows::kErrorSuccess);
  auto v = f.query(opened.handle, u"last counter", 64);
  CHECK(v.result == windows::kErrorSuccess);
  CHECK(v.type == windows::kRegDword);
  CHECK(load_le32(v.data->data()) == 740);
  CHECK(f.query(opened.handle, u"Last Counter", 2).result == windows::kErrorMoreData);
  CHECK(f.query(opened.handle, u"No Such Value", 64).result == windows::kErrorFileNotFound);
  ok.keyname = u"SOFTWARE\\Nope";
  CHECK(f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).result == windows::kErrorFileNotFound);
  ok.parent_handle = f.open(kOpenHKPD);
  ok.keyname = u"Anything";
  CHECK(f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).result == windows::kErrorAccessDenied);
}

// MS-RRP 3.1.5.17 and smbtorture's QueryValue_full: parameters are checked before the value is
// looked for, so an existing and a missing value get the same ERROR_INVALID_PARAMETER.
TEST_CASE("QueryValue: a NULL name or a missing lpcbData/lpcbLen is ERROR_INVALID_PARAMETER") {
  Fixture f;
  const PolicyHandle perflib = f.open_perflib();
  for (const char16_t* name : {u"Last Counter", u"IDoNotExist"}) {
    QueryValueRequest q = testing::query_value_request(perflib, name, 64);
    q.value_name.reset();
    CHECK(f.call<QueryValueRequest, QueryValueResponse>(kQueryValue, q).result == windows::kErrorInvalidParameter);
    q = testing::query_value_request(perflib, name, 64);
    q.data_size.reset();
    CHECK(f.call<QueryValueRequest, QueryValueResponse>(kQueryValue, q).result == windows::kErrorInvalidParameter);
    q = testing::query_value_request(perflib, name, 64);
    q.data_length.reset();
    CHECK(f.call<QueryValueRequest, QueryValueResponse>(kQueryValue, q).result == windows::kErrorInvalidParameter);
  }
  QueryValueRequest no_type = testing::query_value_request(perflib, u"Last Counter", 64);
  no_type.type.reset();  // lpType is optional
  auto r = f.call<QueryValueRequest, QueryValueResponse>(kQueryValue, no_type);
  CHECK(r.result == windows::kErrorSuccess);
  CHECK_FALSE(r.type.has_value());
  // the perf keys answer the same way
  QueryValueRequest perf = testing::query_value_request(f.open(kOpenHKPD), u"Global", std::nullopt);
  perf.value_name.reset();
  CHECK(f.call<QueryValueRequest, QueryValueResponse>(kQueryValue, perf).result == windows::kErrorInvalidParameter);
  // an unknown handle is still ERROR_INVALID_HANDLE first
  QueryValueRequest stale = testing::query_value_request(PolicyHandle{}, u"x", 4);
  stale.value_name.reset();
  CHECK(f.call<QueryValueRequest, QueryValueResponse>(kQueryValue, stale).result == windows::kErrorInvalidHandle);
}

TEST_CASE("EnumKey, EnumValue and QueryInfoKey walk the key") {
  Fixture f;
  PolicyHandle hklm = f.open(kOpenHKLM);
  OpenKeyRequest ok;
  ok.parent_handle = hklm;
  ok.keyname = kPerflib;
  PolicyHandle perflib = f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).handle;

  QueryInfoKeyRequest qi;
  qi.handle = perflib;
  qi.classname = std::u16string();
  auto info = f.call<QueryInfoKeyRequest, QueryInfoKeyResponse>(kQueryInfoKey, qi);
  CHECK(info.result == windows::kErrorSuccess);
  CHECK(info.num_subkeys == 1);      // 009
  CHECK(info.num_values == 1);       // Last Counter
  CHECK(info.max_valnamelen == 24);  // "Last Counter": 12 UTF-16 units, in bytes as Windows counts them
  CHECK(info.max_subkeylen == 6);    // "009"

  EnumKeyRequest ek;
  ek.handle = perflib;
  ek.name.size = 512;
  ek.name.text = std::u16string();
  auto k0 = f.call<EnumKeyRequest, EnumKeyResponse>(kEnumKey, ek);
  CHECK(k0.result == windows::kErrorSuccess);
  CHECK(k0.name.text == u"009");
  ek.enum_index = 1;
  CHECK(f.call<EnumKeyRequest, EnumKeyResponse>(kEnumKey, ek).result == windows::kErrorNoMoreItems);

  EnumValueRequest ev;
  ev.handle = perflib;
  ev.name.size = 512;
  ev.name.text = std::u16string();
  ev.type = 0;
  ev.value = Bytes();
  ev.size = 64;
  ev.length = 0;
  auto v0 = f.call<EnumValueRequest, EnumValueResponse>(kEnumValue, ev);
  CHECK(v0.result == windows::kErrorSuccess);
  CHECK(v0.name.text == u"Last Counter");
  CHECK(v0.type == windows::kRegDword);
  CHECK(v0.value->size() == 4);
  ev.enum_index = 1;
  CHECK(f.call<EnumValueRequest, EnumValueResponse>(kEnumValue, ev).result == windows::kErrorNoMoreItems);

  // On HKPD, EnumValue lists Global and Costly with their data.
  ev.handle = f.open(kOpenHKPD);
  ev.enum_index = 0;
  ev.size = 1 << 20;
  auto p0 = f.call<EnumValueRequest, EnumValueResponse>(kEnumValue, ev);
  CHECK(p0.name.text == u"Global");
  CHECK(*p0.value == testing::test_capture().records[0].payload);
}

TEST_CASE("EnumValue answers without data say length 0 whatever length the caller sent") {
  // length_is must match the value bytes sent: Samba's NDR rejects the response otherwise.
  Fixture f;
  EnumValueRequest ev;
  ev.handle = f.open(kOpenHKLM);
  ev.name.size = 512;
  ev.name.text = std::u16string();
  ev.type = 0;
  ev.value = Bytes(256, ' ');  // as impacket sends it: the whole buffer, length == size
  ev.size = 256;
  ev.length = 256;
  OpenKeyRequest ok;
  ok.parent_handle = ev.handle;
  ok.keyname = kPerflib;
  const PolicyHandle perflib = f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).handle;
  uint32_t want = windows::kErrorSuccess;
  SECTION("name buffer too small") {
    ev.handle = perflib;
    ev.name.size = 2;
    want = windows::kErrorMoreData;
  }
  SECTION("index past the last value") {
    ev.handle = perflib;
    ev.enum_index = 7;
    want = windows::kErrorNoMoreItems;
  }
  SECTION("unknown handle") {
    ev.handle.uuid[15] ^= 0xff;
    want = windows::kErrorInvalidHandle;
  }
  SECTION("data buffer too small") {
    ev.handle = perflib;
    ev.size = ev.length = 2;
    ev.value = Bytes(2, ' ');
    want = windows::kErrorMoreData;
  }
  auto r = f.call<EnumValueRequest, EnumValueResponse>(kEnumValue, ev);
  CHECK(r.result == want);
  REQUIRE(r.value.has_value());
  REQUIRE(r.length.has_value());
  CHECK(*r.length == r.value->size());
  CHECK(*r.length == 0);
}

TEST_CASE("GetKeySecurity answers a valid self-relative descriptor, or the size needed") {
  Fixture f;
  GetKeySecurityRequest r;
  r.handle = f.open(kOpenHKLM);
  r.sec_info = 0x7;
  r.sd.size = 4;
  r.sd.data = Bytes();
  auto small = f.call<GetKeySecurityRequest, GetKeySecurityResponse>(kGetKeySecurity, r);
  CHECK(small.result == 122);
  const uint32_t needed = small.sd.size;
  CHECK(needed > 20);
  r.sd.size = needed;
  auto full = f.call<GetKeySecurityRequest, GetKeySecurityResponse>(kGetKeySecurity, r);
  REQUIRE(full.result == windows::kErrorSuccess);
  REQUIRE(full.sd.data->size() == needed);
  const Bytes& sd = *full.sd.data;
  CHECK(sd[0] == 1);                              // revision
  CHECK((load_le16(&sd[2]) & 0x8004) == 0x8004);  // self-relative, DACL present
  const uint32_t dacl = load_le32(&sd[16]);
  REQUIRE(dacl + 8 <= sd.size());
  CHECK(load_le16(&sd[dacl + 2]) == sd.size() - dacl);  // the ACL ends the descriptor
}

TEST_CASE("GetVersion and QueryMultipleValues") {
  Fixture f;
  auto v = f.call<GetVersionRequest, GetVersionResponse>(kGetVersion, GetVersionRequest{f.open(kOpenHKLM)});
  CHECK(v.result == windows::kErrorSuccess);
  CHECK(v.version == 5);

  QueryMultipleValuesRequest q;
  q.key_handle = f.open_perflib();
  q.values = {value_entry(u"Last Counter")};
  q.buffer = Bytes();
  q.buffer_size = 2;
  auto small = f.call<QueryMultipleValuesRequest, QueryMultipleValuesResponse>(kQueryMultipleValues, q);
  CHECK(small.result == windows::kErrorMoreData);
  CHECK(small.buffer_size == 4);
  CHECK_FALSE(small.buffer.has_value());  // sized by buffer_size: an empty array would lie
  CHECK(samba_accepts_out("QueryMultipleValues", encode(small), R"({"in_num_values": 1})"));
  q.buffer_size = 4;
  auto full = f.call<QueryMultipleValuesRequest, QueryMultipleValuesResponse>(kQueryMultipleValues, q);
  REQUIRE(full.result == windows::kErrorSuccess);
  CHECK(full.values[0].type == windows::kRegDword);
  CHECK(full.values[0].valuelen == 4);
  CHECK(load_le32(full.buffer->data()) == 740);
  CHECK(samba_accepts_out("QueryMultipleValues", encode(full), R"({"in_num_values": 1})"));
}

TEST_CASE("unknown opnums and undecodable stubs get faults, not responses") {
  Fixture f;
  Bytes out;
  CHECK(f.svc->call(0x0b /*FlushKey*/, Bytes(64, 0), out) == kFaultOpRangeError);
  CHECK(f.svc->call(0x40, Bytes(), out) == kFaultOpRangeError);
  CHECK(f.svc->call(kQueryValue, Bytes(7, 0), out) == kFaultBadStubData);
  CHECK(f.svc->call(kOpenKey, Bytes(3, 0xff), out) == kFaultBadStubData);
}

TEST_CASE("QueryMultipleValues2 sizes its buffer by the caller's offer and reports what it needs") {
  Fixture f;
  QueryMultipleValues2Request q;
  q.key_handle = f.open_perflib();
  q.values = {value_entry(u"Last Counter")};
  q.offered = 2;
  q.buffer = Bytes(2, 0);
  auto small = f.call<QueryMultipleValues2Request, QueryMultipleValues2Response>(kQueryMultipleValues2, q);
  CHECK(small.result == windows::kErrorMoreData);
  CHECK(small.needed == 4);
  q.offered = 16;
  q.buffer = Bytes(16, 0);
  auto full = f.call<QueryMultipleValues2Request, QueryMultipleValues2Response>(kQueryMultipleValues2, q);
  REQUIRE(full.result == windows::kErrorSuccess);
  CHECK(full.needed == 4);
  REQUIRE(full.buffer->size() == 16);
  CHECK(load_le32(full.buffer->data()) == 740);
  CHECK(full.values[0].valuelen == 4);
  CHECK(samba_accepts_out("QueryMultipleValues2", encode(full), R"({"in_num_values": 1, "in_offered": 16})"));
  CHECK(samba_accepts_out("QueryMultipleValues2", encode(small), R"({"in_num_values": 1, "in_offered": 2})"));
  q.offered = 0xFFFFFF00;  // a reply sized by this offer would be 4 GiB
  q.buffer.reset();
  Bytes out;
  REQUIRE(f.svc->call(kQueryMultipleValues2, encode(q), out) == 0);
  QueryMultipleValues2Response huge;
  REQUIRE(decode(out, huge).ok());
  CHECK(huge.result == windows::kErrorInvalidParameter);
  CHECK(out.size() < 256);
  CHECK(samba_accepts_out("QueryMultipleValues2", out, R"({"in_num_values": 1, "in_offered": 4294967040})"));
}

namespace {

// The process's peak resident set since the last reset_peak_rss(), in bytes (Linux: VmHWM).
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }
uint64_t peak_rss() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

constexpr size_t kBigValue = 40000;  // about Perflib\009's Help on a real host (41 KB)

// The test capture with one large value beside Perflib's, and a service on it.
struct BigValueFixture : Fixture {
  BigValueFixture() {
    captures::Capture cap = testing::test_capture();
    Bytes big(kBigValue);
    for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 7);
    cap.registry.push_back(
        {"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", "Big", windows::kRegBinary, big});
    REQUIRE(replayer::SimulatedHost::load(cap, {replayer::TimelineMode::kFrozen, 0}, host).ok());
    svc = std::make_unique<Service>(host);
  }
  QueryMultipleValuesRequest repeat(size_t n) {
    QueryMultipleValuesRequest q;
    q.key_handle = open_perflib();
    q.values.assign(n, value_entry(u"Big"));
    return q;
  }
};

}  // namespace

// Issue 44 Q1: QueryMultipleValues packed every named value before comparing with the caller's
// buffer, so naming a 40 KB value 10,000 times (a 480 KB request) held 400 MB.
TEST_CASE("QueryMultipleValues naming a large value many times answers its size without packing it") {
  BigValueFixture f;
  QueryMultipleValuesRequest q = f.repeat(10000);
  q.buffer_size = 0;  // the size probe clients send first
  const Bytes stub = encode(q);
  reset_peak_rss();
  const uint64_t before = peak_rss();
  Bytes out;
  REQUIRE(f.svc->call(kQueryMultipleValues, stub, out) == 0);
  const uint64_t growth = peak_rss() - before;
  QueryMultipleValuesResponse r;
  REQUIRE(decode(out, r).ok());
  CHECK(r.result == windows::kErrorMoreData);
  CHECK(r.buffer_size == 10000 * kBigValue);  // MS-RRP 3.1.5.26: the exact size needed
  CHECK_FALSE(r.buffer.has_value());
  CHECK(growth < (64u << 20));  // views of one value, not 400 MB of copies

  QueryMultipleValues2Request q2;
  q2.key_handle = q.key_handle;
  q2.values = q.values;
  q2.offered = kMaxMultipleValuesOffer;
  q2.buffer = Bytes(kMaxMultipleValuesOffer, 0);
  const Bytes stub2 = encode(q2);
  reset_peak_rss();
  const uint64_t before2 = peak_rss();
  REQUIRE(f.svc->call(kQueryMultipleValues2, stub2, out) == 0);
  const uint64_t growth2 = peak_rss() - before2;
  QueryMultipleValues2Response r2;
  REQUIRE(decode(out, r2).ok());
  CHECK(r2.result == windows::kErrorMoreData);
  CHECK(r2.needed == 10000 * kBigValue);
  CHECK(growth2 < (64u << 20));
}

TEST_CASE("QueryMultipleValues packs a repeated value once per entry when the buffer holds them") {
  BigValueFixture f;
  QueryMultipleValuesRequest q = f.repeat(50);
  q.buffer = Bytes(50 * kBigValue, 0);
  q.buffer_size = 50 * kBigValue;
  auto r = f.call<QueryMultipleValuesRequest, QueryMultipleValuesResponse>(kQueryMultipleValues, q);
  REQUIRE(r.result == windows::kErrorSuccess);
  REQUIRE(r.buffer.has_value());
  CHECK(r.buffer_size == 50 * kBigValue);
  REQUIRE(r.buffer->size() == 50 * kBigValue);
  for (size_t i = 0; i < 50; ++i) {
    CHECK(r.values[i].valueptr == i * kBigValue);
    CHECK(r.values[i].valuelen == kBigValue);
    CHECK((*r.buffer)[i * kBigValue + 1] == 7);
    CHECK((*r.buffer)[i * kBigValue + kBigValue - 1] == uint8_t((kBigValue - 1) * 7));
  }
  QueryMultipleValues2Request q2;
  q2.key_handle = q.key_handle;
  q2.values = q.values;
  q2.offered = 50 * kBigValue + 8;
  q2.buffer = Bytes(q2.offered, 0);
  auto r2 = f.call<QueryMultipleValues2Request, QueryMultipleValues2Response>(kQueryMultipleValues2, q2);
  REQUIRE(r2.result == windows::kErrorSuccess);
  CHECK(r2.needed == 50 * kBigValue);
  REQUIRE(r2.buffer->size() == q2.offered);  // sized by the offer
  CHECK(Bytes(r2.buffer->begin(), r2.buffer->begin() + long(50 * kBigValue)) == *r.buffer);
}

TEST_CASE("QueryMultipleValues refuses sizes it may not pack or cannot report") {
  BigValueFixture f;
  // Fits the caller's buffer but is more than a call may hold.
  QueryMultipleValuesRequest q = f.repeat(kMaxMultipleValuesOffer / kBigValue + 1);
  q.buffer_size = 0xFFFFFFFF;  // a NULL array: the claim costs the client nothing
  auto r = f.call<QueryMultipleValuesRequest, QueryMultipleValuesResponse>(kQueryMultipleValues, q);
  CHECK(r.result == windows::kErrorTransferTooLong);
  CHECK_FALSE(r.buffer.has_value());
  // More than the 32-bit ldwTotsize can say: refused, not wrapped.
  q = f.repeat(size_t(UINT32_MAX / kBigValue) + 1);
  q.buffer_size = 0;
  r = f.call<QueryMultipleValuesRequest, QueryMultipleValuesResponse>(kQueryMultipleValues, q);
  CHECK(r.result == windows::kErrorTransferTooLong);
  CHECK_FALSE(r.buffer.has_value());
}

TEST_CASE("a recorded answer reaches the response stub without a copy: the stub references the recording") {
  Fixture f;  // a synthetic 2016 host instead of the tiny test capture: its Global is large
  REQUIRE(
      replayer::SimulatedHost::load(testing::small_synth_capture(), {replayer::TimelineMode::kFrozen, 0}, f.host).ok());
  f.svc = std::make_unique<Service>(f.host);
  const PolicyHandle h = f.open(kOpenHKPD);
  const Bytes* found = nullptr;  // the Global record of the frozen tick, as the host keeps it
  for (const captures::QueryRecord& r : f.host->capture().records)
    if (r.value_name == "Global" && r.payload == f.host->content(replayer::PerfKey::kData, "Global", 0).data)
      found = &r.payload;
  REQUIRE(found);
  const Bytes& recorded = *found;
  REQUIRE(recorded.size() >= ndr::Writer::kShareMin);
  ByteChain stub;
  REQUIRE(f.svc->call(kQueryValue, encode(testing::query_value_request(h, u"Global", 1u << 20)), stub) == 0);
  CHECK(testing::referenced_from(stub, recorded) == recorded.size());
  QueryValueResponse r;
  REQUIRE(decode(stub.flatten(), r).ok());
  CHECK(r.result == windows::kErrorSuccess);
  CHECK(*r.data == recorded);
}

TEST_CASE("an observed service notes each call's value, key path, offer, status and sizes") {
  Fixture f;
  f.svc->observe(true);
  const PolicyHandle hkpd = f.open(kOpenHKPD);
  CHECK(f.svc->last_call().status == windows::kErrorSuccess);
  REQUIRE(f.svc->last_call().key_path);
  CHECK(*f.svc->last_call().key_path == "HKEY_PERFORMANCE_DATA");
  const size_t global = f.host->content(replayer::PerfKey::kData, "Global", 0).data.size();
  f.query(hkpd, u"Global", 16);
  winreg::CallNote n = f.svc->take_call();
  CHECK(n.value_name == "Global");
  CHECK(n.has_buffer);
  CHECK(n.offered == 16);
  CHECK(n.status == windows::kErrorMoreData);
  CHECK(n.size == global);  // rrp-exact: the size needed
  CHECK(n.bytes == 0);
  f.query(hkpd, u"Global", uint32_t(global));
  CHECK(f.svc->last_call().status == windows::kErrorSuccess);
  CHECK(f.svc->last_call().bytes == global);
  CHECK(f.svc->last_call().type == windows::kRegBinary);
  const PolicyHandle perflib = f.open_perflib();
  CHECK(f.svc->last_call().value_name == "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib");
  f.query(perflib, u"Last Counter", 64);
  REQUIRE(f.svc->last_call().key_path);
  CHECK(*f.svc->last_call().key_path == "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib");
  CHECK(f.svc->last_call().bytes == 4);
  // A service nobody observes notes no strings.
  Fixture quiet;
  quiet.query(quiet.open(kOpenHKPD), u"Global", 16);
  CHECK(quiet.svc->last_call().value_name.empty());
  CHECK_FALSE(quiet.svc->last_call().key_path);
}

// The access rule the SMB transport used to apply itself (issue 29): the service decides, the
// transport only says which account it is. Windows refuses every predefined perf key to an
// account outside Performance Monitor Users (issue 54: HKPT and HKPN were open to it).
TEST_CASE("a service for an account outside Performance Monitor Users refuses every perf key, not the hives") {
  Fixture f;
  f.svc = std::make_unique<Service>(f.host, Access::kRegistry);
  f.svc->observe(true);
  for (uint16_t op : {kOpenHKPD, kOpenHKPT, kOpenHKPN}) {
    INFO("opnum " << op);
    auto r = f.call<OpenHiveRequest, OpenHiveResponse>(op, OpenHiveRequest{});
    CHECK(r.result == windows::kErrorAccessDenied);
    CHECK(r.handle == PolicyHandle{});  // a zero handle, as Windows returns with an error
    CHECK(f.svc->last_call().status == windows::kErrorAccessDenied);
    CHECK(f.svc->last_call().key_path == nullptr);
  }
  CHECK(f.svc->open_handles() == 0);
  f.open(kOpenHKLM);  // the registry itself stays readable
  f.open(kOpenHKU);
  CHECK(f.svc->open_handles() == 2);
  Bytes out;
  CHECK(f.svc->call(kOpenHKPD, Bytes{1, 2}, out) == kFaultBadStubData);  // decoded before the rule
}

// A null session, which Windows keeps off \PIPE\winreg: no hive and no perf key opens, so no
// value of any name is read (issue 54).
TEST_CASE("a service for a null session refuses every hive and perf key") {
  Fixture f;
  f.svc = std::make_unique<Service>(f.host, Access::kNone);
  for (uint16_t op : {kOpenHKPD, kOpenHKPT, kOpenHKPN, kOpenHKLM, kOpenHKU, kOpenHKCR, kOpenHKCU}) {
    INFO("opnum " << op);
    auto r = f.call<OpenHiveRequest, OpenHiveResponse>(op, OpenHiveRequest{});
    CHECK(r.result == windows::kErrorAccessDenied);
    CHECK(r.handle == PolicyHandle{});
  }
  CHECK(f.svc->open_handles() == 0);
}

// A value recorded under a name other than Global or Costly (`perfsim record -q "238 230"`) is an
// HKEY_PERFORMANCE_DATA answer; HKEY_PERFORMANCE_TEXT and _NLSTEXT answer their name tables only
// (issue 54: it was a PERF_DATA_BLOCK under every perf key).
TEST_CASE("a value recorded under another name is served under HKEY_PERFORMANCE_DATA only") {
  captures::Capture cap = testing::test_capture();
  const Bytes recorded = testing::sample({238, 230}, 0);
  cap.records.push_back({0, 0, 0, "238 230", 0, windows::kRegBinary, 0, recorded});
  Fixture f;
  REQUIRE(replayer::SimulatedHost::load(std::move(cap), {replayer::TimelineMode::kFrozen, 0}, f.host).ok());
  f.svc = std::make_unique<Service>(f.host);
  const QueryValueResponse data = f.query(f.open(kOpenHKPD), u"238 230", 1u << 20);
  CHECK(data.result == windows::kErrorSuccess);
  REQUIRE(data.data);
  CHECK(*data.data == recorded);
  for (uint16_t op : {kOpenHKPT, kOpenHKPN}) {
    INFO("opnum " << op);
    const PolicyHandle h = f.open(op);
    const QueryValueResponse r = f.query(h, u"238 230", 1u << 20);
    CHECK(r.result == windows::kErrorFileNotFound);
    CHECK((!r.data || r.data->empty()));
    CHECK(f.query(h, u"Counter", 1u << 20).result == windows::kErrorSuccess);  // its own table still answers
  }
}

// The table is the interface: each row's opnum reaches its operation, any other opnum faults.
TEST_CASE("the winreg interface table names each implemented opnum once") {
  const rpc::Interface& w = winreg_interface();
  CHECK(w.syntax == rpc::winreg_syntax());
  CHECK(w.operations.size() == 22);
  for (const rpc::Operation& op : w.operations) {
    CHECK(w.find(op.opnum) == &op);
    CHECK(op.call != nullptr);
  }
  CHECK(std::string(w.find(kQueryValue)->name) == "BaseRegQueryValue");
  CHECK(std::string(w.find(kOpenHKU)->name) == "OpenHKU");
  CHECK(w.find(0x0b) == nullptr);  // FlushKey: not served
  Fixture f;
  ByteChain out;
  CHECK(w.call(*f.svc, 0x0b, {}, out) == kFaultOpRangeError);
}

// MS-RRP 3.1.5.1/.2/.5: HKU lists the service accounts' profiles, HKCU is .DEFAULT (a network
// logon loads no profile), HKCR is HKLM\SOFTWARE\Classes; all readable like HKLM.
TEST_CASE("OpenHKU, OpenHKCU and OpenHKCR open enumerable hives") {
  Fixture f;
  const PolicyHandle hku = f.open(kOpenHKU);
  std::vector<std::string> names;
  for (uint32_t i = 0;; ++i) {
    EnumKeyRequest ek;
    ek.handle = hku;
    ek.enum_index = i;
    ek.name.size = 512;
    ek.name.text = std::u16string();
    auto r = f.call<EnumKeyRequest, EnumKeyResponse>(kEnumKey, ek);
    if (r.result == windows::kErrorNoMoreItems) break;
    REQUIRE(r.result == windows::kErrorSuccess);
    REQUIRE(i < 16);
    names.push_back(utf16_to_utf8(*r.name.text));
  }
  CHECK(names == std::vector<std::string>{".DEFAULT", "S-1-5-19", "S-1-5-20", "S-1-5-18"});
  QueryInfoKeyRequest qi;
  qi.handle = f.open(kOpenHKCU);
  auto info = f.call<QueryInfoKeyRequest, QueryInfoKeyResponse>(kQueryInfoKey, qi);
  CHECK(info.result == windows::kErrorSuccess);
  CHECK(info.num_subkeys == 4);  // .DEFAULT's: Control Panel, Environment, Keyboard Layout, Software
  OpenKeyRequest ok;
  ok.parent_handle = hku;
  ok.keyname = u".DEFAULT\\Environment";
  CHECK(f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).result == windows::kErrorSuccess);
  ok.keyname = u"S-1-5-21-1-2-3-500";  // no user profile is loaded
  CHECK(f.call<OpenKeyRequest, OpenKeyResponse>(kOpenKey, ok).result == windows::kErrorFileNotFound);
  qi.handle = f.open(kOpenHKCR);
  CHECK(f.call<QueryInfoKeyRequest, QueryInfoKeyResponse>(kQueryInfoKey, qi).result == windows::kErrorSuccess);
  GetVersionRequest gv;
  gv.handle = hku;
  CHECK(f.call<GetVersionRequest, GetVersionResponse>(kGetVersion, gv).version == 5);
}

// A read-only monitoring account may not write: ERROR_ACCESS_DENIED on any open key, HKU's
// included; an unknown handle is ERROR_INVALID_HANDLE; nothing changes.
TEST_CASE("write operations answer ERROR_ACCESS_DENIED, as to a read-only account") {
  Fixture f;
  const PolicyHandle perflib = f.open_perflib();
  for (const PolicyHandle& h : {perflib, f.open(kOpenHKU), f.open(kOpenHKCU)}) {
    CreateKeyRequest ck;
    ck.handle = h;
    ck.name = u"winreg_torture_test";
    ck.keyclass = std::u16string();
    ck.access_mask = 0x02000000;
    ck.action_taken = 0;
    auto created = f.call<CreateKeyRequest, CreateKeyResponse>(kCreateKey, ck);
    CHECK(created.result == windows::kErrorAccessDenied);
    CHECK(created.new_handle == PolicyHandle{});
    CHECK(created.action_taken == 0u);
    DeleteKeyRequest dk;
    dk.handle = h;
    dk.name = u"winreg_torture_test";
    CHECK(f.call<DeleteKeyRequest, StatusResponse>(kDeleteKey, dk).result == windows::kErrorAccessDenied);
    CHECK(f.call<DeleteKeyRequest, StatusResponse>(kDeleteValue, dk).result == windows::kErrorAccessDenied);
    SetValueRequest sv;
    sv.handle = h;
    sv.name = u"Last Counter";
    sv.type = windows::kRegDword;
    sv.data = Bytes{1, 0, 0, 0};
    sv.size = 4;
    CHECK(f.call<SetValueRequest, StatusResponse>(kSetValue, sv).result == windows::kErrorAccessDenied);
    SetKeySecurityRequest ss;
    ss.handle = h;
    ss.sec_info = 4;
    ss.sd.data = default_key_security(4);
    ss.sd.size = ss.sd.len = uint32_t(ss.sd.data->size());
    CHECK(f.call<SetKeySecurityRequest, StatusResponse>(kSetKeySecurity, ss).result == windows::kErrorAccessDenied);
  }
  CHECK(load_le32(f.query(perflib, u"Last Counter", 64).data->data()) == 740);  // unchanged
  DeleteKeyRequest stale;
  stale.name = u"x";
  CHECK(f.call<DeleteKeyRequest, StatusResponse>(kDeleteKey, stale).result == windows::kErrorInvalidHandle);
  SetValueRequest lying;  // size disagreeing with the array is bad stub data
  lying.name = u"x";
  lying.data = Bytes(4, 0);
  lying.size = 4;
  Bytes stub = encode(lying), out;
  store_le32(&stub[stub.size() - 4], 9);
  CHECK(f.svc->call(kSetValue, stub, out) == kFaultBadStubData);
}
