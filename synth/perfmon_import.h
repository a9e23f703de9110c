// A host made from a perfmon log (`perfsim import --perfmon`): the CSV or TSV relog and typeperf
// write (perfdata/pdh_csv.h) becomes a capture whose served counters format, between consecutive
// samples, to the values the log shows at the log's times.
//
// Contract:
//  - With `names` (the host's `lodctr /s` backup), a localized object or counter name is the
//    English name of its index in the backup ("Prozessor" -> 238 -> "Processor") before it is
//    matched to the profile's; a name the backup lacks is matched as written.
//  - Objects and counters the profile knows keep its title indices, counter types and base
//    counters (synth/catalog.h); the raw values are the formulas run backwards
//    (perfdata::raw_for_value), with PerfTime100nSec the log's time and PerfTime/PerfFreq the
//    profile's clock. Objects and counters it does not know get fresh indices after the profile's
//    last one (a custom object set, provider "PerfmonImport") and show their values as logged:
//    PERF_COUNTER_LARGE_RAWCOUNT when every value is whole, else PERF_LARGE_RAW_FRACTION; they are
//    listed in the report.
//  - Only the objects, instances and counters the log names are served.
//  - A blank cell (" " or "": PDH had no value) is never served as a value (synth/README.md,
//    "Blank cells"): an instance (or a single-instance object) is absent from a sample unless it
//    has a value there (or, in its first sample, in the next one: a rate needs two) and each of
//    its blank cells formats as nothing: a counter in its first sample that needs two, or one
//    whose unchanged raw value and base give a zero denominator (averages, sample fractions),
//    which holds its previous raw value. Values of a row not served so are counted (`unserved`).
//    Blanks are counted per counter (the log's first row, where relog leaves rates blank, aside).
//  - A counter the log never has for an instance (it logged other instances' or another selection)
//    is no value either: the instance is never served unless each such counter formats as nothing
//    when held at zero (averages, sample fractions); each instance left out is a warning.
//  - Text: perfmon_text.h (BOMs, UTF-8, else the ANSI code page). typeperf's stdout is accepted:
//    blank lines before the header, its closing messages ("Exiting, please wait...") after the
//    last row. A torn last row (a collection stopped mid-write) is dropped with a warning naming
//    its line; `strict` refuses it.
//  - Bad input (a torn row elsewhere, a path that does not parse, a time that does not advance, a
//    value that is not a number; with blank_fail, a blank; a counter path past PDH's 2,048
//    characters, an object or counter name past 1,024, an instance name past 1,024:
//    perfdata/limits.h) is InvalidArgument naming the file, line and column, the input quoted
//    at most 100 characters long (core/status.h quote_input), found before anything is written; the capture is written to a temporary file renamed
//    over `out` only when complete.
//  - Memory: the log is read twice, a row at a time (the first pass checks and types it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace perfsim::synth {

struct PerfmonImportOptions {
  std::string encoding;  // a log without a BOM is in this iconv code page (empty: UTF-8 if valid, else ansi)
  std::string ansi = "CP1252";
  bool blank_fail = false;  // a blank cell (first row aside) is an error
  bool strict = false;      // a torn last row is an error
  std::string names;        // a `lodctr /s` backup: its localized names map the log's to the profile's
};

// The blank cells of one column: how many, and the lines they are on (the first kBlankRanges runs).
struct BlankColumn {
  std::string counter;  // the path as the header writes it
  uint64_t count = 0;
  std::vector<std::string> lines;  // "12" or "40-44"
};
inline constexpr size_t kBlankRanges = 10;

struct PerfmonImportReport {
  std::string host;
  std::string profile;
  uint64_t samples = 0;
  uint64_t columns = 0;
  std::vector<std::string> custom;                 // counter paths the profile does not know (custom object set)
  uint64_t unreproduced = 0;                       // values no raw counter can give (negative ones); kept as before
  std::vector<std::string> unreproduced_examples;  // "line N, column C: why" (the first few)
  std::string encoding;                            // what the log was read as
  uint64_t blank_cells = 0;
  std::vector<BlankColumn> blanks;  // columns with a blank, in the log's order
  uint64_t unserved = 0;            // logged values not served (their instance absent: a blank, a counter unlogged)
  std::vector<std::string> unserved_examples;  // "line N, PATH: why" (the first few)
  std::vector<std::string> warnings;           // a torn last row dropped, bytes read in the ANSI code page
};

Status import_perfmon(const std::string& log, const std::string& out, const std::string& profile,
                      PerfmonImportReport& report, const PerfmonImportOptions& options = {});

}  // namespace perfsim::synth
