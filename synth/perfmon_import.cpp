// `perfsim import --perfmon`: two passes over the log. The first checks every row and learns the
// columns (objects, instances, counters; whether a value is ever fractional); the catalogue is
// then the profile's objects and counters the log names plus a custom set for the rest, and the
// second pass writes one sample per row, each counter's raw value the formula run backwards.
#include "synth/perfmon_import.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "captures/registry_values.h"
#include "captures/system_values.h"
#include "captures/writer.h"
#include "windows/constants.h"
#include "names/backup.h"
#include "core/utf16.h"
#include "perfdata/counters.h"
#include "perfdata/filetime.h"
#include "perfdata/limits.h"
#include "perfdata/pdh_csv.h"
#include "perfdata/series.h"
#include "perfdata/winperf.h"
#include "synth/catalog.h"
#include "synth/model_state.h"
#include "synth/perfmon_text.h"

namespace perfsim::synth {
namespace {

using namespace winperf;
namespace csv = perfdata::pdh_csv;

constexpr char kProvider[] = "PerfmonImport";
constexpr size_t kNone = size_t(-1);
constexpr size_t kExamples = 5;
// Served cells (instances x counters, summed over objects) allowed beyond those the columns name:
// every served sample holds each cell, so a log whose columns each add an instance and a counter
// would otherwise serve columns^2 values. A dense log (every instance has every counter) has as
// many cells as columns; this leaves room for sparse ones and keeps memory linear in columns.
constexpr uint64_t kCellsPerColumn = 16;
constexpr uint64_t kCellsFloor = uint64_t(1) << 20;

struct LogCounter {
  std::string name;
  bool integral = true;  // every logged value whole (a custom counter's type)
  size_t def = 0;        // position in the object's served counter definitions (its base follows)
};

struct LogObject {
  std::string name;
  bool multi = false;
  std::vector<std::string> logged;  // instance names as the log writes them ("svchost#1")
  std::vector<std::string> served;  // as served ("svchost" twice: PDH numbers duplicates)
  std::vector<LogCounter> counters;
  std::vector<size_t> cells;  // [instance * counters + counter] -> column, kNone if not logged
  size_t catalog = 0;         // into Catalog::objects
  // Per instance: a counter the log never has for it whose held zero would show a value (so the
  // instance is never served), kNone when every counter is logged or shows nothing when held.
  std::vector<size_t> unlogged;
  // While the header is read: folded name -> position, and the logged names as written.
  std::unordered_map<std::string, size_t> instance_at, counter_at;
  std::unordered_set<std::string> logged_set;
};

struct Row {
  uint64_t line = 0;
  int64_t time = 0;  // FILETIME, UTC
  std::vector<std::optional<double>> values;
};

// Localized object and counter names -> English, from a `lodctr /s` backup (folded keys).
using Translation = std::unordered_map<std::string, std::string>;

struct Log {
  std::string path;
  Translation english;  // empty without --names
  const PerfmonImportOptions* opt = nullptr;
  char sep = ',';
  int32_t bias = 0;
  std::string zone;  // the header's time zone name
  std::string machine;
  std::vector<LogObject> objects;
  std::unordered_map<std::string, size_t> object_at;       // folded name -> position (header only)
  std::vector<size_t> object_of, instance_of, counter_of;  // per column
  std::vector<std::string> paths;                          // per column, as the header writes it
  uint64_t rows = 0;
  int64_t first = 0, second = 0;  // the first two times (second 0 with one row)
  uint64_t header_line = 0;
  std::string encoding;    // what the text was read as
  uint64_t ansi_high = 0;  // bytes above 0x7F read in the ANSI code page
  uint64_t torn_line = 0;  // a torn last row, dropped
  std::string torn_why;
  // Per column: blank cells after the first row, and their runs of lines (the first kBlankRanges).
  std::vector<uint64_t> blanks;
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> blank_runs;
};

Status at_line(const std::string& path, uint64_t line, const std::string& what) {
  return Status::InvalidArgument(fmt::format("{}:{}: {}", path, line, what));
}

std::string folded(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

// The English name a localized one stands for (the name itself when the backup has none).
const std::string& english_of(const Log& log, const std::string& name) {
  const auto it = log.english.find(folded(name));
  return it == log.english.end() ? name : it->second;
}

// Position of `name` (case-insensitively) in `names`, added at the end if new.
size_t find_or_add(std::unordered_map<std::string, size_t>& at, size_t size, const std::string& name, bool& added) {
  const auto [it, fresh] = at.try_emplace(folded(name), size);
  added = fresh;
  return it->second;
}

// PDH names the second "svchost" "svchost#1" (Microsoft, "Specifying a Counter Path": #index tells
// instances of the same name apart): served, both are "svchost", in the log's order.
std::string served_name(const std::unordered_set<std::string>& logged, const std::string& name) {
  const size_t hash = name.rfind('#');
  if (hash == std::string::npos || hash + 1 == name.size()) return name;
  const std::string digits = name.substr(hash + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) return name;
  const unsigned n = unsigned(std::stoul(digits));
  const std::string base = name.substr(0, hash);
  const std::string before = n == 1 ? base : base + "#" + std::to_string(n - 1);
  return logged.count(before) ? base : name;
}

// The header: the first line that is not blank (typeperf's stdout starts with an empty line).
Status read_header(LogLines& lines, Log& log) {
  std::string line;
  bool got = false;
  do {
    if (Status s = lines.next(line, got); !s.ok()) return at_line(log.path, lines.number() + 1, s.message());
  } while (got && line.find_first_not_of(" \t") == std::string::npos);
  const uint64_t n = lines.number();
  log.header_line = n;
  if (!got) return at_line(log.path, n, "empty file: no PDH-CSV header row");
  // Names go into JSON (the report, redact's map) and UTF-16 (the served data): they must be text.
  if (size_t bad = 0; !valid_utf8(line, &bad))
    return at_line(log.path, n,
                   fmt::format("byte {} (0x{:02X}) is not UTF-8: name the log's code page with --encoding (e.g. "
                               "--encoding CP1252)",
                               bad + 1, static_cast<unsigned char>(line[bad])));
  log.sep = line.find('\t') != std::string::npos ? '\t' : ',';
  std::vector<std::string> cells;
  if (Status s = csv::split_row(line, log.sep, cells); !s.ok()) return at_line(log.path, n, s.message());
  if (Status s = csv::header_bias(cells[0], log.bias); !s.ok()) return at_line(log.path, n, s.message());
  log.zone = csv::header_zone(cells[0]);
  if (cells.size() < 2) return at_line(log.path, n, "no counter columns after the time column");
  for (size_t c = 1; c < cells.size(); ++c) {
    namespace limits = perfdata::limits;
    // Bounded as PDH bounds them (perfdata/limits.h): a 50 MB counter name became a 100 MB
    // Counter table that serve answered (issue 54).
    if (!limits::within(cells[c], limits::kCounterPath))
      return at_line(log.path, n,
                     fmt::format("column {}: counter path {}: no PDH log holds one", c + 1,
                                 limits::too_long(cells[c], limits::kCounterPath)));
    perfdata::CounterPath p;
    if (Status s = perfdata::parse_counter_path(cells[c], p); !s.ok())
      return at_line(log.path, n, fmt::format("column {}: {}", c + 1, s.message()));
    for (const auto& [what, name, bound] : {std::tuple{"object", &p.object, limits::kCounterName},
                                            std::tuple{"instance", &p.instance, limits::kInstanceName},
                                            std::tuple{"counter", &p.counter, limits::kCounterName}})
      if (!limits::within(*name, bound))
        return at_line(
            log.path, n,
            fmt::format("column {}: {} name {}: no PDH log holds one", c + 1, what, limits::too_long(*name, bound)));
    if (p.instance == "*")
      return at_line(log.path, n, fmt::format("column {}: a wildcard is not a logged counter", c + 1));
    if (log.machine.empty()) log.machine = p.machine;
    if (!iequals(p.machine, log.machine))
      return at_line(log.path, n,
                     fmt::format("column {} is of machine {}, column 2 of {}: one host per capture (relog -c "
                                 "the counters of one machine)",
                                 c + 1, quote_input(p.machine), quote_input(log.machine)));
    bool added = false;
    const size_t o = find_or_add(log.object_at, log.objects.size(), p.object, added);
    if (added) {
      log.objects.push_back({});
      log.objects.back().name = p.object;
      log.objects.back().multi = p.has_instance;
    }
    LogObject& obj = log.objects[o];
    if (obj.multi != p.has_instance)
      return at_line(
          log.path, n,
          fmt::format("column {}: object {} is named both with and without an instance", c + 1, quote_input(p.object)));
    size_t i = 0;
    if (p.has_instance) {
      i = find_or_add(obj.instance_at, obj.logged.size(), p.instance, added);
      if (added) {
        obj.logged.push_back(p.instance);
        obj.logged_set.insert(p.instance);
        obj.served.push_back(served_name(obj.logged_set, p.instance));
      }
    } else if (obj.logged.empty()) {
      obj.logged.push_back("");
      obj.served.push_back("");
    }
    const size_t k = find_or_add(obj.counter_at, obj.counters.size(), p.counter, added);
    if (added) obj.counters.push_back({p.counter, true, 0});
    log.object_of.push_back(o);
    log.instance_of.push_back(i);
    log.counter_of.push_back(k);
    log.paths.push_back(cells[c]);
  }
  // Cells, once every object's instances and counters are known.
  uint64_t served = 0;
  for (LogObject& obj : log.objects) {
    served += uint64_t(obj.logged.size()) * obj.counters.size();
    obj.instance_at = {};
    obj.counter_at = {};
    obj.logged_set = {};
  }
  log.object_at = {};
  const uint64_t most = std::max(kCellsFloor, kCellsPerColumn * log.paths.size());
  if (served > most)
    return at_line(log.path, n,
                   fmt::format("its {} columns name instances and counters that make {} served cells (every "
                               "instance of an object has each of its counters) where at most {} are served: "
                               "relog -c fewer counters, or the instances with the same counters",
                               log.paths.size(), served, most));
  for (LogObject& obj : log.objects) obj.cells.assign(obj.logged.size() * obj.counters.size(), kNone);
  for (size_t c = 0; c < log.paths.size(); ++c) {
    LogObject& obj = log.objects[log.object_of[c]];
    size_t& cell = obj.cells[log.instance_of[c] * obj.counters.size() + log.counter_of[c]];
    if (cell != kNone)
      return at_line(log.path, n,
                     fmt::format("column {} repeats column {} ({})", c + 2, cell + 2, quote_input(log.paths[c])));
    cell = c;
  }
  return Status::Ok();
}

// Text after the last row, as typeperf's stdout ends ("Exiting, please wait...", "The command
// completed successfully.", in the host's language): unquoted, its first cell not a time.
bool closing_text(const std::string& line, char sep) {
  if (line.empty() || line[0] == '"') return false;
  int64_t t = 0;
  return !csv::parse_time(line.substr(0, line.find(sep)), 0, t).ok();
}

// One sample row's cells, time and values; `torn` when its shape is wrong (a cut quote, missing
// cells), as a row written only in part is. (A number cut short is still a number: not told.)
Status parse_row(const std::string& line, const Log& log, std::vector<std::string>& cells, Row& row, bool& torn) {
  torn = true;
  if (Status s = csv::split_row(line, log.sep, cells); !s.ok()) return s;
  if (cells.size() < log.paths.size() + 1)
    return Status::InvalidArgument(
        fmt::format("{} cells where the header has {} (a torn or cut row?)", cells.size(), log.paths.size() + 1));
  torn = false;
  if (cells.size() != log.paths.size() + 1)
    return Status::InvalidArgument(fmt::format("{} cells where the header has {}", cells.size(), log.paths.size() + 1));
  if (Status s = csv::parse_time(cells[0], log.bias, row.time); !s.ok()) return s;
  row.values.resize(log.paths.size());
  for (size_t c = 0; c < log.paths.size(); ++c)
    if (Status s = csv::parse_value(cells[c + 1], row.values[c]); !s.ok())
      return Status::InvalidArgument(fmt::format("column {} ({}): {}", c + 2, quote_input(log.paths[c]), s.message()));
  return Status::Ok();
}

// The next sample row (blank lines skipped); false at the end of the file. A torn row followed
// only by blank lines or closing text is the last, cut row: dropped (log.torn_line) or, --strict,
// an error; closing text followed by a row is an error.
Status read_row(LogLines& lines, Log& log, int64_t after, Row& row, bool& got) {
  got = false;
  std::string line;
  std::vector<std::string> cells;
  uint64_t text_line = 0, torn_line = 0;
  Status torn_why;
  for (bool more = true;;) {
    if (Status s = lines.next(line, more); !s.ok()) return at_line(log.path, lines.number() + 1, s.message());
    if (!more) break;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (closing_text(line, log.sep)) {
      if (!text_line) text_line = lines.number();
      continue;
    }
    if (torn_line) return at_line(log.path, torn_line, torn_why.message());
    if (text_line)
      return at_line(log.path, text_line,
                     "text where a sample row belongs (only typeperf's closing messages may "
                     "follow the last row)");
    bool torn = false;
    row.line = lines.number();
    if (Status s = parse_row(line, log, cells, row, torn); !s.ok()) {
      if (!torn) return at_line(log.path, row.line, s.message());
      torn_line = row.line;
      torn_why = s;
      continue;
    }
    if (row.time <= after)
      return at_line(
          log.path, row.line,
          fmt::format("time {} does not come after the previous row's: rows must be in time order", cells[0]));
    got = true;
    return Status::Ok();
  }
  if (torn_line && log.opt->strict)
    return at_line(log.path, torn_line,
                   torn_why.message() +
                       "; a torn last row (the collection stopped while "
                       "writing it?): without --strict it is dropped");
  if (torn_line) {
    log.torn_line = torn_line;
    log.torn_why = torn_why.message();
  }
  return Status::Ok();
}

// A blank cell after the first row: counted, its line added to the column's runs; an error with
// --blank fail.
Status note_blank(Log& log, size_t c, uint64_t line, uint64_t prev_line) {
  if (log.opt->blank_fail)
    return at_line(log.path, line,
                   fmt::format("column {} ({}) is blank (PDH had no value); without --blank fail it is served as no "
                               "value (synth/README.md, Blank cells)",
                               c + 2, quote_input(log.paths[c])));
  ++log.blanks[c];
  auto& runs = log.blank_runs[c];
  if (!runs.empty() && runs.back().second == prev_line)
    runs.back().second = line;
  else if (runs.size() < kBlankRanges)
    runs.push_back({line, line});
  return Status::Ok();
}

// First pass: every row checked; which counters ever show a fraction; the blanks.
Status scan(const std::string& path, Log& log) {
  LogLines lines;
  if (Status s = lines.open(path, log.opt->encoding, log.opt->ansi); !s.ok()) return at_line(path, 1, s.message());
  log.path = path;
  if (Status s = read_header(lines, log); !s.ok()) return s;
  log.blanks.assign(log.paths.size(), 0);
  log.blank_runs.assign(log.paths.size(), {});
  Row row;
  int64_t last = INT64_MIN;
  uint64_t prev_line = 0;
  for (bool got = true;;) {
    if (Status s = read_row(lines, log, last, row, got); !s.ok()) return s;
    if (!got) break;
    if (log.rows == 0) log.first = row.time;
    if (log.rows == 1) log.second = row.time;
    for (size_t c = 0; c < row.values.size(); ++c) {
      if (row.values[c] && std::floor(*row.values[c]) != *row.values[c])
        log.objects[log.object_of[c]].counters[log.counter_of[c]].integral = false;
      if (!row.values[c] && log.rows > 0)
        if (Status s = note_blank(log, c, row.line, prev_line); !s.ok()) return s;
    }
    ++log.rows;
    last = row.time;
    prev_line = row.line;
  }
  if (log.rows == 0) return at_line(path, lines.number() + 1, "no sample rows after the header");
  log.encoding = lines.encoding();
  log.ansi_high = lines.ansi_high();
  return Status::Ok();
}

// The catalogue: the profile's objects and counters the log names, in the profile's order, then a
// custom set of the rest with fresh title indices.
Status make_catalog(const Spec& spec, const Profile& profile, Log& log, Catalog& cat,
                    std::vector<std::string>& custom) {
  Catalog full;
  if (Status s = build_catalog(spec, profile, full); !s.ok()) return s;
  const std::map<uint32_t, std::string> names(full.names.begin(), full.names.end());
  const auto named = [&](uint32_t index, const std::string& name) {
    auto it = names.find(index);
    return it != names.end() && iequals(it->second, name);
  };
  cat = full;
  cat.objects.clear();
  uint32_t next = (full.last_counter + 2) & ~1u;
  const auto fresh = [&](const std::string& name) {
    const uint32_t index = next;
    next += 2;
    cat.names.emplace_back(index, name);
    cat.helps.emplace_back(index + 1, name + " (imported from a perfmon log)");
    cat.last_counter = index;
    return index;
  };
  // The profile's objects by folded name (the first of a name, as a scan in order would find).
  std::unordered_map<std::string, size_t> profile_at;
  for (size_t f = 0; f < full.objects.size(); ++f)
    if (auto it = names.find(full.objects[f].desc.index); it != names.end())
      profile_at.try_emplace(folded(it->second), f);
  std::vector<size_t> profile_object(log.objects.size(), kNone);
  for (size_t o = 0; o < log.objects.size(); ++o)
    if (auto it = profile_at.find(folded(english_of(log, log.objects[o].name))); it != profile_at.end())
      profile_object[o] = it->second;
  // Profile objects first, in the profile's order (as Windows returns them), then the custom ones
  // (kNone sorts last), each group in the log's order.
  std::vector<size_t> order(log.objects.size());
  for (size_t o = 0; o < order.size(); ++o) order[o] = o;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return profile_object[a] < profile_object[b]; });
  for (size_t o : order) {
    LogObject& lo = log.objects[o];
    CatalogObject co;
    if (profile_object[o] != kNone) {
      co.desc = full.objects[profile_object[o]].desc;
      co.desc.counters.clear();
    } else {
      co.desc.index = fresh(lo.name);
      co.desc.provider = kProvider;
    }
    co.desc.multi = lo.multi;
    co.desc.default_counter = 0;
    const std::vector<CounterDesc>* known =
        profile_object[o] != kNone ? &full.objects[profile_object[o]].desc.counters : nullptr;
    for (LogCounter& lc : lo.counters) {
      lc.def = co.desc.counters.size();
      size_t p = kNone;
      for (size_t k = 0; known && k < known->size() && p == kNone; ++k)
        if (!is_base_type((*known)[k].type) && named((*known)[k].index, english_of(log, lc.name))) p = k;
      if (p != kNone) {
        co.desc.counters.push_back((*known)[p]);
        if (needs_base((*known)[p].type) && p + 1 < known->size()) co.desc.counters.push_back((*known)[p + 1]);
        continue;
      }
      custom.push_back(fmt::format("\\{}\\{}", lo.name, lc.name));
      const uint32_t index = fresh(lc.name);
      const uint32_t type = lc.integral ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_LARGE_RAW_FRACTION;
      co.desc.counters.push_back({index, type, size_for(type), PERF_DETAIL_NOVICE, 0, nullptr});
      if (!lc.integral)
        co.desc.counters.push_back(
            {index, PERF_LARGE_RAW_BASE, size_for(PERF_LARGE_RAW_BASE), PERF_DETAIL_NOVICE, 0, nullptr});
    }
    lo.catalog = cat.objects.size();
    cat.objects.push_back(std::move(co));
  }
  return Status::Ok();
}

// The sample's clocks: PerfTime100nSec the log's time, PerfTime the profile's counter since boot.
perfdata::Sample clocks(int64_t time, int64_t boot, int64_t freq) {
  perfdata::Sample s;
  s.perf_time_100ns = time;
  s.perf_freq = freq;
  s.perf_time = int64_t(__int128(time - boot) * freq / 10000000);
  return s;
}

perfdata::Sample object_clocks(perfdata::Sample s, const CatalogObject& co) {
  s.object_perf_time = co.desc.object_timer ? s.perf_time_100ns : s.perf_time;
  s.object_perf_freq = co.desc.object_timer ? 10000000 : s.perf_freq;
  return s;
}

// What the second pass carries from row to row.
struct Writing {
  Log* log = nullptr;
  const Catalog* cat = nullptr;
  std::vector<ObjState> states;                        // per catalog object
  std::vector<std::vector<perfdata::RawValues>> raws;  // per log object: [instance * counters + counter]
  std::vector<std::vector<bool>> had;                  // per log object: present in the previous row
  std::vector<bool> absent;                            // per catalog object: a single-instance one not served now
  perfdata::Sample prev;
  std::u16string system_name;
  int64_t boot = 0, freq = 0;
  PerfmonImportReport* report = nullptr;
};

bool has_value(const LogObject& o, size_t instance, const Row* row) {
  if (!row) return false;
  for (size_t k = 0; k < o.counters.size(); ++k) {
    const size_t c = o.cells[instance * o.counters.size() + k];
    if (c != kNone && row->values[c]) return true;
  }
  return false;
}

// Whether a blank of a counter of `type` formats as no value: in the instance's first sample one
// that needs two samples; after it one whose unchanged raw value and base have no value (its
// previous raw is held).
bool blank_shows_nothing(uint32_t type, bool first) {
  return first ? two_sample(type) : perfdata::unchanged_shows_nothing(type);
}

// Whether instance i of `lo` is served in this sample (perfmon_import.h, blank cells); when not
// because of a blank, `blank` is its column.
bool served(const LogObject& lo, const ObjState& st, size_t i, const Row& row, const Row* next, bool first,
            size_t& blank) {
  blank = kNone;
  if (lo.unlogged[i] != kNone) return false;
  if (!has_value(lo, i, &row) && !(first && has_value(lo, i, next))) return false;
  const size_t nc = lo.counters.size();
  for (size_t k = 0; k < nc; ++k) {
    const size_t c = lo.cells[i * nc + k];
    if (c != kNone && !row.values[c] && !blank_shows_nothing(st.obj.counters[lo.counters[k].def].type, first)) {
      blank = c;
      return false;
    }
  }
  return true;
}

void unserved(Writing& w, const Row& row, size_t c, const std::string& why) {
  if (++w.report->unserved <= kExamples)
    w.report->unserved_examples.push_back(fmt::format("line {}, {}: {}", row.line, w.log->paths[c], why));
}

// The values of instance i a sample cannot show: all of them when it is absent for `blank`; those
// that need two samples in its first one after a gap.
void count_unserved(Writing& w, const LogObject& lo, const ObjState& st, size_t i, const Row& row, size_t blank,
                    bool present) {
  const size_t nc = lo.counters.size();
  for (size_t k = 0; k < nc; ++k) {
    const size_t c = lo.cells[i * nc + k];
    if (c == kNone || !row.values[c]) continue;
    if (!present && lo.unlogged[i] != kNone)
      unserved(w, row, c,
               fmt::format("not served: the log never has {} for its instance", lo.counters[lo.unlogged[i]].name));
    else if (!present && blank != kNone)
      unserved(w, row, c,
               fmt::format("not served: its instance is absent from this sample ({} is blank)", w.log->paths[blank]));
    else if (present && two_sample(st.obj.counters[lo.counters[k].def].type))
      unserved(w, row, c, "not served: the first sample of its instance, absent before (a rate needs two)");
  }
}

void fill_object(Writing& w, size_t o, const Row& row, const Row* next, const perfdata::Sample& now, bool first_row) {
  const LogObject& lo = w.log->objects[o];
  ObjState& st = w.states[lo.catalog];
  const perfdata::Sample cur = object_clocks(now, *st.cat), before = object_clocks(w.prev, *st.cat);
  st.obj.instances.clear();
  const size_t nc = lo.counters.size();
  for (size_t i = 0; i < lo.served.size(); ++i) {
    const bool had = w.had[o][i];
    size_t blank = kNone;
    const bool present = served(lo, st, i, row, next, !had, blank);
    w.had[o][i] = present;
    if (!present || (!had && !first_row)) count_unserved(w, lo, st, i, row, blank, present);
    if (!present) {
      if (!lo.multi) w.absent[lo.catalog] = true;
      continue;
    }
    if (lo.multi) st.add_instance(lo.served[i]);
    Bytes& block = lo.multi ? st.obj.instances.back().counter_block : st.obj.counter_block;
    for (size_t k = 0; k < nc; ++k) {
      perfdata::RawValues& raw = w.raws[o][i * nc + k];
      if (!had) raw = {};
      const size_t c = lo.cells[i * nc + k];
      const perfdata::CounterDef& def = st.obj.counters[lo.counters[k].def];
      if (c != kNone && row.values[c]) {
        perfdata::RawValues out;
        const Status s =
            perfdata::raw_for_value(def.type, *row.values[c], had ? &before : nullptr, had ? &raw : nullptr, cur, out);
        if (s.ok()) {
          raw = out;
        } else if (++w.report->unreproduced <= kExamples) {
          w.report->unreproduced_examples.push_back(
              fmt::format("line {}, {}: {}", row.line, w.log->paths[c], s.message()));
        }
      }
      perfdata::write_counter(block, def, raw.n);
      if (needs_base(def.type) && size_t(lo.counters[k].def + 1) < st.obj.counters.size())
        perfdata::write_counter(block, st.obj.counters[lo.counters[k].def + 1], raw.b);
    }
  }
}

captures::QueryRecord record(Writing& w, uint32_t tick, const perfdata::Sample& now, bool costly) {
  perfdata::DataBlock block;
  block.system_time = perfdata::system_time_of(now.perf_time_100ns);
  block.perf_time = now.perf_time;
  block.perf_freq = now.perf_freq;
  block.perf_time_100ns = now.perf_time_100ns;
  block.default_object = idx::kProcessor;
  perfdata::set_system_name(block, w.system_name);
  // The objects are lent to the block and taken back, as synth's Model does.
  const auto lent = [&](size_t k) { return w.states[k].cat->desc.costly == costly && !w.absent[k]; };
  for (size_t k = 0; k < w.states.size(); ++k)
    if (lent(k)) block.objects.push_back(std::move(w.states[k].obj));
  perfdata::fix_counts(block);
  captures::QueryRecord r;
  r.tick = tick;
  r.value_name = costly ? "Costly" : "Global";
  r.payload = perfdata::build(block);
  size_t b = 0;
  for (size_t k = 0; k < w.states.size(); ++k)
    if (lent(k)) w.states[k].obj = std::move(block.objects[b++]);
  r.size = uint32_t(r.payload.size());
  r.latency_us = costly ? 40000 : 15000;
  r.time_100ns = now.perf_time_100ns + int64_t(r.latency_us) * 10;
  return r;
}

Status write_samples(const std::string& path, Writing& w, captures::Writer& out) {
  Log& log = *w.log;
  LogLines lines;
  if (Status s = lines.open(path, log.opt->encoding, log.opt->ansi); !s.ok()) return s;
  std::string header;
  bool got = true;
  while (got && lines.number() < log.header_line)
    if (Status s = lines.next(header, got); !s.ok()) return s;
  bool any_costly = false;
  for (const ObjState& st : w.states) any_costly |= st.cat->desc.costly;
  Row row, next;
  bool got_next = false;
  if (Status s = read_row(lines, log, INT64_MIN, row, got); !s.ok()) return s;
  for (uint32_t tick = 0; got; ++tick) {
    if (Status s = read_row(lines, log, row.time, next, got_next); !s.ok()) return s;
    const perfdata::Sample now = clocks(row.time, w.boot, w.freq);
    w.absent.assign(w.states.size(), false);
    for (size_t o = 0; o < log.objects.size(); ++o) fill_object(w, o, row, got_next ? &next : nullptr, now, tick == 0);
    w.prev = now;
    if (Status s = out.append(record(w, tick, now, false)); !s.ok()) return s;
    if (any_costly)
      if (Status s = out.append(record(w, tick, now, true)); !s.ok()) return s;
    std::swap(row, next);
    got = got_next;
  }
  return Status::Ok();
}

// Every language of a `lodctr /s` backup but English, name by name (even indices): its text ->
// the English name of the same index. A name two indices share keeps the lowest index's.
Status load_translation(const std::string& path, Translation& english, std::vector<std::string>& warnings) {
  names::NameSet set;
  if (Status s = names::load_names(path, set, &warnings); !s.ok()) return s;
  const names::Strings* en = set.find("009");
  if (!en) return Status::InvalidArgument(path + ": no English table ([PerfStrings_009]) to map the log's names to");
  for (const names::Strings& lang : set.languages) {
    if (&lang == en) continue;
    for (const auto& [index, text] : lang.text) {
      const auto it = en->text.find(index);
      if (index % 2 || index < 2 || it == en->text.end()) continue;
      english.try_emplace(folded(text), it->second);
    }
  }
  return Status::Ok();
}

// Instances the log lacks a counter for: a counter block holds every counter of its object, so an
// instance is served with all of them or not at all. A counter never logged for it is held at zero,
// which formats as nothing only for the types whose unchanged value has no display (averages,
// sample fractions); any other would show a value the host never gave, so the instance is left out
// and each such instance is named (the first kExamples; then how many more).
void find_unlogged(Log& log, const Catalog& cat, PerfmonImportReport& report) {
  uint64_t named = 0;
  for (LogObject& lo : log.objects) {
    const std::vector<CounterDesc>& defs = cat.objects[lo.catalog].desc.counters;
    const size_t nc = lo.counters.size();
    lo.unlogged.assign(lo.served.size(), kNone);
    for (size_t i = 0; i < lo.served.size(); ++i) {
      for (size_t k = 0; k < nc && lo.unlogged[i] == kNone; ++k)
        if (lo.cells[i * nc + k] == kNone && !perfdata::unchanged_shows_nothing(defs[lo.counters[k].def].type))
          lo.unlogged[i] = k;
      if (lo.unlogged[i] == kNone || ++named > kExamples) continue;
      const std::string obj = lo.multi ? fmt::format("\\{}({})", lo.name, lo.logged[i]) : "\\" + lo.name;
      report.warnings.push_back(fmt::format(
          "{}: not served: the log has no {}\\{} for it, and a counter block holds every counter of its object; "
          "log the same counters for every instance (a wildcard, {}(*)\\...) to serve it",
          obj, obj, lo.counters[lo.unlogged[i]].name, lo.name));
    }
  }
  if (named > kExamples)
    report.warnings.push_back(
        fmt::format("{} more instance(s) not served for a counter never logged for them", named - kExamples));
}

// What the first pass found that the report says: the encoding, blanks, a dropped torn row.
void report_scan(const Log& log, PerfmonImportReport& report) {
  report.encoding = log.encoding;
  if (log.ansi_high)
    report.warnings.push_back(fmt::format(
        "{}: no byte order mark and not UTF-8: read as {}, {} byte(s) above 0x7F among them; if names look wrong, "
        "give the host's ANSI code page with --encoding (CP1250, CP1251, ...)",
        log.path, log.encoding, log.ansi_high));
  if (log.torn_line)
    report.warnings.push_back(
        fmt::format("{}:{}: a torn last row dropped ({}); --strict refuses it", log.path, log.torn_line, log.torn_why));
  for (size_t c = 0; c < log.paths.size(); ++c) {
    if (!log.blanks[c]) continue;
    report.blank_cells += log.blanks[c];
    BlankColumn b{log.paths[c], log.blanks[c], {}};
    for (const auto& [from, to] : log.blank_runs[c])
      b.lines.push_back(from == to ? std::to_string(from) : fmt::format("{}-{}", from, to));
    report.blanks.push_back(std::move(b));
  }
}

}  // namespace

