// Turning exchanges (exchange.h) into capture content: the part live recording and pcap import
// share. Live recording streams samples itself and uses the pieces; import builds whole captures.
#pragma once
#include <string>
#include <vector>

#include "captures/capture.h"
#include "captures/system_values.h"
#include "core/status.h"
#include "recorder/exchange.h"
#include "recorder/fingerprint.h"
#include "windows/registry_keys.h"

namespace perfsim::recorder {

using captures::kCurrentVersionKey;
using windows::kPerflibKey;

// Host identity from HKLM values and the first PERF_DATA_BLOCK answered: system name (else
// `fallback_name` upper-cased), PerfFreq, CurrentVersion strings and the OS profile they imply;
// processors from the first answer holding the Processor object (its instances but _Total), else
// the Environment's NUMBER_OF_PROCESSORS, else 1.
captures::HostInfo describe_host(const std::vector<Exchange>& seen,
                                 const std::vector<captures::RegistryValue>& registry,
                                 const std::string& fallback_name);

// Objects of Global answers; those only Costly brought are costly; objects an index query
// brought unasked share the asked object's provider (extra-objects), others get one each.
std::vector<captures::ObjectInfo> catalog_from(const std::vector<Exchange>& seen);

// A Counter/Help answer: into `tables` when it is a REG_MULTI_SZ table, else kept as the answer it
// was (a tick-0 record the replayer serves at every tick). Returns false for other value names.
bool take_name_table(const Exchange& e, std::vector<captures::NameTable>& tables,
                     std::vector<captures::QueryRecord>& odd);

// The OS profile name (windows/os.h row) of a CurrentVersion / CurrentBuildNumber pair, "" if unknown.
std::string profile_for_version(const std::string& current_version, const std::string& build);

struct ImportedCapture {
  captures::Capture capture;
  Fingerprint fingerprint;
  uint32_t ticks = 0;
  std::vector<std::string> notes;  // what was left out of the series and why, one line each
};

// A whole capture from one server's conversation: HKLM values, name tables, every final perf-data
// answer (not size probes, not ERROR_MORE_DATA) as a record; a tick ends when a value name repeats.
// A capture is one collector's view of the host: where several clients polled it, the series is
// the one with the most perf-data answers (the others still give HKLM values and name tables),
// and an answer whose objects are byte for byte the previous one's of that value (no counter
// moved: no Windows host answers so, a replay or a cache does) is not a sample; `notes` says so.
// InvalidArgument when the conversation holds no perf-data answer.
Status build_capture(const Conversation& conv, ImportedCapture& out);

}  // namespace perfsim::recorder
