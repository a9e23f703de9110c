// Cross-checks our winreg stubs against Samba's NDR: (a) responses we encode must unpack with
// ndr_unpack_out and show the values we put in; (b) requests Samba packs must decode with ours;
// (c) the client direction: our requests unpack with ndr_unpack_in, Samba's responses decode.
#include <catch2/catch.hpp>

#include "samba_bridge.h"
#include "windows/constants.h"
#include "winreg/codec.h"

using namespace perfsim;
using namespace perfsim::winreg;
using namespace perfsim::test;

namespace {

PolicyHandle sample_handle() {
  PolicyHandle h;
  h.attributes = 0;
  for (int i = 0; i < 16; ++i) h.uuid[i] = uint8_t(0x10 + i);
  return h;
}

Bytes crosscheck_pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 13 + 1);
  return b;
}

json bytes_json(const Bytes& b) { return json(std::vector<int>(b.begin(), b.end())); }
uint32_t werror(const json& result) { return result.at(0).get<uint32_t>(); }

}  // namespace

// ---------------- (a) our responses -> Samba ----------------

TEST_CASE("(a) OpenHive responses unpack in Samba for all four hives") {
  OpenHiveResponse r{sample_handle(), windows::kErrorSuccess};
  for (const char* op : {"OpenHKLM", "OpenHKPD", "OpenHKPT", "OpenHKPN"}) {
    json j = samba_unpack_out(op, encode(r));
    CHECK(j["out_handle"]["uuid"] == guid_text(r.handle));
    CHECK(j["out_handle"]["handle_type"] == 0);
    CHECK(werror(j["result"]) == 0);
  }
}

TEST_CASE("(a) CloseKey and GetVersion responses") {
  json j = samba_unpack_out("CloseKey", encode(CloseKeyResponse{PolicyHandle{}, windows::kErrorInvalidHandle}));
  CHECK(j["out_handle"]["uuid"] == "00000000-0000-0000-0000-000000000000");
  CHECK(werror(j["result"]) == 6);
  j = samba_unpack_out("GetVersion", encode(GetVersionResponse{6, windows::kErrorSuccess}));
  CHECK(j["out_version"] == 6);
}

TEST_CASE("(a) EnumKey response with class and time") {
  EnumKeyResponse r;
  r.name = {u16("Perflib"), 512, 0};
  r.keyclass = StringBuf{u16(""), 0, 0};
  r.last_changed_time = 0x01d9c0ffee123456ULL;
  r.result = windows::kErrorSuccess;
  json j = samba_unpack_out("EnumKey", encode(r));
  CHECK(j["out_name"]["name"] == "Perflib");
  CHECK(j["out_name"]["length"] == 16);
  CHECK(j["out_name"]["size"] == 512);
  CHECK(j["out_keyclass"]["length"] == 0);
  CHECK(j["out_last_changed_time"] == 0x01d9c0ffee123456ULL);
  // End of enumeration: empty name, no class, no time.
  EnumKeyResponse end;
  end.name = {u16(""), 512, 0};
  end.result = windows::kErrorNoMoreItems;
  j = samba_unpack_out("EnumKey", encode(end));
  CHECK(werror(j["result"]) == 259);
  CHECK(j["out_keyclass"].is_null());
}

TEST_CASE("(a) EnumValue response") {
  EnumValueResponse r;
  r.name = {u16("Last Counter"), 0x200, 0};
  r.type = windows::kRegDword;
  r.value = Bytes{0x9a, 0x0b, 0, 0};
  r.size = 4;
  r.length = 4;
  json j = samba_unpack_out("EnumValue", encode(r));
  CHECK(j["out_name"]["name"] == "Last Counter");
  CHECK(j["out_name"]["length"] == 26);
  CHECK(j["out_type"] == 4);
  CHECK(j["out_value"] == json({0x9a, 0x0b, 0, 0}));
  CHECK(j["out_size"] == 4);
  CHECK(j["out_length"] == 4);
}

