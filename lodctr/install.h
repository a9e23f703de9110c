// LodCtr / UnLodCtr on a capture: what Windows changes in the registry and the name tables when
// extensible counters are installed or removed.
//
// Contract:
//  - install: First Counter = Perflib Last Counter + 2, First Help = Last Help + 2; a symbol at
//    offset k gets name index First Counter + k and help index First Help + k. Every language the
//    INI lists that the host has a table for (Counter/Help in `names` and Perflib\<lang> values)
//    gets that language's texts, appended in index order; the Counter table's "1" entry (the
//    highest index) follows. Services\<driver>\Performance gets First/Last Counter/Help (REG_DWORD)
//    and, when the INI has [objects], `Object List`; Perflib gets the new Last Counter/Last Help.
//  - uninstall removes the driver's name and help entries from every table, its four values and
//    Object List, its objects (providers.h) and catalog entries, and lowers Perflib's Last
//    Counter/Last Help to the highest index left below the driver's range when the driver's range
//    was the top.
//  - Errors (InvalidArgument / NotFound, the message names the line or symbol) leave `cap`
//    unchanged: an odd offset, a symbol the symbol file does not define, a text in a language not
//    in [languages], a driver already loaded (install) or not loaded (uninstall).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "captures/registry_values.h"
#include "captures/writer.h"
#include "core/status.h"
#include "lodctr/ini.h"
#include "windows/registry_keys.h"

namespace perfsim::lodctr {

using windows::kPerflibKey;
std::string performance_key(const std::string& driver);  // SYSTEM\CurrentControlSet\Services\<driver>\Performance

struct DriverRange {
  std::string driver;
  uint32_t first_counter = 0, last_counter = 0, first_help = 0, last_help = 0;
};

struct InstallReport {
  DriverRange range;
  uint32_t perflib_last_counter = 0, perflib_last_help = 0;  // after the change
  std::vector<std::string> languages;                        // tables changed
  std::vector<std::string> skipped_languages;                // listed in [languages], but the host has no such table
  size_t entries = 0;                                        // name + help entries added or removed, all tables
  std::vector<uint32_t> objects;                             // Object List (install)
};

Status install(captures::Capture& cap, const CounterIni& ini, const Symbols& symbols, InstallReport* report = nullptr);
Status uninstall(captures::Capture& cap, const std::string& driver, InstallReport* report = nullptr);

// The driver's range from Services\<driver>\Performance; NotFound when it is not loaded.
Status find_driver(const captures::Capture& cap, const std::string& driver, DriverRange& out);
// Title index of `symbol` for an installed driver (First Counter + offset); false if undefined.
bool symbol_index(const DriverRange& range, const Symbols& symbols, const std::string& symbol, uint32_t& index);

// The capture registry helpers, in lodctr's namespace for its callers.
using captures::find_value;
using captures::reg_dword;
using captures::reg_sz;
using captures::remove_value;
using captures::set_value;

// Rewrites the capture file at `path` atomically: a temporary file next to it, then rename(2), so
// a reader or a crash sees the old file or the new one, never a mix. A temporary left by a run
// that was killed (`PATH.tmp.PID` whose PID is no longer alive) is removed first.
Status save_capture(const std::string& path, const captures::Capture& cap);
// The same, streamed: `meta` and then `from`'s records, each through `edit`, one at a time (the
// capture `from` reads may be `path` itself: it stays mapped until the reader goes).
Status save_capture(const std::string& path, captures::Reader& from, const captures::Capture& meta,
                    const captures::RecordEdit& edit);

}  // namespace perfsim::lodctr
