// Samba's client libraries are C with talloc and tevent; everything of theirs stays in this file.
#include "recorder/smb_channel.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

extern "C" {
#include <talloc.h>
#include <tevent.h>
// credentials.h forward-declares these two enums, which C++ allows only with an underlying type.
enum smb_signing_setting : int;
enum smb_encryption_setting : int;
#include <core/ntstatus.h>
#include <credentials.h>
#include <dcerpc.h>
#include <param.h>
extern const struct ndr_interface_table ndr_table_winreg;  // libndr-standard; its header is not installed
}

namespace perfsim::recorder {
namespace {

// dcerpc_pipe_connect_b_send() returns a composite_context, whose definition Samba does not
// install. Its first member has been `enum composite_state state` since 2005
// (libcli/composite/composite.h), DONE = 2 and ERROR = 3. Reading it lets us run the event loop
// ourselves and give up at our deadline instead of Samba's fixed 60 s.
bool composite_finished(composite_context* c) {
  if (!talloc_check_name(c, "struct composite_context")) return true;  // unknown layout: let recv wait
  int state = 0;
  std::memcpy(&state, static_cast<const void*>(c), sizeof state);
  return state >= 2;
}

// A tevent timer that sets a flag; removed with its owner, so the flag never outlives it.
struct Deadline {
  Deadline(tevent_context* ev, std::chrono::milliseconds left) {
    owner = talloc_new(nullptr);
    const auto ms = std::max<int64_t>(left.count(), 0);
    tevent_add_timer(
        ev, owner, tevent_timeval_current_ofs(uint32_t(ms / 1000), uint32_t(ms % 1000) * 1000),
        [](tevent_context*, tevent_timer*, timeval, void* p) { *static_cast<bool*>(p) = true; }, &expired);
  }
  ~Deadline() { talloc_free(owner); }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
  TALLOC_CTX* owner;
  bool expired = false;
};

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
}

std::string nt_name(NTSTATUS st) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%08x", NT_STATUS_V(st));
  const char* name = nt_errstr(st);
  return name && std::strncmp(name, "NT code", 7) != 0 ? std::string(name) + " (" + code + ")" : std::string(code);
}

std::string dialect_hint(const SmbTarget& t) {
  return "the host and this client may share no SMB dialect or security setting (offered " +
         (t.min_protocol.empty() ? std::string("SMB2_02") : t.min_protocol) + ".." +
         (t.max_protocol.empty() ? std::string("SMB3_11") : t.max_protocol) +
         (t.require_encryption ? ", encryption required" : "") + (t.require_signing ? ", signing required" : "") +
         "): Windows 2003 and older speak only NT1 (SMB1), so allow NT1 as the lowest dialect; SMB encryption needs "
         "SMB 3";
}

