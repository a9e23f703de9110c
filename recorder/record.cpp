#include "recorder/record.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <thread>

#include "captures/system_values.h"
#include "perfdata/model.h"
#include "perfdata/select.h"
#include "recorder/build.h"
#include "windows/constants.h"

namespace perfsim::recorder {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMaxBuffer = 0x4000000;  // the IDL's range: 64 MiB
constexpr int64_t kUnixToFiletime = 116444736000000000LL;

int64_t now_filetime() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return kUnixToFiletime + std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count() / 100;
}

bool stopped(const RecordOptions& o) { return o.stop && o.stop->load(); }

// One QueryValue as an Exchange, timed.
Status exchange(WinregClient& c, const winreg::PolicyHandle& h, const std::string& key, const std::string& name,
                std::optional<uint32_t> buffer, Exchange& e) {
  e = Exchange{};
  e.key = key;
  e.value_name = name;
  e.null_data = !buffer;
  e.offered = buffer.value_or(0);
  const auto t0 = Clock::now();
  winreg::QueryValueResponse r;
  if (Status s = c.query_value(h, name, buffer, r); !s.ok())
    return Status::IOError("QueryValue '" + name + "': " + s.message());
  e.latency_us = uint32_t(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
  e.time_100ns = now_filetime();
  e.status = r.result;
  e.type = r.type.value_or(0);
  e.size = r.data_size.value_or(0);
  if (r.data) e.data = std::move(*r.data).to_bytes();
  return Status::Ok();
}

// The next buffer after ERROR_MORE_DATA: what the host said if it helps, else double.
uint32_t grow(uint32_t offered, uint32_t said) {
  const uint64_t next = said > offered ? said : uint64_t(std::max<uint32_t>(offered, 512)) * 2;
  return uint32_t(std::min<uint64_t>(next, kMaxBuffer));
}

// QueryValue from `buffer` until an answer other than ERROR_MORE_DATA (bounded tries). Every
// exchange goes to `seen`; the final one is returned in `last`.
Status query_until_done(WinregClient& c, const winreg::PolicyHandle& h, const std::string& key, const std::string& name,
                        uint32_t buffer, std::vector<Exchange>& seen, Exchange& last) {
  for (int tries = 0; tries < 24; ++tries) {
    if (Status s = exchange(c, h, key, name, buffer, last); !s.ok()) return s;
    seen.push_back(last);
    if (last.status != windows::kErrorMoreData) return Status::Ok();
    if (buffer >= kMaxBuffer) break;
    buffer = grow(buffer, last.size);
  }
  return Status::IOError("'" + name + "' still answered ERROR_MORE_DATA with a " + std::to_string(buffer) +
                         "-byte buffer");
}

// What the probes of one query leave for sampling.
struct Probed {
  uint32_t buffer = 1024;    // the buffer to sample with
  bool header_only = false;  // its full answer was a bare header (the host has no such objects)
};

// Fingerprint probes of one perf query (record.h, step 3).
Status probe(WinregClient& c, const winreg::PolicyHandle& hkpd, const std::string& q, std::vector<Exchange>& seen,
             Probed& out) {
  Exchange null_probe, e;
  if (Status s = exchange(c, hkpd, "HKPD", q, std::nullopt, null_probe); !s.ok()) return s;
  seen.push_back(null_probe);
  uint32_t buf = 1024, failed = 0;
  // Grow until a full answer: past ERROR_MORE_DATA, and past a header-only success when the size
  // probe promised more (samba-truncate).
  for (int tries = 0; tries < 24; ++tries) {
    if (Status s = exchange(c, hkpd, "HKPD", q, buf, e); !s.ok()) return s;
    seen.push_back(e);
    const bool truncated = e.status == 0 && header_only_answer(e.data) && null_probe.size > e.data.size();
    if ((e.status != windows::kErrorMoreData && !truncated) || buf >= kMaxBuffer) break;
    failed = buf;
    buf = grow(buf, truncated ? null_probe.size : e.size);
  }
  out.buffer = buf;
  if (e.status != 0) return Status::Ok();
  out.header_only = header_only_answer(e.data);
  const uint32_t data = uint32_t(e.data.size());
  // Success needed far more than the data (win2000-echo-oversize): find the smallest buffer that
  // works, to a 1 KiB step, in at most 12 calls.
  uint32_t lo = std::max(failed, data), hi = buf;
  for (int i = 0; i < 12 && hi > lo + 1024 && hi > data + 4096; ++i) {
    const uint32_t mid = lo + (hi - lo) / 2;
    Exchange m;
    if (Status s = exchange(c, hkpd, "HKPD", q, mid, m); !s.ok()) return s;
    seen.push_back(m);
    (m.status == 0 && !header_only_answer(m.data) ? hi : lo) = mid;
  }
  // A buffer of exactly the data's size: rrp-exact hosts answer it, samba-truncate counts it short.
  if (data >= winperf::kDataBlockSize && data < buf) {
    if (Status s = exchange(c, hkpd, "HKPD", q, data, e); !s.ok()) return s;
    seen.push_back(e);
  }
  out.buffer = hi;
  return Status::Ok();
}

// "009" first (every host has it, and a host whose Perflib cannot be listed still answers it),
// then the other languages listed.
std::vector<std::string> with_english(const std::vector<std::string>& listed) {
  std::vector<std::string> out = {"009"};
  for (const std::string& l : listed)
    if (l != "009") out.push_back(l);
  return out;
}

// The name-table languages Perflib's subkeys list: "009", "007", ..., "CurrentLanguage" (Vista
// and later), in the host's order; other subkeys (_V2Providers) are not languages.
std::vector<std::string> perflib_languages(WinregClient& c, const winreg::PolicyHandle& perflib) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < 1024; ++i) {  // bounded: a host answering success forever stops here
    std::string name;
    uint32_t werr = 0;
    if (!c.enum_key(perflib, i, name, werr).ok() || werr != 0) break;
    if (perfdata::is_language(name)) out.push_back(name);
  }
  return out;
}

