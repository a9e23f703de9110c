#include "server/smbd.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>

#include "core/subprocess.h"
#include "windows/os.h"

namespace perfsim::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Runs a short system tool to completion; `input` goes to its stdin. Output (both streams) returned.
int run_tool(const std::vector<std::string>& args, const std::string& input, std::string& output) {
  subprocess::ExitStatus st;
  if (Status s = subprocess::run(args, input, output, st); !s.ok()) {
    output += s.message();
    return -1;
  }
  return st.code;
}

// Starts a daemon in its own session (smbd kills its whole process group when it exits), with
// stdout/stderr into `log_path`; it gets SIGTERM if this thread's process dies. pid -1 on failure.
subprocess::Child spawn_daemon(const std::vector<std::string>& args, const std::string& log_path) {
  subprocess::Options o;
  o.out = subprocess::Stream::kFile;
  o.out_path = log_path;
  o.err = subprocess::Stream::kStdout;
  o.new_session = true;
  o.parent_death_signal = SIGTERM;
  subprocess::Child c;
  (void)subprocess::start(args, o, c);  // a failure leaves pid -1, which start() reports
  return c;
}

// Kills a daemon's process group (itself and the children it forked per client).
void kill_group(subprocess::Child& c) { subprocess::stop(c, 10s, /*group=*/true); }

// Reaps a daemon that died and kills its group: its children serve clients of a dead parent.
bool reap_dead(subprocess::Child& c, subprocess::ExitStatus& st) {
  const pid_t pid = c.pid;
  if (pid <= 0 || !subprocess::poll(c, st)) return false;
  ::kill(-pid, SIGKILL);
  return true;
}

bool ipv4(const std::string& text, in_addr& out) { return ::inet_pton(AF_INET, text.c_str(), &out) == 1; }

bool address_on_this_machine(const std::string& address) {
  in_addr want{};
  if (!ipv4(address, want)) return false;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* i = list; i && !found; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
      found = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == want.s_addr;
  ::freeifaddrs(list);
  return found;
}

sockaddr_in endpoint(const std::string& address, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ipv4(address, a.sin_addr);
  return a;
}

// errno of binding address:port, 0 when free.
int bind_error(const std::string& address, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in a = endpoint(address, port);
  const int err = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

bool accepts(const std::string& address, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = endpoint(address, port);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Whether a unix stream socket at `path` takes a connection (samba-dcerpcd listening on it).
bool accepts_unix(const fs::path& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof a.sun_path) return false;
  std::memcpy(a.sun_path, p.c_str(), p.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::string tail(const std::string& path, size_t lines) {
  std::ifstream f(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(f, l);) all.push_back(l);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "\n  " + all[i];
  return out;
}

bool write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::trunc);
  f << text;
  return bool(f);
}

// One address's include. smbd loads it per connection, for the address the client reached (%i),
// before it answers the NEGOTIATE, so these globals hold per host (tests/smb): the dialects, `ntlm
// auth`, `map to guest` (read at the SESSION_SETUP, after the include), and `netbios name`, which smbd puts in the NTLMSSP CHALLENGE's MsvAvNbComputerName (and
// MsvAvNbDomainName: a standalone server's target name is its own name, as a Windows workgroup
// host's is) and in an SMB1 NEGOTIATE's ServerName (auth/ntlmssp/gensec_ntlmssp_server.c,
// ntlmssp_server.c; source3/smbd/smb1_negprot.c reply_nt1). What it cannot change per host is in
// README.md, Known differences.
std::string host_include(const SmbHostAddress& h) {
  std::string text = "# " + h.address + "\n\tserver min protocol = " + h.dialects.min +
                     "\n\tserver max protocol = " + h.dialects.max +
                     "\n\tntlm auth = " + (h.ntlmv1 ? "ntlmv1-permitted" : "ntlmv2-only") +
                     "\n\tmap to guest = " + (h.guest ? "Bad User" : "Never") + "\n";
  // smb.conf would expand a '%' (substitutions) and end the value at a line break; Windows allows
  // '%' in a computer name (SetComputerNameEx), so it becomes '-' here only.
  std::string name;
  for (char c : h.netbios_name) name += (c == '%' || c == '\n' || c == '\r') ? '-' : c;
  if (!name.empty()) text += "\tnetbios name = " + name + "\n";
  return text;
}

}  // namespace