// What a person should check for the NTSTATUS codes a connect (`connecting`) or call ends with.
std::string hint_for(uint32_t code, const SmbTarget& t, const Credentials& cred, bool connecting) {
  const std::string where = t.host + ":" + std::to_string(t.port);
  switch (code) {
    case 0xC00000B5:  // IO_TIMEOUT
      return "no answer from " + where + " in time: is the host up, is TCP port " + std::to_string(t.port) +
             " open (a firewall dropping SMB looks like this)?";
    case 0xC0000236:  // CONNECTION_REFUSED
    case 0xC000023C:  // NETWORK_UNREACHABLE
    case 0xC000023D:  // HOST_UNREACHABLE
    case 0xC000023F:  // PORT_UNREACHABLE
    case 0xC0000141:  // INVALID_ADDRESS
      return "cannot reach " + where + ": is the host up, is the address right, is TCP port " + std::to_string(t.port) +
             " open (Windows Firewall: \"File and Printer Sharing (SMB-In)\")?";
    case 0xC000006D:  // LOGON_FAILURE
    case 0xC000006A:  // WRONG_PASSWORD
    case 0xC0000064:  // NO_SUCH_USER
      return "the host refused the logon as " + cred.describe() +
             ": check user, password and domain (a local account needs no domain or the host's name as domain)";
    case 0xC0000072:  // ACCOUNT_DISABLED
    case 0xC0000234:  // ACCOUNT_LOCKED_OUT
    case 0xC0000071:  // PASSWORD_EXPIRED
    case 0xC0000224:  // PASSWORD_MUST_CHANGE
    case 0xC0000193:  // ACCOUNT_EXPIRED
    case 0xC000006E:  // ACCOUNT_RESTRICTION
    case 0xC000006F:  // INVALID_LOGON_HOURS
    case 0xC0000070:  // INVALID_WORKSTATION
      return "the account " + cred.describe() + " may not log on now: check that it is enabled, not locked out and " +
             "its password not expired (an empty password is refused over the network by default)";
    case 0xC0000022:  // ACCESS_DENIED
    case 0xC00000CA:  // NETWORK_ACCESS_DENIED
      return "access denied to " + cred.describe() + " on " + where +
             ": the account may not open \\PIPE\\winreg (Windows lets administrators, and accounts the "
             "winreg key's security allows, use the remote registry; anonymous logons are refused unless the host "
             "allows them), or the host demands SMB encryption or signing this connection did not offer";
    case 0xC0000034:  // OBJECT_NAME_NOT_FOUND
    case 0xC00000AC:  // PIPE_NOT_AVAILABLE
    case 0xC000003A:  // OBJECT_PATH_NOT_FOUND
    case 0xC00000AB:  // INSTANCE_NOT_AVAILABLE
      return where +
             " has no \\PIPE\\winreg: the RemoteRegistry service is not running there (on the host: "
             "`sc config RemoteRegistry start= auto` and `sc start RemoteRegistry`; Windows 8 and later stop it when "
             "idle)";
    case 0xC00000AE:  // PIPE_BUSY
      return where + ": every instance of \\PIPE\\winreg is busy; try again";
    case 0xC00000BB:  // NOT_SUPPORTED
    case 0xC00000C3:  // INVALID_NETWORK_RESPONSE
    case 0xC00000D0:  // REQUEST_NOT_ACCEPTED
      return dialect_hint(t);
    case 0xC000A013:  // PROTOCOL_NOT_SUPPORTED: Samba's client could not set up SMB3 encryption
      return t.require_encryption && cred.anonymous
                 ? "SMB encryption needs a session key, which an anonymous logon has none of: log on as a user "
                   "or do not require encryption"
                 : dialect_hint(t);
    case 0xC000020C:  // CONNECTION_DISCONNECTED
    case 0xC000020D:  // CONNECTION_RESET
    case 0xC000014B:  // PIPE_BROKEN
      // While connecting, this is how an SMB1-only server answers an SMB2 negotiation.
      return connecting ? where + " closed the connection while connecting; " + dialect_hint(t)
                        : where + " closed the connection";
    default:
      return "";
  }
}

// Samba's settings for one attempt, from SmbTarget alone: no smb.conf is read.
Status make_loadparm(TALLOC_CTX* mem, const SmbTarget& t, bool smb1, loadparm_context*& out) {
  loadparm_context* lp = loadparm_init(mem);
  if (!lp) return Status::IOError("out of memory setting up Samba's client");
  std::vector<std::pair<const char*, std::string>> set = {
      {"smb ports", std::to_string(t.port)},
      {"name resolve order", "host"},  // we resolve names ourselves; Samba gets an address
      {"client min protocol",
       smb1 ? "NT1" : (t.min_protocol.empty() || t.min_protocol == "NT1" ? "SMB2_02" : t.min_protocol)},
      {"client max protocol", smb1 ? "NT1" : (t.max_protocol.empty() ? "SMB3_11" : t.max_protocol)},
  };
  if (t.require_signing) {
    set.push_back({"client signing", "required"});
    set.push_back({"client ipc signing", "required"});
  }
  if (t.require_encryption) set.push_back({"client smb encrypt", "required"});
  for (const auto& [k, v] : set)
    if (!lpcfg_set_cmdline(lp, k, v.c_str()))
      return Status::InvalidArgument(std::string("Samba refused '") + k + " = " + v + "'");
  out = lp;
  return Status::Ok();
}

