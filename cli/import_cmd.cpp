// perfsim import: winreg conversations of a pcap (recorder/pcap_import.h) -> one capture per server
// address (recorder/build.h), with what could not be read said per conversation; or, with
// --perfmon, a relog/typeperf CSV or TSV -> one capture (synth/perfmon_import.h).
#include <CLI/CLI.hpp>
#include <memory>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <new>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "captures/writer.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "recorder/build.h"
#include "recorder/pcap_import.h"
#include "synth/perfmon_import.h"
#include "synth/perfmon_text.h"
#include "synth/profiles.h"
#include "windows/os.h"

namespace perfsim::cli {
namespace {

struct ImportOptions {
  std::string pcap;           // .pcap or .pcapng
  std::string out_dir = ".";  // one capture per server address: <dir>/<address>.perfcap; --perfmon: the file
  bool out_given = false;
  std::string perfmon;  // relog/typeperf CSV or TSV
  std::string profile = "2016";
  std::string blank = "serve";  // --blank serve|fail
  synth::PerfmonImportOptions perfmon_opt;
  bool json = false;
};

}  // namespace
namespace {

// A host read over TCP and over SMB is one server: one capture.
std::vector<recorder::Conversation> by_server(std::vector<recorder::Conversation> in) {
  std::map<std::string, recorder::Conversation> merged;
  std::vector<std::string> order;
  for (recorder::Conversation& c : in) {
    auto [it, fresh] = merged.try_emplace(c.server);
    recorder::Conversation& m = it->second;
    if (fresh) {
      order.push_back(c.server);
      m.server = c.server;
      m.transport = c.transport;
    } else if (m.transport != c.transport) {
      m.transport += "+" + c.transport;
    }
    m.exchanges.insert(m.exchanges.end(), std::make_move_iterator(c.exchanges.begin()),
                       std::make_move_iterator(c.exchanges.end()));
    m.problems.insert(m.problems.end(), c.problems.begin(), c.problems.end());
  }
  std::vector<recorder::Conversation> out;
  for (const std::string& s : order) {
    recorder::Conversation& c = merged[s];
    std::stable_sort(
        c.exchanges.begin(), c.exchanges.end(),
        [](const recorder::Exchange& a, const recorder::Exchange& b) { return a.time_100ns < b.time_100ns; });
    out.push_back(std::move(c));
  }
  return out;
}

std::string file_name_for(const std::string& server) {
  std::string n = server;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return n + ".perfcap";
}

}  // namespace

int run_perfmon(const ImportOptions& o) {
  synth::PerfmonImportReport rep;
  Status s;
  try {  // out of memory all the same (a log past what the machine holds): an error, no temp file left
    s = synth::import_perfmon(o.perfmon, o.out_dir, o.profile, rep, o.perfmon_opt);
  } catch (const std::bad_alloc&) { return fail("import", o.perfmon + ": out of memory (nothing was written)"); }
  if (!s.ok()) return fail("import", s.message());
  for (const std::string& w : rep.warnings) fmt::print(stderr, "warning: {}\n", w);
  nlohmann::json blanks = nlohmann::json::array();
  for (const synth::BlankColumn& b : rep.blanks)
    blanks.push_back({{"counter", b.counter}, {"count", b.count}, {"lines", b.lines}});
  if (o.json) {
    fmt::print("{}\n", json_text(nlohmann::json{{"log", o.perfmon},
                                                {"encoding", rep.encoding},
                                                {"blank_cells", rep.blank_cells},
                                                {"blanks", blanks},
                                                {"unserved", rep.unserved},
                                                {"unserved_examples", rep.unserved_examples},
                                                {"warnings", rep.warnings},
                                                {"capture", o.out_dir},
                                                {"host", rep.host},
                                                {"profile", rep.profile},
                                                {"samples", rep.samples},
                                                {"columns", rep.columns},
                                                {"custom", rep.custom},
                                                {"unreproduced", rep.unreproduced},
                                                {"unreproduced_examples", rep.unreproduced_examples}},
                                 2));
    return kExitOk;
  }
  fmt::print("{}: host {} (profile {}), {} samples of {} counters -> {}\n", o.perfmon, rep.host, rep.profile,
             rep.samples, rep.columns, o.out_dir);
  if (!rep.custom.empty())
    fmt::print("  {} counter(s) the profile does not know, served as a custom object set:\n", rep.custom.size());
  for (const std::string& c : rep.custom) fmt::print("    {}\n", c);
  if (rep.unreproduced)
    fmt::print("  {} value(s) no raw counter can give, the counter kept where it was:\n", rep.unreproduced);
  for (const std::string& e : rep.unreproduced_examples) fmt::print("    {}\n", e);
  if (rep.blank_cells)
    fmt::print("  {} blank cell(s) (PDH had no value), served as no value (synth/README.md, Blank cells):\n",
               rep.blank_cells);
  for (const synth::BlankColumn& b : rep.blanks)
    fmt::print("    {}: {} on line(s) {}{}\n", b.counter, b.count, fmt::join(b.lines, ", "),
               b.lines.size() == synth::kBlankRanges ? ", ..." : "");
  if (rep.unserved)
    fmt::print("  {} logged value(s) not served, their instance absent (around a blank, or lacking a counter):\n",
               rep.unserved);
  for (const std::string& e : rep.unserved_examples) fmt::print("    {}\n", e);
  return kExitOk;
}

int run_import(const ImportOptions& o) {
  if (!o.perfmon.empty()) {
    if (!o.pcap.empty()) return fail("import", "give either a pcap or --perfmon LOG.csv, not both", kExitUsage);
    if (!o.out_given) return fail("import", "--perfmon needs the capture to write: -o F.perfcap", kExitUsage);
    if (Status s = captures::check_replaceable(o.out_dir); !s.ok()) return fail("import", s.message(), kExitUsage);
    return run_perfmon(o);
  }
  if (o.pcap.empty())
    return fail("import",
                "give a pcap (perfsim import x.pcapng -o DIR) or a perfmon log (--perfmon x.csv -o F.perfcap)",
                kExitUsage);
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return fail("import", "cannot create --out-dir " + o.out_dir + ": " + ec.message());

  Progress bar("import", 0);
  recorder::PcapImportOptions po;
  po.progress = [&](uint64_t frames) { bar.text(fmt::format("{} frames", frames)); };
  std::vector<recorder::Conversation> raw;
  recorder::UnreadFrames unread;
  const Status read = recorder::read_pcap(o.pcap, raw, po, &unread);
  bar.finish();
  if (unread.any() && !o.json) fmt::print("{}: {}\n", o.pcap, unread.describe());
  if (!read.ok() && raw.empty()) return fail("import", read.message());

  nlohmann::json jcaps = nlohmann::json::array();
  size_t written = 0;
  for (const recorder::Conversation& c : by_server(std::move(raw))) {
    nlohmann::json j = {
        {"server", c.server}, {"transport", c.transport}, {"exchanges", c.exchanges.size()}, {"problems", c.problems}};
    recorder::ImportedCapture ic;
    Status s = recorder::build_capture(c, ic);
    if (s.ok()) {
      const std::string path = (std::filesystem::path(o.out_dir) / file_name_for(c.server)).string();
      s = captures::write_capture(path, ic.capture);
      if (s.ok()) {
        ++written;
        j["capture"] = path;
        j["host"] = ic.capture.host.name;
        j["ticks"] = ic.ticks;
        j["records"] = ic.capture.records.size();
        j["fingerprint"] = parse_json_or_discarded(captures::to_json(ic.fingerprint));
        j["profile"] = ic.capture.host.profile;
        j["notes"] = ic.notes;
      }
    }
    if (!s.ok()) j["error"] = s.message();
    if (!o.json) {
      if (s.ok())
        fmt::print("{} ({}): {} poll(s), {} answer(s) of {} -> {}\n", c.server, c.transport, ic.ticks,
                   ic.capture.records.size(), ic.capture.host.name, j["capture"].get<std::string>());
      else
        fmt::print("{} ({}): not imported: {}\n", c.server, c.transport, s.message());
      if (s.ok()) {
        fmt::print("  buffer behaviour: {}\n", ic.fingerprint.more_data.value_or("not seen"));
        for (const std::string& f : ic.fingerprint.findings.value_or(std::vector<std::string>{}))
          fmt::print("  noted: {}\n", f);
        for (const std::string& n : ic.notes) fmt::print("  noted: {}\n", n);
        if (ic.capture.host.profile.empty())
          fmt::print("  profile: unknown (no CurrentVersion read in the capture); serve it with --profile\n");
        else
          fmt::print("  profile: {} (Windows {} build {})\n", ic.capture.host.profile, ic.capture.host.current_version,
                     ic.capture.host.build_number);
      }
      for (const std::string& p : c.problems) fmt::print("  not readable: {}\n", p);
    }
    jcaps.push_back(std::move(j));
  }
  if (o.json) {
    nlohmann::json out = {{"pcap", o.pcap}, {"captures", jcaps}, {"written", written}};
    if (!read.ok()) out["error"] = read.message();
    out["unread_frames"] = {{"time_replaced", unread.time_replaced},
                            {"time_replaced_frames", unread.time_replaced_frames},
                            {"skipped", unread.skipped},
                            {"skipped_frames", unread.skipped_frames}};
    fmt::print("{}\n", json_text(out, 2));
  }
  if (!read.ok()) return fail("import", read.message() + " (captures were made of what was read before it)");
  if (written == 0)
    return fail("import", jcaps.empty() ? "no winreg conversation found in " + o.pcap
                                        : "no conversation held perf data to import");
  return kExitOk;
}

void add_import(CLI::App& app, int& rc) {
  auto o = std::make_shared<ImportOptions>();
  ImportOptions& import = *o;
  auto* c_import = app.add_subcommand(
      "import",
      "Make captures from a packet capture of winreg sessions (TCP or SMB2 pipes), one per server address, via "
      "tshark; or one from a perfmon log (relog/typeperf CSV or TSV) with --perfmon");
  c_import->add_option("pcap", import.pcap, "pcap or pcapng file")->check(input_file());
  auto* out = c_import
                  ->add_option("--out-dir,-o", import.out_dir,
                               "Directory for the captures (<address>.perfcap); with --perfmon the capture file")
                  ->capture_default_str();
  c_import
      ->add_option("--perfmon", import.perfmon,
                   "A perfmon log as relog -f csv|tsv or typeperf writes it (a .blg: relog x.blg -f csv -o x.csv)")
      ->check(input_file());
  c_import
      ->add_option("--profile,-p", import.profile,
                   "With --perfmon: the OS profile whose title indices and counter types the log's counters get (" +
                       perfsim::windows::os_name_list() + ")")
      ->capture_default_str();
  c_import
      ->add_option("--blank", import.blank,
                   "With --perfmon: a blank cell (PDH had no value) is 'serve'd as no value (synth/README.md, Blank "
                   "cells) or makes the import 'fail'")
      ->capture_default_str();
  c_import->add_flag("--strict", import.perfmon_opt.strict,
                     "With --perfmon: a torn last row (the collection stopped mid-write) is an error, not dropped");
  c_import->add_option("--encoding", import.perfmon_opt.encoding,
                       "With --perfmon: the code page of a log without a byte order mark (an iconv name: CP1252, "
                       "CP1250, CP850, UTF-8); default: UTF-8 if it is valid, else CP1252 with a warning");
  c_import
      ->add_option("--names", import.perfmon_opt.names,
                   "With --perfmon: the host's lodctr /s backup (or perfcLLL.dat): a localized log's object and "
                   "counter names map through it to the profile's (\\Prozessor(_Total)\\Prozessorzeit (%) -> "
                   "Processor, 238)")
      ->check(input_file());
  c_import->add_flag("--json", import.json, "Machine-readable summary");
  c_import->callback([o, out, &rc] {
    o->out_given = out->count() > 0;
    if (o->blank != "serve" && o->blank != "fail") {
      rc = fail("import", "--blank " + o->blank + ": write --blank serve (the default) or --blank fail", kExitUsage);
      return;
    }
    o->perfmon_opt.blank_fail = o->blank == "fail";
    if (!o->perfmon_opt.encoding.empty())
      if (Status s = synth::check_encoding(o->perfmon_opt.encoding); !s.ok()) {
        rc = fail("import", "--encoding: " + s.message(), kExitUsage);
        return;
      }
    if (!o->perfmon.empty() && !synth::find_profile(o->profile)) {
      rc = fail("import", windows::check_os_name(o->profile).message(), kExitUsage);
      return;
    }
    rc = run_import(*o);
  });
}

}  // namespace perfsim::cli
