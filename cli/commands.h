// The work behind each `perfsim` subcommand. main.cpp only parses arguments into these option
// structs and calls run_*; every run_* prints its own output and returns the process exit code:
// 0 ok, 1 failure (the message says what failed and what to check), 2 usage.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/target.h"

namespace perfsim::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct InspectOptions {
  std::string path;
  bool json = false;
};
int run_inspect(const InspectOptions& o);

struct DumpOptions {
  std::string path;
  uint32_t sample = 1;           // values between sample-1 and sample (raw only for sample 0)
  std::string query = "Global";  // which recorded value to show
  std::string object;            // name or index; empty = all
  std::string lang = "009";
  bool json = false;
};
int run_dump(const DumpOptions& o);

struct ValidateOptions {
  std::string path;  // a capture, or a raw PERF_DATA_BLOCK blob
  bool json = false;
  bool strict = false;  // warnings fail too
};
int run_validate(const ValidateOptions& o);

struct SynthOptions {
  std::string spec;     // TOML/JSON spec file, or empty with `profile`
  std::string profile;  // build from a built-in profile without a spec
  std::string out;
  std::optional<uint64_t> seed;
  std::string host_name;  // overrides the spec's
  std::optional<double> duration_s;
  std::optional<double> interval_s;
  std::string names;               // lodctr /s backup or perfcLLL.dat; overrides the spec's [host] names
  std::vector<std::string> roles;  // added to the spec's [host] roles
  uint32_t format_version = 2;     // capture format: 1 for perfsim before v2
  bool json = false;
};
int run_synth(const SynthOptions& o);

struct ConvertOptions {
  std::string in, out;
  uint32_t format_version = 2;
  bool json = false;
};
int run_convert(const ConvertOptions& o);

struct ServeOptions {
  std::vector<std::string> listen;    // "ADDR:PORT" or "ADDR:PORT=SOURCE" (SOURCE: FILE.perfcap)
  std::string capture;                // default source for listeners without one
  std::string fleet;                  // TOML fleet file: [[host]] listen/capture/timeline
  std::string timeline = "realtime";  // realtime | step | frozen:K
  std::string profile;                // quirk bundle for hosts without their own (win2000, 2016, samba, ...)
  std::string faults;                 // TOML fault plan, reloaded on SIGHUP
  std::vector<std::string> quirks;    // NAME[=on|off][:PARAM=VALUE,...] for every host, over profile and fingerprint
  std::optional<double> speed;        // realtime pace of hosts whose fleet entry sets none
  std::string shard;                  // "K/N": serve every N-th host of the expanded fleet from the K-th
  bool list_hosts = false;            // print the hosts this run would serve, then exit
  std::string netns;                  // serve inside this network namespace (made, joined by a veth pair)
  std::string subnet;                 // --netns: the pair's and the hosts' addresses (A.B.C.D/P)
  std::string netns_bridge;           // --netns: enslave the outer veth end to this bridge
  unsigned threads = 0;
  size_t max_connections = 4096;
  double idle_timeout_s = 300;
  size_t cache_mb = 64;           // decoded samples held for every host (replayer/sample_cache.h)
  size_t reply_budget_mib = 512;  // unread reply bytes of all connections (server/README.md); 0 = none
  bool allow_remote = false;
  bool json = false;  // the start-up lines as JSON
  std::string admin;  // --admin ADDR:PORT: the admin HTTP API and dashboard (admin/README.md); "" = off
  std::vector<std::string> admin_hosts;  // --admin-host NAME: more Host names the admin API answers
  // --smb[=PORT]: every host also as \\ADDR\PIPE\winreg through a private smbd ("" = off,
  // "default" = 445). Root only.
  std::string smb;
  std::vector<std::string> smb_users;  // NAME:PASSWORD (pdbedit; a unix account is made if missing)
  // --user NAME:PASSWORD: the same accounts as --smb-user (both lists are merged): SMB logons and
  // authenticated DCE/RPC binds over TCP and on the pipe (rpc/auth.h).
  std::vector<std::string> users;
  bool require_auth = false;           // unauthenticated TCP binds' calls fault with access denied
  std::vector<std::string> smb_allow;  // accounts allowed OpenHKPD on hosts without smb_allow (empty: all)
  bool smb_no_anonymous = false;
  bool smb_encrypt = false;  // require SMB3 encryption of every SMB session
  std::string smb_dir;       // smbd's private tree (default: $TMPDIR/perfsim-smb-PID)
  // --epm[=PORT]: an endpoint mapper on every host address ("" = off, "default" = 135, root only).
  std::string epm;
  size_t journal_size = 10000;             // winreg calls kept in memory (journal/README.md); 0 = no journal
  std::string journal;                     // also write every call to this JSON-lines file
  std::string journal_max_mb;              // --journal-max-mb N: MiB per file (empty: journal::FileLimits')
  std::string journal_files;               // --journal-files K: FILE, FILE.1 .. FILE.K-1 (empty: the default)
  std::string scenario;                    // --scenario NAME: the scenario's hosts and faults (scenarios/)
  std::vector<std::string> scenario_dirs;  // --scenario-dir: the user's scenario files
};
int run_serve(const ServeOptions& o);

