#include "windows_recorder/registry_channel.h"

#include <windows.h>

#include <cstring>
#include <vector>

#include "core/utf16.h"
#include "windows/constants.h"

namespace perfsim::windows_recorder {
namespace {

std::wstring wide(const std::string& utf8) {
  const std::u16string s = utf8_to_utf16(utf8);
  return std::wstring(s.begin(), s.end());  // wchar_t is UTF-16 on Windows
}

std::wstring wide(const winreg::String& s) { return s ? std::wstring(s->begin(), s->end()) : std::wstring(); }

std::string narrow(const std::wstring& w) { return utf16_to_utf8(std::u16string(w.begin(), w.end())); }

// The predefined keys (HKEY_LOCAL_MACHINE, HKEY_PERFORMANCE_DATA, ...) are 0x80000000 and up.
bool is_root(HKEY k) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(k) & 0xFFFFFFFFu;
  return v >= 0x80000000u;
}

HKEY as_key(void* k) { return static_cast<HKEY>(k); }

std::atomic<bool>* g_stop = nullptr;

BOOL WINAPI on_console_event(DWORD) {
  if (g_stop) *g_stop = true;  // record() sees it between calls, closes the capture and returns
  return TRUE;
}

}  // namespace

std::string computer_name() {
  wchar_t buf[MAX_COMPUTERNAME_LENGTH + 1] = {};
  DWORD n = DWORD(std::size(buf));
  return GetComputerNameW(buf, &n) ? narrow(std::wstring(buf, n)) : "host";
}

void stop_on_console_events(std::atomic<bool>* stop) {
  g_stop = stop;
  SetConsoleCtrlHandler(on_console_event, TRUE);
}

std::string windows_error_text(unsigned long code) {
  wchar_t buf[512] = {};
  const DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, buf,
                                 DWORD(std::size(buf)), nullptr);
  std::wstring text(buf, n);
  while (!text.empty() && (text.back() == L'\n' || text.back() == L'\r' || text.back() == L' ')) text.pop_back();
  return "error " + std::to_string(code) + ": " + (text.empty() ? windows::werror_name(uint32_t(code)) : narrow(text));
}

RegistryChannel::~RegistryChannel() {
  for (const auto& [id, key] : keys_)
    if (key != hklm_ && key != hkpd_ && !is_root(as_key(key))) RegCloseKey(as_key(key));
  if (hklm_) RegCloseKey(as_key(hklm_));
  if (hkpd_) RegCloseKey(as_key(hkpd_));
}

Status RegistryChannel::open(const std::string& machine, std::unique_ptr<RegistryChannel>& out) {
  std::unique_ptr<RegistryChannel> c(new RegistryChannel());
  c->machine_ = machine;
  if (!machine.empty()) {
    // RegConnectRegistryW takes "\\NAME" (Microsoft docs, RegConnectRegistryW): PDH reaches a
    // remote host's perf data the same way, through its Remote Registry service.
    const std::wstring unc = L"\\\\" + wide(machine);
    for (auto [hive, key] : {std::pair{HKEY_LOCAL_MACHINE, &c->hklm_}, std::pair{HKEY_PERFORMANCE_DATA, &c->hkpd_}}) {
      HKEY k = nullptr;
      const LONG r = RegConnectRegistryW(unc.c_str(), hive, &k);
      if (r != ERROR_SUCCESS)
        return Status::IOError("cannot connect to the registry of \\\\" + machine + ": " + windows_error_text(r));
      *key = static_cast<void*>(k);
    }
  }
  out = std::move(c);
  return Status::Ok();
}

std::string RegistryChannel::describe() const {
  return machine_.empty() ? "local registry API" : "registry API of \\\\" + machine_;
}

winreg::PolicyHandle RegistryChannel::remember(void* key) {
  winreg::PolicyHandle h;
  const uint32_t id = next_++;
  std::memcpy(h.uuid.data(), &id, sizeof id);
  keys_[id] = key;
  return h;
}

void* RegistryChannel::key_of(const winreg::PolicyHandle& h) const {
  uint32_t id = 0;
  std::memcpy(&id, h.uuid.data(), sizeof id);
  const auto it = keys_.find(id);
  return it == keys_.end() ? nullptr : it->second;
}

Status RegistryChannel::call(uint16_t opnum, ByteView stub, Bytes& out) {
  switch (opnum) {
    case winreg::kOpenHKLM:
    case winreg::kOpenHKPD:
    case winreg::kOpenHKPT:
    case winreg::kOpenHKPN:
      return open_hive(opnum, stub, out);
    case winreg::kOpenKey:
      return open_key(stub, out);
    case winreg::kEnumKey:
      return enum_key(stub, out);
    case winreg::kQueryValue:
      return query_value(stub, out);
    case winreg::kCloseKey:
      return close_key(stub, out);
    default:
      return Status::Unsupported(std::string("winreg operation ") +
                                 (winreg::opnum_name(opnum) ? winreg::opnum_name(opnum) : std::to_string(opnum)) +
                                 " is not mapped to the registry API");
  }
}

