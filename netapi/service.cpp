#include "netapi/service.h"

#include <optional>
#include <vector>

#include "rpc/ndr.h"

namespace perfsim::netapi {
namespace {

constexpr uint32_t kPlatformIdNt = 500;  // PLATFORM_ID_NT ([MS-SRVS] 2.2.4.41, [MS-WKST] 2.2.5.1)
// [MS-SRVS] 2.2.2.7: SV_TYPE_WORKSTATION | SV_TYPE_SERVER | SV_TYPE_NT, plus SV_TYPE_SERVER_NT
// on server editions (what a Windows host in a workgroup reports).
constexpr uint32_t kSvTypeBase = 0x00000003 | 0x00001000;
constexpr uint32_t kSvTypeServerNt = 0x00008000;
constexpr uint32_t kStypeIpcSpecial = 0x80000003;  // STYPE_IPC | STYPE_SPECIAL ([MS-SRVS] 2.2.2.4)

// [in, string, unique] wchar_t* ServerName: read and dropped (the address picked the host).
bool skip_server_name(ndr::Reader& r) {
  std::optional<std::u16string> name;
  return ndr::unique(r, name, [&](std::u16string& s) { return ndr::cv_string(r, s); });
}

bool read_level_request(ByteView in, uint32_t& level) {
  ndr::Reader r(in);
  return skip_server_name(r) && r.u32(level);
}

// A string pointer in a struct: the referent id now, the string with the deferred ones.
struct Deferred {
  std::vector<std::u16string> strings;
  void ptr(ndr::Writer& w, std::u16string s) {
    bool present = true;
    w.pointer(present);
    strings.push_back(std::move(s));
  }
  void flush(ndr::Writer& w) {
    for (std::u16string& s : strings) ndr::cv_string(w, s);
    strings.clear();
  }
};

uint32_t sv_type(const HostIdentity& h) { return kSvTypeBase | (h.server ? kSvTypeServerNt : 0); }

// NetrServerGetInfo: [out, switch_is(Level)] LPSERVER_INFO: the level, a pointer to the
// SERVER_INFO_10x, its fields, its strings; then the WERROR.
Bytes server_get_info(const HostIdentity& h, uint32_t level) {
  ndr::Writer w;
  w.u32(level);
  bool known = level == 100 || level == 101 || level == 102, present = known;
  uint32_t platform = kPlatformIdNt, major = h.major, minor = h.minor, type = sv_type(h);
  if (known) {
    w.pointer(present);
    Deferred d;
    w.u32(platform);
    d.ptr(w, h.name);
    if (level >= 101) {
      w.u32(major);
      w.u32(minor);
      w.u32(type);
      d.ptr(w, u"");  // sv101_comment: empty unless an admin set one
    }
    if (level == 102) {
      // users, disc (minutes before an idle session is closed: 15), hidden, announce, anndelta, licenses
      for (uint32_t v : {0xffffffffu, 15u, 0u, 240u, 3000u, 0u}) w.u32(v);
      d.ptr(w, u"c:\\");  // sv102_userpath
    }
    d.flush(w);
  }
  w.align(4);
  uint32_t result = known ? 0 : kErrorInvalidLevel;
  w.u32(result);
  return w.take();
}

// NetrWkstaGetInfo: the same shape with WKSTA_INFO_10x.
Bytes wksta_get_info(const HostIdentity& h, uint32_t level) {
  ndr::Writer w;
  w.u32(level);
  bool known = level == 100 || level == 101 || level == 102, present = known;
  uint32_t platform = kPlatformIdNt, major = h.major, minor = h.minor, users = 1;
  if (known) {
    w.pointer(present);
    Deferred d;
    w.u32(platform);
    d.ptr(w, h.name);
    d.ptr(w, h.domain);
    w.u32(major);
    w.u32(minor);
    if (level >= 101) d.ptr(w, u"C:\\Windows");  // wki101_lanroot
    if (level == 102) w.u32(users);              // wki102_logged_on_users
    d.flush(w);
  }
  w.align(4);
  uint32_t result = known ? 0 : kErrorInvalidLevel;
  w.u32(result);
  return w.take();
}

// NetrShareEnum: in, the ServerName, then LPSHARE_ENUM_STRUCT (level, union tag, container
// pointer; clients send an empty container), PreferedMaximumLength, [unique] ResumeHandle.
bool read_share_enum(ByteView in, uint32_t& level, bool& resume) {
  ndr::Reader r(in);
  uint32_t tag = 0, entries = 0, max_len = 0, resume_value = 0;
  bool container = false, buffer = false;
  if (!skip_server_name(r) || !r.u32(level) || !r.u32(tag) || !r.pointer(container)) return false;
  if (container && (!r.u32(entries) || !r.pointer(buffer) || buffer)) return false;  // a filled container: refused
  if (!r.u32(max_len) || !r.pointer(resume)) return false;
  return !resume || r.u32(resume_value);
}

// The host shares nothing but IPC$ (as a server whose admin shares are off); levels 0 and 1.
Bytes share_enum(uint32_t level, bool resume) {
  ndr::Writer w;
  const bool known = level == 0 || level == 1;
  bool present = known;
  uint32_t lv = level, tag = level, count = 1, total = known ? 1 : 0, type = kStypeIpcSpecial, zero = 0;
  w.u32(lv);
  w.u32(tag);
  w.pointer(present);
  if (known) {
    bool buf = true;
    w.u32(count);
    w.pointer(buf);
    w.u32(count);  // conformant array: max_count
    Deferred d;
    d.ptr(w, u"IPC$");
    if (level == 1) {
      w.u32(type);
      d.ptr(w, u"Remote IPC");
    }
    d.flush(w);
  }
  w.align(4);
  w.u32(total);
  w.pointer(resume);
  if (resume) w.u32(zero);
  uint32_t result = known ? 0 : kErrorInvalidLevel;
  w.u32(result);
  return w.take();
}

}  // namespace

rpc::SyntaxId srvsvc_syntax() { return {*rpc::Uuid::parse("4b324fc8-1670-01d3-1278-5a47bf6ee188"), 3, 0}; }
rpc::SyntaxId wkssvc_syntax() { return {*rpc::Uuid::parse("6bffd098-a112-3610-9833-46c3f87e345a"), 1, 0}; }

Status decode(ByteView stub, LevelRequest& out) {
  return read_level_request(stub, out.level) ? Status::Ok() : Status::InvalidArgument("bad level request");
}

Status decode(ByteView stub, ShareEnumRequest& out) {
  return read_share_enum(stub, out.level, out.resume) ? Status::Ok()
                                                      : Status::InvalidArgument("bad NetrShareEnum request");
}

uint32_t Service::server_get_info(const LevelRequest& req, Reply& resp) {
  resp.stub = netapi::server_get_info(host_, req.level);
  return 0;
}

uint32_t Service::share_enum(const ShareEnumRequest& req, Reply& resp) {
  resp.stub = netapi::share_enum(req.level, req.resume);
  return 0;
}

uint32_t Service::wksta_get_info(const LevelRequest& req, Reply& resp) {
  resp.stub = netapi::wksta_get_info(host_, req.level);
  return 0;
}

// Only the inventory calls clients make; any other opnum faults nca_op_rng_error, which
// rpcclient reports as "procedure number out of range" and goes on.
const rpc::Interface& srvsvc_interface() {
  static constexpr rpc::Operation kOperations[] = {
      rpc::operation<&Service::share_enum>(kOpNetrShareEnum, "NetrShareEnum"),
      rpc::operation<&Service::server_get_info>(kOpNetrServerGetInfo, "NetrServerGetInfo"),
  };
  static const rpc::Interface kSrvsvc{"srvsvc", srvsvc_syntax(), kOperations};
  return kSrvsvc;
}

const rpc::Interface& wkssvc_interface() {
  static constexpr rpc::Operation kOperations[] = {
      rpc::operation<&Service::wksta_get_info>(kOpNetrWkstaGetInfo, "NetrWkstaGetInfo"),
  };
  static const rpc::Interface kWkssvc{"wkssvc", wkssvc_syntax(), kOperations};
  return kWkssvc;
}

const rpc::Interface& interface_of(Pipe pipe) {
  return pipe == Pipe::kSrvsvc ? srvsvc_interface() : wkssvc_interface();
}

uint32_t call(Pipe pipe, const HostIdentity& host, uint16_t opnum, ByteView in, Bytes& out) {
  Service s(host);
  ByteChain chain;
  const uint32_t fault = interface_of(pipe).call(s, opnum, in, chain);
  out = chain.flatten();
  return fault;
}

}  // namespace perfsim::netapi