// Reads the HKLM values collectors read (record.h, step 1) and the languages Perflib lists.
void read_hklm(WinregClient& c, std::vector<captures::RegistryValue>& out, std::vector<Exchange>& seen,
               std::vector<std::string>& languages, std::vector<std::string>& warnings) {
  winreg::PolicyHandle hklm;
  if (Status s = c.open_hive(winreg::kOpenHKLM, hklm); !s.ok()) {
    warnings.push_back("HKLM not readable (" + s.message() + "): the capture has no CurrentVersion/Perflib values");
    return;
  }
  // The system keys (captures/system_values.h) are read as well where the host lets them be, with
  // no warning where it does not (Samba has no Environment): the replayer fills them in from the
  // OS row then.
  struct Key {
    const char* path;
    std::vector<const char*> names;
    bool required;
  };
  const std::vector<Key> keys = {
      {kCurrentVersionKey,
       {"ProductName", "CurrentVersion", "CurrentBuildNumber", "CSDVersion", "CurrentBuild", "InstallDate", "EditionID",
        "CurrentMajorVersionNumber", "CurrentMinorVersionNumber", "SystemRoot"},
       true},
      {kPerflibKey, {"Last Counter", "Last Help", "Version", "Disable Performance Counters"}, true},
      {captures::kEnvironmentKey,
       {"ComSpec", "NUMBER_OF_PROCESSORS", "OS", "Path", "PATHEXT", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER",
        "PROCESSOR_LEVEL", "PROCESSOR_REVISION", "TEMP", "TMP", "windir"},
       false},
      {captures::kProductOptionsKey, {"ProductType"}, false},
      {captures::kComputerNameKey, {"ComputerName"}, false}};
  for (const auto& [path, names, required] : keys) {
    winreg::PolicyHandle h;
    uint32_t werr = 0;
    if (Status s = c.open_key(hklm, path, h, werr); !s.ok() || werr != 0) {
      if (required)
        warnings.push_back(
            fmt::format("HKLM\\{} not readable ({})", path, s.ok() ? windows::werror_name(werr) : s.message()));
      continue;
    }
    for (const char* name : names) {
      Exchange e;
      if (!query_until_done(c, h, path, name, 1024, seen, e).ok() || e.status != 0) continue;
      out.push_back({path, name, e.type, e.data});
    }
    if (std::string_view(path) == kPerflibKey) languages = perflib_languages(c, h);
    // Closing is courtesy to the host: the values are read, a failed close loses nothing.
    static_cast<void>(c.close_key(h, werr));
  }
  uint32_t werr = 0;
  static_cast<void>(c.close_key(hklm, werr));
}

Status open_hkpd(WinregClient& c, winreg::PolicyHandle& h) {
  Status s = c.open_hive(winreg::kOpenHKPD, h);
  if (s.ok()) return s;
  if (s.message().find(windows::werror_name(windows::kErrorAccessDenied)) != std::string::npos)
    return Status::IOError(
        "OpenHKPD: access denied — the account must be an administrator or in the host's "
        "'Performance Monitor Users' group");
  return Status::IOError("OpenHKPD: " + s.message());
}

