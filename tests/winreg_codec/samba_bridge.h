// Runs tests/winreg_codec/samba_ndr.py so tests can compare our NDR with Samba's (python3-samba).
// Every helper fails the current Catch2 test when Samba rejects the input.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/bytes.h"
#include "winreg/codec.h"

namespace perfsim::test {

using nlohmann::json;

// ndr_unpack_out(winreg.<op>, blob) after setting `preset` (in_* fields the pull needs).
json samba_unpack_out(const std::string& op, const Bytes& blob, const json& preset = json::object());
json samba_unpack_in(const std::string& op, const Bytes& blob);
Bytes samba_pack_in(const std::string& op, const json& spec);
Bytes samba_pack_out(const std::string& op, const json& spec);

// JSON specs for Samba types, and the handle's uuid as Samba prints it.
json handle_spec(const winreg::PolicyHandle& h);
std::string guid_text(const winreg::PolicyHandle& h);
json string_spec(const char* text);                              // winreg.String
json strbuf_spec(const char* type, const char* text, int size);  // winreg.StringBuf / ValNameBuf
std::u16string u16(const char* ascii);

}  // namespace perfsim::test
