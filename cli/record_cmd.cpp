// perfsim record: connect to a host, record it into a capture (recorder/record.h), print what the
// fingerprint found odd.
#include <fmt/core.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "recorder/credentials.h"
#include "recorder/record.h"
#include "recorder/smb_channel.h"
#include "recorder/tcp_channel.h"

namespace perfsim::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

struct Target {
  bool smb = false;
  std::string host;
  uint16_t port = 0;
};

Status parse_port(const std::string& text, const std::string& whole, uint16_t& port) {
  try {
    size_t used = 0;
    const unsigned long p = std::stoul(text, &used);
    if (used == text.size() && p > 0 && p <= 65535) {
      port = uint16_t(p);
      return Status::Ok();
    }
  } catch (...) {
  }
  return Status::InvalidArgument("port in '" + whole + "' must be 1..65535");
}

// ADDR:PORT and tcp:ADDR:PORT are ncacn_ip_tcp; smb:HOST[:PORT] and \\HOST are SMB named pipes.
Status parse_target(const std::string& t, Target& out) {
  std::string rest = t;
  if (rest.rfind("\\\\", 0) == 0) {
    out.smb = true;
    out.host = rest.substr(2);
    out.port = 445;
    return out.host.empty() ? Status::InvalidArgument("'\\\\' needs a host name, e.g. \\\\server01") : Status::Ok();
  }
  if (rest.rfind("smb:", 0) == 0) { out.smb = true; rest = rest.substr(4); }
  else if (rest.rfind("tcp:", 0) == 0) rest = rest.substr(4);
  const size_t colon = rest.rfind(':');
  const bool bracketed = !rest.empty() && rest.front() == '[';
  if (colon == std::string::npos || (bracketed && rest[colon - 1] != ']')) {
    if (!out.smb)
      return Status::InvalidArgument("target '" + t + "' needs a port for ncacn_ip_tcp (ADDR:PORT, e.g. 127.0.0.1:4135), "
                                     "or say smb:HOST for \\PIPE\\winreg over SMB");
    out.host = rest;
    out.port = 445;
  } else {
    out.host = rest.substr(0, colon);
    if (Status s = parse_port(rest.substr(colon + 1), t, out.port); !s.ok()) return s;
  }
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty()) return Status::InvalidArgument("target '" + t + "' names no host");
  return Status::Ok();
}

// The SMB side of the options: target settings and who logs on.
Status smb_settings(const RecordOptions& o, const Target& t, recorder::SmbTarget& target, recorder::Credentials& creds) {
  target.host = t.host;
  target.port = t.port;
  target.require_signing = o.sign;
  target.require_encryption = o.encrypt;
  if (!o.smb_protocols.empty()) {
    const size_t dash = o.smb_protocols.find('-');
    if (dash == std::string::npos) return Status::InvalidArgument("--smb-protocols wants MIN-MAX, e.g. SMB2_02-SMB3_11");
    target.min_protocol = o.smb_protocols.substr(0, dash);
    target.max_protocol = o.smb_protocols.substr(dash + 1);
  }
  recorder::CredentialOptions co;
  co.user = o.user;
  co.domain = o.domain;
  co.password = o.password;
  co.auth_file = o.auth_file;
  co.anonymous = o.anonymous;
  if (o.kerberos) {
    recorder::Credentials::Kerberos k;
    if (Status s = recorder::parse_kerberos(*o.kerberos, k); !s.ok()) return s;
    co.kerberos = k;
  }
  return recorder::resolve_credentials(co, recorder::process_environment(), creds);
}

bool smb_only_options(const RecordOptions& o) {
  return o.user || o.domain || o.password || o.auth_file || o.kerberos || o.anonymous || !o.smb_protocols.empty() || o.sign || o.encrypt;
}

std::string megabytes(uint64_t b) { return fmt::format("{:.1f} MB", double(b) / 1e6); }

}  // namespace

int run_record(const RecordOptions& o) {
  Target target;
  if (Status s = parse_target(o.target, target); !s.ok()) return fail("record", s.message(), kExitUsage);
  if (o.interval_s <= 0) return fail("record", "--interval must be more than 0 seconds", kExitUsage);
  if (o.timeout_s <= 0) return fail("record", "--timeout must be more than 0 seconds", kExitUsage);
  if (o.duration_s < 0) return fail("record", "--duration must not be negative", kExitUsage);

  recorder::RecordOptions ro;
  if (!o.queries.empty()) ro.queries = o.queries;
  if (!o.languages.empty()) ro.languages = o.languages;
  ro.interval = std::chrono::milliseconds(int64_t(o.interval_s * 1000));
  ro.count = o.count;
  ro.duration = std::chrono::milliseconds(int64_t(o.duration_s * 1000));
  ro.host_name = target.host;
  ro.stop = &g_stop;
  Progress bar("record", 0);
  ro.progress = [&](const recorder::RecordProgress& p) {
    bar.text(fmt::format("{}{} samples, {}, {} errors", p.samples, p.target ? fmt::format("/{}", p.target) : "", megabytes(p.bytes), p.errors));
  };

  const std::chrono::milliseconds timeout(int64_t(o.timeout_s * 1000));
  std::unique_ptr<recorder::Channel> ch;
  if (target.smb) {
    recorder::SmbTarget st;
    recorder::Credentials creds;
    if (Status s = smb_settings(o, target, st, creds); !s.ok()) return fail("record", s.message(), kExitUsage);
    if (!recorder::smb_supported()) return fail("record", "this perfsim was built without Samba's client libraries (samba-dev): record over ncacn_ip_tcp");
    if (Status s = recorder::connect_smb(st, creds, timeout, ch); !s.ok()) return fail("record", s.message());
  } else {
    if (smb_only_options(o)) return fail("record", "credentials and --smb-protocols/--sign/--encrypt apply to SMB targets (smb:HOST or \\\\HOST); ncacn_ip_tcp here is unauthenticated", kExitUsage);
    if (Status s = recorder::connect_tcp(target.host, target.port, timeout, ch); !s.ok()) return fail("record", s.message());
  }
  const std::string source = ch->describe();
  recorder::WinregClient client(std::move(ch));

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  recorder::RecordResult r;
  const Status s = recorder::record(client, o.out, ro, r);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  bar.finish();
  if (!s.ok() && r.samples == 0) return fail("record", s.message());

  if (o.json) {
    nlohmann::json j = {{"capture", o.out}, {"source", source}, {"host", r.host.name}, {"profile", r.host.profile},
                        {"samples", r.samples}, {"file_bytes", r.file_bytes}, {"warnings", r.warnings},
                        {"fingerprint", nlohmann::json::parse(r.fingerprint.json)}, {"ok", s.ok()}};
    if (!s.ok()) j["error"] = s.message();
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("recorded {} sample(s) of {} from {} into {} ({})\n", r.samples, r.host.name, source, o.out, megabytes(r.file_bytes));
    fmt::print("buffer behaviour: {}\n", r.fingerprint.more_data.empty() ? "not seen (no ERROR_MORE_DATA answer)" : r.fingerprint.more_data);
    for (const std::string& f : r.fingerprint.findings) fmt::print("  noted: {}\n", f);
    for (const std::string& w : r.warnings) fmt::print(stderr, "perfsim record: warning: {}\n", w);
  }
  if (!s.ok()) return fail("record", s.message() + " (the capture holds the " + std::to_string(r.samples) + " sample(s) before it)");
  return kExitOk;
}

}  // namespace perfsim::cli