SmbDialects smb_dialects_for_profile(const std::string& profile) {
  const windows::OsProfile* os = windows::find_os(profile);
  if (!os) return {};  // a capture of no known OS: what Windows 10/2016 and later speak
  return {std::string(os->smb.min), std::string(os->smb.max)};
}

struct Smbd::Impl {
  explicit Impl(SmbdConfig c) : cfg(std::move(c)) {
    root = fs::absolute(cfg.dir);
    ncalrpc = root / "ncalrpc";
    pipes = root / "pipes";
  }

  void log(std::string_view event, std::initializer_list<std::pair<std::string_view, std::string>> kv,
           LogLevel level = LogLevel::kInfo) {
    if (!cfg.log) return;
    LogLine line(event, level);
    for (const auto& [k, v] : kv) line.kv(k, v);
    line.emit(cfg.log);
  }

  std::string conf_path() const { return (root / "smb.conf").string(); }

  std::string smb_conf() const {
    std::string interfaces;
    for (const SmbHostAddress& h : cfg.hosts) interfaces += (interfaces.empty() ? "" : " ") + h.address;
    const std::string r = root.string();
    std::string c = "# written by perfsim serve --smb; removed when it stops\n[global]\n";
    auto set = [&c](const std::string& k, const std::string& v) { c += "\t" + k + " = " + v + "\n"; };
    set("server role", "standalone server");
    set("netbios name", "PERFSIM");  // each host's own in its include (host_include)
    // Samba's default, "Samba %v", is what SMB1's RAP NetServerGetInfo (smbclient -L -m NT1)
    // reports as the comment; a Windows server's comment is empty unless an admin sets one, as
    // our srvsvc answers (netapi/README.md).
    set("server string", "");
    set("workgroup", "WORKGROUP");
    set("smb ports", std::to_string(cfg.port));
    if (cfg.one_socket) {
      // smbd listens on the wildcard; only these clients are served (the loopback guarantee).
      std::string allow;
      for (const std::string& n : cfg.clients) allow += (allow.empty() ? "" : " ") + n;
      set("bind interfaces only", "no");
      if (!allow.empty()) {
        set("hosts allow", allow);
        set("hosts deny", "ALL");
      }
    } else {
      set("interfaces", interfaces);
      set("bind interfaces only", "yes");
    }
    set("disable netbios", "yes");
    set("private dir", r + "/private");
    set("state directory", r + "/state");
    set("lock directory", r + "/lock");
    set("cache directory", r + "/cache");
    set("pid directory", r + "/pid");
    set("ncalrpc dir", ncalrpc.string());
    set("passdb backend", "tdbsam:" + r + "/private/passdb.tdb");
    set("log file", r + "/log/%m.log");
    set("max log size", "1000");
    // perfsim owns <pipes>/np/{winreg,srvsvc,wkssvc}; samba-dcerpcd (started by us with
    // rpcd_classic and rpcd_lsad, without rpcd_winreg) serves lsarpc from the ncalrpc dir.
    set("rpc start on demand helpers", "no");
    set("external_rpc_pipe:socket_dir", pipes.string());
    set("map to guest", "Never");  // each address's include says it (host_include)
    set("restrict anonymous", cfg.anonymous ? "0" : "2");
    if (cfg.require_encryption) set("server smb encrypt", "required");
    // Bounds on what a client costs before it does anything (issue 54; smb.conf(5)): a connection
    // with no file open (a NEGOTIATE alone, a session that opened no pipe) closes after a minute,
    // the least `deadtime` says; a collector holding \PIPE\winreg open has a file open and stays.
    // Beyond `max smbd processes` smbd refuses new connections: one child per connection, about
    // 0.6 MB PSS each (300 connections: 180 MB, issue 54).
    set("deadtime", "1");
    if (cfg.max_processes) set("max smbd processes", std::to_string(cfg.max_processes));
    set("load printers", "no");
    set("printcap name", "/dev/null");
    set("disable spoolss", "yes");
    set("server min protocol", "NT1");  // the floor; each address narrows it in its include
    set("include", r + "/hosts/%i.conf");
    // One read-only, empty share, so a share list (smbclient -L) shows smbd's own services work.
    // Windows keeps null sessions off every share not in NullSessionShares (empty by default;
    // RestrictNullSessAccess, windows/README.md), and a guest reads one only where Guest is
    // enabled; smbd's `guest ok` admits both, so only a fleet with a guest host sets it.
    const bool guests =
        std::any_of(cfg.hosts.begin(), cfg.hosts.end(), [](const SmbHostAddress& h) { return h.guest; });
    c += "[perfsim]\n\tcomment = perfsim simulated host\n\tpath = " + r +
         "/share\n\tread only = yes\n\tguest ok = " + (guests ? "yes" : "no") + "\n";
    return c;
  }