TEST_CASE("(a) GetKeySecurity response") {
  GetKeySecurityResponse r;
  r.sd.data = crosscheck_pattern(20);
  r.sd.size = 20;
  r.sd.len = 20;
  json j = samba_unpack_out("GetKeySecurity", encode(r));
  CHECK(j["out_sd"]["data"] == bytes_json(crosscheck_pattern(20)));
  CHECK(j["out_sd"]["len"] == 20);
}

TEST_CASE("(a) OpenKey and QueryInfoKey responses") {
  json j = samba_unpack_out("OpenKey", encode(OpenKeyResponse{sample_handle(), windows::kErrorFileNotFound}));
  CHECK(werror(j["result"]) == 2);
  CHECK(j["out_handle"]["uuid"] == guid_text(sample_handle()));
  QueryInfoKeyResponse q;
  q.classname = u16("");
  q.num_subkeys = 3;
  q.max_subkeylen = 22;
  q.num_values = 9;
  q.max_valnamelen = 40;
  q.max_valbufsize = 123456;
  q.secdescsize = 160;
  q.last_changed_time = 0x01d0000000000001ULL;
  j = samba_unpack_out("QueryInfoKey", encode(q));
  CHECK(j["out_classname"]["name"] == "");
  CHECK(j["out_num_subkeys"] == 3);
  CHECK(j["out_max_subkeylen"] == 22);
  CHECK(j["out_num_values"] == 9);
  CHECK(j["out_max_valnamelen"] == 40);
  CHECK(j["out_max_valbufsize"] == 123456);
  CHECK(j["out_secdescsize"] == 160);
  CHECK(j["out_last_changed_time"] == 0x01d0000000000001ULL);
}

TEST_CASE("(a) QueryValue responses: data, MORE_DATA, 1 MiB") {
  QueryValueResponse r;
  r.type = windows::kRegBinary;
  r.data = crosscheck_pattern(37);
  r.data_size = 37;
  r.data_length = 37;
  json j = samba_unpack_out("QueryValue", encode(r));
  CHECK(j["out_type"] == 3);
  CHECK(j["out_data"] == bytes_json(crosscheck_pattern(37)));
  CHECK(j["out_data_size"] == 37);
  CHECK(j["out_data_length"] == 37);

  QueryValueResponse more;
  more.type = windows::kRegBinary;
  more.data = Bytes{};
  more.data_size = 300000;
  more.data_length = 0;
  more.result = windows::kErrorMoreData;
  j = samba_unpack_out("QueryValue", encode(more));
  CHECK(werror(j["result"]) == 234);
  CHECK(j["out_data_size"] == 300000);
  CHECK(j["out_data"] == json::array());

  QueryValueResponse big;
  big.type = windows::kRegBinary;
  big.data = crosscheck_pattern(1 << 20);
  big.data_size = big.data_length = 1 << 20;
  j = samba_unpack_out("QueryValue", encode(big));
  REQUIRE(j["out_data"].size() == size_t(1) << 20);
  CHECK(j["out_data"][(1 << 20) - 1] == (*big.data)[(1 << 20) - 1]);
}

TEST_CASE("(a) QueryMultipleValues and QueryMultipleValues2 responses") {
  std::vector<ValueEntry> values{{StringBuf{u16("Version"), 16, 0}, 4, 0, windows::kRegDword},
                                 {StringBuf{u16("Base Index"), 22, 0}, 4, 8, windows::kRegDword}};
  QueryMultipleValuesResponse r{values, crosscheck_pattern(16), 16, windows::kErrorSuccess};
  json j = samba_unpack_out("QueryMultipleValues", encode(r), {{"in_num_values", 2}});
  REQUIRE(j["out_values_out"].size() == 2);
  CHECK(j["out_values_out"][1]["ve_valuename"]["name"] == "Base Index");
  CHECK(j["out_values_out"][1]["ve_valueptr"] == 8);
  CHECK(j["out_values_out"][1]["ve_valuelen"] == 4);
  CHECK(j["out_values_out"][0]["ve_type"] == 4);
  CHECK(j["out_buffer"] == bytes_json(crosscheck_pattern(16)));
  CHECK(j["out_buffer_size"] == 16);

  QueryMultipleValues2Response r2{values, crosscheck_pattern(16), 16, windows::kErrorSuccess};
  j = samba_unpack_out("QueryMultipleValues2", encode(r2), {{"in_num_values", 2}, {"in_offered", 16}});
  CHECK(j["out_values_out"][0]["ve_valuename"]["name"] == "Version");
  CHECK(j["out_needed"] == 16);
  CHECK(j["out_buffer"] == bytes_json(crosscheck_pattern(16)));
}

