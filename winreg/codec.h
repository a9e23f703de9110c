// MS-RRP (winreg) request and response stubs, NDR 2.0, for the operations a perf collector uses.
// Both sides: servers decode requests and encode responses; our own clients (perfsim query,
// recorder) encode requests and decode responses. Field layout follows Samba's winreg.idl, and
// the tests check our bytes against Samba's own NDR.
// Contract: encode() never fails and writes exactly what the struct says (the caller keeps
// dependent fields consistent, e.g. data_length == data->size()); decode() is bounds-checked,
// ignores bytes after the decoded stub (verification trailers) and reports the stub offset of a
// malformed field. No registry semantics live here.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_chain.h"
#include "core/bytes.h"
#include "core/shared_bytes.h"
#include "core/status.h"

namespace perfsim::winreg {

enum Opnum : uint16_t {
  kOpenHKCR = 0x00,
  kOpenHKCU = 0x01,
  kOpenHKLM = 0x02,
  kOpenHKPD = 0x03,
  kOpenHKU = 0x04,
  kCloseKey = 0x05,
  kCreateKey = 0x06,
  kDeleteKey = 0x07,
  kDeleteValue = 0x08,
  kEnumKey = 0x09,
  kEnumValue = 0x0a,
  kGetKeySecurity = 0x0c,
  kOpenKey = 0x0f,
  kQueryInfoKey = 0x10,
  kQueryValue = 0x11,
  kSetKeySecurity = 0x15,
  kSetValue = 0x16,
  kGetVersion = 0x1a,
  kQueryMultipleValues = 0x1d,
  kOpenHKPT = 0x20,
  kOpenHKPN = 0x21,
  kQueryMultipleValues2 = 0x22,
};
const char* opnum_name(uint16_t opnum);  // "QueryValue", or nullptr when not covered here

// policy_handle: 4-byte attributes + 16-byte uuid, opaque to clients.
struct PolicyHandle {
  uint32_t attributes = 0;
  std::array<uint8_t, 16> uuid{};
  bool operator==(const PolicyHandle&) const = default;
};

// winreg_String: lengths in bytes including the NUL, derived from `text` on encode.
// nullopt = NULL name pointer (lengths 0).
using String = std::optional<std::u16string>;

// winreg_StringBuf (EnumKey) / winreg_ValNameBuf (EnumValue): a caller-sized name buffer.
struct StringBuf {
  std::optional<std::u16string> text;  // nullopt = NULL pointer; the text excludes the NUL
  uint16_t size = 0;                   // buffer capacity in bytes (array max_count = size / 2)
  uint16_t length = 0;                 // bytes used incl. NUL; decode fills it, encode derives it
  bool operator==(const StringBuf&) const = default;
};

// OpenHKCR / OpenHKCU / OpenHKLM / OpenHKPD / OpenHKU / OpenHKPT / OpenHKPN share one signature.
struct OpenHiveRequest {
  std::optional<uint16_t> system_name;  // a pointer to one uint16, usually NULL or '\\'
  uint32_t access_mask = 0;
};
struct OpenHiveResponse {
  PolicyHandle handle;
  uint32_t result = 0;
};

struct CloseKeyRequest {
  PolicyHandle handle;
};
struct CloseKeyResponse {
  PolicyHandle handle;  // zeroed on success
  uint32_t result = 0;
};

struct EnumKeyRequest {
  PolicyHandle handle;
  uint32_t enum_index = 0;
  StringBuf name;
  std::optional<StringBuf> keyclass;
  std::optional<uint64_t> last_changed_time;
};
struct EnumKeyResponse {
  StringBuf name;
  std::optional<StringBuf> keyclass;
  std::optional<uint64_t> last_changed_time;
  uint32_t result = 0;
};

// The value buffer of EnumValue and QueryValue: [size_is(*size), length_is(*length)] uint8*.
// On the wire max_count = max(*size, data->size()) and actual_count = data->size().
struct EnumValueRequest {
  PolicyHandle handle;
  uint32_t enum_index = 0;
  StringBuf name;
  std::optional<uint32_t> type;
  std::optional<Bytes> value;
  std::optional<uint32_t> size;
  std::optional<uint32_t> length;
};
struct EnumValueResponse {
  StringBuf name;
  std::optional<uint32_t> type;
  std::optional<SharedBytes> value;  // shared: a recorded answer is marshalled without a copy
  std::optional<uint32_t> size;
  std::optional<uint32_t> length;
  uint32_t result = 0;
};

// KeySecurityData: [size_is(size), length_is(len)] uint8* data; size; len.
struct KeySecurityData {
  std::optional<Bytes> data;
  uint32_t size = 0;
  uint32_t len = 0;
};
struct GetKeySecurityRequest {
  PolicyHandle handle;
  uint32_t sec_info = 0;
  KeySecurityData sd;
};
struct GetKeySecurityResponse {
  KeySecurityData sd;
  uint32_t result = 0;
};

struct OpenKeyRequest {
  PolicyHandle parent_handle;
  String keyname;
  uint32_t options = 0;
  uint32_t access_mask = 0;
};
struct OpenKeyResponse {
  PolicyHandle handle;
  uint32_t result = 0;
};

struct QueryInfoKeyRequest {
  PolicyHandle handle;
  String classname;
};
struct QueryInfoKeyResponse {
  String classname;
  uint32_t num_subkeys = 0;
  uint32_t max_subkeylen = 0;
  uint32_t max_classlen = 0;
  uint32_t num_values = 0;
  uint32_t max_valnamelen = 0;
  uint32_t max_valbufsize = 0;
  uint32_t secdescsize = 0;
  uint64_t last_changed_time = 0;  // NTTIME
  uint32_t result = 0;
};

struct QueryValueRequest {
  PolicyHandle handle;
  String value_name;
  std::optional<uint32_t> type;
  std::optional<Bytes> data;  // clients send an empty array (impacket sends data_size filler bytes)
  std::optional<uint32_t> data_size;
  std::optional<uint32_t> data_length;
};
struct QueryValueResponse {
  std::optional<uint32_t> type;
  std::optional<SharedBytes> data;  // up to 64 MiB (idl range 0..0x4000000); shared, as above
  std::optional<uint32_t> data_size;
  std::optional<uint32_t> data_length;
  uint32_t result = 0;
};

// Write operations: decoded so a read-only account's refusal can be answered (MS-RRP 3.1.5.7
// BaseRegCreateKey, 3.1.5.8 BaseRegDeleteKey, 3.1.5.9 BaseRegDeleteValue, 3.1.5.21
// BaseRegSetKeySecurity, 3.1.5.22 BaseRegSetValue); Samba's winreg.idl layout.
struct SecBuf {  // winreg_SecBuf: length, KeySecurityData, inherit
  uint32_t length = 0;
  KeySecurityData sd;
  uint8_t inherit = 0;
};
struct CreateKeyRequest {
  PolicyHandle handle;
  String name;
  String keyclass;
  uint32_t options = 0;
  uint32_t access_mask = 0;
  std::optional<SecBuf> secdesc;
  std::optional<uint32_t> action_taken;
};
struct CreateKeyResponse {
  PolicyHandle new_handle;
  std::optional<uint32_t> action_taken;
  uint32_t result = 0;
};
struct DeleteKeyRequest {  // also DeleteValue: a handle and a name
  PolicyHandle handle;
  String name;
};
struct SetKeySecurityRequest {
  PolicyHandle handle;
  uint32_t sec_info = 0;
  KeySecurityData sd;
};
struct SetValueRequest {
  PolicyHandle handle;
  String name;
  uint32_t type = 0;
  Bytes data;  // [ref, size_is(size)]: a conformant array of `size` bytes
  uint32_t size = 0;
};
struct StatusResponse {  // the answer of DeleteKey, DeleteValue, SetKeySecurity, SetValue
  uint32_t result = 0;
};

struct GetVersionRequest {
  PolicyHandle handle;
};
struct GetVersionResponse {
  uint32_t version = 0;
  uint32_t result = 0;
};

// QueryMultipleValue (MS-RRP RVALENT, as Samba 4.17 marshals it): name pointer, data length,
// data offset in the shared buffer, type.
struct ValueEntry {
  std::optional<StringBuf> name;  // a winreg_ValNameBuf; nullopt = NULL pointer
  uint32_t valuelen = 0;
  uint32_t valueptr = 0;  // offset of the data in the buffer
  uint32_t type = 0;
};
struct QueryMultipleValuesRequest {
  PolicyHandle key_handle;
  std::vector<ValueEntry> values;  // num_values = values.size()
  std::optional<Bytes> buffer;     // [size_is(*buffer_size), length_is(*buffer_size)]
  uint32_t buffer_size = 0;
};
struct QueryMultipleValuesResponse {
  std::vector<ValueEntry> values;
  std::optional<Bytes> buffer;
  uint32_t buffer_size = 0;
  uint32_t result = 0;
};
struct QueryMultipleValues2Request {
  PolicyHandle key_handle;
  std::vector<ValueEntry> values;
  std::optional<Bytes> buffer;  // [size_is(offered), length_is(offered)]
  uint32_t offered = 0;
};
struct QueryMultipleValues2Response {
  std::vector<ValueEntry> values;
  std::optional<Bytes> buffer;
  uint32_t needed = 0;
  uint32_t result = 0;
};

// Every message type, for code that must handle each one (X-macro).
#define PERFSIM_WINREG_MESSAGES(X) \
  X(OpenHiveRequest)               \
  X(OpenHiveResponse)              \
  X(CloseKeyRequest)               \
  X(CloseKeyResponse)              \
  X(EnumKeyRequest)                \
  X(EnumKeyResponse)               \
  X(EnumValueRequest)              \
  X(EnumValueResponse)             \
  X(GetKeySecurityRequest)         \
  X(GetKeySecurityResponse)        \
  X(OpenKeyRequest)                \
  X(OpenKeyResponse)               \
  X(QueryInfoKeyRequest)           \
  X(QueryInfoKeyResponse)          \
  X(QueryValueRequest)             \
  X(QueryValueResponse)            \
  X(CreateKeyRequest)              \
  X(CreateKeyResponse)             \
  X(DeleteKeyRequest)              \
  X(SetKeySecurityRequest)         \
  X(SetValueRequest)               \
  X(StatusResponse)                \
  X(GetVersionRequest)             \
  X(GetVersionResponse)            \
  X(QueryMultipleValuesRequest)    \
  X(QueryMultipleValuesResponse)   \
  X(QueryMultipleValues2Request)   \
  X(QueryMultipleValues2Response)

// encode_shared(v): the bytes of encode(*v), with large byte arrays (data buffers) referenced in
// *v instead of copied; the chain keeps v alive. For answers whose payload goes to the socket as is.
#define PERFSIM_WINREG_DECLARE_CODEC(T)                \
  Bytes encode(const T& v);                            \
  ByteChain encode_shared(std::shared_ptr<const T> v); \
  Status decode(ByteView stub, T& out);
PERFSIM_WINREG_MESSAGES(PERFSIM_WINREG_DECLARE_CODEC)
#undef PERFSIM_WINREG_DECLARE_CODEC

}  // namespace perfsim::winreg