Status RegistryChannel::open_hive(uint16_t opnum, ByteView stub, Bytes& out) {
  winreg::OpenHiveRequest req;
  if (Status s = winreg::decode(stub, req); !s.ok()) return s;
  HKEY key = opnum == winreg::kOpenHKLM   ? (hklm_ ? as_key(hklm_) : HKEY_LOCAL_MACHINE)
             : opnum == winreg::kOpenHKPD ? (hkpd_ ? as_key(hkpd_) : HKEY_PERFORMANCE_DATA)
             : opnum == winreg::kOpenHKPT ? HKEY_PERFORMANCE_TEXT
                                          : HKEY_PERFORMANCE_NLSTEXT;
  if (!machine_.empty() && (opnum == winreg::kOpenHKPT || opnum == winreg::kOpenHKPN))
    return Status::Unsupported("HKEY_PERFORMANCE_TEXT of a remote host: RegConnectRegistryW does not connect it");
  winreg::OpenHiveResponse resp;
  resp.handle = remember(key);
  out = winreg::encode(resp);
  return Status::Ok();
}

Status RegistryChannel::open_key(ByteView stub, Bytes& out) {
  winreg::OpenKeyRequest req;
  if (Status s = winreg::decode(stub, req); !s.ok()) return s;
  winreg::OpenKeyResponse resp;
  HKEY parent = as_key(key_of(req.parent_handle)), key = nullptr;
  resp.result = parent ? uint32_t(RegOpenKeyExW(parent, wide(req.keyname).c_str(), 0, KEY_READ, &key))
                       : windows::kErrorInvalidHandle;
  if (resp.result == 0) resp.handle = remember(key);
  out = winreg::encode(resp);
  return Status::Ok();
}

Status RegistryChannel::enum_key(ByteView stub, Bytes& out) {
  winreg::EnumKeyRequest req;
  if (Status s = winreg::decode(stub, req); !s.ok()) return s;
  winreg::EnumKeyResponse resp;
  std::vector<wchar_t> name(std::max<size_t>(req.name.size / 2, 1));
  DWORD len = DWORD(name.size());
  HKEY key = as_key(key_of(req.handle));
  resp.result =
      key ? uint32_t(RegEnumKeyExW(key, req.enum_index, name.data(), &len, nullptr, nullptr, nullptr, nullptr))
          : windows::kErrorInvalidHandle;
  resp.name.size = req.name.size;
  if (resp.result == 0) resp.name.text = std::u16string(name.begin(), name.begin() + len);
  if (req.keyclass) resp.keyclass = winreg::StringBuf{std::u16string(), 0, 0};
  if (req.last_changed_time) resp.last_changed_time = 0;
  out = winreg::encode(resp);
  return Status::Ok();
}

Status RegistryChannel::query_value(ByteView stub, Bytes& out) {
  winreg::QueryValueRequest req;
  if (Status s = winreg::decode(stub, req); !s.ok()) return s;
  winreg::QueryValueResponse resp;
  HKEY key = as_key(key_of(req.handle));
  DWORD type = 0, size = req.data_size.value_or(0);
  // kSlack zeroed bytes past the buffer offered: a perflib that writes past the size it was given
  // (Wine does with a tight buffer, provider/provider.cpp wine_offset()) must not corrupt the
  // recorder; only the size offered is passed, and only what the answer says is kept.
  constexpr size_t kSlack = 4096;
  Bytes data(req.data ? size + kSlack : 0);
  // RegQueryValueExW with the caller's buffer (a NULL data pointer stays NULL), so what perflib
  // does with a short buffer, ERROR_MORE_DATA and the size it says included, is what is recorded
  // (Microsoft docs, RegQueryValueExW: HKEY_PERFORMANCE_DATA's contents are unspecified then).
  resp.result = key ? uint32_t(RegQueryValueExW(key, wide(req.value_name).c_str(), nullptr, &type,
                                                req.data ? data.data() : nullptr, &size))
                    : windows::kErrorInvalidHandle;
  const bool answered = resp.result == 0 || resp.result == windows::kErrorMoreData;
  if (req.type) resp.type = answered ? type : 0;
  if (req.data) {
    data.resize(resp.result == 0 ? std::min<size_t>(size, req.data_size.value_or(0)) : 0);
    resp.data = SharedBytes(std::move(data));
  }
  if (req.data_size) resp.data_size = answered ? size : 0;
  if (req.data_length) resp.data_length = resp.data ? uint32_t(resp.data->size()) : 0;
  out = winreg::encode(resp);
  return Status::Ok();
}

Status RegistryChannel::close_key(ByteView stub, Bytes& out) {
  winreg::CloseKeyRequest req;
  if (Status s = winreg::decode(stub, req); !s.ok()) return s;
  winreg::CloseKeyResponse resp;
  uint32_t id = 0;
  std::memcpy(&id, req.handle.uuid.data(), sizeof id);
  const auto it = keys_.find(id);
  if (it == keys_.end()) {
    resp.result = windows::kErrorInvalidHandle;
  } else {
    // The hives stay open for the channel's life (a remote one is its connection); RegCloseKey on
    // HKEY_PERFORMANCE_DATA closes perflib's providers (Microsoft docs, RegCloseKey).
    HKEY key = as_key(it->second);
    if (it->second != hklm_ && it->second != hkpd_ && !is_root(key)) resp.result = uint32_t(RegCloseKey(key));
    if (key == HKEY_PERFORMANCE_DATA) RegCloseKey(key);
    keys_.erase(it);
  }
  out = winreg::encode(resp);
  return Status::Ok();
}

}  // namespace perfsim::windows_recorder