// A value name whose UTF-16 size with its NUL is 2 mod 4 ("Last Counter": 26 bytes) is followed
// by the next entry's winreg_ValNameBuf, which holds a pointer and so starts 4-aligned (C706
// 14.3.2): two bytes of padding that a codec aligning only the uint16 leaves out (issue 30).
TEST_CASE("(a) QueryMultipleValues(2) responses align each name buffer after an odd-sized name") {
  std::vector<ValueEntry> values{{StringBuf{u16("Last Counter"), 26, 0}, 4, 0, windows::kRegDword},
                                 {StringBuf{u16("Last Help"), 20, 0}, 4, 4, windows::kRegDword}};
  QueryMultipleValuesResponse r{values, crosscheck_pattern(8), 8, windows::kErrorSuccess};
  const Bytes stub = encode(r);
  // 12 bytes of array header + 2 x 16 bytes of entries, then the first name: its buffer header
  // (8), its string's array header (12) and 26 bytes of text end at offset 90; the next buffer
  // starts at 92.
  REQUIRE(stub.size() > 96);
  CHECK(stub[90] == 0);
  CHECK(stub[91] == 0);
  CHECK(load_le16(&stub[92]) == 20);  // "Last Help" length, 4-aligned
  json j = samba_unpack_out("QueryMultipleValues", stub, {{"in_num_values", 2}});
  REQUIRE(j["out_values_out"].size() == 2);
  CHECK(j["out_values_out"][0]["ve_valuename"]["name"] == "Last Counter");
  CHECK(j["out_values_out"][1]["ve_valuename"]["name"] == "Last Help");
  CHECK(j["out_values_out"][1]["ve_valueptr"] == 4);
  CHECK(j["out_buffer"] == bytes_json(crosscheck_pattern(8)));

  QueryMultipleValues2Response r2{values, crosscheck_pattern(8), 8, windows::kErrorSuccess};
  j = samba_unpack_out("QueryMultipleValues2", encode(r2), {{"in_num_values", 2}, {"in_offered", 8}});
  CHECK(j["out_values_out"][1]["ve_valuename"]["name"] == "Last Help");
  CHECK(j["out_needed"] == 8);

  QueryMultipleValuesResponse back;
  REQUIRE(decode(stub, back).ok());
  CHECK(back.values[1].name->text == u16("Last Help"));
  CHECK(back.buffer == crosscheck_pattern(8));
}

// ---------------- (b) Samba requests -> ours ----------------

TEST_CASE("(b) OpenHive requests from Samba decode") {
  OpenHiveRequest r;
  REQUIRE(decode(samba_pack_in("OpenHKPD", {{"in_system_name", nullptr}, {"in_access_mask", 0x02000000}}), r).ok());
  CHECK_FALSE(r.system_name);
  CHECK(r.access_mask == 0x02000000u);
  REQUIRE(decode(samba_pack_in("OpenHKLM", {{"in_system_name", 92}, {"in_access_mask", 0x20019}}), r).ok());
  REQUIRE(r.system_name);
  CHECK(*r.system_name == 92);
  CHECK(r.access_mask == 0x20019u);
}

TEST_CASE("(b) handle-only requests from Samba decode") {
  json spec = {{"in_handle", handle_spec(sample_handle())}};
  CloseKeyRequest c;
  REQUIRE(decode(samba_pack_in("CloseKey", spec), c).ok());
  CHECK(c.handle == sample_handle());
  GetVersionRequest g;
  REQUIRE(decode(samba_pack_in("GetVersion", spec), g).ok());
  CHECK(g.handle == sample_handle());
}

