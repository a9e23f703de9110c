#include "winreg/service.h"

#include <algorithm>
#include <random>

#include "core/utf16.h"
#include "windows/constants.h"

namespace perfsim::winreg {
namespace {

using replayer::PerfKey;
using replayer::RegKey;
using replayer::RegValue;

constexpr uint32_t kRegVersion = 5;  // what Windows (and Samba) answer to GetVersion

template <class Req>
bool decode_ok(ByteView stub, Req& r) {
  return decode(stub, r).ok();
}

// Consumes r: its data buffers move into the stub's shared pieces instead of being copied.
template <class Resp>
uint32_t reply(Resp& r, ByteChain& out, CallNote& note) {
  note.status = r.result;
  out = encode_shared(std::make_shared<const Resp>(std::move(r)));
  return 0;
}

std::shared_ptr<const std::string> hive_path(bool perf, PerfKey k) {
  static const auto hklm = std::make_shared<const std::string>("HKLM");
  static const auto data = std::make_shared<const std::string>("HKEY_PERFORMANCE_DATA");
  static const auto text = std::make_shared<const std::string>("HKEY_PERFORMANCE_TEXT");
  static const auto nls = std::make_shared<const std::string>("HKEY_PERFORMANCE_NLSTEXT");
  if (!perf) return hklm;
  return k == PerfKey::kData ? data : k == PerfKey::kText ? text : nls;
}

StringBuf name_buf(const std::string& utf8, uint16_t capacity) {
  StringBuf b;
  b.text = utf8_to_utf16(utf8);
  b.size = capacity;
  b.length = uint16_t((b.text->size() + 1) * 2);
  return b;
}

}  // namespace

Service::Service(std::shared_ptr<replayer::SimulatedHost> host) : host_(std::move(host)) {
  std::random_device rd;
  next_handle_ = (uint64_t(rd()) << 32) | rd();
}

PolicyHandle Service::add(Entry e) {
  PolicyHandle h;
  const uint64_t n = next_handle_++;
  for (int i = 0; i < 8; ++i) h.uuid[i] = uint8_t(n >> (8 * i));
  h.uuid[8] = 0x50;  // 'P': makes our handles recognisable in a trace
  handles_[h.uuid] = e;
  return h;
}

const Service::Entry* Service::find(const PolicyHandle& h) const {
  auto it = handles_.find(h.uuid);
  return it == handles_.end() ? nullptr : &it->second;
}

uint32_t Service::note(const replayer::ValueAnswer& a) {
  note_.delay_ms = a.delay_ms;
  note_.applied = a.applied;
  effects_.delay_ms += a.delay_ms;
  effects_.drop_connection = effects_.drop_connection || a.drop_connection;
  return a.rpc_fault;
}

uint32_t Service::call(uint16_t opnum, ByteView stub, ByteChain& out) {
  if (observing_) note_ = CallNote{};
  switch (opnum) {
    case kOpenHKLM:
      return open_hive(stub, out, Entry{&host_->registry().root(), false, PerfKey::kData, nullptr});
    case kOpenHKPD:
      return open_hive(stub, out, Entry{nullptr, true, PerfKey::kData, nullptr});
    case kOpenHKPT:
      return open_hive(stub, out, Entry{nullptr, true, PerfKey::kText, nullptr});
    case kOpenHKPN:
      return open_hive(stub, out, Entry{nullptr, true, PerfKey::kNlsText, nullptr});
    case kCloseKey:
      return close_key(stub, out);
    case kOpenKey:
      return open_key(stub, out);
    case kEnumKey:
      return enum_key(stub, out);
    case kEnumValue:
      return enum_value(stub, out);
    case kQueryInfoKey:
      return query_info_key(stub, out);
    case kQueryValue:
      return query_value(stub, out);
    case kGetKeySecurity:
      return get_key_security(stub, out);
    case kGetVersion:
      return get_version(stub, out);
    case kQueryMultipleValues:
      return query_multiple_values(stub, out);
    case kQueryMultipleValues2:
      return query_multiple_values2(stub, out);
    default:
      return kFaultOpRangeError;
  }
}

uint32_t Service::call(uint16_t opnum, ByteView stub, Bytes& out) {
  ByteChain chain;
  const uint32_t fault = call(opnum, stub, chain);
  out = chain.flatten();
  return fault;
}

uint32_t Service::open_hive(ByteView stub, ByteChain& out, Entry e) {
  OpenHiveRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  OpenHiveResponse resp;
  if (e.perf && host_->refuses_open(e.perf_key)) {  // access-denied quirk: not a Performance Monitor User
    resp.result = windows::kErrorAccessDenied;
    return reply(resp, out, note_);
  }
  e.path = hive_path(e.perf, e.perf_key);
  note_key(&e);
  resp.handle = add(e);  // samDesired is ignored, as MS-RRP requires for the perf keys
  return reply(resp, out, note_);
}

uint32_t Service::close_key(ByteView stub, ByteChain& out) {
  CloseKeyRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  CloseKeyResponse resp;
  note_key(find(req.handle));
  if (handles_.erase(req.handle.uuid) == 0) {
    resp.handle = req.handle;
    resp.result = windows::kErrorInvalidHandle;
  }
  return reply(resp, out, note_);
}

uint32_t Service::open_key(ByteView stub, ByteChain& out) {
  OpenKeyRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  OpenKeyResponse resp;
  const Entry* parent = find(req.parent_handle);
  const std::string sub = utf16_to_utf8(req.keyname.value_or(u""));
  note_key(parent);
  if (observing_) note_.value_name = sub;
  if (!parent)
    resp.result = windows::kErrorInvalidHandle;
  else if (parent->perf)
    resp.result = windows::kErrorAccessDenied;  // only 4 methods are valid on perf keys
  else if (const RegKey* k = host_->registry().open(*parent->key, sub))
    resp.handle = add(Entry{k, false, PerfKey::kData,
                            std::make_shared<const std::string>(*parent->path + (sub.empty() ? "" : "\\") + sub)});
  else
    resp.result = windows::kErrorFileNotFound;
  return reply(resp, out, note_);
}

uint32_t Service::enum_key(ByteView stub, ByteChain& out) {
  EnumKeyRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  EnumKeyResponse resp;
  resp.name = req.name;
  resp.keyclass = req.keyclass;
  resp.last_changed_time = req.last_changed_time;
  const Entry* e = find(req.handle);
  note_key(e);
  if (!e)
    resp.result = windows::kErrorInvalidHandle;
  else if (e->perf)
    resp.result = windows::kErrorAccessDenied;
  else if (req.enum_index >= e->key->subkeys.size())
    resp.result = windows::kErrorNoMoreItems;
  else {
    const RegKey& sub = *e->key->subkeys[req.enum_index];
    resp.name = name_buf(sub.name, req.name.size);
    if (resp.name.length > req.name.size) {
      resp.name.text.reset();
      resp.result = windows::kErrorMoreData;
    }
    if (resp.keyclass) resp.keyclass = name_buf("", resp.keyclass->size);
    if (resp.last_changed_time) resp.last_changed_time = uint64_t(sub.last_write_100ns);
  }
  return reply(resp, out, note_);
}

uint32_t Service::enum_value(ByteView stub, ByteChain& out) {
  EnumValueRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  EnumValueResponse resp;
  resp.name = req.name;
  resp.type = req.type;
  if (req.value) resp.value = Bytes();
  resp.size = req.size;
  // length_is of the (empty) value array: echoing a caller's non-zero in-length (impacket sends
  // its whole buffer) would make the error answers below undecodable for strict NDR (Samba:
  // NT_STATUS_ARRAY_BOUNDS_EXCEEDED instead of the WERROR).
  if (req.length) resp.length = 0;
  const Entry* e = find(req.handle);
  note_key(e);
  note_.has_buffer = req.value.has_value();
  note_.offered = req.size.value_or(0);
  if (!e) {
    resp.result = windows::kErrorInvalidHandle;
    return reply(resp, out, note_);
  }
  std::string name;
  uint32_t type = 0, status = windows::kErrorSuccess;
  SharedBytes data;
  uint32_t needed = 0;
  if (e->perf) {
    std::vector<std::string> names =
        e->perf_key == PerfKey::kData ? host_->perf_value_names() : std::vector<std::string>{"Counter", "Help"};
    if (req.enum_index >= names.size()) {
      resp.result = windows::kErrorNoMoreItems;
      return reply(resp, out, note_);
    }
    name = names[req.enum_index];
    replayer::ValueAnswer a = host_->query(e->perf_key, name, {req.value.has_value(), req.size.value_or(0)});
    if (uint32_t fault = note(a)) return fault;
    type = a.type;
    status = a.status;
    needed = a.size;
    data = std::move(a.data);
  } else {
    if (req.enum_index >= e->key->values.size()) {
      resp.result = windows::kErrorNoMoreItems;
      return reply(resp, out, note_);
    }
    const RegValue& v = e->key->values[req.enum_index];
    name = v.name;
    type = v.type;
    needed = uint32_t(v.data.size());
    if (req.value && req.size.value_or(0) < needed)
      status = windows::kErrorMoreData;
    else if (req.value)
      data = v.data;
  }
  if (observing_) note_.value_name = name;
  note_.type = type;
  note_.size = needed;
  note_.bytes = uint32_t(data.size());
  resp.name = name_buf(name, req.name.size);
  if (resp.name.length > req.name.size) {
    resp.name.text.reset();
    resp.result = windows::kErrorMoreData;
    return reply(resp, out, note_);
  }
  if (resp.type) resp.type = type;
  if (resp.size) resp.size = needed;
  if (resp.length) resp.length = status == windows::kErrorSuccess && req.value ? needed : 0;
  if (resp.value) resp.value = std::move(data);
  resp.result = status;
  return reply(resp, out, note_);
}

uint32_t Service::query_info_key(ByteView stub, ByteChain& out) {
  QueryInfoKeyRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  QueryInfoKeyResponse resp;
  resp.classname = std::u16string();
  const Entry* e = find(req.handle);
  note_key(e);
  if (!e) {
    resp.result = windows::kErrorInvalidHandle;
    return reply(resp, out, note_);
  }
  // MS-RRP 3.1.5.16 allows "the size of the key's subkey with the longest name, or a greater size"
  // for lpcbMaxSubKeyLen and lpcbMaxValueNameLen; Windows answers the registry's byte counts (two
  // per UTF-16 unit), and clients size their EnumKey/EnumValue buffers from them: Samba's `net rpc
  // registry enumerate` offers max + 2 bytes and stops at ERROR_MORE_DATA when given the
  // character count instead.
  auto bytes = [](const std::string& name) { return 2 * uint32_t(utf8_to_utf16(name).size()); };
  if (e->perf) {
    const std::vector<std::string> names = host_->perf_value_names();
    resp.num_values = uint32_t(names.size());
    for (const auto& n : names) resp.max_valnamelen = std::max(resp.max_valnamelen, bytes(n));
    resp.max_valbufsize = uint32_t(host_->content(e->perf_key, "Global", host_->current_tick()).data.size());
  } else {
    const RegKey& k = *e->key;
    resp.num_subkeys = uint32_t(k.subkeys.size());
    for (const auto& s : k.subkeys) resp.max_subkeylen = std::max(resp.max_subkeylen, bytes(s->name));
    resp.num_values = uint32_t(k.values.size());
    for (const auto& v : k.values) {
      resp.max_valnamelen = std::max(resp.max_valnamelen, bytes(v.name));
      resp.max_valbufsize = std::max<uint32_t>(resp.max_valbufsize, uint32_t(v.data.size()));
    }
    resp.last_changed_time = uint64_t(k.last_write_100ns);
  }
  resp.secdescsize = uint32_t(default_key_security(0x7).size());
  return reply(resp, out, note_);
}

uint32_t Service::query_value(ByteView stub, ByteChain& out) {
  QueryValueRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  QueryValueResponse resp;
  const Entry* e = find(req.handle);
  const std::string name = utf16_to_utf8(req.value_name.value_or(u""));
  replayer::BufferOffer offer{req.data.has_value(), req.data_size.value_or(0)};
  note_key(e);
  if (observing_) note_.value_name = name;
  note_.has_buffer = offer.has_buffer;
  note_.offered = offer.size;
  replayer::ValueAnswer a;
  if (!e) {
    a.status = windows::kErrorInvalidHandle;
  } else if (e->perf) {
    a = host_->query(e->perf_key, name, offer);
    if (uint32_t fault = note(a)) return fault;
  } else if (const RegValue* v = e->key->value(name)) {
    a = replayer::rrp_exact(replayer::ValueContent{windows::kErrorSuccess, v->type, v->data}, offer);
  } else {
    a.status = windows::kErrorFileNotFound;
  }
  // Out pointers mirror the in pointers: a NULL in-pointer stays NULL.
  if (req.type) resp.type = a.status == windows::kErrorSuccess || a.status == windows::kErrorMoreData ? a.type : 0;
  if (req.data) resp.data = std::move(a.data);
  if (req.data_size)
    resp.data_size = a.status == windows::kErrorSuccess || a.status == windows::kErrorMoreData ? a.size : 0;
  if (req.data_length) resp.data_length = resp.data ? uint32_t(resp.data->size()) : 0;
  const bool answered = a.status == windows::kErrorSuccess || a.status == windows::kErrorMoreData;
  note_.type = answered ? a.type : 0;
  note_.size = answered ? a.size : 0;
  note_.bytes = resp.data ? uint32_t(resp.data->size()) : 0;
  resp.result = a.status;
  return reply(resp, out, note_);
}

uint32_t Service::get_key_security(ByteView stub, ByteChain& out) {
  GetKeySecurityRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  GetKeySecurityResponse resp;
  resp.sd = req.sd;
  note_key(find(req.handle));
  if (!find(req.handle)) {
    resp.result = windows::kErrorInvalidHandle;
    return reply(resp, out, note_);
  }
  Bytes sd = default_key_security(req.sec_info);
  if (req.sd.size < sd.size()) {
    resp.sd.size = uint32_t(sd.size());
    resp.sd.len = 0;
    resp.sd.data = Bytes();
    resp.result = windows::kErrorInsufficientBuffer;
  } else {
    resp.sd.len = uint32_t(sd.size());
    resp.sd.data = std::move(sd);
  }
  return reply(resp, out, note_);
}

uint32_t Service::get_version(ByteView stub, ByteChain& out) {
  GetVersionRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  GetVersionResponse resp;
  note_key(find(req.handle));
  if (!find(req.handle))
    resp.result = windows::kErrorInvalidHandle;
  else
    resp.version = kRegVersion;
  return reply(resp, out, note_);
}

namespace {

// Fills `values` and the packed buffer for QueryMultipleValues(2); returns the needed buffer size.
uint32_t pack_values(const RegKey& key, std::vector<ValueEntry>& values, Bytes& buffer, uint32_t& status) {
  status = windows::kErrorSuccess;
  buffer.clear();
  for (ValueEntry& v : values) {
    const std::string name = v.name && v.name->text ? utf16_to_utf8(*v.name->text) : std::string();
    const RegValue* rv = key.value(name);
    if (!rv) {
      status = windows::kErrorFileNotFound;
      return 0;
    }
    v.valueptr = uint32_t(buffer.size());
    v.valuelen = uint32_t(rv->data.size());
    v.type = rv->type;
    put_bytes(buffer, rv->data);
  }
  return uint32_t(buffer.size());
}

}  // namespace

// Shared by QueryMultipleValues and QueryMultipleValues2: the status and the packed data of `values`.
uint32_t Service::multiple_values(const PolicyHandle& h, std::vector<ValueEntry>& values, Bytes& packed,
                                  uint32_t& needed) const {
  const Entry* e = find(h);
  if (!e) return windows::kErrorInvalidHandle;
  if (e->perf) return windows::kErrorAccessDenied;
  uint32_t status = windows::kErrorSuccess;
  needed = pack_values(*e->key, values, packed, status);
  return status;
}

uint32_t Service::query_multiple_values(ByteView stub, ByteChain& out) {
  QueryMultipleValuesRequest req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  QueryMultipleValuesResponse resp;
  resp.values = req.values;
  resp.buffer = req.buffer;
  resp.buffer_size = req.buffer_size;
  Bytes packed;
  uint32_t needed = 0;
  resp.result = multiple_values(req.key_handle, resp.values, packed, needed);
  if (resp.result == windows::kErrorSuccess && needed > req.buffer_size) {
    // The array is sized and measured by buffer_size, now the needed size: send no array at all.
    resp.result = windows::kErrorMoreData;
    resp.buffer.reset();
    resp.buffer_size = needed;
  } else if (resp.result == windows::kErrorSuccess) {
    resp.buffer = std::move(packed);
    resp.buffer_size = needed;
  }
  return reply(resp, out, note_);
}

uint32_t Service::query_multiple_values2(ByteView stub, ByteChain& out) {
  QueryMultipleValues2Request req;
  if (!decode_ok(stub, req)) return kFaultBadStubData;
  QueryMultipleValues2Response resp;
  resp.values = req.values;
  resp.buffer = req.buffer;
  if (req.offered > kMaxMultipleValuesOffer) {
    resp.result = windows::kErrorInvalidParameter;
    resp.buffer.reset();
    return reply(resp, out, note_);
  }
  Bytes packed;
  resp.result = multiple_values(req.key_handle, resp.values, packed, resp.needed);
  if (resp.result == windows::kErrorSuccess && resp.needed > req.offered)
    resp.result = windows::kErrorMoreData;
  else if (resp.result == windows::kErrorSuccess && req.buffer) {
    packed.resize(req.offered);  // the IDL sizes the array by the caller's `offered`
    resp.buffer = std::move(packed);
  }
  return reply(resp, out, note_);
}

Bytes default_key_security(uint32_t sec_info) {
  // SIDs: Administrators S-1-5-32-544, SYSTEM S-1-5-18, Users S-1-5-32-545.
  auto sid = [](std::initializer_list<uint32_t> subs) {
    Bytes b = {1, uint8_t(subs.size()), 0, 0, 0, 0, 0, 5};
    for (uint32_t s : subs) put_le32(b, s);
    return b;
  };
  const Bytes admins = sid({32, 544}), system = sid({18}), users = sid({32, 545});
  auto ace = [](uint32_t mask, const Bytes& s) {
    Bytes a = {0 /*ACCESS_ALLOWED*/, 0 /*flags*/};
    put_le16(a, uint16_t(8 + s.size()));
    put_le32(a, mask);
    put_bytes(a, s);
    return a;
  };
  Bytes dacl_body;
  put_bytes(dacl_body, ace(0x000F003F, admins));  // KEY_ALL_ACCESS
  put_bytes(dacl_body, ace(0x000F003F, system));
  put_bytes(dacl_body, ace(0x00020019, users));  // KEY_READ
  Bytes dacl = {2 /*ACL_REVISION*/, 0};
  put_le16(dacl, uint16_t(8 + dacl_body.size()));
  put_le16(dacl, 3);
  put_le16(dacl, 0);
  put_bytes(dacl, dacl_body);

  const bool owner = sec_info & 1, group = sec_info & 2, with_dacl = sec_info & 4;
  Bytes sd = {1 /*revision*/, 0};
  uint16_t control = 0x8000;         // SE_SELF_RELATIVE
  if (with_dacl) control |= 0x0004;  // SE_DACL_PRESENT
  put_le16(sd, control);
  uint32_t off = 20;
  const uint32_t owner_off = owner ? off : 0;
  off += owner ? uint32_t(admins.size()) : 0;
  const uint32_t group_off = group ? off : 0;
  off += group ? uint32_t(system.size()) : 0;
  const uint32_t dacl_off = with_dacl ? off : 0;
  put_le32(sd, owner_off);
  put_le32(sd, group_off);
  put_le32(sd, 0);  // no SACL
  put_le32(sd, dacl_off);
  if (owner) put_bytes(sd, admins);
  if (group) put_bytes(sd, system);
  if (with_dacl) put_bytes(sd, dacl);
  return sd;
}

}  // namespace perfsim::winreg
