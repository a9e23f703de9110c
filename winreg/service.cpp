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

std::shared_ptr<const std::string> registry_hive_path(replayer::Hive h) {
  static const auto hklm = std::make_shared<const std::string>("HKLM");
  static const auto hku = std::make_shared<const std::string>("HKU");
  static const auto hkcr = std::make_shared<const std::string>("HKCR");
  static const auto hkcu = std::make_shared<const std::string>("HKCU");
  switch (h) {
    case replayer::Hive::kUsers:
      return hku;
    case replayer::Hive::kClassesRoot:
      return hkcr;
    case replayer::Hive::kCurrentUser:
      return hkcu;
    case replayer::Hive::kLocalMachine:
      break;
  }
  return hklm;
}

std::shared_ptr<const std::string> perf_hive_path(PerfKey k) {
  static const auto data = std::make_shared<const std::string>("HKEY_PERFORMANCE_DATA");
  static const auto text = std::make_shared<const std::string>("HKEY_PERFORMANCE_TEXT");
  static const auto nls = std::make_shared<const std::string>("HKEY_PERFORMANCE_NLSTEXT");
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

Service::Service(std::shared_ptr<replayer::SimulatedHost> host, Access access)
    : host_(std::move(host)), access_(access), boots_(host_->boot_state().boots) {
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
  note_.closed = note_.closed || a.drop_connection;
  return a.rpc_fault;
}

const rpc::Interface& winreg_interface() {
  using rpc::operation;
  // MS-RRP 3.1.5: the opnums a collector and the registry tools use; the rest fault
  // nca_op_rng_error, as for an opnum the server does not know.
  static constexpr rpc::Operation kOperations[] = {
      operation<&Service::open_hkcr>(kOpenHKCR, "OpenHKCR"),
      operation<&Service::open_hkcu>(kOpenHKCU, "OpenHKCU"),
      operation<&Service::open_hklm>(kOpenHKLM, "OpenHKLM"),
      operation<&Service::open_hkpd>(kOpenHKPD, "OpenHKPD"),
      operation<&Service::open_hku>(kOpenHKU, "OpenHKU"),
      operation<&Service::close_key>(kCloseKey, "BaseRegCloseKey"),
      operation<&Service::create_key>(kCreateKey, "BaseRegCreateKey"),
      operation<&Service::delete_key>(kDeleteKey, "BaseRegDeleteKey"),
      operation<&Service::delete_value>(kDeleteValue, "BaseRegDeleteValue"),
      operation<&Service::enum_key>(kEnumKey, "BaseRegEnumKey"),
      operation<&Service::enum_value>(kEnumValue, "BaseRegEnumValue"),
      operation<&Service::get_key_security>(kGetKeySecurity, "BaseRegGetKeySecurity"),
      operation<&Service::open_key>(kOpenKey, "BaseRegOpenKey"),
      operation<&Service::query_info_key>(kQueryInfoKey, "BaseRegQueryInfoKey"),
      operation<&Service::query_value>(kQueryValue, "BaseRegQueryValue"),
      operation<&Service::set_key_security>(kSetKeySecurity, "BaseRegSetKeySecurity"),
      operation<&Service::set_value>(kSetValue, "BaseRegSetValue"),
      operation<&Service::get_version>(kGetVersion, "BaseRegGetVersion"),
      operation<&Service::query_multiple_values>(kQueryMultipleValues, "BaseRegQueryMultipleValues"),
      operation<&Service::open_hkpt>(kOpenHKPT, "OpenHKPT"),
      operation<&Service::open_hkpn>(kOpenHKPN, "OpenHKPN"),
      operation<&Service::query_multiple_values2>(kQueryMultipleValues2, "BaseRegQueryMultipleValues2"),
  };
  static const rpc::Interface kWinreg{"winreg", rpc::winreg_syntax(), kOperations};
  return kWinreg;
}

// A host that rebooted (replayer/events.h) closed the connections of its earlier boot, and
// refuses calls while its Remote Registry is down: the call is closed without an answer, as a TCP
// connection to a host going down is reset. Asked before every call, it also hands an observer
// the events the timeline passed since the last call (each once, host-wide), so the journal gets
// an entry of their own before the calls they shaped.
bool Service::gone() {
  if (!host_->events()) return false;
  if (observing())
    for (replayer::SimulatedHost::Happened& h : host_->take_happened())
      note_.happened.push_back({replayer::to_json(h.event).dump(), h.wall_us});
  const replayer::SimulatedHost::BootState b = host_->boot_state();
  if (!b.down && b.boots == boots_) return false;
  note_.applied |= 1u << replayer::event_row(replayer::EventKind::kReboot).applied_bit;
  note_.closed = true;
  effects_.drop_connection = true;
  return true;
}

uint32_t Service::call(uint16_t opnum, ByteView stub, ByteChain& out) {
  return winreg_interface().call(*this, opnum, stub, out);
}

uint32_t Service::call(uint16_t opnum, ByteView stub, Bytes& out) {
  ByteChain chain;
  const uint32_t fault = call(opnum, stub, chain);
  out = chain.flatten();
  return fault;
}

// MS-RRP 3.1.5.1 OpenClassesRoot, 3.1.5.2 OpenCurrentUser, 3.1.5.3 OpenLocalMachine, 3.1.5.5
// OpenUsers: a handle to the hive's root key (replayer/registry.h says what each holds). Opening
// is allowed to any account, as Windows lets Users read these hives; writes are refused elsewhere.
uint32_t Service::open_hkcr(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_registry_hive(resp, replayer::Hive::kClassesRoot);
}

uint32_t Service::open_hkcu(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_registry_hive(resp, replayer::Hive::kCurrentUser);
}

uint32_t Service::open_hklm(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_registry_hive(resp, replayer::Hive::kLocalMachine);
}

uint32_t Service::open_hku(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_registry_hive(resp, replayer::Hive::kUsers);
}

uint32_t Service::open_registry_hive(OpenHiveResponse& resp, replayer::Hive h) {
  return open_hive(resp, Entry{&host_->registry().hive(h), false, PerfKey::kData, registry_hive_path(h)});
}

// MS-RRP 3.1.5.3 (OpenHKPD), 3.1.5.21 (OpenHKPT), 3.1.5.22 (OpenHKPN) leave access checks to the
// server; Windows answers ERROR_ACCESS_DENIED with a zero handle to an account outside
// Administrators and Performance Monitor Users, for each of the three (access_ says which account
// it is: only the transport knows).
uint32_t Service::open_hkpd(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_hive(resp, Entry{nullptr, true, PerfKey::kData, nullptr});
}

uint32_t Service::open_hkpt(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_hive(resp, Entry{nullptr, true, PerfKey::kText, nullptr});
}

uint32_t Service::open_hkpn(const OpenHiveRequest&, OpenHiveResponse& resp) {
  return open_hive(resp, Entry{nullptr, true, PerfKey::kNlsText, nullptr});
}

// Every open goes through here, so no hive or perf key escapes the account's access.
uint32_t Service::open_hive(OpenHiveResponse& resp, Entry e) {
  const bool refused = access_ == Access::kNone || (e.perf && access_ != Access::kPerfData) ||
                       (e.perf && host_->refuses_open(e.perf_key));  // access-denied quirk
  if (refused) {
    resp.result = windows::kErrorAccessDenied;  // nothing but the status is noted
    return 0;
  }
  if (e.perf) e.path = perf_hive_path(e.perf_key);
  note_key(&e);
  resp.handle = add(e);  // samDesired is ignored, as MS-RRP requires for the perf keys
  return 0;
}

uint32_t Service::close_key(const CloseKeyRequest& req, CloseKeyResponse& resp) {
  note_key(find(req.handle));
  if (handles_.erase(req.handle.uuid) == 0) {
    resp.handle = req.handle;
    resp.result = windows::kErrorInvalidHandle;
  }
  return 0;
}

uint32_t Service::open_key(const OpenKeyRequest& req, OpenKeyResponse& resp) {
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
  return 0;
}

uint32_t Service::enum_key(const EnumKeyRequest& req, EnumKeyResponse& resp) {
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
  return 0;
}

uint32_t Service::enum_value(const EnumValueRequest& req, EnumValueResponse& resp) {
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
    return 0;
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
      return 0;
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
      return 0;
    }
    const RegValue& v = e->key->values[req.enum_index];
    name = v.name;
    type = v.type;
    const SharedBytes held = host_->value_data(v);
    needed = uint32_t(held.size());
    if (req.value && req.size.value_or(0) < needed)
      status = windows::kErrorMoreData;
    else if (req.value)
      data = held;
  }
  if (observing_) note_.value_name = name;
  note_.type = type;
  note_.size = needed;
  note_.bytes = uint32_t(data.size());
  resp.name = name_buf(name, req.name.size);
  if (resp.name.length > req.name.size) {
    resp.name.text.reset();
    resp.result = windows::kErrorMoreData;
    return 0;
  }
  if (resp.type) resp.type = type;
  if (resp.size) resp.size = needed;
  if (resp.length) resp.length = status == windows::kErrorSuccess && req.value ? needed : 0;
  if (resp.value) resp.value = std::move(data);
  resp.result = status;
  return 0;
}

