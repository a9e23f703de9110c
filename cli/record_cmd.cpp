// perfsim record: connect to a host, record it into a capture (recorder/record.h), print what the
// fingerprint found odd.
#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/target.h"
#include "recorder/record.h"

namespace perfsim::cli {
namespace {

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

}  // namespace
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

std::string megabytes(uint64_t b) { return fmt::format("{:.1f} MB", double(b) / 1e6); }

}  // namespace

int run_record(const RecordOptions& o) {
  Target target;
  if (Status s = parse_target(o.target, target); !s.ok()) return fail("record", s.message(), kExitUsage);
  if (o.interval_s <= 0) return fail("record", "--interval must be more than 0 seconds", kExitUsage);
  if (o.timeout_s <= 0) return fail("record", "--timeout must be more than 0 seconds", kExitUsage);
  if (o.duration_s < 0) return fail("record", "--duration must not be negative", kExitUsage);

  recorder::RecordOptions ro;
  ro.writer.version = o.format_version;
  if (!o.queries.empty()) ro.queries = o.queries;
  if (!o.languages.empty()) ro.languages = o.languages;
  ro.interval = std::chrono::milliseconds(int64_t(o.interval_s * 1000));
  ro.count = o.count;
  ro.duration = std::chrono::milliseconds(int64_t(o.duration_s * 1000));
  ro.host_name = target.host;
  ro.stop = &g_stop;
  Progress bar("record", 0);
  ro.progress = [&](const recorder::RecordProgress& p) {
    bar.text(fmt::format("{}{} samples, {}, {} errors", p.samples, p.target ? fmt::format("/{}", p.target) : "",
                         megabytes(p.bytes), p.errors));
  };

  std::unique_ptr<recorder::Channel> ch;
  if (Status s = connect_target(target, o.smb, std::chrono::milliseconds(int64_t(o.timeout_s * 1000)), ch); !s.ok())
    return fail("record", s.message(), s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
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
    nlohmann::json j = {{"capture", o.out},
                        {"source", source},
                        {"host", r.host.name},
                        {"profile", r.host.profile},
                        {"samples", r.samples},
                        {"file_bytes", r.file_bytes},
                        {"languages", r.languages},
                        {"warnings", r.warnings},
                        {"fingerprint", parse_json_or_discarded(captures::to_json(r.fingerprint))},
                        {"ok", s.ok()}};
    if (!s.ok()) j["error"] = s.message();
    fmt::print("{}\n", json_text(j, 2));
  } else {
    fmt::print("recorded {} sample(s) of {} from {} into {} ({})\n", r.samples, r.host.name, source, o.out,
               megabytes(r.file_bytes));
    fmt::print("name tables: {}\n", fmt::join(r.languages, ", "));
    fmt::print("buffer behaviour: {}\n", r.fingerprint.more_data.value_or("not seen (no ERROR_MORE_DATA answer)"));
    for (const std::string& f : r.fingerprint.findings.value_or(std::vector<std::string>{}))
      fmt::print("  noted: {}\n", f);
    for (const std::string& w : r.warnings) fmt::print(stderr, "perfsim record: warning: {}\n", w);
  }
  if (!s.ok())
    return fail("record",
                s.message() + " (the capture holds the " + std::to_string(r.samples) + " sample(s) before it)");
  return kExitOk;
}

void add_record(CLI::App& app, int& rc) {
  auto o = std::make_shared<RecordOptions>();
  RecordOptions& record = *o;
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
  c_record->add_option("--interval", record.interval_s, "Time between samples (seconds, or 500ms, 15s, 2m, 1h)")
      ->transform(duration())
      ->capture_default_str();
  c_record->add_option("--count,-n", record.count, "Samples to record (0: until --duration or Ctrl-C)")
      ->capture_default_str();
  c_record->add_option("--duration", record.duration_s, "Time to record, e.g. 10m or 1h (0: until --count or Ctrl-C)")
      ->transform(duration())
      ->capture_default_str();
  c_record->add_option("--timeout", record.timeout_s, "Time to wait for the host on each step (seconds, or 500ms, 2m)")
      ->transform(duration())
      ->capture_default_str();
  add_smb_options(c_record, record.smb);
  add_format_option(c_record, record.format_version);
  c_record->add_flag("--json", record.json, "Machine-readable summary");
  c_record->callback([o, &rc] { rc = run_record(*o); });
}

}  // namespace perfsim::cli