  Status make_tree() {
    std::error_code ec;
    for (const char* d : {"private", "state", "lock", "cache", "pid", "log", "hosts", "ncalrpc", "pipes/np", "share"})
      fs::create_directories(root / d, ec);
    if (ec) return Status::IOError("cannot create " + root.string() + ": " + ec.message());
    // smbd refuses an np dir that is not root-only.
    ::chmod((pipes / "np").c_str(), 0700);
    // lsarpc (rpcclient lsaquery, net rpc ...) is Samba's own rpcd_lsad on the ncalrpc dir: smbd
    // looks for every pipe under external_rpc_pipe:socket_dir, so a link sends it there.
    for (const char* name : {"lsarpc", "lsass"}) {
      fs::create_symlink(ncalrpc / "np" / name, pipes / "np" / name, ec);
      if (ec) return Status::IOError("cannot link the " + std::string(name) + " pipe: " + ec.message());
    }
    ::chmod((root / "private").c_str(), 0700);
    if (!write_file(conf_path(), smb_conf())) return Status::IOError("cannot write " + conf_path());
    for (const SmbHostAddress& h : cfg.hosts) {
      if (!write_file(root / "hosts" / (h.address + ".conf"), host_include(h)))
        return Status::IOError("cannot write the include for " + h.address);
    }
    return Status::Ok();
  }

  Status add_addresses() {
    for (const SmbHostAddress& h : cfg.hosts) {
      in_addr a{};
      if (!ipv4(h.address, a)) return Status::InvalidArgument("SMB host address '" + h.address + "' is not IPv4");
      // One wildcard socket needs no interface address, only one the kernel delivers locally.
      if (cfg.one_socket && bind_error(h.address, 0) == 0) continue;
      if (address_on_this_machine(h.address)) continue;
      if (!cfg.add_addresses)
        return Status::InvalidArgument(h.address +
                                       " is on no interface and adding addresses is off; run `ip addr add " +
                                       h.address + "/32 dev lo`");
      std::string out;
      if (run_tool({"/usr/sbin/ip", "addr", "add", h.address + "/32", "dev", "lo"}, "", out) != 0)
        return Status::IOError("ip addr add " + h.address + "/32 dev lo failed: " + out);
      added_addresses.push_back(h.address);
      log("smb_address_added", {{"address", h.address}}, LogLevel::kDebug);
    }
    return Status::Ok();
  }

  Status add_users() {
    for (const SmbUser& u : cfg.users) {
      if (u.name.empty() || u.name.find_first_of(":/\\ \t\n") != std::string::npos)
        return Status::InvalidArgument("user name '" + u.name + "' is not a plain account name");
      std::string out;
      if (!::getpwnam(u.name.c_str())) {
        if (!cfg.create_unix_users) return Status::NotFound("no unix account '" + u.name + "' (Samba needs one)");
        if (run_tool({"/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--comment",
                      "perfsim smb user", u.name},
                     "", out) != 0)
          return Status::IOError("useradd " + u.name + " failed: " + out);
        created_users.push_back(u.name);
        log("smb_unix_user_added", {{"user", u.name}});
      }
      out.clear();
      if (run_tool({"/usr/bin/pdbedit", "-s", conf_path(), "-a", "-t", "-u", u.name},
                   u.password + "\n" + u.password + "\n", out) != 0)
        return Status::IOError("pdbedit -a " + u.name + " failed: " + out);
    }
    return Status::Ok();
  }

  Status check_ports() {
    if (cfg.one_socket) {
      if (const int err = bind_error("0.0.0.0", cfg.port); err != 0)
        return Status::IOError("SMB port 0.0.0.0:" + std::to_string(cfg.port) + " is not available: " +
                               std::strerror(err) + " (another smbd? choose another port with --smb=PORT)");
      return Status::Ok();
    }
    for (const SmbHostAddress& h : cfg.hosts)
      if (const int err = bind_error(h.address, cfg.port); err != 0)
        return Status::IOError("SMB port " + h.address + ":" + std::to_string(cfg.port) + " is not available: " +
                               std::strerror(err) + " (another smbd? choose another port with --smb=PORT)");
    return Status::Ok();
  }