uint32_t Service::query_info_key(const QueryInfoKeyRequest& req, QueryInfoKeyResponse& resp) {
  resp.classname = std::u16string();
  const Entry* e = find(req.handle);
  note_key(e);
  if (!e) {
    resp.result = windows::kErrorInvalidHandle;
    return 0;
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
      resp.max_valbufsize = std::max<uint32_t>(resp.max_valbufsize, uint32_t(host_->value_data(v).size()));
    }
    resp.last_changed_time = uint64_t(k.last_write_100ns);
  }
  resp.secdescsize = uint32_t(default_key_security(0x7).size());
  return 0;
}

namespace {

// Checked after the handle and before the value is looked for (Samba's _winreg_QueryValue has the
// same order; smbtorture's QueryValue_full expects it of Windows): MS-RRP 3.1.5.17, "If the
// client sets lpValueName to NULL, the server MUST fail this method and return
// ERROR_INVALID_PARAMETER"; a call without lpcbData or lpcbLen cannot be answered either
// (smbtorture expects ERROR_INVALID_PARAMETER for each missing one, whether or not the value
// exists). lpType stays optional, as RegQueryValueEx's is.
bool query_value_params_ok(const QueryValueRequest& req) {
  return req.value_name.has_value() && req.data_size.has_value() && req.data_length.has_value();
}

}  // namespace