TEST_CASE("(b) EnumKey and EnumValue requests from Samba decode") {
  EnumKeyRequest k;
  REQUIRE(decode(samba_pack_in("EnumKey", {{"in_handle", handle_spec(sample_handle())},
                                           {"in_enum_index", 3},
                                           {"in_name", strbuf_spec("StringBuf", "", 512)},
                                           {"in_keyclass", strbuf_spec("StringBuf", "", 0)},
                                           {"in_last_changed_time", 0}}),
                 k)
              .ok());
  CHECK(k.enum_index == 3);
  CHECK(k.name.size == 512);
  CHECK(k.name.length == 0);
  CHECK(k.keyclass);
  CHECK(k.last_changed_time == 0u);

  EnumValueRequest v;
  REQUIRE(decode(samba_pack_in("EnumValue", {{"in_handle", handle_spec(sample_handle())},
                                             {"in_enum_index", 7},
                                             {"in_name", strbuf_spec("ValNameBuf", "", 0x200)},
                                             {"in_type", 0},
                                             {"in_value", json::array()},
                                             {"in_size", 0x1000},
                                             {"in_length", 0}}),
                 v)
              .ok());
  CHECK(v.enum_index == 7);
  CHECK(v.name.size == 0x200);
  CHECK(v.name.text == u16(""));
  CHECK(v.type == 0u);
  REQUIRE(v.value);
  CHECK(v.value->empty());
  CHECK(v.size == 0x1000u);
  CHECK(v.length == 0u);
}

TEST_CASE("(b) GetKeySecurity, OpenKey and QueryInfoKey requests from Samba decode") {
  GetKeySecurityRequest s;
  REQUIRE(decode(samba_pack_in(
                     "GetKeySecurity",
                     {{"in_handle", handle_spec(sample_handle())},
                      {"in_sec_info", 4},
                      {"in_sd",
                       {{"__type", "winreg.KeySecurityData"}, {"data", json::array()}, {"size", 4096}, {"len", 0}}}}),
                 s)
              .ok());
  CHECK(s.sec_info == 4);
  CHECK(s.sd.size == 4096);
  CHECK(s.sd.data);

  OpenKeyRequest o;
  REQUIRE(decode(samba_pack_in("OpenKey",
                               {{"in_parent_handle", handle_spec(sample_handle())},
                                {"in_keyname", string_spec("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib")},
                                {"in_options", 0},
                                {"in_access_mask", 0x02000000}}),
                 o)
              .ok());
  CHECK(o.parent_handle == sample_handle());
  CHECK(o.keyname == u16("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"));
  CHECK(o.access_mask == 0x02000000u);

  QueryInfoKeyRequest q;
  REQUIRE(decode(samba_pack_in("QueryInfoKey",
                               {{"in_handle", handle_spec(sample_handle())}, {"in_classname", string_spec("")}}),
                 q)
              .ok());
  CHECK(q.classname == u16(""));
}

TEST_CASE("(b) QueryValue requests from Samba decode (empty buffer and impacket-style filler)") {
  QueryValueRequest r;
  REQUIRE(decode(samba_pack_in("QueryValue", {{"in_handle", handle_spec(sample_handle())},
                                              {"in_value_name", string_spec("Counter 009")},
                                              {"in_type", 0},
                                              {"in_data", json::array()},
                                              {"in_data_size", 65536},
                                              {"in_data_length", 0}}),
                 r)
              .ok());
  CHECK(r.value_name == u16("Counter 009"));
  CHECK(r.type == 0u);
  REQUIRE(r.data);
  CHECK(r.data->empty());
  CHECK(r.data_size == 65536u);
  CHECK(r.data_length == 0u);

  REQUIRE(decode(samba_pack_in("QueryValue", {{"in_handle", handle_spec(sample_handle())},
                                              {"in_value_name", string_spec("Global")},
                                              {"in_type", nullptr},
                                              {"in_data", std::vector<int>(16, 32)},
                                              {"in_data_size", 16},
                                              {"in_data_length", 16}}),
                 r)
              .ok());
  CHECK(r.value_name == u16("Global"));
  CHECK_FALSE(r.type);
  CHECK(r.data == Bytes(16, 32));
}