  subprocess::Child launch_smbd() {
    return spawn_daemon({cfg.smbd, "-s", conf_path(), "--foreground", "--no-process-group"},
                        (root / "log" / "smbd.out").string());
  }

  subprocess::Child launch_dcerpcd() {
    if (::access(cfg.dcerpcd.c_str(), X_OK) != 0) return {};
    std::vector<std::string> args = {cfg.dcerpcd, "-s", conf_path(), "--foreground", "--no-process-group"};
    for (const char* rpcd : {"rpcd_classic", "rpcd_lsad"})
      if (::access(rpcd_path(rpcd).c_str(), X_OK) == 0) args.push_back(rpcd_path(rpcd).string());
    return spawn_daemon(args, (root / "log" / "dcerpcd.out").string());
  }

  // An rpcd_* helper beside samba-dcerpcd (Samba's libexec).
  fs::path rpcd_path(const char* rpcd) const { return fs::path(cfg.dcerpcd).parent_path() / rpcd; }

  // Polls `ready` every 20 ms until it holds; an error when `daemon` exits first (with the tail of
  // each of its `logs`) or `deadline` passes. `doing`/`done`: "accepting on X" / "accept on X".
  Status wait_until(subprocess::Child& daemon, const std::string& name, const std::string& doing,
                    const std::string& done, std::initializer_list<const char*> logs, Clock::time_point deadline,
                    const std::function<bool()>& ready) {
    while (!ready()) {
      if (subprocess::ExitStatus st; subprocess::poll(daemon, st)) {
        std::string text = name + " exited (status " + std::to_string(st.code) + ") before " + doing + "; its log:";
        for (const char* log : logs) text += tail((root / "log" / log).string(), 8);
        return Status::IOError(text);
      }
      if (Clock::now() >= deadline)
        return Status::IOError(name + " did not " + done + " within " + std::to_string(cfg.ready_timeout.count()) +
                               " ms");
      std::this_thread::sleep_for(20ms);
    }
    return Status::Ok();
  }

  // Waits until samba-dcerpcd listens on lsarpc: it asks each rpcd_* for its interfaces before it
  // binds their sockets, and smbd answers an open of a pipe with no socket yet with
  // OBJECT_NAME_NOT_FOUND, so "ready" before this would fail a collector's first lsarpc open.
  Status wait_dcerpcd_ready(Clock::time_point deadline) {
    if (dcerpcd.pid <= 0 || ::access(rpcd_path("rpcd_lsad").c_str(), X_OK) != 0) return Status::Ok();
    const fs::path lsarpc = ncalrpc / "np" / "lsarpc";
    return wait_until(dcerpcd, "samba-dcerpcd", "listening on " + lsarpc.string(), "listen on " + lsarpc.string(),
                      {"dcerpcd.out"}, deadline, [&] { return accepts_unix(lsarpc); });
  }

  // Waits until smbd accepts on every address, or it exits, or the time is up.
  Status wait_ready(subprocess::Child& daemon, Clock::time_point deadline) {
    // One socket: accepting on one address is accepting on all (each probe costs smbd a fork).
    const size_t probes = cfg.one_socket ? 1 : cfg.hosts.size();
    for (size_t i = 0; i < probes; ++i) {
      const std::string where = cfg.hosts[i].address + ":" + std::to_string(cfg.port);
      if (Status st =
              wait_until(daemon, "smbd", "accepting on " + where, "accept on " + where, {"smbd.out", "smbd.log"},
                         deadline, [&] { return accepts(cfg.hosts[i].address, cfg.port); });
          !st.ok())
        return st;
    }
    return Status::Ok();
  }

  // Restarts smbd (and samba-dcerpcd) when they die, at most 5 times a minute each.
  void supervise() {
    std::vector<Clock::time_point> smbd_restarts, dcerpcd_restarts;
    auto may_restart = [](std::vector<Clock::time_point>& history) {
      const auto now = Clock::now();
      std::erase_if(history, [&](Clock::time_point t) { return now - t > 60s; });
      if (history.size() >= 5) return false;
      history.push_back(now);
      return true;
    };
    std::unique_lock lk(mu);
    while (!stopping) {
      cv.wait_for(lk, 100ms, [&] { return stopping; });
      if (stopping) break;
      subprocess::ExitStatus st;
      if (reap_dead(smbd, st)) {
        const std::string how = subprocess::describe(st);
        if (cfg.restart && may_restart(smbd_restarts)) {
          smbd = launch_smbd();
          ++restart_count;
          log("smbd_restart", {{"how", how}, {"pid", std::to_string(smbd.pid)}}, LogLevel::kWarn);
        } else {
          log("smbd_gone", {{"how", how}, {"detail", "not restarting (5 restarts within a minute, or restart off)"}},
              LogLevel::kError);
        }
      }
      if (reap_dead(dcerpcd, st)) {
        if (cfg.restart && may_restart(dcerpcd_restarts)) dcerpcd = launch_dcerpcd();
      }
    }
  }