struct JournalOptions {
  // `perfsim serve --journal FILE` files: one FILE is read with its rotated files (FILE.K-1 ..
  // FILE.1, then FILE); several are read as given, in that order.
  std::vector<std::string> files;
  bool json = false;
  bool strict = false;   // an unreadable line fails the whole read (else it is skipped and counted)
  std::string scenario;  // also check the file against this scenario's diagnosis (exit 1 when it differs)
  std::vector<std::string> scenario_dirs;
};
int run_journal(const JournalOptions& o);

// `perfsim scenarios` (list) and `perfsim scenarios show NAME`.
struct ScenariosOptions {
  std::string show;  // empty: list them
  std::vector<std::string> dirs;
  bool json = false;
};
int run_scenarios(const ScenariosOptions& o);

struct QueryOptions {
  std::string endpoint;  // ADDR:PORT (ncacn_ip_tcp) or smb:HOST[:PORT] (cli/target.h)
  SmbOptions smb;
  std::vector<std::string> values;  // default: Global
  std::string growth = "returned";  // returned | double | add:N
  uint32_t initial = 64 * 1024;
  uint32_t max_tries = 16;
  uint32_t count = 1;  // polls; from the second on, values are formatted
  double interval_s = 1;
  std::string object;
  double timeout_s = 10;
  bool json = false;
};
int run_query(const QueryOptions& o);

struct LodctrOptions {
  std::string capture;  // HOST.perfcap, rewritten in place (atomically)
  std::string ini;      // the counter INI; its symbol file is looked up next to it
  std::string collect;  // optional collect spec: the provider's objects join the host's answers
  bool json = false;
};
int run_lodctr(const LodctrOptions& o);

struct UnlodctrOptions {
  std::string capture;
  std::string driver;
  bool json = false;
};
int run_unlodctr(const UnlodctrOptions& o);

struct RecordOptions {
  std::string target;  // ADDR:PORT or tcp:ADDR:PORT (ncacn_ip_tcp); smb:HOST[:PORT] or \\HOST (\PIPE\winreg)
  std::string out;
  std::vector<std::string> queries;    // default: Global
  std::vector<std::string> languages;  // default: 009 and every language Perflib lists
  double interval_s = 15;
  uint32_t count = 0;  // samples; 0 with no duration = until Ctrl-C
  double duration_s = 0;
  double timeout_s = 30;
  uint32_t format_version = 2;  // capture format: 1 for perfsim before v2
  bool json = false;
  SmbOptions smb;  // SMB targets only (cli/target.h)
};
int run_record(const RecordOptions& o);

struct ImportOptions {
  std::string pcap;           // .pcap or .pcapng
  std::string out_dir = ".";  // one capture per server address: <dir>/<address>.perfcap
  bool json = false;
};
int run_import(const ImportOptions& o);

struct NamesExportOptions {
  std::string capture;
  std::string out;
};
int run_names_export(const NamesExportOptions& o);

// Exit 0 when the two sets are the same, 1 when they differ (as diff(1)), 2 usage.
struct NamesDiffOptions {
  std::string a, b;
  bool json = false;
};
int run_names_diff(const NamesDiffOptions& o);

// The capture `perfsim serve` uses when given none.
std::string bundled_default_capture();

}  // namespace perfsim::cli