// Waits until `deadline` in short steps so Ctrl-C is answered promptly.
void wait_until(Clock::time_point deadline, const RecordOptions& o) {
  while (!stopped(o) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::min<Clock::duration>(deadline - Clock::now(), std::chrono::milliseconds(50)));
}

}  // namespace

Status record(WinregClient& c, const std::string& path, const RecordOptions& o, RecordResult& out) {
  out = RecordResult{};
  std::vector<Exchange> seen;  // the exchanges the fingerprint is made of (setup and probes)
  std::vector<captures::RegistryValue> reg;
  std::vector<std::string> listed;
  read_hklm(c, reg, seen, listed, out.warnings);
  out.languages = o.languages.empty() ? with_english(listed) : o.languages;

  winreg::PolicyHandle hkpd;
  if (Status s = open_hkpd(c, hkpd); !s.ok()) return s;
  std::vector<captures::NameTable> tables;
  std::vector<captures::QueryRecord> odd;  // answers kept as they were
  for (const std::string& lang : out.languages) {
    for (const char* kind : {"Counter ", "Help "}) {
      Exchange e;
      if (Status s = query_until_done(c, hkpd, "HKPD", kind + lang, 64 * 1024, seen, e); !s.ok()) return s;
      take_name_table(e, tables, odd);
    }
  }

  std::map<std::string, Probed> probed;
  for (const std::string& q : o.queries) {
    if (stopped(o)) return Status::IOError("stopped before the first sample: no capture written");
    if (Status s = probe(c, hkpd, q, seen, probed[q]); !s.ok()) return s;
  }

  // The host as its first answers describe it.
  captures::HostInfo& host = out.host;
  host = describe_host(seen, reg, o.host_name);
  host.interval_ms = uint32_t(o.interval.count());
  host.start_time_100ns = now_filetime();

  CallStats stats;
  out.fingerprint = analyse(seen, stats);
  std::unique_ptr<captures::Writer> w;
  if (Status s = captures::Writer::create(path, host, o.writer, w); !s.ok()) return s;
  for (const captures::RegistryValue& v : reg)
    if (Status s = w->add_registry(v); !s.ok()) return s;
  for (const captures::NameTable& t : tables)
    if (Status s = w->add_names(t); !s.ok()) return s;
  for (const captures::ObjectInfo& obj : catalog_from(seen))
    if (Status s = w->add_object(obj); !s.ok()) return s;
  if (Status s = w->set_fingerprint(captures::to_json(out.fingerprint)); !s.ok()) return s;
  for (const captures::QueryRecord& r : odd)
    if (Status s = w->append(r); !s.ok()) return s;

  RecordProgress prog;
  prog.target = o.count;
  Status result;
  const auto start = Clock::now();
  for (uint32_t tick = 0; !stopped(o); ++tick) {
    if (o.count && tick >= o.count) break;
    if (o.duration.count() && Clock::now() - start >= o.duration) break;
    wait_until(start + o.interval * tick, o);
    if (stopped(o)) break;
    std::vector<Exchange> calls;
    for (const std::string& q : o.queries) {
      Exchange e;
      calls.clear();
      uint32_t& buffer = probed[q].buffer;
      if (result = query_until_done(c, hkpd, "HKPD", q, buffer, calls, e); !result.ok()) break;
      if (e.status == 0 && header_only_answer(e.data) &&
          !probed[q].header_only) {  // outgrew a truncating host's buffer
        buffer = grow(buffer, 0);
        if (result = query_until_done(c, hkpd, "HKPD", q, buffer, calls, e); !result.ok()) break;
      }
      for (const Exchange& x : calls) stats.add(x);
      if (e.status == 0) buffer = std::max(e.offered, buffer);
      prog.bytes += e.data.size();
      prog.errors += e.status != 0;
      if (result = w->append({tick, e.time_100ns, e.latency_us, q, e.status, e.type, e.size, std::move(e.data)});
          !result.ok())
        break;
    }
    if (!result.ok()) break;
    prog.samples = ++out.samples;
    if (o.progress) o.progress(prog);
  }
  out.fingerprint = analyse(seen, stats);  // now with the sampling's errors and latencies
  if (Status s = w->set_fingerprint(captures::to_json(out.fingerprint)); result.ok() && !s.ok()) result = s;
  if (Status s = w->close(); result.ok() && !s.ok()) result = s;
  out.file_bytes = w->file_bytes();
  return result;
}

}  // namespace perfsim::recorder