cli_credentials* make_credentials(TALLOC_CTX* mem, loadparm_context* lp, const Credentials& c) {
  cli_credentials* cred = cli_credentials_init(mem);
  if (!cred) return nullptr;
  cli_credentials_set_conf(cred, lp);  // signing / encryption settings from lp
  if (c.anonymous) {
    cli_credentials_set_anonymous(cred);
    cli_credentials_set_kerberos_state(cred, CRED_USE_KERBEROS_DISABLED, CRED_SPECIFIED);
    return cred;
  }
  cli_credentials_set_username(cred, c.user.c_str(), CRED_SPECIFIED);
  cli_credentials_set_domain(cred, c.domain.c_str(), CRED_SPECIFIED);  // empty: the host's own accounts
  if (!c.realm.empty()) cli_credentials_set_realm(cred, c.realm.c_str(), CRED_SPECIFIED);
  cli_credentials_set_password(cred, c.password.c_str(), CRED_SPECIFIED);
  const auto krb = c.kerberos == Credentials::Kerberos::kOff        ? CRED_USE_KERBEROS_DISABLED
                   : c.kerberos == Credentials::Kerberos::kRequired ? CRED_USE_KERBEROS_REQUIRED
                                                                    : CRED_USE_KERBEROS_DESIRED;
  cli_credentials_set_kerberos_state(cred, krb, CRED_SPECIFIED);
  return cred;
}

// Resolves the name (an address passes through) and opens one TCP connection to it, bounded by the
// deadline: Samba reports a refused or unreachable port as NT_STATUS_NO_MEMORY, which would send a
// person the wrong way. Samba then gets the address and resolves nothing itself.
Status resolve_and_probe(const SmbTarget& t, Clock::time_point deadline, std::string& address) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (const int rc = ::getaddrinfo(t.host.c_str(), std::to_string(t.port).c_str(), &hints, &res); rc != 0 || !res)
    return Status::IOError("cannot resolve '" + t.host + "': " + ::gai_strerror(rc) +
                           " (check the name, DNS or /etc/hosts)");
  char buf[NI_MAXHOST] = {};
  ::getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  address = buf;
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      const int n = ::poll(&p, 1, int(std::max<int64_t>(left_until(deadline).count(), 0)));
      socklen_t len = sizeof err;
      if (n == 1)
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      else
        err = ETIMEDOUT;
    }
  }
  ::freeaddrinfo(res);
  if (fd >= 0) ::close(fd);
  if (err == 0) return Status::Ok();
  const std::string where = t.host + ":" + std::to_string(t.port);
  const std::string check = "is the host up, is the address right, is TCP port " + std::to_string(t.port) +
                            " open (Windows Firewall: \"File and Printer Sharing (SMB-In)\")?";
  if (err == ETIMEDOUT) return Status::IOError("no answer from " + where + " (TCP connect timed out): " + check);
  return Status::IOError("cannot reach " + where + ": " + std::strerror(err) + ": " + check);
}

std::once_flag samba_init_once;
// Samba's client libraries are not thread-safe: the logon code (gensec, Kerberos) keeps
// process-wide state, and talloc's stackframes and the dcerpc/smbXcli code under them abort with
// "Bad talloc magic value" when two threads run them at once (seen with perfsim load's threads
// over SMB). So every use of them (making, connecting, calling, freeing a channel) holds this lock:
// channels used from several threads take turns; recursive, as a failed connect frees its channel.
std::recursive_mutex samba_mu;

class SmbChannel final : public Channel {
 public:
  SmbChannel(const SmbTarget& t, const Credentials& c, std::chrono::milliseconds timeout)
      : target_(t), who_(c.describe()), timeout_(timeout) {
    mem_ = talloc_new(nullptr);
    ev_ = tevent_context_init(mem_);
  }
  ~SmbChannel() override {
    std::lock_guard lk(samba_mu);
    close();  // the connection's fds and timers live on ev_: they go first
    talloc_free(mem_);
  }
  SmbChannel(const SmbChannel&) = delete;
  SmbChannel& operator=(const SmbChannel&) = delete;

