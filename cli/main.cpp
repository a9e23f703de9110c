// perfsim: argument parsing only. Each subcommand fills an options struct and calls run_* from
// cli/commands.h, which does the work and picks the exit code (0 ok, 1 failure, 2 usage).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "journal/journal.h"
#include "synth/roles.h"
#include "windows/os.h"

using namespace perfsim::cli;

namespace {

// Who logs on and how, for subcommands that reach a host over SMB or ncacn_ip_tcp.
void add_smb_options(CLI::App* c, SmbOptions& o) {
  c->add_option("--user,-U", o.user,
                "Account, as USER, DOMAIN\\USER or USER@REALM (else --auth-file, then $PERFSIM_USER; none: "
                "anonymous over SMB, unauthenticated over TCP)");
  c->add_option("--domain", o.domain, "The account's domain (default: the host's own accounts)");
  c->add_option("--password", o.password,
                "Password (visible to other local users: prefer --auth-file or $PERFSIM_PASSWORD)");
  c->add_option("--auth-file,-A", o.auth_file, "Samba-style authentication file (username =, password =, domain =)");
  c->add_flag("--anonymous", o.anonymous,
              "Log on anonymously (SMB) / unauthenticated (TCP), ignoring every other credential source");
  c->add_option("--kerberos", o.kerberos, "SMB: auto (default), off (NTLM only) or required");
  c->add_option("--smb-protocols", o.protocols,
                "SMB: dialect range MIN-MAX (NT1, SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11)");
  c->add_flag("--sign", o.sign, "SMB: require signing");
  c->add_flag("--encrypt", o.encrypt, "SMB: require SMB3 encryption");
  c->add_option("--auth-level", o.auth_level, "TCP with a user: DCE/RPC auth level connect, sign (default) or seal");
  c->add_option("--auth-type", o.auth_type, "TCP with a user: ntlm (NTLMSSP, default) or spnego");
}

// Which capture format a writing subcommand makes (captures/FORMAT.md).
void add_format_option(CLI::App* c, uint32_t& version) {
  c->add_option("--format-version", version, "Capture format to write: 2, or 1 for perfsim before format v2")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "perfsim: record, store and replay what Windows hosts answer over Remote Registry (winreg) perf-data queries"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perfsim 0.1.0");
  int rc = kExitOk;

  SynthOptions synth;
  auto* c_synth =
      app.add_subcommand("synth", "Build a capture of a synthetic host from a TOML/JSON spec or a built-in OS profile");
  c_synth->add_option("spec", synth.spec, "Spec file (.toml or .json); see synth/README.md")->check(CLI::ExistingFile);
  c_synth->add_option("--profile,-p", synth.profile,
                      "OS profile (" + perfsim::windows::os_name_list() + "); overrides the spec's");
  c_synth->add_option("--out,-o", synth.out, "Capture file to write")->required();
  c_synth->add_option("--seed", synth.seed, "Seed for the value generators (same seed, same bytes)");
  c_synth->add_option("--host-name", synth.host_name, "System name the host reports (default: the spec's, SYNTH01)");
  c_synth->add_option("--duration", synth.duration_s, "Seconds of samples");
  c_synth->add_option("--interval", synth.interval_s, "Seconds between samples");
  c_synth
      ->add_option("--names", synth.names,
                   "Name tables from a `lodctr /s` backup or perfcLLL.dat (names/README.md); overrides [host] names")
      ->check(CLI::ExistingFile);
  c_synth->add_option("--role", synth.roles,
                      "Server role whose objects the host also serves (repeatable): " +
                          perfsim::synth::role_name_list() + "; added to [host] roles");
  add_format_option(c_synth, synth.format_version);
  c_synth->add_flag("--json", synth.json, "Machine-readable summary");
  c_synth->callback([&] {
    if (synth.spec.empty() && synth.profile.empty()) {
      std::fprintf(
          stderr,
          "perfsim synth: give a spec file or --profile NAME (e.g. perfsim synth --profile 2016 --out host.perfcap)\n");
      rc = kExitUsage;
      return;
    }
    rc = run_synth(synth);
  });

  ConvertOptions convert;
  auto* c_convert = app.add_subcommand(
      "convert", "Rewrite a capture in another format version (v1 -> v2: same records, exact bytes, smaller file)");
  c_convert->add_option("file", convert.in, "Capture to read (v1 or v2)")->required()->check(CLI::ExistingFile);
  c_convert->add_option("--out,-o", convert.out, "Capture file to write")->required();
  add_format_option(c_convert, convert.format_version);
  c_convert->add_flag("--json", convert.json, "Machine-readable summary");
  c_convert->callback([&] { rc = run_convert(convert); });

  InspectOptions inspect;
  auto* c_inspect = app.add_subcommand("inspect", "Summarise a capture: host, queries, ticks, sizes");
  c_inspect->add_option("file", inspect.path, "Capture file (.perfcap)")->required()->check(CLI::ExistingFile);
  c_inspect->add_flag("--json", inspect.json, "Machine-readable output");
  c_inspect->callback([&] { rc = run_inspect(inspect); });

  DumpOptions dump;
  auto* c_dump = app.add_subcommand(
      "dump", "Print objects, instances and formatted counter values (as typeperf shows them) between two samples");
  c_dump->add_option("file", dump.path, "Capture file (.perfcap)")->required()->check(CLI::ExistingFile);
  c_dump
      ->add_option("--sample,-k", dump.sample,
                   "Show values between sample K-1 and K (0: raw values of the first sample)")
      ->capture_default_str();
  c_dump->add_option("--query", dump.query, "Recorded value to show: Global, Costly, or a recorded index list")
      ->capture_default_str();
  c_dump->add_option("--object", dump.object, "Only this object (name like Processor, or index like 238)");
  c_dump->add_option("--lang", dump.lang, "Language of the name table used for names")->capture_default_str();
  c_dump->add_flag("--json", dump.json, "Machine-readable output");
  c_dump->callback([&] { rc = run_dump(dump); });

  ValidateOptions validate;
  auto* c_validate = app.add_subcommand(
      "validate",
      "Check a capture's perf-data payloads, or a raw PERF_DATA_BLOCK blob, with perflib's checks and more");
  c_validate->add_option("file", validate.path, "Capture file or raw blob")->required()->check(CLI::ExistingFile);
  c_validate->add_flag("--strict", validate.strict, "Fail on warnings too");
  c_validate->add_flag("--json", validate.json, "Machine-readable output");
  c_validate->callback([&] { rc = run_validate(validate); });

  ServeOptions serve;
  auto* c_serve = app.add_subcommand("serve",
                                     "Serve simulated hosts over winreg/DCE-RPC (ncacn_ip_tcp); with no arguments the "
                                     "bundled default host on 127.0.0.1");
  c_serve->add_option("--listen,-l", serve.listen,
                      "ADDR:PORT or ADDR:PORT=CAPTURE (repeatable; port 0 picks a free port)");
  c_serve
      ->add_option("--capture,-c", serve.capture,
                   "Capture served by listeners that name none (default: the bundled default host)")
      ->check(CLI::ExistingFile);
  c_serve->add_option("--fleet", serve.fleet, "TOML fleet file: [[host]] tables with listen, capture, timeline")
      ->check(CLI::ExistingFile);
  c_serve
      ->add_option("--timeline", serve.timeline,
                   "realtime (loop the capture at its own pace), step (one sample per answer) or frozen:K")
      ->capture_default_str();
  c_serve->add_option("--profile", serve.profile,
                      "OS quirk profile for hosts without their own: " + perfsim::windows::os_name_list() +
                          ", or rrp-exact (default: the capture's fingerprint)");
  c_serve->add_option("--quirk,-Q", serve.quirks,
                      "Quirk for every host, over profile and fingerprint (repeatable): "
                      "NAME[=on|off][:PARAM=VALUE,...], e.g. perffreq:hz=3579545, extra-objects=off");
  c_serve->add_option(
      "--speed", serve.speed,
      "Realtime pace, recorded seconds per real second (0.001 to 10000), for every host whose fleet entry sets "
      "no speed; e.g. 10 plays a 15 s interval every 1.5 s");
  c_serve->add_option("--shard", serve.shard,
                      "K/N: serve only shard K (0..N-1) of the fleet, the K-th of N contiguous blocks of its hosts, "
                      "with the names, addresses and data they have in the whole fleet");
  c_serve->add_flag("--list-hosts", serve.list_hosts,
                    "Print the hosts this run would serve (name, address, capture; JSON lines with --json) and exit");
  c_serve->add_option("--netns", serve.netns,
                      "Serve inside network namespace NAME, made now (leftovers of a killed run removed) and removed "
                      "at exit, joined to this one by a veth pair ps-NAME/pi-NAME (root only; needs --subnet)");
  c_serve->add_option("--subnet", serve.subnet,
                      "With --netns: A.B.C.D/P holding the veth pair (its first two addresses) and every host address");
  c_serve->add_option("--netns-bridge", serve.netns_bridge,
                      "With --netns: put the outer veth end on this existing bridge instead of giving it an address");
  c_serve
      ->add_option("--faults", serve.faults,
                   "TOML fault plan ([[fault]] tables, replayer/README.md), reloaded on SIGHUP")
      ->check(CLI::ExistingFile);
  c_serve->add_option("--threads", serve.threads, "Worker threads (0: one per core)")->capture_default_str();
  c_serve->add_option("--max-connections", serve.max_connections, "Further connections are closed at accept")
      ->capture_default_str();
  c_serve
      ->add_option("--idle-timeout", serve.idle_timeout_s,
                   "Seconds without a complete PDU before a connection is closed (0: never; at most 604800); a fault "
                   "plan's latency may not exceed it")
      ->capture_default_str();
  c_serve
      ->add_option("--cache-mb", serve.cache_mb,
                   "Megabytes of decoded samples kept for all hosts (captures are read as the timelines reach them)")
      ->check(CLI::Range(size_t(1), size_t(1) << 20))
      ->capture_default_str();
  c_serve
      ->add_option("--reply-budget", serve.reply_budget_mib,
                   "MiB of replies all clients together may leave unread; beyond it the slowest readers are "
                   "closed (0: no budget)")
      ->check(CLI::Range(size_t(0), size_t(1) << 20))
      ->capture_default_str();
  c_serve->add_flag("--allow-remote", serve.allow_remote, "Allow listening on non-loopback addresses");
  c_serve->add_option("--admin", serve.admin,
                      "Serve the admin HTTP API and web dashboard on ADDR:PORT (loopback unless --allow-remote; "
                      "admin/README.md)");
  c_serve->add_option("--admin-host", serve.admin_hosts,
                      "A host name or address the admin API also answers to in the Host header, beyond loopback "
                      "and the --admin address (repeatable; admin/README.md, \"Who may call it\")");
  c_serve->add_flag("--json", serve.json, "Print the listening endpoints as JSON lines");
  c_serve
      ->add_option("--smb", serve.smb,
                   "Also serve every host as \\\\ADDR\\PIPE\\winreg through a private smbd on PORT (445 without a "
                   "value; root only)")
      ->expected(0, 1)
      ->default_str("default");
  c_serve->add_option("--user", serve.users,
                      "NAME:PASSWORD of an account for authenticated DCE/RPC (NTLMSSP, SPNEGO) and SMB logons "
                      "(repeatable)");
  c_serve->add_option("--smb-user", serve.smb_users, "The same as --user (repeatable)");
  c_serve->add_flag("--require-auth", serve.require_auth,
                    "Refuse calls on unauthenticated ncacn_ip_tcp binds (fault access denied), as a Windows host "
                    "restricting remote clients does; needs --user");
  c_serve->add_option("--smb-allow", serve.smb_allow,
                      "Accounts allowed to open HKEY_PERFORMANCE_DATA over SMB (repeatable; default: all); others get "
                      "WERR_ACCESS_DENIED");
  c_serve->add_flag("--smb-no-anonymous", serve.smb_no_anonymous, "Refuse anonymous and guest SMB sessions");
  c_serve->add_flag("--smb-encrypt", serve.smb_encrypt,
                    "Require SMB3 encryption of every SMB session (anonymous sessions then fail: they have no key)");
  c_serve->add_option("--smb-dir", serve.smb_dir,
                      "Directory for smbd's private config and state (must not exist or be empty)");
  c_serve
      ->add_option("--epm", serve.epm,
                   "Also answer the endpoint mapper (ept_map/ept_lookup) on PORT of every host address, so "
                   "clients binding ncacn_ip_tcp:ADDR without a port find winreg (135 without a value; root only)")
      ->expected(0, 1)
      ->default_str("default");
  c_serve
      ->add_option("--journal-size", serve.journal_size,
                   "winreg calls kept in memory for the journal and the collector diagnosis (0: no journal)")
      ->capture_default_str();
  c_serve->add_option("--journal", serve.journal,
                      "Also write every winreg call to this JSON-lines file (read it with perfsim journal FILE)");
  c_serve->add_option("--journal-max-mb", serve.journal_max_mb,
                      "MiB a --journal file may reach before it is rotated (1 to 65536; default " +
                          std::to_string(perfsim::journal::FileLimits::kDefaultMaxMib) + ")");
  c_serve->add_option("--journal-files", serve.journal_files,
                      "Journal files kept: FILE, FILE.1 .. FILE.K-1, the oldest removed at rotation (1 to 1000; "
                      "default " +
                          std::to_string(perfsim::journal::FileLimits::kDefaultFiles) + ")");
  c_serve->add_option("--scenario", serve.scenario,
                      "Serve a field-bug scenario's hosts and faults (perfsim scenarios lists them; --listen, in "
                      "order, moves its hosts)");
  c_serve->add_option("--scenario-dir", serve.scenario_dirs, "A directory of your own scenario files (repeatable)")
      ->check(CLI::ExistingDirectory);
  c_serve->callback([&] { rc = run_serve(serve); });

  ScenariosOptions scen;
  auto* c_scen = app.add_subcommand(
      "scenarios", "List the field-bug scenarios: known collector failures, each served in one command");
  c_scen->add_option("--scenario-dir", scen.dirs, "A directory of your own scenario files (repeatable)")
      ->check(CLI::ExistingDirectory);
  c_scen->add_flag("--json", scen.json, "Machine-readable list");
  auto* c_show = c_scen->add_subcommand(
      "show", "What a scenario reproduces, its public source, the host behaviour, what a correct collector does");
  c_show->add_option("name", scen.show, "Scenario name")->required();
  c_show->add_flag("--json", scen.json, "Machine-readable");
  c_show->add_option("--scenario-dir", scen.dirs, "A directory of your own scenario files (repeatable)")
      ->check(CLI::ExistingDirectory);
  c_scen->callback([&] { rc = run_scenarios(scen); });

  JournalOptions journal;
  auto* c_journal = app.add_subcommand(
      "journal", "Diagnose the collector sessions of a journal file written by perfsim serve --journal FILE");
  c_journal
      ->add_option("files", journal.files,
                   "The JSON-lines journal file (read with its rotated files FILE.K-1 .. FILE.1 first), or several "
                   "files read in the order given")
      ->required();
  c_journal->add_flag("--json", journal.json,
                      "Print the diagnosis as JSON: {files, calls, sessions: [...], skipped_lines, dropped_events}");
  c_journal->add_flag("--strict", journal.strict,
                      "Refuse the file at its first unreadable line (default: skip such lines and count them)");
  c_journal->add_option("--scenario", journal.scenario,
                        "Also check the sessions against this scenario's diagnosis (exit 1 when they do not show it)");
  c_journal->add_option("--scenario-dir", journal.scenario_dirs, "A directory of your own scenario files")
      ->check(CLI::ExistingDirectory);
  c_journal->callback([&] { rc = run_journal(journal); });

  QueryOptions query;
  auto* c_query =
      app.add_subcommand("query", "A small collector: OpenHKPD, QueryValue with a growing buffer, decode and print");
  c_query
      ->add_option("endpoint", query.endpoint,
                   "ADDR:PORT or tcp:ADDR:PORT (ncacn_ip_tcp); smb:HOST[:PORT] or \\\\HOST (\\PIPE\\winreg over SMB)")
      ->required();
  c_query->add_option("values", query.values,
                      "Value names: Global (default), Costly, \"238 230\", \"Counter 009\", ...");
  c_query
      ->add_option("--growth", query.growth,
                   "Buffer growth after ERROR_MORE_DATA: returned (use the size the host says), double, add:N")
      ->capture_default_str();
  c_query->add_option("--initial", query.initial, "First buffer size in bytes")->capture_default_str();
  c_query->add_option("--max-tries", query.max_tries, "Give up after this many QueryValue calls per value")
      ->capture_default_str();
  c_query->add_option("--count,-n", query.count, "Polls; values are formatted between consecutive polls")
      ->capture_default_str();
  c_query->add_option("--interval", query.interval_s, "Seconds between polls")->capture_default_str();
  c_query->add_option("--object", query.object, "Only this object (name or index)");
  c_query->add_option("--timeout", query.timeout_s, "Seconds to wait for the host on each step")->capture_default_str();
  add_smb_options(c_query, query.smb);
  c_query->add_flag("--json", query.json, "Machine-readable output");
  c_query->callback([&] { rc = run_query(query); });

  RecordOptions record;
  auto* c_record = app.add_subcommand(
      "record", "Record a live host (or perfsim serve) into a capture that replays it, quirk fingerprint included");
  c_record
      ->add_option("target", record.target,
                   "ADDR:PORT or tcp:ADDR:PORT (ncacn_ip_tcp); smb:HOST[:PORT] or \\\\HOST (\\PIPE\\winreg over SMB)")
      ->required();
  c_record->add_option("--out,-o", record.out, "Capture file to write")->required();
  c_record->add_option("--query,-q", record.queries,
                       "Value to sample each interval (repeatable): Global (default), Costly, \"238 230\"");
  c_record->add_option("--lang", record.languages,
                       "Language of the Counter/Help tables to record (repeatable; default: 009 and every "
                       "language the host's Perflib key lists, e.g. 007 and CurrentLanguage)");
  c_record->add_option("--interval", record.interval_s, "Seconds between samples")->capture_default_str();
  c_record->add_option("--count,-n", record.count, "Samples to record (0: until --duration or Ctrl-C)")
      ->capture_default_str();
  c_record->add_option("--duration", record.duration_s, "Seconds to record (0: until --count or Ctrl-C)")
      ->capture_default_str();
  c_record->add_option("--timeout", record.timeout_s, "Seconds to wait for the host on each step")
      ->capture_default_str();
  add_smb_options(c_record, record.smb);
  add_format_option(c_record, record.format_version);
  c_record->add_flag("--json", record.json, "Machine-readable summary");
  c_record->callback([&] { rc = run_record(record); });

  ImportOptions import;
  auto* c_import = app.add_subcommand(
      "import",
      "Make captures from a packet capture of winreg sessions (TCP or SMB2 pipes), one per server address, via tshark");
  c_import->add_option("pcap", import.pcap, "pcap or pcapng file")->required()->check(CLI::ExistingFile);
  c_import->add_option("--out-dir,-o", import.out_dir, "Directory for the captures (<address>.perfcap)")
      ->capture_default_str();
  c_import->add_flag("--json", import.json, "Machine-readable summary");
  c_import->callback([&] { rc = run_import(import); });

  LodctrOptions lodctr;
  auto* c_lodctr = app.add_subcommand("lodctr",
                                      "Install extensible counters (LodCtr INI + symbol file) on a simulated host, "
                                      "optionally with a provider serving them");
  c_lodctr->add_option("capture", lodctr.capture, "Host capture (.perfcap), rewritten in place")
      ->required()
      ->check(CLI::ExistingFile);
  c_lodctr->add_option("ini", lodctr.ini, "Counter INI ([info] drivername/symbolfile, [languages], [text])")
      ->required()
      ->check(CLI::ExistingFile);
  c_lodctr
      ->add_option("--collect", lodctr.collect,
                   "Collect spec (.toml/.json): the provider's objects appear in the host's answers (lodctr/README.md)")
      ->check(CLI::ExistingFile);
  c_lodctr->add_flag("--json", lodctr.json, "Machine-readable summary");
  c_lodctr->callback([&] { rc = run_lodctr(lodctr); });

  UnlodctrOptions unlodctr;
  auto* c_unlodctr = app.add_subcommand(
      "unlodctr",
      "Remove a driver's extensible counters (names, registry values, provider objects) from a simulated host");
  c_unlodctr->add_option("capture", unlodctr.capture, "Host capture (.perfcap), rewritten in place")
      ->required()
      ->check(CLI::ExistingFile);
  c_unlodctr->add_option("driver", unlodctr.driver, "Driver name (the INI's drivername; case-insensitive)")->required();
  c_unlodctr->add_flag("--json", unlodctr.json, "Machine-readable summary");
  c_unlodctr->callback([&] { rc = run_unlodctr(unlodctr); });

  auto* c_names = app.add_subcommand("names", "Name tables as lodctr /s backups: export a capture's, compare two");
  c_names->require_subcommand(1);
  NamesExportOptions names_export;
  auto* c_export = c_names->add_subcommand(
      "export", "Write a capture's name tables (every language) and Perflib/Services values as a lodctr /s backup");
  c_export->add_option("capture", names_export.capture, "Capture (.perfcap)")->required()->check(CLI::ExistingFile);
  c_export->add_option("--out,-o", names_export.out, "Backup file to write (UTF-16LE, as lodctr /s writes it)")
      ->required();
  c_export->callback([&] { rc = run_names_export(names_export); });
  NamesDiffOptions names_diff;
  auto* c_diff = c_names->add_subcommand(
      "diff", "List what differs between two name sets: captures, lodctr /s backups or perfcLLL.dat files");
  c_diff->add_option("a", names_diff.a, "First (A): .perfcap, backup .ini or perfcLLL.dat")
      ->required()
      ->check(CLI::ExistingFile);
  c_diff->add_option("b", names_diff.b, "Second (B)")->required()->check(CLI::ExistingFile);
  c_diff->add_flag("--json", names_diff.json, "Machine-readable list");
  c_diff->callback([&] { rc = run_names_diff(names_diff); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    app.exit(e);
    std::fprintf(stderr, "Run 'perfsim --help' or 'perfsim <command> --help' for usage.\n");
    return kExitUsage;
  }
  return rc;
}