Status import_perfmon(const std::string& log_path, const std::string& out, const std::string& profile_name,
                      PerfmonImportReport& report, const PerfmonImportOptions& options) {
  report = {};
  const Profile* profile = find_profile(profile_name);
  if (!profile) return Status::InvalidArgument("unknown profile \"" + profile_name + "\"");
  Log log;
  log.opt = &options;
  if (!options.names.empty())
    if (Status s = load_translation(options.names, log.english, report.warnings); !s.ok()) return s;
  if (Status s = scan(log_path, log); !s.ok()) return s;
  report_scan(log, report);

  Spec spec;
  spec.profile = profile_name;
  spec.host_name = log.machine.empty() ? "IMPORTED" : log.machine;
  spec.start_100ns = log.first;
  const int64_t interval_ms = log.second ? std::max<int64_t>(1, (log.second - log.first + 5000) / 10000) : 15000;
  if (interval_ms > int64_t(UINT32_MAX))  // a capture's interval is 32-bit milliseconds (FORMAT.md)
    return Status::InvalidArgument(
        fmt::format("{}: its first two samples are {} ms apart; a capture's interval is at most {} ms (49.7 days)",
                    log_path, interval_ms, UINT32_MAX));
  spec.interval_ms = uint32_t(interval_ms);
  spec.duration_s = uint32_t(std::min<int64_t>(UINT32_MAX, (log.rows * uint64_t(spec.interval_ms)) / 1000));
  for (const LogObject& o : log.objects)
    if (iequals(english_of(log, o.name), "Processor") && o.served.size() > 1)
      spec.processors = uint32_t(o.served.size() - 1);
  Catalog cat;
  if (Status s = make_catalog(spec, *profile, log, cat, report.custom); !s.ok()) return s;
  find_unlogged(log, cat, report);
  captures::Capture header = build_header(spec, *profile, cat);
  // The log's zone, as the host's registry holds it: `series --local-time` shows its local times.
  captures::set_value(header, captures::kTimeZoneKey, "Bias", windows::kRegDword,
                      captures::reg_dword(uint32_t(log.bias)));
  if (!log.zone.empty())
    captures::set_value(header, captures::kTimeZoneKey, "TimeZoneKeyName", windows::kRegSz, captures::reg_sz(log.zone));

  Writing w;
  w.log = &log;
  w.cat = &cat;
  for (const CatalogObject& co : cat.objects) w.states.push_back(make_state(co, layout_of(cat, co, *profile)));
  for (const LogObject& o : log.objects) {
    w.raws.emplace_back(o.served.size() * o.counters.size());
    w.had.emplace_back(o.served.size(), false);
  }
  w.system_name = utf8_to_utf16(spec.host_name);
  w.freq = profile->host.perf_freq;
  w.boot = spec.start_100ns - int64_t(spec.uptime_s) * 10000000;
  w.report = &report;

  // Written beside `out` and renamed over it only when whole: a failure leaves no half capture.
  const Status st = captures::write_replacing(out, [&](const std::string& tmp) {
    std::unique_ptr<captures::Writer> writer;
    Status s = captures::Writer::create(tmp, header.host, {}, writer);
    if (s.ok()) s = captures::add_metadata(*writer, header);
    if (s.ok()) s = write_samples(log_path, w, *writer);
    if (writer) {
      const Status closed = writer->close();
      if (s.ok()) s = closed;
    }
    return s;
  });
  report.host = spec.host_name;
  report.profile = profile->os->name;
  report.samples = log.rows;
  report.columns = log.paths.size();
  return st;
}

}  // namespace perfsim::synth
