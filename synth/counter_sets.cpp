// Counter sets: objects Windows registers after the standard ones (Perflib V2 providers), so their
// title indices lie above Base Index and depend on what the host registered before them. Names
// are the English (009) ones; counter types are those the WMI class of each set documents
// (Win32_PerfRawData_Counters_ProcessorInformation, learn.microsoft.com; synth/README.md has the
// table); help texts are short paraphrases written for perfsim.
#include "perfdata/winperf.h"
#include "synth/profiles.h"

namespace perfsim::synth {
namespace {

using namespace winperf;

constexpr uint32_t kWin7 = 601, kWin8 = 602, kWin10 = 1000;

CounterSet processor_information() {
  return {Family::kProcessorInformation,
          "Processor Information",
          "Counters for each processor, named NUMA node,processor, with node and system totals.",
          "Counters",
          true,
          kWin7,
          {
              {"% Processor Time", "Percentage of elapsed time the processor ran non-idle threads.",
               PERF_100NSEC_TIMER_INV},
              {"% User Time", "Percentage of elapsed time spent in user mode.", PERF_100NSEC_TIMER},
              {"% Privileged Time", "Percentage of elapsed time spent in privileged mode.", PERF_100NSEC_TIMER},
              {"Interrupts/sec", "Rate of hardware interrupts the processor serviced.", PERF_COUNTER_COUNTER},
              {"% DPC Time", "Percentage of time spent on deferred procedure calls.", PERF_100NSEC_TIMER},
              {"% Interrupt Time", "Percentage of time spent servicing hardware interrupts.", PERF_100NSEC_TIMER},
              {"DPCs Queued/sec", "Rate at which DPCs are queued on the processor.", PERF_COUNTER_COUNTER},
              {"DPC Rate", "Rate at which DPCs are queued between clock ticks.", PERF_COUNTER_RAWCOUNT},
              {"% Idle Time", "Percentage of time the processor was idle.", PERF_100NSEC_TIMER},
              {"% C1 Time", "Percentage of time spent in the C1 idle state.", PERF_100NSEC_TIMER},
              {"% C2 Time", "Percentage of time spent in the C2 idle state.", PERF_100NSEC_TIMER},
              {"% C3 Time", "Percentage of time spent in the C3 idle state.", PERF_100NSEC_TIMER},
              {"C1 Transitions/sec", "Rate of entries into the C1 state.", PERF_COUNTER_BULK_COUNT},
              {"C2 Transitions/sec", "Rate of entries into the C2 state.", PERF_COUNTER_BULK_COUNT},
              {"C3 Transitions/sec", "Rate of entries into the C3 state.", PERF_COUNTER_BULK_COUNT},
              {"% Priority Time", "Percentage of elapsed time the processor ran threads that are not low priority.",
               PERF_100NSEC_TIMER_INV},
              {"Parking Status", "Whether the processor is parked (1) or not (0).", PERF_COUNTER_RAWCOUNT},
              {"Processor Frequency", "Current frequency of the processor, in megahertz.", PERF_COUNTER_RAWCOUNT},
              {"% of Maximum Frequency", "Current frequency as a percentage of the maximum.", PERF_COUNTER_RAWCOUNT},
              {"Processor State Flags", "Flags describing the processor's state.", PERF_COUNTER_RAWCOUNT},
              {"Clock Interrupts/sec", "Rate of clock tick interrupts the processor serviced.", PERF_COUNTER_COUNTER,
               0, PERF_DETAIL_NOVICE, kWin8},
              {"Average Idle Time", "Average idle time between breaks, as a share of the interval.",
               PERF_PRECISION_100NS_TIMER, PERF_PRECISION_TIMESTAMP, PERF_DETAIL_NOVICE, kWin8},
              {"Idle Break Events/sec", "Rate at which the processor left the idle state.", PERF_COUNTER_BULK_COUNT, 0,
               PERF_DETAIL_NOVICE, kWin8},
              {"% Processor Performance", "Work done, as a percentage of what the nominal frequency would do.",
               PERF_AVERAGE_BULK, PERF_AVERAGE_BASE, PERF_DETAIL_NOVICE, kWin8},
              {"% Processor Utility", "Busy time scaled by % Processor Performance.", PERF_AVERAGE_BULK,
               PERF_AVERAGE_BASE, PERF_DETAIL_NOVICE, kWin8},
              {"% Privileged Utility", "Privileged time scaled by % Processor Performance.", PERF_AVERAGE_BULK,
               PERF_AVERAGE_BASE, PERF_DETAIL_NOVICE, kWin8},
              {"% Performance Limit", "Percentage of nominal performance a limit takes away.", PERF_COUNTER_RAWCOUNT,
               0, PERF_DETAIL_NOVICE, kWin10},
              {"Performance Limit Flags", "Why the processor's performance is limited.", PERF_COUNTER_RAWCOUNT, 0,
               PERF_DETAIL_NOVICE, kWin10},
          }};
}

uint32_t version_of(const Profile& p) { return p.os->by_version ? p.os->major * 100 + p.os->minor : 0; }

}  // namespace

const std::vector<CounterSet>& counter_sets() {
  static const std::vector<CounterSet> v = {processor_information()};
  return v;
}

void register_counter_sets(const Profile& p, std::vector<ObjectDesc>* objects, std::vector<NameDef>* names) {
  const uint32_t version = version_of(p);
  uint32_t next = (p.host.base_index + 2) & ~1u;  // the first even index above Base Index
  auto take = [&](const char* name, const char* help) {
    const uint32_t i = next;
    next += 2;
    if (names) names->push_back({i, name, help});
    return i;
  };
  for (const CounterSet& set : counter_sets()) {
    if (version == 0 || version < set.since) continue;
    ObjectDesc o;
    o.index = take(set.name, set.help);
    o.provider = set.provider;
    o.multi = set.multi;
    o.family = set.family;
    for (const SetCounter& c : set.counters) {
      if (c.since > version) continue;
      const uint32_t i = take(c.name, c.help);
      o.counters.push_back({i, c.type, size_for(c.type), c.detail, 0, c.name});
      if (c.base) o.counters.push_back({i, c.base, size_for(c.base), c.detail, 0, c.name});
    }
    if (objects) objects->push_back(std::move(o));
  }
}

}  // namespace perfsim::synth
