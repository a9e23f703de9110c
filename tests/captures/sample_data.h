// Deterministic test captures: every payload is a function of (query, tick), so a test (or the
// writer process the kill test starts) can regenerate what any record must hold.
#pragma once
#include <cstdint>
#include <string>

#include "captures/capture.h"

namespace perfsim::captures::testdata {

inline constexpr uint32_t kSlowQueryPeriod = 10;  // "Counter 009" is read every 10th tick
inline constexpr uint32_t kProbePeriod = 7;       // a MORE_DATA size probe every 7th tick

inline uint64_t mix(uint64_t x) {  // splitmix64 finaliser: a cheap deterministic "random" value
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Counters that grow each tick at their own rate, like cumulative perf counters; from tick 17 on
// 24 bytes are inserted in the middle (an instance appeared), shifting everything after it.
inline Bytes counters_payload(uint32_t query, uint32_t tick, size_t slots) {
  Bytes b;
  const size_t insert_at = slots / 2;
  for (size_t j = 0; j < slots; ++j) {
    if (j == insert_at && tick >= 17)
      for (int k = 0; k < 3; ++k) put_le64(b, mix(query * 7919 + 1000003 + k));
    const uint64_t seed = mix(query * 1000003 + j);
    put_le64(b, (seed >> 20) + tick * (seed % 5000));
  }
  return b;
}

inline QueryRecord make_record(uint32_t tick, const std::string& name, uint32_t status, uint32_t reg_type,
                               Bytes payload) {
  QueryRecord r;
  r.tick = tick;
  r.time_100ns = 133000000000000000ll + int64_t(tick) * 150000000ll + (name.size() * 1000);
  r.latency_us = 1000 + tick % 97;
  r.value_name = name;
  r.status = status;
  r.reg_type = reg_type;
  r.size = uint32_t(payload.size());
  r.payload = std::move(payload);
  return r;
}

// The records of one tick, in the order a collector would ask.
inline std::vector<QueryRecord> tick_records(uint32_t tick, size_t global_slots = 2500) {
  std::vector<QueryRecord> out;
  if (tick % kProbePeriod == 0) {
    QueryRecord probe = make_record(tick, "Costly", 234, 3, {});
    probe.size = 99999 + tick;  // MORE_DATA: the size the host reported, no data
    out.push_back(std::move(probe));
  }
  out.push_back(make_record(tick, "Global", 0, 3, counters_payload(0, tick, global_slots)));
  out.push_back(make_record(tick, "238 232", 0, 3, counters_payload(1, tick, 400)));
  if (tick % kSlowQueryPeriod == 0) {
    static const char kCounter009[] =
        "1\0"
        "1847\0"
        "2\0"
        "System\0"
        "4\0"
        "Memory\0";  // + final NUL
    Bytes names;
    for (char c : std::string(kCounter009, sizeof kCounter009)) put_le16(names, uint8_t(c));
    out.push_back(make_record(tick, "Counter 009", 0, 7, names));
  }
  return out;
}

inline Capture make_capture(uint32_t ticks) {
  Capture c;
  c.host = HostInfo{"WIN2016-DB",         "2016", "Windows Server 2016 Datacenter", "6.3", "14393", "", 10000000, 8,
                    133000000000000000ll, 15000};
  c.registry.push_back(RegistryValue{"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib", "Last Counter", 4,
                                     Bytes{0x10, 0x27, 0, 0}});
  c.registry.push_back(RegistryValue{"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "ProductName", 1,
                                     Bytes{'W', 0, 'i', 0, 'n', 0, 0, 0}});
  Bytes counter, help;
  for (int i = 0; i < 3000; ++i) {
    for (char ch : std::to_string(i * 2) + '\0' + "Counter name " + std::to_string(i) + '\0')
      put_le16(counter, uint8_t(ch));
    for (char ch : std::to_string(i * 2 + 1) + '\0' + "Help text " + std::to_string(i) + '\0')
      put_le16(help, uint8_t(ch));
  }
  c.names.push_back(NameTable{"009", counter, help});
  c.names.push_back(NameTable{"019", Bytes{'1', 0, 0, 0, 0, 0}, Bytes{}});
  c.catalog.push_back(ObjectInfo{230, "PerfProc", false});
  c.catalog.push_back(ObjectInfo{786, "PerfProc", true});
  c.fingerprint_json = R"({"more_data":"rrp-exact","min_buffer":{"Global":524288},"latency_ms":12})";
  for (uint32_t t = 0; t < ticks; ++t)
    for (QueryRecord& r : tick_records(t)) c.records.push_back(std::move(r));
  return c;
}

}  // namespace perfsim::captures::testdata