uint32_t Service::query_value(const QueryValueRequest& req, QueryValueResponse& resp) {
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
  } else if (!query_value_params_ok(req)) {
    a.status = windows::kErrorInvalidParameter;
  } else if (e->perf) {
    a = host_->query(e->perf_key, name, offer);
    if (uint32_t fault = note(a)) return fault;
  } else if (const RegValue* v = e->key->value(name)) {
    a = replayer::rrp_exact(replayer::ValueContent{windows::kErrorSuccess, v->type, host_->value_data(*v)}, offer);
  } else {
    a.status = windows::kErrorFileNotFound;
  }
  // Out pointers mirror the in pointers: a NULL in-pointer stays NULL.
  if (req.type) resp.type = a.status == windows::kErrorSuccess || a.status == windows::kErrorMoreData ? a.type : 0;
  if (observing_ && e && e->perf && a.status == windows::kErrorSuccess) note_.answer = a.data;
  if (req.data) resp.data = std::move(a.data);
  if (req.data_size)
    resp.data_size = a.status == windows::kErrorSuccess || a.status == windows::kErrorMoreData ? a.size : 0;
  if (req.data_length) resp.data_length = resp.data ? uint32_t(resp.data->size()) : 0;
  const bool answered = a.status == windows::kErrorSuccess || a.status == windows::kErrorMoreData;
  note_.type = answered ? a.type : 0;
  note_.size = answered ? a.size : 0;
  note_.bytes = resp.data ? uint32_t(resp.data->size()) : 0;
  resp.result = a.status;
  return 0;
}