  void undo() {
    std::string out;
    for (const std::string& u : created_users) {
      out.clear();
      run_tool({"/usr/sbin/userdel", u}, "", out);
    }
    created_users.clear();
    for (const std::string& a : added_addresses) {
      out.clear();
      run_tool({"/usr/sbin/ip", "addr", "del", a + "/32", "dev", "lo"}, "", out);
      log("smb_address_removed", {{"address", a}}, LogLevel::kDebug);
    }
    added_addresses.clear();
    std::error_code ec;
    if (prepared) fs::remove_all(root, ec);
    prepared = false;
  }

  SmbdConfig cfg;
  fs::path root, ncalrpc, pipes;
  std::vector<std::string> added_addresses, created_users;
  bool prepared = false;

  std::mutex mu;  // guards the pids and stopping against the supervisor
  std::condition_variable cv;
  bool stopping = false;
  subprocess::Child smbd, dcerpcd;  // pid -1 when not running
  std::atomic<int> restart_count{0};
  std::thread supervisor;
};

Smbd::Smbd(SmbdConfig cfg) : impl_(std::make_unique<Impl>(std::move(cfg))) {}

Smbd::~Smbd() { stop(); }

std::string Smbd::winreg_socket() const { return (impl_->pipes / "np" / "winreg").string(); }

Status Smbd::prepare() {
  Impl& m = *impl_;
  if (m.cfg.hosts.empty()) return Status::InvalidArgument("no SMB host address");
  if (::access(m.cfg.smbd.c_str(), X_OK) != 0)
    return Status::NotFound(m.cfg.smbd + " not found: install samba (scripts/install-deps.sh)");
  if (::geteuid() != 0) return Status::InvalidArgument("serving SMB needs root (smbd, pdbedit and the np socket do)");
  if (Status st = m.check_ports(); !st.ok()) return st;
  if (fs::exists(m.root) && !fs::is_empty(m.root))
    return Status::InvalidArgument(m.root.string() + " exists and is not empty; perfsim wants a fresh directory");
  m.prepared = true;
  Status st = m.make_tree();
  if (st.ok()) st = m.add_addresses();
  if (st.ok()) st = m.add_users();
  if (!st.ok()) m.undo();
  return st;
}

Status Smbd::start() {
  Impl& m = *impl_;
  if (!m.prepared) return Status::InvalidArgument("Smbd::start() before prepare()");
  {
    std::lock_guard lk(m.mu);
    m.stopping = false;
    m.dcerpcd = m.launch_dcerpcd();
    m.smbd = m.launch_smbd();
  }
  if (m.smbd.pid <= 0) {
    stop();
    return Status::IOError("cannot start " + m.cfg.smbd);
  }
  const auto deadline = Clock::now() + m.cfg.ready_timeout;
  Status st = m.wait_ready(m.smbd, deadline);
  if (st.ok()) st = m.wait_dcerpcd_ready(deadline);
  if (!st.ok()) {
    stop();
    return st;
  }
  m.log("smbd_ready",
        {{"pid", std::to_string(m.smbd.pid)}, {"port", std::to_string(m.cfg.port)}, {"conf", m.conf_path()}});
  m.supervisor = std::thread([&m] { m.supervise(); });
  return Status::Ok();
}

void Smbd::stop() {
  Impl& m = *impl_;
  {
    std::lock_guard lk(m.mu);
    m.stopping = true;
  }
  m.cv.notify_all();
  if (m.supervisor.joinable()) m.supervisor.join();
  const pid_t smbd_pid = m.smbd.pid;
  kill_group(m.smbd);
  kill_group(m.dcerpcd);
  if (smbd_pid > 0) m.log("smbd_stop", {{"pid", std::to_string(smbd_pid)}});
  m.undo();
}

int Smbd::restarts() const { return impl_->restart_count; }
int Smbd::smbd_pid() const {
  std::lock_guard lk(impl_->mu);
  return std::max(impl_->smbd.pid, 0);
}

}  // namespace perfsim::server
