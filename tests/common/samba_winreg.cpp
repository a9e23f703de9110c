#include "tests/common/samba_winreg.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/common/host_tools.h"
#include "tests/interop/support.h"

namespace perfsim::testing {
namespace {

namespace fs = std::filesystem;
using interop::run_command;
using interop::shell_quote;
using namespace std::chrono_literals;

// SIGTERM to every process naming `conf`, SIGKILL to those left after 10 s.
void end_processes(const std::string& conf) {
  for (pid_t p : pids_mentioning(conf)) ::kill(p, SIGTERM);
  for (int i = 0; i < 200 && !pids_mentioning(conf).empty(); ++i) std::this_thread::sleep_for(50ms);
  for (pid_t p : pids_mentioning(conf)) ::kill(p, SIGKILL);
}

std::string tail(const std::string& path, size_t lines) {
  const std::string text = read_text(path);
  size_t pos = text.size();
  for (size_t n = 0; n <= lines && pos > 0; ++n) pos = text.rfind('\n', pos - 1);
  return text.substr(pos == std::string::npos ? 0 : pos);
}

// smb.conf's directory settings and the subdirectory each gets in the private tree.
constexpr std::pair<const char*, const char*> kDirs[] = {{"private dir", "private"}, {"state directory", "state"},
                                                         {"lock directory", "lock"}, {"cache directory", "cache"},
                                                         {"pid directory", "pid"},   {"ncalrpc dir", "ncalrpc"}};

std::string smb_conf(const SambaWinregConfig& c, uint16_t port) {
  const std::string r = c.dir;
  std::string s = "# Samba's own winreg server for a perfsim test\n[global]\n";
  auto set = [&s](const std::string& k, const std::string& v) { s += "\t" + k + " = " + v + "\n"; };
  set("server role", "standalone server");
  set("netbios name", "SAMBAWINREG");
  set("workgroup", "WORKGROUP");
  set("smb ports", std::to_string(port));
  set("interfaces", c.address);
  set("bind interfaces only", "yes");
  set("disable netbios", "yes");
  for (const auto& [key, sub] : kDirs) set(key, r + "/" + sub);
  set("passdb backend", "tdbsam:" + r + "/private/passdb.tdb");
  set("log file", r + "/log/log.%m");
  set("map to guest", "Bad User");
  set("load printers", "no");
  set("printcap name", "/dev/null");
  set("disable spoolss", "yes");
  set("server min protocol", "NT1");
  // The default ("yes") lets smbd start samba-dcerpcd, which starts rpcd_winreg when a client opens
  // \PIPE\winreg. "no" with no samba-dcerpcd running leaves smbd without any RPC pipe.
  set("rpc start on demand helpers", c.winreg ? "yes" : "no");
  return s + c.extra_global;
}

}  // namespace

Status samba_server_available() {
  if (::geteuid() != 0) return Status::Unsupported("Samba's smbd needs root");
  for (const char* f :
       {"/usr/sbin/smbd", "/usr/bin/pdbedit", "/usr/libexec/samba/samba-dcerpcd", "/usr/libexec/samba/rpcd_winreg"})
    if (::access(f, X_OK) != 0)
      return Status::NotFound(std::string(f) + " is missing: run scripts/install-deps.sh (samba)");
  return Status::Ok();
}

Status SambaWinregServer::start(const SambaWinregConfig& cfg) {
  stop();
  if (Status s = samba_server_available(); !s.ok()) return s;
  cfg_ = cfg;
  cfg_.dir = fs::absolute(cfg.dir).string();
  end_processes(conf());  // left by a test that crashed
  std::error_code ec;
  fs::remove_all(cfg_.dir, ec);
  for (const auto& d : kDirs) fs::create_directories(cfg_.dir + "/" + d.second, ec);
  fs::create_directories(cfg_.dir + "/log", ec);
  if (ec) return Status::IOError("cannot create " + cfg_.dir + ": " + ec.message());
  fs::permissions(cfg_.dir + "/private", fs::perms::owner_all, ec);
  started_ = true;
  port_ = cfg.port ? cfg.port : free_port();
  if (!lo_has(cfg_.address)) {
    const interop::CommandResult r = run_command("ip addr add " + cfg_.address + "/32 dev lo");
    if (r.exit_status != 0) return Status::IOError("ip addr add " + cfg_.address + "/32 dev lo: " + r.output);
    added_address_ = true;
  }
  std::ofstream(conf()) << smb_conf(cfg_, port_);
  for (const auto& [user, password] : cfg_.users) {
    const interop::CommandResult r =
        run_command("printf '%s\\n%s\\n' " + shell_quote(password) + " " + shell_quote(password) + " | pdbedit -s " +
                    shell_quote(conf()) + " -a -t -u " + shell_quote(user));
    if (r.exit_status != 0) return Status::IOError("pdbedit -a " + user + ": " + r.output);
  }
  // smbd daemonizes; its output goes to a file so the pipe to us closes.
  const interop::CommandResult r = run_command("/usr/sbin/smbd -D -s " + shell_quote(conf()) + " > " +
                                               shell_quote(cfg_.dir + "/log/smbd.out") + " 2>&1 < /dev/null");
  if (r.exit_status != 0)
    return Status::IOError("smbd -D failed: " + read_text(cfg_.dir + "/log/smbd.out") + log_tail());
  const auto deadline = std::chrono::steady_clock::now() + cfg_.ready_timeout;
  while (!tcp_accepts(cfg_.address, port_)) {
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::IOError("smbd did not accept on " + cfg_.address + ":" + std::to_string(port_) + " within " +
                             std::to_string(cfg_.ready_timeout.count()) + " ms:" + log_tail());
    std::this_thread::sleep_for(50ms);
  }
  return Status::Ok();
}

void SambaWinregServer::stop() {
  if (!started_) return;
  end_processes(conf());
  if (added_address_) run_command("ip addr del " + cfg_.address + "/32 dev lo");
  added_address_ = false;
  std::error_code ec;
  fs::remove_all(cfg_.dir, ec);
  started_ = false;
}

std::string SambaWinregServer::log_tail() const {
  std::string out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cfg_.dir + "/log", ec))
    if (e.is_regular_file()) out += "\n--- " + e.path().string() + ":" + tail(e.path().string(), 10);
  return out;
}

std::string SambaWinregServer::sessions() const {
  return run_command("timeout 30 smbstatus -b -s " + shell_quote(conf())).output;
}

}  // namespace perfsim::testing
