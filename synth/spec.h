// The declarative spec of a synthetic host (README.md documents it with examples), read from TOML
// or JSON with one schema through core/config.h (TOML becomes the same JSON tree; one reader checks it).
//
// Contract: parse errors are InvalidArgument and name the offending key path ("processes.count")
// and, for TOML and for JSON syntax errors, the line. Unknown keys are errors (typos must not pass
// silently). Defaults make an empty spec valid: a "2016" host, 1 h at 15 s.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "synth/signal.h"

namespace perfsim::synth {

struct InstancesSpec {
  // Whether `instances` was given at all: without it the object is single-instance
  // (NumInstances PERF_NO_INSTANCES); with a count of 0 it is a multi-instance object that has
  // no instances now (NumInstances 0), which some collectors' parsers trip on.
  bool multi = false;
  uint32_t count = 0;
  std::vector<std::string> names;  // first names used; more are made from prefix + number
  std::string prefix = "instance";
  double churn_per_hour = 0;   // instances replaced per hour (new name, fresh counters)
  bool total = false;          // append a _Total instance summing the others
  bool total_average = false;  // ... averaging them instead (total = "average"), as Processor's does
};

struct CounterSpec {
  std::string name;
  uint32_t index = 0;  // 0: assigned after the profile's last counter
  std::string help;
  uint32_t type = 0;
  uint32_t detail = 100;
  int32_t scale = 0;
  GeneratorSpec value;         // the displayed value (a rate, a percentage, a size ...)
  double base = 100;           // fraction types: the base counter's value
  double ops_per_second = 10;  // average types: operations counted by the base
};

struct ObjectSpec {
  std::string name;
  uint32_t index = 0;  // 0: assigned
  std::string help;
  std::string provider;  // service name; default: the name without spaces
  bool costly = false;
  InstancesSpec instances;
  std::vector<CounterSpec> counters;
};

struct Spec {
  // [host]
  std::string host_name;  // [host] name; empty: host_name(spec) names it after profile and seed
  std::string profile = "2016";
  uint64_t seed = 1;
  int64_t start_100ns = 133485408000000000;  // 2024-01-01T00:00:00Z as FILETIME
  uint32_t duration_s = 3600;
  uint32_t interval_ms = 15000;
  uint32_t processors = 4;
  uint64_t memory_mb = 0;                   // 0: the profile's (windows/os.h SynthDefaults::memory_mb)
  uint32_t uptime_s = 3 * 86400;            // time since boot at the first sample
  std::optional<bool> process_v1_disabled;  // overrides the profile's default
  // `lodctr /s` backup or perfcLLL.dat the host's name tables come from (names/backup.h); empty:
  // the built-in English table. Relative to the spec file when read by load_spec.
  std::string names_file;
  // The names file's bytes when it is not on disk (a built-in scenario's, scenarios/); used
  // instead of reading names_file, which then only names it in messages.
  std::string names_text;
  // First index for the names of Perflib V2 counter sets the names file lacks; 0: after its last
  // index (synth/README.md, "Names files without V2 counter sets").
  uint32_t v2_index = 0;
  // With a names file: objects and counters it does not name are refused (false: left out of the
  // host, listed in one note).
  bool strict_names = false;
  // Server roles (roles.h): their objects come after the OS's and before [[objects]].
  std::vector<std::string> roles;
  // [load]: displayed values driving the built-in objects
  GeneratorSpec cpu;        // % busy of all processors
  GeneratorSpec memory;     // % of physical memory in use
  GeneratorSpec disk_iops;  // transfers/sec over all volumes
  GeneratorSpec network;    // bytes/sec over all adapters
  // [processes]
  uint32_t process_count = 60;
  uint32_t threads_min = 1, threads_max = 30;
  double process_churn_per_hour = 6;
  std::vector<std::string> process_names;  // empty: a built-in list of typical names
  // [disks]
  uint32_t physical_disks = 1;
  std::vector<std::string> volumes{"C:"};
  double volume_size_gb = 120;
  // [network]
  std::vector<std::string> adapters{"Intel[R] 82574L Gigabit Network Connection"};
  uint64_t bandwidth_bps = 1000000000;
  // [costly]
  uint32_t images_per_process = 3;  // Image instances for each process (0: none)
  bool thread_details = true;
  // [[objects]]
  std::vector<ObjectSpec> objects;

  Spec();
};

// The checked walk itself, for readers whose files embed synth's schema (lodctr's collect spec).
// The system name the host reports: the spec's [host] name, else SYNTH-PROFILE-SEED
// ("SYNTH-2016-1"), so synthetic hosts of different profiles or seeds differ on one dashboard.
std::string host_name(const Spec& spec);

// The seed every value stream of the host is drawn from: the spec's seed mixed with the host's
// name (host_name(spec), without case) and its OS row's name (`os_name`, so a profile's aliases
// agree). Hosts that differ in name, profile or seed read differently, with the default seed too
// (issues 47, 56: SYNTH-2016-1 and SYNTH-2022-1 read the same series); the same three give the
// same bytes. The seed a capture's fingerprint records stays the spec's own.
uint64_t value_seed(const Spec& spec, std::string_view os_name);

Status read_spec(const config::Doc& doc, Spec& out);
Status parse_spec_toml(std::string_view text, Spec& out);
Status parse_spec_json(std::string_view text, Spec& out);
// Picks the parser by extension (.toml / .json) and reads the file.
Status load_spec(const std::string& path, Spec& out);

struct Profile;
// Fills memory_mb from the profile when the spec names none (0); InvalidArgument when a host with
// 32-bit memory counters is given 4 GB or more.
Status resolve_memory(const Profile& p, Spec& spec);

// Counter types a custom counter may use, by winperf name ("PERF_COUNTER_COUNTER", ...).
std::optional<uint32_t> counter_type_by_name(std::string_view name);

}  // namespace perfsim::synth
