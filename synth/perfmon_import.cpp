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
#include <unordered_map>
#include <unordered_set>

#include "captures/writer.h"
#include "core/utf16.h"
#include "perfdata/counters.h"
#include "perfdata/filetime.h"
#include "perfdata/pdh_csv.h"
#include "perfdata/series.h"
#include "perfdata/winperf.h"
#include "synth/catalog.h"
#include "synth/model_state.h"

namespace perfsim::synth {
namespace {

using namespace winperf;
namespace csv = perfdata::pdh_csv;

constexpr char kProvider[] = "PerfmonImport";
constexpr size_t kNone = size_t(-1);
constexpr size_t kExamples = 5;
// The longest line read (the header of a million columns is ~40 MB): a file without line breaks
// (/dev/zero) is refused here instead of growing a string until memory runs out.
constexpr size_t kMaxLine = size_t(128) << 20;
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
  // While the header is read: folded name -> position, and the logged names as written.
  std::unordered_map<std::string, size_t> instance_at, counter_at;
  std::unordered_set<std::string> logged_set;
};

struct Row {
  uint64_t line = 0;
  int64_t time = 0;  // FILETIME, UTC
  std::vector<std::optional<double>> values;
};

struct Log {
  std::string path;
  char sep = ',';
  int32_t bias = 0;
  std::string machine;
  std::vector<LogObject> objects;
  std::unordered_map<std::string, size_t> object_at;       // folded name -> position (header only)
  std::vector<size_t> object_of, instance_of, counter_of;  // per column
  std::vector<std::string> paths;                          // per column, as the header writes it
  uint64_t rows = 0;
  int64_t first = 0, second = 0;  // the first two times (second 0 with one row)
};

Status at_line(const std::string& path, uint64_t line, const std::string& what) {
  return Status::InvalidArgument(fmt::format("{}:{}: {}", path, line, what));
}

// The log line by line, without line endings (or a UTF-8 byte order mark, which typeperf may
// write); a line longer than kMaxLine is an error.
class Lines {
 public:
  Status open(const std::string& path) {
    in_.open(path, std::ios::binary);
    if (!in_) return Status::NotFound(path + ": cannot open it");
    return Status::Ok();
  }
  // `got` false at the end of the file.
  Status next(std::string& line, bool& got) {
    got = false;
    size_t scanned = 0;  // bytes after pos_ known to hold no line break
    for (;;) {
      const char* from = buf_.data() + pos_ + scanned;
      if (const void* nl = std::memchr(from, '\n', buf_.size() - pos_ - scanned)) {
        const size_t end = size_t(static_cast<const char*>(nl) - buf_.data());
        line.assign(buf_, pos_, end - pos_);
        pos_ = end + 1;
        break;
      }
      scanned = buf_.size() - pos_;
      if (scanned > kMaxLine)
        return Status::InvalidArgument(fmt::format("a line longer than {} MiB: not a perfmon log", kMaxLine >> 20));
      if (!fill()) {
        if (scanned == 0) return Status::Ok();
        line.assign(buf_, pos_, scanned);
        pos_ = buf_.size();
        break;
      }
    }
    got = true;
    if (++number_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return Status::Ok();
  }
  uint64_t number() const { return number_; }

 private:
  static constexpr size_t kChunk = size_t(1) << 20;
  // Appends the next chunk (dropping what was consumed); false at the end of the file.
  bool fill() {
    buf_.erase(0, pos_);
    pos_ = 0;
    const size_t old = buf_.size();
    buf_.resize(old + kChunk);
    in_.read(buf_.data() + old, std::streamsize(kChunk));
    buf_.resize(old + size_t(in_.gcount()));
    return buf_.size() > old;
  }
  std::ifstream in_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t number_ = 0;
};

std::string folded(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
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

Status read_header(Lines& lines, Log& log) {
  std::string line;
  bool got = false;
  if (Status s = lines.next(line, got); !s.ok()) return at_line(log.path, 1, s.message());
  if (!got) return at_line(log.path, 1, "empty file: no PDH-CSV header row");
  // Names go into JSON (the report, redact's map) and UTF-16 (the served data): they must be text.
  if (size_t bad = 0; !valid_utf8(line, &bad))
    return at_line(log.path, 1,
                   fmt::format("byte {} (0x{:02X}) is not UTF-8: save the log as UTF-8 (e.g. from a Windows-1252 "
                               "one: iconv -f WINDOWS-1252 -t UTF-8)",
                               bad + 1, static_cast<unsigned char>(line[bad])));
  log.sep = line.find('\t') != std::string::npos ? '\t' : ',';
  std::vector<std::string> cells;
  if (Status s = csv::split_row(line, log.sep, cells); !s.ok()) return at_line(log.path, 1, s.message());
  if (Status s = csv::header_bias(cells[0], log.bias); !s.ok()) return at_line(log.path, 1, s.message());
  if (cells.size() < 2) return at_line(log.path, 1, "no counter columns after the time column");
  for (size_t c = 1; c < cells.size(); ++c) {
    perfdata::CounterPath p;
    if (Status s = perfdata::parse_counter_path(cells[c], p); !s.ok())
      return at_line(log.path, 1, fmt::format("column {}: {}", c + 1, s.message()));
    if (p.instance == "*")
      return at_line(log.path, 1, fmt::format("column {}: a wildcard is not a logged counter", c + 1));
    if (log.machine.empty()) log.machine = p.machine;
    if (!iequals(p.machine, log.machine))
      return at_line(log.path, 1,
                     fmt::format("column {} is of machine '{}', column 2 of '{}': one host per capture (relog -c "
                                 "the counters of one machine)",
                                 c + 1, p.machine, log.machine));
    bool added = false;
    const size_t o = find_or_add(log.object_at, log.objects.size(), p.object, added);
    if (added) {
      log.objects.push_back({});
      log.objects.back().name = p.object;
      log.objects.back().multi = p.has_instance;
    }
    LogObject& obj = log.objects[o];
    if (obj.multi != p.has_instance)
      return at_line(log.path, 1,
                     fmt::format("column {}: object '{}' is named both with and without an instance", c + 1, p.object));
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
    return at_line(log.path, 1,
                   fmt::format("its {} columns name instances and counters that make {} served cells (every "
                               "instance of an object has each of its counters) where at most {} are served: "
                               "relog -c fewer counters, or the instances with the same counters",
                               log.paths.size(), served, most));
  for (LogObject& obj : log.objects) obj.cells.assign(obj.logged.size() * obj.counters.size(), kNone);
  for (size_t c = 0; c < log.paths.size(); ++c) {
    LogObject& obj = log.objects[log.object_of[c]];
    size_t& cell = obj.cells[log.instance_of[c] * obj.counters.size() + log.counter_of[c]];
    if (cell != kNone)
      return at_line(log.path, 1, fmt::format("column {} repeats column {} ({})", c + 2, cell + 2, log.paths[c]));
    cell = c;
  }
  return Status::Ok();
}

// The next sample row (blank lines skipped); false at the end of the file.
Status read_row(Lines& lines, const Log& log, int64_t after, Row& row, bool& got) {
  got = false;
  std::string line;
  std::vector<std::string> cells;
  for (bool more = true;;) {
    if (Status s = lines.next(line, more); !s.ok()) return at_line(log.path, lines.number() + 1, s.message());
    if (!more) break;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    row.line = lines.number();
    if (Status s = csv::split_row(line, log.sep, cells); !s.ok()) return at_line(log.path, row.line, s.message());
    if (cells.size() != log.paths.size() + 1)
      return at_line(
          log.path, row.line,
          fmt::format("{} cells where the header has {} (a torn or cut row?)", cells.size(), log.paths.size() + 1));
    if (Status s = csv::parse_time(cells[0], log.bias, row.time); !s.ok())
      return at_line(log.path, row.line, s.message());
    if (row.time <= after)
      return at_line(
          log.path, row.line,
          fmt::format("time {} does not come after the previous row's: rows must be in time order", cells[0]));
    row.values.resize(log.paths.size());
    for (size_t c = 0; c < log.paths.size(); ++c)
      if (Status s = csv::parse_value(cells[c + 1], row.values[c]); !s.ok())
        return at_line(log.path, row.line, fmt::format("column {} ({}): {}", c + 2, log.paths[c], s.message()));
    got = true;
    return Status::Ok();
  }
  return Status::Ok();
}

// First pass: every row checked; which counters ever show a fraction.
Status scan(const std::string& path, Log& log) {
  Lines lines;
  if (Status s = lines.open(path); !s.ok()) return s;
  log.path = path;
  if (Status s = read_header(lines, log); !s.ok()) return s;
  Row row;
  int64_t last = INT64_MIN;
  for (bool got = true;;) {
    if (Status s = read_row(lines, log, last, row, got); !s.ok()) return s;
    if (!got) break;
    if (log.rows == 0) log.first = row.time;
    if (log.rows == 1) log.second = row.time;
    ++log.rows;
    last = row.time;
    for (size_t c = 0; c < row.values.size(); ++c)
      if (row.values[c] && std::floor(*row.values[c]) != *row.values[c])
        log.objects[log.object_of[c]].counters[log.counter_of[c]].integral = false;
  }
  if (log.rows == 0) return at_line(path, lines.number() + 1, "no sample rows after the header");
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
    if (auto it = profile_at.find(folded(log.objects[o].name)); it != profile_at.end()) profile_object[o] = it->second;
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
        if (!is_base_type((*known)[k].type) && named((*known)[k].index, lc.name)) p = k;
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
  const Log* log = nullptr;
  const Catalog* cat = nullptr;
  std::vector<ObjState> states;                        // per catalog object
  std::vector<std::vector<perfdata::RawValues>> raws;  // per log object: [instance * counters + counter]
  std::vector<std::vector<bool>> had;                  // per log object: present in the previous row
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

void fill_object(Writing& w, size_t o, const Row& row, const Row* next, const perfdata::Sample& now) {
  const LogObject& lo = w.log->objects[o];
  ObjState& st = w.states[lo.catalog];
  const perfdata::Sample cur = object_clocks(now, *st.cat), before = object_clocks(w.prev, *st.cat);
  st.obj.instances.clear();
  const size_t nc = lo.counters.size();
  for (size_t i = 0; i < lo.served.size(); ++i) {
    const bool present = !lo.multi || has_value(lo, i, &row) || has_value(lo, i, next);
    const bool had = w.had[o][i];
    w.had[o][i] = present;
    if (!present) continue;
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
  for (ObjState& st : w.states)
    if (st.cat->desc.costly == costly) block.objects.push_back(std::move(st.obj));
  perfdata::fix_counts(block);
  captures::QueryRecord r;
  r.tick = tick;
  r.value_name = costly ? "Costly" : "Global";
  r.payload = perfdata::build(block);
  size_t b = 0;
  for (ObjState& st : w.states)
    if (st.cat->desc.costly == costly) st.obj = std::move(block.objects[b++]);
  r.size = uint32_t(r.payload.size());
  r.latency_us = costly ? 40000 : 15000;
  r.time_100ns = now.perf_time_100ns + int64_t(r.latency_us) * 10;
  return r;
}

Status write_samples(const std::string& path, Writing& w, captures::Writer& out) {
  const Log& log = *w.log;
  Lines lines;
  if (Status s = lines.open(path); !s.ok()) return s;
  std::string header;
  bool got = false;
  if (Status s = lines.next(header, got); !s.ok()) return s;
  bool any_costly = false;
  for (const ObjState& st : w.states) any_costly |= st.cat->desc.costly;
  Row row, next;
  bool got_next = false;
  if (Status s = read_row(lines, log, INT64_MIN, row, got); !s.ok()) return s;
  for (uint32_t tick = 0; got; ++tick) {
    if (Status s = read_row(lines, log, row.time, next, got_next); !s.ok()) return s;
    const perfdata::Sample now = clocks(row.time, w.boot, w.freq);
    for (size_t o = 0; o < log.objects.size(); ++o) fill_object(w, o, row, got_next ? &next : nullptr, now);
    w.prev = now;
    if (Status s = out.append(record(w, tick, now, false)); !s.ok()) return s;
    if (any_costly)
      if (Status s = out.append(record(w, tick, now, true)); !s.ok()) return s;
    std::swap(row, next);
    got = got_next;
  }
  return Status::Ok();
}

}  // namespace

Status import_perfmon(const std::string& log_path, const std::string& out, const std::string& profile_name,
                      PerfmonImportReport& report) {
  report = {};
  const Profile* profile = find_profile(profile_name);
  if (!profile) return Status::InvalidArgument("unknown profile \"" + profile_name + "\"");
  Log log;
  if (Status s = scan(log_path, log); !s.ok()) return s;

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
    if (iequals(o.name, "Processor") && o.served.size() > 1) spec.processors = uint32_t(o.served.size() - 1);
  Catalog cat;
  if (Status s = make_catalog(spec, *profile, log, cat, report.custom); !s.ok()) return s;
  const captures::Capture header = build_header(spec, *profile, cat);

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