TEST_CASE("(b) QueryMultipleValues(2) requests from Samba decode") {
  json values = json::array({{{"__type", "winreg.QueryMultipleValue"},
                              {"ve_valuename", strbuf_spec("ValNameBuf", "Version", 16)},
                              {"ve_valuelen", 0},
                              {"ve_valueptr", 0},
                              {"ve_type", 0}},
                             {{"__type", "winreg.QueryMultipleValue"},
                              {"ve_valuename", strbuf_spec("ValNameBuf", "Last Help", 20)},
                              {"ve_valuelen", 0},
                              {"ve_valueptr", 0},
                              {"ve_type", 0}}});
  QueryMultipleValuesRequest r;
  REQUIRE(decode(samba_pack_in("QueryMultipleValues", {{"in_key_handle", handle_spec(sample_handle())},
                                                       {"in_values_in", values},
                                                       {"in_num_values", 2},
                                                       {"in_buffer", std::vector<int>(32, 0)},
                                                       {"in_buffer_size", 32}}),
                 r)
              .ok());
  REQUIRE(r.values.size() == 2);
  CHECK(r.values[1].name->text == u16("Last Help"));
  CHECK(r.buffer_size == 32);
  CHECK(r.buffer->size() == 32);

  QueryMultipleValues2Request r2;
  REQUIRE(decode(samba_pack_in("QueryMultipleValues2", {{"in_key_handle", handle_spec(sample_handle())},
                                                        {"in_values_in", values},
                                                        {"in_num_values", 2},
                                                        {"in_buffer", std::vector<int>(8, 0)},
                                                        {"in_offered", 8}}),
                 r2)
              .ok());
  CHECK(r2.values[0].name->text == u16("Version"));
  CHECK(r2.offered == 8);
}

TEST_CASE("(b) QueryMultipleValues request with \"Last Counter\", \"Last Help\" from Samba decodes") {
  json values = json::array();
  for (const char* name : {"Last Counter", "Last Help"})
    values.push_back({{"__type", "winreg.QueryMultipleValue"},
                      {"ve_valuename", strbuf_spec("ValNameBuf", name, int(2 * (std::string(name).size() + 1)))},
                      {"ve_valuelen", 0},
                      {"ve_valueptr", 0},
                      {"ve_type", 0}});
  QueryMultipleValuesRequest r;
  REQUIRE(decode(samba_pack_in("QueryMultipleValues", {{"in_key_handle", handle_spec(sample_handle())},
                                                       {"in_values_in", values},
                                                       {"in_num_values", 2},
                                                       {"in_buffer", std::vector<int>(16, 0)},
                                                       {"in_buffer_size", 16}}),
                 r)
              .ok());
  REQUIRE(r.values.size() == 2);
  CHECK(r.values[0].name->text == u16("Last Counter"));
  CHECK(r.values[1].name->text == u16("Last Help"));
  CHECK(r.values[1].name->length == 20);  // read from after the padding, not from inside it
  CHECK(r.values[1].name->size == 20);
  CHECK(r.buffer_size == 16);
}

TEST_CASE("(b) write requests from Samba decode: CreateKey with a security buffer, SetValue, DeleteKey") {
  CreateKeyRequest ck;
  REQUIRE(decode(samba_pack_in(
                     "CreateKey",
                     {{"in_handle", handle_spec(sample_handle())},
                      {"in_name", string_spec("winreg_torture_test")},
                      {"in_keyclass", string_spec("")},
                      {"in_options", 0},
                      {"in_access_mask", 0x02000000},
                      {"in_secdesc",
                       {{"__type", "winreg.SecBuf"},
                        {"length", 12},
                        {"sd", {{"__type", "winreg.KeySecurityData"}, {"data", {1, 2, 3}}, {"size", 3}, {"len", 3}}},
                        {"inherit", 1}}},
                      {"in_action_taken", 0}}),
                 ck)
              .ok());
  CHECK(ck.name == u16("winreg_torture_test"));
  CHECK(ck.access_mask == 0x02000000);
  REQUIRE(ck.secdesc.has_value());
  CHECK(ck.secdesc->inherit == 1);
  CHECK(ck.secdesc->sd.data == Bytes{1, 2, 3});
  CHECK(ck.action_taken == 0u);

  SetValueRequest sv;
  REQUIRE(decode(samba_pack_in("SetValue", {{"in_handle", handle_spec(sample_handle())},
                                            {"in_name", string_spec("torture_value_name")},
                                            {"in_type", 4},
                                            {"in_data", {0x78, 0x56, 0x34, 0x12}},
                                            {"in_size", 4}}),
                 sv)
              .ok());
  CHECK(sv.name == u16("torture_value_name"));
  CHECK(sv.data == Bytes{0x78, 0x56, 0x34, 0x12});

  DeleteKeyRequest dk;
  REQUIRE(decode(samba_pack_in("DeleteKey", {{"in_handle", handle_spec(sample_handle())},
                                             {"in_key", string_spec("winreg_torture_test")}}),
                 dk)
              .ok());
  CHECK(dk.name == u16("winreg_torture_test"));
}