  Status connect(const Credentials& cred);
  Status call(uint16_t opnum, ByteView stub, Bytes& out) override;
  std::string describe() const override { return describe_; }

 private:
  Status attempt(const std::string& address, const Credentials& cred, bool smb1, Clock::time_point deadline,
                 NTSTATUS& nt);
  Status failure(const std::string& what, NTSTATUS st, const Credentials& cred) const;
  void close() {
    talloc_free(pipe_mem_);
    pipe_mem_ = nullptr;
    pipe_ = nullptr;
  }

  SmbTarget target_;
  std::string who_, describe_;
  std::chrono::milliseconds timeout_;
  TALLOC_CTX* mem_ = nullptr;
  tevent_context* ev_ = nullptr;
  TALLOC_CTX* pipe_mem_ = nullptr;  // the connection: pipe, SMB session, socket, lp, credentials
  dcerpc_pipe* pipe_ = nullptr;
};

Status SmbChannel::failure(const std::string& what, NTSTATUS st, const Credentials& cred) const {
  const std::string hint = hint_for(NT_STATUS_V(st), target_, cred, true);
  return Status::IOError(what + " failed with " + nt_name(st) + (hint.empty() ? "" : ": " + hint));
}

Status SmbChannel::attempt(const std::string& address, const Credentials& cred, bool smb1, Clock::time_point deadline,
                           NTSTATUS& nt) {
  close();
  pipe_mem_ = talloc_new(mem_);
  loadparm_context* lp = nullptr;
  if (Status s = make_loadparm(pipe_mem_, target_, smb1, lp); !s.ok()) return s;
  cli_credentials* creds = make_credentials(pipe_mem_, lp, cred);
  dcerpc_binding* b = nullptr;
  if (!creds || !NT_STATUS_IS_OK(dcerpc_parse_binding(pipe_mem_, "ncacn_np:", &b)))
    return Status::IOError("out of memory setting up Samba's client");
  dcerpc_binding_set_string_option(b, "host", address.c_str());
  dcerpc_binding_set_string_option(b, "target_hostname", target_.host.c_str());  // Kerberos' service name
  dcerpc_binding_set_string_option(b, "endpoint", "\\pipe\\winreg");
  if (!smb1) dcerpc_binding_set_flags(b, DCERPC_SMB2, 0);

  composite_context* c = dcerpc_pipe_connect_b_send(pipe_mem_, b, &ndr_table_winreg, creds, ev_, lp);
  if (!c) return Status::IOError("out of memory setting up Samba's client");
  Deadline d(ev_, left_until(deadline));
  while (!composite_finished(c) && !d.expired) tevent_loop_once(ev_);
  if (!composite_finished(c)) {
    close();  // frees the composite and everything it started
    nt = NT_STATUS_IO_TIMEOUT;
    return Status::Ok();
  }
  nt = dcerpc_pipe_connect_b_recv(c, pipe_mem_, &pipe_);
  return Status::Ok();
}

