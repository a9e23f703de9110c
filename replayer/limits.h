// The ranges of every number a fault plan, a quirk, a fleet file or a timeline takes, in one table
// (README.md, "Ranges"). Each is checked where the number enters (fault plan files, SIGHUP reloads
// and PUT /api/faults; --quirk, [host.quirks] and PUT .../quirks; fleet and scenario files;
// --speed and POST .../timeline speed=X) with core/config.h's check_bounds, so a value outside is
// refused naming its key and range instead of hanging every call or overflowing a clock.
#pragma once
#include <cstdint>

#include "core/config.h"

namespace perfsim::replayer::limits {

// Any delay a host adds before an answer leaves (latency, stall, hang, slow-global, bandwidth):
// an hour. A longer one is a hang, not a latency, and a held reply also holds its connection.
inline constexpr double kMaxDelayMs = 3'600'000;
inline constexpr config::Bounds kDelayMs{0, kMaxDelayMs};
inline constexpr config::Bounds kStallSeconds{0, kMaxDelayMs / 1000};
// Realtime pace (recorded seconds per real second). Above 1e4 the 64-bit 100 ns position of a
// timeline running a year would overflow; below 1e-3 a 15 s sample lasts more than four hours.
inline constexpr config::Bounds kSpeed{1e-3, 1e4};
inline constexpr config::Bounds kProbability{0, 1};
// `every = N`: the Nth call; 0 would silently never fire.
inline constexpr config::Bounds kEvery{1, UINT32_MAX};
// A fault rule's window after its plan is loaded, and a fleet's clock spread: a year.
inline constexpr config::Bounds kYearSeconds{0, 31'536'000};
// Lognormal latency's sigma: at 10 the 99th percentile is already e^23 times the median.
inline constexpr config::Bounds kSigma{0, 10};
// Byte parameters of buffer-policy quirks (overhead, jitter, growth): 64 MiB, far beyond any
// recorded Global (a few MB) and small enough that size + parameter never wraps 32 bits in practice.
inline constexpr config::Bounds kQuirkBytes{0, 64 << 20};
// A fleet's counter variation: growth scaled by [1 - variation, 1].
inline constexpr config::Bounds kVariation{0, 1};
// object-count-lies `extra`, duplicate-instances `count`: a real host lists a few hundred objects.
inline constexpr config::Bounds kExtraObjects{0, 65535};
inline constexpr config::Bounds kDuplicateCount{2, 65535};
// A counter or object title index (0 means none: the quirk would silently do nothing).
inline constexpr config::Bounds kTitleIndex{1, UINT32_MAX};
// perffreq `hz`: every Windows PerfFreq is at least 1 kHz (3.58 MHz ACPI, 10 MHz since Windows 8).
inline constexpr config::Bounds kPerfFreqHz{1000, UINT32_MAX};

// Host events (events.h): when (a timeline position, a year), a reboot's down time (an hour: a
// host down longer is gone, not rebooting) and a clock jump (a year either way).
inline constexpr config::Bounds kEventAt{0, 31'536'000};
inline constexpr config::Bounds kEventDown{0, 3600};
inline constexpr config::Bounds kEventJump{-31'536'000, 31'536'000};
// A churn's processes that start or exit (a busy server starts a few hundred a minute; more
// would only grow every answer).
inline constexpr config::Bounds kEventProcesses{0, 1000};
// Objects one provider-fail hides (the largest Windows providers register a few dozen objects;
// every answer is checked against the list, so the admin API must not make it long).
inline constexpr size_t kMaxProviderObjects = 256;
// A lodctr event's object: its counters (a V1 provider's object lists a few dozen; every name
// grows the Counter and Help tables each collector reads) and the length of each name (the
// longest Windows counter names are about 80 characters).
inline constexpr size_t kMaxLodctrCounters = 64;
inline constexpr size_t kMaxLodctrName = 128;
// Events one host keeps: each added one re-prepares the whole list (a reboot keeps a sample's
// counters), so the admin API must not let a caller grow it without end.
inline constexpr size_t kMaxEventsPerHost = 64;
// Memory events keep (issue 44 AD1: each POST kept 0.4-1.4 MB, a sample's counters per reboot).
// An event keeps its parameters (a lodctr's names: at most 64 x 128 bytes) and a lodctr or
// unlodctr the English name tables from it on (the bundled 2016 host's: about 1.1 MB); a host
// with a reboot or wrap in force keeps one boot's counter tables while answers need them
// (events.h BootValues). An event that would take its host's events past kMaxEventBytesPerHost,
// or all the events and boot tables of this process's hosts past kMaxEventBytesFleet, is refused
// (the admin API answers 507 naming the bound); what is kept already stays.
inline constexpr size_t kMaxEventBytesPerHost = size_t(16) << 20;
inline constexpr size_t kMaxEventBytesFleet = size_t(512) << 20;

inline constexpr const char* kDelayUnit = " (milliseconds: at most an hour)";
inline constexpr const char* kSpeedUnit = " (recorded seconds per real second)";

}  // namespace perfsim::replayer::limits