TEST_CASE("(a) write answers unpack in Samba") {
  CreateKeyResponse r{PolicyHandle{}, 0u, windows::kErrorAccessDenied};
  json j = samba_unpack_out("CreateKey", encode(r));
  CHECK(werror(j["result"]) == windows::kErrorAccessDenied);
  CHECK(j["out_action_taken"] == 0);
  j = samba_unpack_out("SetValue", encode(StatusResponse{windows::kErrorAccessDenied}));
  CHECK(werror(j["result"]) == windows::kErrorAccessDenied);
}

// ---------------- (c) client direction ----------------

TEST_CASE("(c) our requests unpack in Samba") {
  QueryValueRequest q;
  q.handle = sample_handle();
  q.value_name = u16("238 2 4");
  q.type = 0;
  q.data = Bytes{};
  q.data_size = 400000;
  q.data_length = 0;
  json j = samba_unpack_in("QueryValue", encode(q));
  CHECK(j["in_value_name"]["name"] == "238 2 4");
  CHECK(j["in_value_name"]["name_len"] == 16);
  CHECK(j["in_data_size"] == 400000);
  CHECK(j["in_handle"]["uuid"] == guid_text(sample_handle()));

  j = samba_unpack_in("OpenHKPD", encode(OpenHiveRequest{uint16_t(92), 0x02000000}));
  CHECK(j["in_system_name"] == 92);
  EnumKeyRequest e;
  e.handle = sample_handle();
  e.enum_index = 2;
  e.name = {u16(""), 512, 0};
  e.last_changed_time = 0;
  j = samba_unpack_in("EnumKey", encode(e));
  CHECK(j["in_name"]["size"] == 512);
  CHECK(j["in_enum_index"] == 2);
  j = samba_unpack_in("OpenKey", encode(OpenKeyRequest{sample_handle(), u16("SYSTEM"), 0, 0x20019}));
  CHECK(j["in_keyname"]["name"] == "SYSTEM");
}

TEST_CASE("(c) Samba responses decode with ours") {
  QueryValueResponse r;
  REQUIRE(decode(samba_pack_out("QueryValue", {{"out_type", 7},
                                               {"out_data", std::vector<int>{0x31, 0, 0, 0}},
                                               {"out_data_size", 4},
                                               {"out_data_length", 4},
                                               {"result", 0}}),
                 r)
              .ok());
  CHECK(r.type == 7u);
  CHECK(r.data == Bytes{0x31, 0, 0, 0});
  CHECK(r.data_length == 4u);

  EnumKeyResponse e;
  REQUIRE(decode(samba_pack_out("EnumKey", {{"out_name", strbuf_spec("StringBuf", "Perflib", 512)},
                                            {"out_keyclass", nullptr},
                                            {"out_last_changed_time", 77},
                                            {"result", 0}}),
                 e)
              .ok());
  CHECK(e.name.text == u16("Perflib"));
  CHECK(e.last_changed_time == 77u);
  CHECK_FALSE(e.keyclass);

  OpenHiveResponse h;
  REQUIRE(decode(samba_pack_out("OpenHKPD", {{"out_handle", handle_spec(sample_handle())}, {"result", 5}}), h).ok());
  CHECK(h.handle == sample_handle());
  CHECK(h.result == 5u);
}
