// The CSV (and TSV) layout relog and typeperf write, in one place for the writer (`perfsim series`)
// and the reader (`perfsim import --perfmon`).
//
// Layout (Microsoft, "relog" and "typeperf" command references, learn.microsoft.com/windows-server/
// administration/windows-commands/relog; the header cell names PDH's log type "PDH-CSV 4.0"): the
// first row is a header whose first cell is "(PDH-CSV 4.0) (<time zone name>)(<bias>)" followed by
// one counter path per column (perfdata/series.h parses them); each further row is one sample: the
// time "MM/DD/YYYY HH:MM:SS.mmm" in that zone, then each counter's formatted value, " " (or nothing)
// where the counter has none. Every cell is quoted; a quote inside a cell is doubled. TSV is the
// same with tabs. <bias> is minutes as in TIME_ZONE_INFORMATION.Bias: UTC = local time + bias.
//
// Contract: split_row() accepts what write_row() writes and unquoted cells; errors say what is
// wrong for the caller to prefix with file and line. Times are FILETIME (100 ns since 1601, UTC).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "perfdata/filetime.h"
#include "perfdata/model.h"

namespace perfsim::perfdata::pdh_csv {

// The header's first cell for UTC times, as `perfsim series` writes it.
inline constexpr std::string_view kUtcHeader = "(PDH-CSV 4.0) (Coordinated Universal Time)(0)";

// The cells of one line (without its line ending), `sep` ',' or '\t'.
Status split_row(std::string_view line, char sep, std::vector<std::string>& cells);
// One line (no line ending) of quoted cells.
std::string write_row(const std::vector<std::string>& cells, char sep = ',');

// The header's first cell for a zone: "(PDH-CSV 4.0) (<zone>)(<bias>)".
std::string header_cell(std::string_view zone, int32_t bias_minutes);
// The zone name of a header's first cell ("W. Europe Standard Time"); empty when it has none.
std::string header_zone(std::string_view first_cell);

// The bias in minutes the header's first cell names (0 for UTC); InvalidArgument if it is not a
// PDH-CSV header cell.
Status header_bias(std::string_view first_cell, int32_t& bias_minutes);

// "MM/DD/YYYY HH:MM:SS.mmm" of a SYSTEMTIME, and back to a FILETIME (UTC = local + bias).
std::string format_time(const SystemTime& t);
Status parse_time(std::string_view text, int32_t bias_minutes, int64_t& filetime);

// A value cell: nullopt for " " or "" (no value); InvalidArgument for anything but a number.
Status parse_value(std::string_view text, std::optional<double>& out);
// How a value is written: shortest text that reads back as the same double; " " for none.
std::string format_value(const std::optional<double>& v);

}  // namespace perfsim::perfdata::pdh_csv
