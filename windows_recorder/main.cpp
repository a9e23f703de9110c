// perfsim-record.exe: `perfsim record` for a customer's Windows machine (README.md). main parses
// the options and hands a RegistryChannel to recorder::record(), the Linux recorder's own logic.
// Exit codes as perfsim's: 0 recorded, 1 failure, 2 usage.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cwchar>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/utf16.h"
#include "recorder/record.h"
#include "windows_recorder/registry_channel.h"

namespace {

using namespace perfsim;

constexpr const char* kUsage =
    "Usage: perfsim-record.exe [-o FILE.perfcap] [--host NAME] [--interval DUR] [--count N]\n"
    "                          [--duration DUR] [--query VALUE]... [--lang LLL]...\n"
    "Records this machine's performance counters (HKEY_PERFORMANCE_DATA), or NAME's through its\n"
    "Remote Registry service with your Windows logon, into a perfsim capture.\n"
    "  -o, --out FILE     capture to write (default: COMPUTERNAME.perfcap here)\n"
    "  --host NAME        record \\\\NAME instead of this machine (RegConnectRegistryW)\n"
    "  --interval DUR     time between samples (default 15s; 500ms, 2m, 1h30m, plain seconds)\n"
    "  --count N          stop after N samples\n"
    "  --duration DUR     stop after DUR (without --count or --duration: at Ctrl-C)\n"
    "  --query VALUE      what to sample: Global (default), Costly, or index lists (\"238 232\")\n"
    "  --lang LLL         name tables to record (default: 009 and the languages Perflib lists)\n"
    "  -h, --help         this text\n"
    "Ctrl-C ends the recording; the capture is valid whenever the program stops.\n"
    "Exit codes: 0 recorded, 1 failure, 2 usage error.\n";

std::atomic<bool> g_stop{false};

int usage_error(const std::string& what) {
  std::fprintf(stderr, "perfsim-record: %s\nRun perfsim-record.exe --help for the options.\n", what.c_str());
  return 2;
}

struct Options {
  std::string out, host;
  recorder::RecordOptions record;
  bool help = false;
};

// Parses argv into o; an empty string, or the usage error's message.
std::string parse(const std::vector<std::string>& args, Options& o) {
  std::vector<std::string> queries;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help" || a == "/?") {
      o.help = true;
      continue;
    }
    const bool takes_value = a == "-o" || a == "--out" || a == "--host" || a == "--interval" || a == "--count" ||
                             a == "--duration" || a == "--query" || a == "--lang";
    if (!takes_value) return "unknown option " + a;
    if (i + 1 >= args.size()) return a + " needs a value";
    const std::string& v = args[++i];
    double ms = 0;
    if (a == "-o" || a == "--out") {
      o.out = v;
    } else if (a == "--host") {
      o.host = v.rfind("\\\\", 0) == 0 ? v.substr(2) : v;
    } else if (a == "--query") {
      queries.push_back(v);
    } else if (a == "--lang") {
      o.record.languages.push_back(v);
    } else if (a == "--count") {
      char* end = nullptr;
      const unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end || n == 0 || n > 100000000)
        return "--count wants a number of samples (1 or more), not " + v;
      o.record.count = uint32_t(n);
    } else if (Status s = config::parse_duration_ms(v, ms); !s.ok() || ms <= 0) {
      return a + ": " + (s.ok() ? "must be more than 0" : s.message());
    } else {
      (a == "--interval" ? o.record.interval : o.record.duration) = std::chrono::milliseconds(int64_t(ms));
    }
  }
  if (!queries.empty()) o.record.queries = queries;
  return "";
}

int run(const Options& o) {
  std::unique_ptr<windows_recorder::RegistryChannel> channel;
  if (Status s = windows_recorder::RegistryChannel::open(o.host, channel); !s.ok()) {
    std::fprintf(stderr, "perfsim-record: %s\n", s.message().c_str());
    return 1;
  }
  recorder::WinregClient client(std::move(channel));
  recorder::RecordOptions opt = o.record;
  opt.host_name = o.host.empty() ? windows_recorder::computer_name() : o.host;
  // Stored payloads in format v1 (captures/codec.cpp: this build has no LZ4 or zstd); every
  // record reaches the file whole and each tick is flushed, so a killed recorder leaves a capture.
  opt.writer = {32, captures::DeltaCodec::kNone, captures::SyncPolicy::kEveryTick, 1};
  opt.stop = &g_stop;
  opt.progress = [](const recorder::RecordProgress& p) {
    const std::string of = p.target ? "/" + std::to_string(p.target) : "";
    std::fprintf(stderr, "sample %u%s, %llu bytes\n", p.samples, of.c_str(), static_cast<unsigned long long>(p.bytes));
  };
  const std::string out = o.out.empty() ? opt.host_name + ".perfcap" : o.out;
  recorder::RecordResult result;
  const Status s = recorder::record(client, out, opt, result);
  for (const std::string& w : result.warnings) std::fprintf(stderr, "perfsim-record: warning: %s\n", w.c_str());
  if (!s.ok()) {
    std::fprintf(stderr, "perfsim-record: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("wrote %s: %u samples of %s, %llu bytes\n", out.c_str(), result.samples, opt.host_name.c_str(),
              static_cast<unsigned long long>(result.file_bytes));
  return 0;
}

}  // namespace

int wmain(int argc, wchar_t** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.push_back(utf16_to_utf8(std::u16string(argv[i], argv[i] + wcslen(argv[i]))));
  // The C runtime buffers stderr when it is a pipe: progress must show as it happens, and survive
  // a killed process.
  std::setvbuf(stderr, nullptr, _IONBF, 0);
  Options o;
  if (const std::string err = parse(args, o); !err.empty()) return usage_error(err);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  windows_recorder::stop_on_console_events(&g_stop);
  return run(o);
}
