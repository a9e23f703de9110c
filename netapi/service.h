// What a simulated host answers on \PIPE\srvsvc ([MS-SRVS]) and \PIPE\wkssvc ([MS-WKST]): its
// own name, platform 500 and its Windows version, where Samba's servers would report Samba's.
// srvsvc: NetrShareEnum (opnum 15, levels 0 and 1: IPC$ only, as the host shares nothing else)
// and NetrServerGetInfo (21, levels 100/101/102); wkssvc: NetrWkstaGetInfo (0, levels
// 100/101/102). Other levels: ERROR_INVALID_LEVEL; other opnums: fault nca_op_rng_error, which
// clients report as "procedure number out of range" and go on.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "core/bytes.h"
#include "core/status.h"
#include "rpc/interface.h"
#include "rpc/pdu.h"

namespace perfsim::netapi {

rpc::SyntaxId srvsvc_syntax();  // 4b324fc8-1670-01d3-1278-5a47bf6ee188 v3.0
rpc::SyntaxId wkssvc_syntax();  // 6bffd098-a112-3610-9833-46c3f87e345a v1.0

inline constexpr uint16_t kOpNetrShareEnum = 15;
inline constexpr uint16_t kOpNetrServerGetInfo = 21;
inline constexpr uint16_t kOpNetrWkstaGetInfo = 0;
inline constexpr uint32_t kErrorInvalidLevel = 124;

// The host as these interfaces describe it.
struct HostIdentity {
  std::u16string name;  // computer name, upper case (NetBIOS style)
  std::u16string domain = u"WORKGROUP";
  uint32_t major = 10, minor = 0;  // windows/os.h: the real version
  bool server = true;              // a Windows Server edition (sv_type SV_TYPE_SERVER_NT)
};

enum class Pipe { kSrvsvc, kWkssvc };

// What the two interfaces' requests carry that matters here (the ServerName is read and dropped:
// the address picked the host).
struct LevelRequest {  // NetrServerGetInfo, NetrWkstaGetInfo
  uint32_t level = 0;
};
struct ShareEnumRequest {  // NetrShareEnum: the info level and whether a ResumeHandle came
  uint32_t level = 0;
  bool resume = false;
};
Status decode(ByteView stub, LevelRequest& out);
Status decode(ByteView stub, ShareEnumRequest& out);
// A response stub, written whole by its operation.
struct Reply {
  Bytes stub;
};

// One association's srvsvc or wkssvc: the host it describes.
class Service final : public rpc::InterfaceSession {
 public:
  explicit Service(HostIdentity host) : host_(std::move(host)) {}
  // The operations (srvsvc_interface() / wkssvc_interface() rows).
  uint32_t server_get_info(const LevelRequest& req, Reply& resp);
  uint32_t share_enum(const ShareEnumRequest& req, Reply& resp);
  uint32_t wksta_get_info(const LevelRequest& req, Reply& resp);
  void reply(Reply& r, ByteChain& out) { out = ByteChain(std::move(r.stub)); }

 private:
  HostIdentity host_;
};

const rpc::Interface& srvsvc_interface();
const rpc::Interface& wkssvc_interface();
const rpc::Interface& interface_of(Pipe pipe);

// 0 and the response stub, or a fault status (the pipe's interface over a Service of `host`).
uint32_t call(Pipe pipe, const HostIdentity& host, uint16_t opnum, ByteView in, Bytes& out);

}  // namespace perfsim::netapi
