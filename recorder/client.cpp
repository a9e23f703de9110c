#include "recorder/client.h"

#include "core/utf16.h"
#include "windows/constants.h"

namespace perfsim::recorder {

Status WinregClient::open_hive(uint16_t opnum, winreg::PolicyHandle& h) {
  winreg::OpenHiveRequest req;
  req.access_mask = 0x02000000;  // MAXIMUM_ALLOWED
  Bytes out;
  if (Status s = call(opnum, winreg::encode(req), out); !s.ok()) return s;
  winreg::OpenHiveResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  if (resp.result != 0) return Status::IOError("open hive failed: " + windows::werror_name(resp.result));
  h = resp.handle;
  return Status::Ok();
}

Status WinregClient::open_key(const winreg::PolicyHandle& parent, const std::string& path, winreg::PolicyHandle& h,
                              uint32_t& werr) {
  winreg::OpenKeyRequest req;
  req.parent_handle = parent;
  req.keyname = utf8_to_utf16(path);
  req.access_mask = 0x02000000;
  Bytes out;
  if (Status s = call(winreg::kOpenKey, winreg::encode(req), out); !s.ok()) return s;
  winreg::OpenKeyResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  werr = resp.result;
  h = resp.handle;
  return Status::Ok();
}

Status WinregClient::enum_key(const winreg::PolicyHandle& h, uint32_t index, std::string& name, uint32_t& werr) {
  winreg::EnumKeyRequest req;
  req.handle = h;
  req.enum_index = index;
  req.name = winreg::StringBuf{std::u16string(), 512, 0};  // 255 characters and the NUL, a registry key's limit
  req.keyclass = winreg::StringBuf{std::u16string(), 0, 0};
  Bytes out;
  if (Status s = call(winreg::kEnumKey, winreg::encode(req), out); !s.ok()) return s;
  winreg::EnumKeyResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  werr = resp.result;
  name = resp.name.text ? utf16_to_utf8(*resp.name.text) : std::string();
  return Status::Ok();
}

Status WinregClient::close_key(const winreg::PolicyHandle& h, uint32_t& werr) {
  winreg::CloseKeyRequest req;
  req.handle = h;
  Bytes out;
  if (Status s = call(winreg::kCloseKey, winreg::encode(req), out); !s.ok()) return s;
  winreg::CloseKeyResponse resp;
  if (Status s = winreg::decode(out, resp); !s.ok()) return s;
  werr = resp.result;
  return Status::Ok();
}

Status WinregClient::query_value(const winreg::PolicyHandle& h, const std::string& name, std::optional<uint32_t> buffer,
                                 winreg::QueryValueResponse& out) {
  winreg::QueryValueRequest req;
  req.handle = h;
  req.value_name = utf8_to_utf16(name);
  req.type = 0;
  if (buffer) req.data = Bytes();  // an empty conformant array of max_count data_size, as samba sends
  req.data_size = buffer.value_or(0);
  req.data_length = 0;
  Bytes stub;
  if (Status s = call(winreg::kQueryValue, winreg::encode(req), stub); !s.ok()) return s;
  return winreg::decode(stub, out);
}

Status WinregClient::query_value_growing(const winreg::PolicyHandle& h, const std::string& name, const Growth& g,
                                         ValueResult& out) {
  out = ValueResult{};
  uint32_t offer = g.initial;
  for (out.tries = 1; out.tries <= g.max_tries; ++out.tries) {
    winreg::QueryValueResponse r;
    if (Status s = query_value(h, name, offer, r); !s.ok()) return s;
    out.status = r.result;
    out.type = r.type.value_or(0);
    out.last_offered = offer;
    out.last_size = r.data_size.value_or(0);
    if (r.result != windows::kErrorMoreData) {
      if (r.data) out.data = std::move(*r.data).to_bytes();
      return Status::Ok();
    }
    uint64_t next = offer;
    switch (g.kind) {
      case Growth::Kind::kReturned:
        next = out.last_size > offer ? out.last_size : uint64_t(offer) * 2;
        break;
      case Growth::Kind::kDouble:
        next = uint64_t(offer) * 2;
        break;
      case Growth::Kind::kAdd:
        next = uint64_t(offer) + g.step;
        break;
    }
    offer = uint32_t(std::min<uint64_t>(next, 0x4000000));  // 64 MiB: the IDL's range
  }
  --out.tries;
  return Status::IOError("'" + name + "' still answered " + windows::werror_name(out.status) + " after " +
                         std::to_string(out.tries) + " tries (last buffer " + std::to_string(out.last_offered) +
                         " bytes)");
}

}  // namespace perfsim::recorder