Status SmbChannel::connect(const Credentials& cred) {
  const auto deadline = Clock::now() + timeout_;
  std::string address;
  if (Status s = resolve_and_probe(target_, deadline, address); !s.ok()) return s;
  std::call_once(samba_init_once, [] { dcerpc_init(); });
  std::lock_guard lk(samba_mu);

  const bool smb2 = target_.max_protocol != "NT1";
  const bool smb1 = target_.min_protocol == "NT1" || target_.max_protocol == "NT1";
  NTSTATUS nt = NT_STATUS_OK;
  bool used_smb1 = !smb2;
  if (Status s = attempt(address, cred, used_smb1, deadline, nt); !s.ok()) return s;
  // A server without SMB2 ends the SMB2 negotiation at once; an SMB1-capable range then retries.
  const uint32_t v = NT_STATUS_V(nt);
  if (smb2 && smb1 && (v == 0xC00000BB || v == 0xC00000C3 || v == 0xC000020C || v == 0xC000020D) &&
      Clock::now() < deadline) {
    used_smb1 = true;
    if (Status s = attempt(address, cred, true, deadline, nt); !s.ok()) return s;
  }
  const std::string endpoint = "ncacn_np:" + target_.host + "[\\pipe\\winreg] port " + std::to_string(target_.port);
  if (!NT_STATUS_IS_OK(nt)) {
    close();
    if (NT_STATUS_V(nt) == 0xC00000B5)
      return Status::IOError("connecting to " + endpoint + " timed out after " + std::to_string(timeout_.count()) +
                             " ms: " + hint_for(0xC00000B5, target_, cred, true));
    return failure("connecting to " + endpoint + " as " + who_, nt, cred);
  }
  pipe_->conn->max_total_response_size = 80u * 1024 * 1024;  // as the TCP channel: Global can be large
  dcerpc_binding_handle_set_timeout(pipe_->binding_handle, uint32_t(timeout_.count() / 1000 + 2));  // ours fires first
  describe_ = endpoint + " as " + who_ + (used_smb1 ? ", SMB1" : ", SMB2/3") +
              (dcerpc_transport_encrypted(pipe_) ? ", encrypted" : "") + (target_.require_signing ? ", signed" : "");
  return Status::Ok();
}

Status SmbChannel::call(uint16_t opnum, ByteView stub, Bytes& out) {
  std::lock_guard lk(samba_mu);
  if (!pipe_) return Status::IOError(describe_ + ": the connection is closed (an earlier call failed or timed out)");
  TALLOC_CTX* tmp = talloc_new(mem_);
  pipe_->last_fault_code = 0;
  tevent_req* req =
      dcerpc_binding_handle_raw_call_send(tmp, ev_, pipe_->binding_handle, nullptr, opnum, 0, stub.data(), stub.size());
  if (!req) {
    talloc_free(tmp);
    return Status::IOError("out of memory sending a winreg call");
  }
  {
    Deadline d(ev_, timeout_);
    while (tevent_req_is_in_progress(req) && !d.expired) tevent_loop_once(ev_);
  }
  if (tevent_req_is_in_progress(req)) {
    talloc_free(tmp);
    close();  // the answer may still come: the stream is out of step
    return Status::IOError(describe_ + ": no answer to winreg call " + std::to_string(opnum) + " within " +
                           std::to_string(timeout_.count()) + " ms");
  }
  uint8_t* data = nullptr;
  size_t len = 0;
  uint32_t flags = 0;
  const NTSTATUS st = dcerpc_binding_handle_raw_call_recv(req, tmp, &data, &len, &flags);
  if (NT_STATUS_IS_OK(st)) out.assign(data, data + len);
  talloc_free(tmp);
  if (NT_STATUS_IS_OK(st)) return Status::Ok();
  if (pipe_->last_fault_code != 0) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", pipe_->last_fault_code);
    return Status::IOError(std::string("the server answered with DCE/RPC fault ") + buf);
  }
  if (!dcerpc_binding_handle_is_connected(pipe_->binding_handle)) close();
  const std::string hint = hint_for(NT_STATUS_V(st), target_, Credentials{}, false);
  return Status::IOError(describe_ + ": winreg call " + std::to_string(opnum) + " failed with " + nt_name(st) +
                         (hint.empty() ? "" : ": " + hint));
}

}  // namespace

bool smb_supported() { return true; }

Status connect_smb(const SmbTarget& target, const Credentials& credentials, std::chrono::milliseconds timeout,
                   std::unique_ptr<Channel>& out) {
  if (target.host.empty()) return Status::InvalidArgument("no SMB host given");
  if (target.require_encryption && target.max_protocol == "NT1")
    return Status::InvalidArgument("SMB encryption needs SMB 3; the dialect range allows only NT1");
  std::unique_ptr<SmbChannel> ch;
  {
    std::lock_guard lk(samba_mu);  // its talloc context and tevent loop; the TCP probe runs unlocked
    ch = std::make_unique<SmbChannel>(target, credentials, timeout);
  }
  if (Status s = ch->connect(credentials); !s.ok()) return s;
  out = std::move(ch);
  return Status::Ok();
}

}  // namespace perfsim::recorder