uint32_t Service::get_key_security(const GetKeySecurityRequest& req, GetKeySecurityResponse& resp) {
  resp.sd = req.sd;
  note_key(find(req.handle));
  if (!find(req.handle)) {
    resp.result = windows::kErrorInvalidHandle;
    return 0;
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
  return 0;
}

// The writes answer what a read-only monitoring account gets from Windows: its handles carry
// KEY_READ at most (GetKeySecurity's DACL grants Users KEY_READ), and MS-RRP 3.1.5.7/.8/.9/.21/.22
// leave the access check to the server's security descriptor, which refuses KEY_CREATE_SUB_KEY,
// DELETE, KEY_SET_VALUE and WRITE_DAC with ERROR_ACCESS_DENIED. A stale handle is still
// ERROR_INVALID_HANDLE first.
uint32_t Service::refuse_write(const PolicyHandle& h) {
  const Entry* e = find(h);
  note_key(e);
  return e ? windows::kErrorAccessDenied : windows::kErrorInvalidHandle;
}

uint32_t Service::create_key(const CreateKeyRequest& req, CreateKeyResponse& resp) {
  if (observing_) note_.value_name = utf16_to_utf8(req.name.value_or(u""));
  resp.action_taken = req.action_taken;  // out mirrors in; nothing was created or opened
  resp.result = refuse_write(req.handle);
  return 0;
}

uint32_t Service::delete_key(const DeleteKeyRequest& req, StatusResponse& resp) {
  if (observing_) note_.value_name = utf16_to_utf8(req.name.value_or(u""));
  resp.result = refuse_write(req.handle);
  return 0;
}

uint32_t Service::delete_value(const DeleteKeyRequest& req, StatusResponse& resp) { return delete_key(req, resp); }

uint32_t Service::set_key_security(const SetKeySecurityRequest& req, StatusResponse& resp) {
  resp.result = refuse_write(req.handle);
  return 0;
}

uint32_t Service::set_value(const SetValueRequest& req, StatusResponse& resp) {
  if (observing_) note_.value_name = utf16_to_utf8(req.name.value_or(u""));
  resp.result = refuse_write(req.handle);
  return 0;
}

uint32_t Service::get_version(const GetVersionRequest& req, GetVersionResponse& resp) {
  note_key(find(req.handle));
  if (!find(req.handle))
    resp.result = windows::kErrorInvalidHandle;
  else
    resp.version = kRegVersion;
  return 0;
}

namespace {

// Looks up every value `values` names and sums their sizes, without copying any data: `data` gets
// a view of each (a name repeated N times is N views of one buffer, not N copies). Returns the
// buffer size the answer needs (64 bits: N repeats of a large value overflow 32).
uint64_t measure_values(const replayer::SimulatedHost& host, const RegKey& key, std::vector<ValueEntry>& values,
                        std::vector<SharedBytes>& data, uint32_t& status) {
  status = windows::kErrorSuccess;
  data.clear();
  data.reserve(values.size());
  uint64_t needed = 0;
  for (ValueEntry& v : values) {
    const std::string name = v.name && v.name->text ? utf16_to_utf8(*v.name->text) : std::string();
    const RegValue* rv = key.value(name);
    if (!rv) {
      status = windows::kErrorFileNotFound;
      return 0;
    }
    data.push_back(host.value_data(*rv));
    v.valueptr = uint32_t(needed);  // only sent when the whole answer fits, so under 4 GiB
    v.valuelen = uint32_t(data.back().size());
    v.type = rv->type;
    needed += data.back().size();
  }
  return needed;
}

// The answer's buffer: `data` packed back to back, then zeros up to `size` (>= their sum).
Bytes pack_values(const std::vector<SharedBytes>& data, size_t size) {
  Bytes buffer;
  buffer.reserve(size);
  for (const SharedBytes& d : data) put_bytes(buffer, d);
  buffer.resize(size);
  return buffer;
}

}  // namespace

// Shared by QueryMultipleValues and QueryMultipleValues2: the status, a view of each value's data
// and the buffer size they need. Nothing is packed here: the caller packs only what it will send,
// so a request naming a large value many times costs the views, not the bytes.
uint32_t Service::multiple_values(const PolicyHandle& h, std::vector<ValueEntry>& values,
                                  std::vector<SharedBytes>& data, uint64_t& needed) const {
  const Entry* e = find(h);
  if (!e) return windows::kErrorInvalidHandle;
  if (e->perf) return windows::kErrorAccessDenied;
  uint32_t status = windows::kErrorSuccess;
  needed = measure_values(*host_, *e->key, values, data, status);
  // A size the 32-bit ldwTotsize cannot carry is refused as Windows' RegQueryMultipleValues
  // refuses more than its limit, rather than reported wrong.
  if (status == windows::kErrorSuccess && needed > UINT32_MAX) return windows::kErrorTransferTooLong;
  return status;
}

uint32_t Service::query_multiple_values(const QueryMultipleValuesRequest& req, QueryMultipleValuesResponse& resp) {
  resp.values = req.values;
  resp.buffer = req.buffer;
  resp.buffer_size = req.buffer_size;
  std::vector<SharedBytes> data;
  uint64_t needed = 0;
  resp.result = multiple_values(req.key_handle, resp.values, data, needed);
  if (resp.result != windows::kErrorSuccess) return 0;
  if (needed > req.buffer_size) {
    // MS-RRP 3.1.5.26: ERROR_MORE_DATA and the needed size in ldwTotsize. The array is sized and
    // measured by buffer_size, now the needed size: send no array at all.
    resp.result = windows::kErrorMoreData;
    resp.buffer.reset();
    resp.buffer_size = uint32_t(needed);
  } else if (needed > kMaxMultipleValuesOffer) {
    // The caller offered room for it, but packing it would hold more than a call may.
    resp.result = windows::kErrorTransferTooLong;
    resp.buffer.reset();
  } else {
    resp.buffer = pack_values(data, size_t(needed));
    resp.buffer_size = uint32_t(needed);
  }
  return 0;
}

uint32_t Service::query_multiple_values2(const QueryMultipleValues2Request& req, QueryMultipleValues2Response& resp) {
  resp.values = req.values;
  resp.buffer = req.buffer;
  if (req.offered > kMaxMultipleValuesOffer) {
    resp.result = windows::kErrorInvalidParameter;
    resp.buffer.reset();
    return 0;
  }
  std::vector<SharedBytes> data;
  uint64_t needed = 0;
  resp.result = multiple_values(req.key_handle, resp.values, data, needed);
  if (resp.result != windows::kErrorSuccess) return 0;
  resp.needed = uint32_t(needed);
  if (needed > req.offered)
    resp.result = windows::kErrorMoreData;
  else if (req.buffer)
    resp.buffer = pack_values(data, req.offered);  // the IDL sizes the array by the caller's `offered`
  return 0;
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
