// The quirk fingerprint a capture carries (FORMAT.md, "Fingerprint JSON"), as one typed struct
// with one to_json / from_json pair: the recorder and synth write it, the replayer reads it, and
// none of them handles its JSON keys.
//
// Byte-compatible with the captures already written: a key is written only when it is set (the
// recorder and synth set different keys), keys come out sorted as before, and keys this struct does
// not know (or whose value has another type) are kept in `other` and written back unchanged, so
// to_json(from_json(text)) == text for every fingerprint perfsim has written.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace perfsim::captures {

struct FingerprintProbe {
  uint32_t status = 0;
  uint32_t size = 0;
  std::optional<uint32_t> offered;  // short_probe only
};

struct FingerprintQuery {  // per value name
  uint32_t calls = 0, status = 0, type = 0;
  std::optional<uint64_t> returned;           // bytes the last success brought back
  std::optional<uint64_t> min_buffer;         // smallest buffer seen to succeed
  std::optional<uint64_t> max_failed_buffer;  // largest buffer answered ERROR_MORE_DATA
  std::optional<std::vector<uint32_t>> objects;
};

struct FingerprintLatency {
  uint32_t p50 = 0, p99 = 0, max = 0;  // microseconds
};

struct Fingerprint {
  // Both writers.
  std::optional<std::string> more_data;       // buffer policy quirk (recorder: absent when not seen)
  std::map<std::string, std::string> params;  // its parameters; written when not empty
  std::optional<std::string> profile;         // an OS profile whose quirks apply
  // What a recording found (recorder/fingerprint.h).
  std::optional<FingerprintProbe> null_probe, short_probe;
  std::optional<std::map<std::string, FingerprintQuery>> queries;
  std::optional<std::map<std::string, uint64_t>> errors;  // WERROR (decimal) -> count
  std::optional<FingerprintLatency> latency_us;
  std::optional<std::vector<std::string>> findings;
  // What synth chose (synth/catalog.cpp).
  std::optional<std::string> source;
  std::optional<uint64_t> seed;
  std::optional<int64_t> perf_freq;
  std::optional<bool> pipe_not_available_first, process_v1_disabled, large_memory_counters;
  std::optional<std::string> counter_type_change;
  std::optional<std::vector<uint32_t>> costly_objects;
  nlohmann::json other = nlohmann::json::object();  // unknown keys, written back as read
};

std::string to_json(const Fingerprint& fp);
// InvalidArgument when `text` is not a JSON object; "" is an empty fingerprint.
Status from_json(std::string_view text, Fingerprint& out);

}  // namespace perfsim::captures
