#include "recorder/build.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include "captures/registry_values.h"
#include "core/utf16.h"
#include "perfdata/model.h"
#include "perfdata/select.h"
#include "perfdata/view.h"
#include "windows/constants.h"
#include "windows/os.h"

namespace perfsim::recorder {
namespace {

std::string registry_string(const std::vector<captures::RegistryValue>& reg, const char* key, const char* name) {
  const captures::RegistryValue* v = captures::find_value(reg, key, name);
  return v ? captures::reg_sz_text(v->data) : "";
}

}  // namespace

bool on_perf_key(const Exchange& e) {
  return iequals(e.key, "HKPD") || iequals(e.key, "HKPT") || iequals(e.key, "HKPN");
}

std::string profile_for_version(const std::string& v, const std::string& build) {
  const windows::OsProfile* os = windows::find_os_by_registry(v, build);
  return os ? std::string(os->name) : "";
}

captures::HostInfo describe_host(const std::vector<Exchange>& seen, const std::vector<captures::RegistryValue>& reg,
                                 const std::string& fallback_name) {
  captures::HostInfo host;
  host.name = fallback_name;
  for (char& ch : host.name) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  host.product_name = registry_string(reg, kCurrentVersionKey, "ProductName");
  host.current_version = registry_string(reg, kCurrentVersionKey, "CurrentVersion");
  host.build_number = registry_string(reg, kCurrentVersionKey, "CurrentBuildNumber");
  host.csd_version = registry_string(reg, kCurrentVersionKey, "CSDVersion");
  host.profile = profile_for_version(host.current_version, host.build_number);
  bool named = false;
  uint32_t processors = 0;
  for (const Exchange& e : seen) {
    perfdata::DataBlock d;
    if (!iequals(e.key, "HKPD") || e.status != 0 || e.data.size() < winperf::kDataBlockSize ||
        !perfdata::parse(e.data, d).ok())
      continue;
    if (!named) {
      const std::string n = utf16_to_utf8(d.system_name());
      if (!n.empty()) host.name = n;
      host.perf_freq = d.perf_freq;
      named = true;
    }
    processors = perfdata::processor_count(d);
    if (processors) break;
  }
  if (!processors)
    processors = uint32_t(
        std::strtoul(registry_string(reg, captures::kEnvironmentKey, "NUMBER_OF_PROCESSORS").c_str(), nullptr, 10));
  host.processors = std::max<uint32_t>(processors, 1);
  return host;
}

std::vector<captures::ObjectInfo> catalog_from(const std::vector<Exchange>& seen) {
  std::map<uint32_t, captures::ObjectInfo> cat;
  for (const Exchange& e : seen) {
    if (e.status != 0 || e.null_data || !iequals(e.key, "HKPD")) continue;
    const perfdata::Query q = perfdata::parse_query(e.value_name);
    const std::vector<uint32_t> objs = object_indices(e.data);
    for (uint32_t o : objs) {
      auto [it, fresh] = cat.try_emplace(
          o, captures::ObjectInfo{o, "object " + std::to_string(o), q.kind == perfdata::QueryKind::kCostly});
      if (!fresh && q.kind == perfdata::QueryKind::kGlobal) it->second.costly = false;
    }
    if (q.kind == perfdata::QueryKind::kIndexList && !q.indices.empty() && cat.count(q.indices[0]))
      for (uint32_t o : objs) cat[o].provider = cat[q.indices[0]].provider;
  }
  std::vector<captures::ObjectInfo> out;
  for (auto& [i, o] : cat) out.push_back(o);
  return out;
}

bool take_name_table(const Exchange& e, std::vector<captures::NameTable>& tables,
                     std::vector<captures::QueryRecord>& odd) {
  if (!on_perf_key(e) || e.null_data || e.status == windows::kErrorMoreData) return false;
  const perfdata::Query q = perfdata::parse_query(e.value_name);
  if (q.kind != perfdata::QueryKind::kCounter && q.kind != perfdata::QueryKind::kHelp) return false;
  if (q.lang.empty() && !iequals(e.key, "HKPT")) return false;  // HKPN's bare names are in a language we can't tell
  const std::string lang = q.lang.empty() ? "009" : q.lang;
  if (e.status != 0 || e.type != windows::kRegMultiSz) {
    odd.push_back({0, e.time_100ns, e.latency_us, e.value_name, e.status, e.type, e.size, e.data});
    return true;
  }
  auto it = std::find_if(tables.begin(), tables.end(), [&](const captures::NameTable& t) { return t.lang == lang; });
  if (it == tables.end()) it = tables.insert(tables.end(), captures::NameTable{lang, {}, {}});
  Bytes& field = q.kind == perfdata::QueryKind::kCounter ? it->counter : it->help;
  if (field.empty()) field = e.data;
  return true;
}

namespace {

bool is_poll(const Exchange& e) {
  return iequals(e.key, "HKPD") && !e.null_data && e.status != windows::kErrorMoreData;
}

// The client whose polls make the series (most perf-data answers; the first seen on a tie), and a
// note naming the others when there are any.
std::string series_client(const Conversation& conv, std::vector<std::string>& notes) {
  std::map<std::string, size_t> polls;
  std::vector<std::string> order;
  for (const Exchange& e : conv.exchanges) {
    if (!is_poll(e)) continue;
    if (polls[e.client]++ == 0) order.push_back(e.client);
  }
  if (order.size() < 2) return order.empty() ? "" : order.front();
  std::string best = order.front();
  for (const std::string& c : order)
    if (polls[c] > polls[best]) best = c;
  std::string others;
  for (const std::string& c : order)
    if (c != best) others += (others.empty() ? "" : ", ") + c + " (" + std::to_string(polls[c]) + ")";
  notes.push_back(std::to_string(order.size()) + " clients polled " + conv.server + ": the series is " + best + "'s " +
                  std::to_string(polls[best]) + " answers; left out: " + others);
  return best;
}

// The bytes after the PERF_DATA_BLOCK (its clocks move with every answer, even a repeated one).
ByteView objects_of(const Bytes& data) {
  if (data.size() < winperf::kDataBlockSize) return ByteView(data);
  const uint32_t header = perfdata::block_field32(data, winperf::data_block::kHeaderLength);
  return header <= data.size() ? ByteView(data).subspan(header) : ByteView(data);
}

// Without CurrentVersion values (a collector that reads only perf data), the version the server
// announced in its NTLMSSP CHALLENGE gives the profile and build; where both are there,
// CurrentVersion stays and a disagreement is noted.
void take_announced_version(const Conversation& conv, captures::HostInfo& host, std::vector<std::string>& notes) {
  if (!conv.announced) return;
  const rpc::NtlmVersion& a = *conv.announced;
  const std::string said =
      std::to_string(a.major) + "." + std::to_string(a.minor) + " build " + std::to_string(a.build);
  const windows::OsProfile* os = windows::find_os_by_version(a.major, a.minor, a.build);
  const std::string from = "the NTLMSSP CHALLENGE's Version (MS-NLMP 2.2.2.10) says Windows " + said;
  if (!host.profile.empty()) {
    if (os && host.profile != os->name)
      notes.push_back(from + " (profile " + std::string(os->name) + "), CurrentVersion says profile " + host.profile +
                      ": CurrentVersion kept");
    return;
  }
  if (!os) {
    notes.push_back(from + ", which no profile matches: the profile stays unknown");
    return;
  }
  host.profile = os->name;
  if (host.build_number.empty()) host.build_number = std::to_string(a.build);
  notes.push_back("profile " + host.profile + " from " + from + " (the collector read no CurrentVersion)");
}

}  // namespace

Status build_capture(const Conversation& conv, ImportedCapture& out) {
  out = ImportedCapture{};
  captures::Capture& cap = out.capture;
  std::vector<captures::QueryRecord> odd;
  std::map<std::pair<std::string, std::string>, size_t> reg_at;  // (key, name) -> registry index: last answer wins
  std::set<std::string> in_tick;
  uint32_t tick = 0;
  std::vector<int64_t> tick_times;
  const std::string client = series_client(conv, out.notes);
  std::map<std::string, const Exchange*> last_kept;  // value name -> its last sample
  size_t repeated = 0;
  for (const Exchange& e : conv.exchanges) {
    if (!on_perf_key(e)) {
      if (e.status != 0 || e.null_data) continue;
      auto [it, fresh] = reg_at.try_emplace({e.key, e.value_name}, cap.registry.size());
      if (fresh)
        cap.registry.push_back({e.key, e.value_name, e.type, e.data});
      else
        cap.registry[it->second] = {e.key, e.value_name, e.type, e.data};
      continue;
    }
    if (take_name_table(e, cap.names, odd)) continue;
    if (!is_poll(e) || e.client != client) continue;
    const Exchange*& before = last_kept[e.value_name];
    if (before && e.status == 0 && before->status == 0 && !objects_of(e.data).empty() &&
        std::ranges::equal(objects_of(e.data), objects_of(before->data))) {
      ++repeated;
      continue;
    }
    before = &e;
    if (in_tick.count(e.value_name)) {  // the collector's next poll
      ++tick;
      in_tick.clear();
    }
    if (in_tick.empty()) tick_times.push_back(e.time_100ns);
    in_tick.insert(e.value_name);
    cap.records.push_back({tick, e.time_100ns, e.latency_us, e.value_name, e.status, e.type, e.size, e.data});
  }
  if (cap.records.empty())
    return Status::InvalidArgument("no HKEY_PERFORMANCE_DATA answer from " + conv.server + " to import");
  if (repeated)
    out.notes.push_back(std::to_string(repeated) +
                        " answer(s) left out: their objects equal the previous answer's of the same value (no counter "
                        "moved), which would read as zero rates and 100 % processor time");
  for (captures::QueryRecord& r : odd) r.tick = 0;
  cap.records.insert(cap.records.begin(), odd.begin(), odd.end());

  cap.host = describe_host(conv.exchanges, cap.registry, conv.server);
  take_announced_version(conv, cap.host, out.notes);
  cap.host.start_time_100ns = tick_times.front();
  if (tick_times.size() > 1) {
    std::vector<int64_t> gaps;
    for (size_t i = 1; i < tick_times.size(); ++i) gaps.push_back(tick_times[i] - tick_times[i - 1]);
    std::nth_element(gaps.begin(), gaps.begin() + ptrdiff_t(gaps.size() / 2), gaps.end());
    cap.host.interval_ms = uint32_t(std::max<int64_t>(gaps[gaps.size() / 2] / 10000, 1));
  }
  cap.catalog = catalog_from(conv.exchanges);
  out.fingerprint = analyse(conv.exchanges, {});
  cap.fingerprint_json = captures::to_json(out.fingerprint);
  out.ticks = tick + 1;
  return Status::Ok();
}

}  // namespace perfsim::recorder
