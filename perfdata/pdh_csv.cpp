#include "perfdata/pdh_csv.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdio>

namespace perfsim::perfdata::pdh_csv {

Status split_row(std::string_view line, char sep, std::vector<std::string>& cells) {
  cells.clear();
  std::string cur;
  size_t i = 0;
  for (;;) {
    cur.clear();
    if (i < line.size() && line[i] == '"') {
      // A quoted cell ends at a quote not doubled; only the separator or the line's end may follow.
      for (++i;; ++i) {
        if (i >= line.size())
          return Status::InvalidArgument(fmt::format("cell {} has no closing quote", cells.size() + 1));
        if (line[i] != '"') {
          cur += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          ++i;
          break;
        }
      }
      if (i < line.size() && line[i] != sep)
        return Status::InvalidArgument(fmt::format("text after the closing quote of cell {}", cells.size() + 1));
    } else {
      const size_t end = line.find(sep, i);
      cur.assign(line.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
      i = end == std::string_view::npos ? line.size() : end;
    }
    cells.push_back(cur);
    if (i >= line.size()) return Status::Ok();
    ++i;  // the separator
  }
}

std::string write_row(const std::vector<std::string>& cells, char sep) {
  std::string o;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c) o += sep;
    o += '"';
    for (char ch : cells[c]) o += ch == '"' ? std::string_view("\"\"") : std::string_view(&ch, 1);
    o += '"';
  }
  return o;
}

Status header_bias(std::string_view cell, int32_t& bias) {
  // "(PDH-CSV 4.0) (<zone>)(<bias>)": the bias is the last parenthesized number.
  if (cell.substr(0, 9) != "(PDH-CSV " || cell.empty() || cell.back() != ')')
    return Status::InvalidArgument(
        fmt::format("first cell {} is not a PDH-CSV header such as '{}'", quote_input(cell), kUtcHeader));
  const size_t open = cell.rfind('(');
  const std::string_view num = cell.substr(open + 1, cell.size() - open - 2);
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), bias);
  if (ec != std::errc() || end != num.data() + num.size() || bias < -24 * 60 || bias > 24 * 60)
    return Status::InvalidArgument(
        fmt::format("first cell {} ends without a time zone bias in minutes, e.g. (0)", quote_input(cell)));
  return Status::Ok();
}

std::string header_cell(std::string_view zone, int32_t bias) {
  return fmt::format("(PDH-CSV 4.0) ({})({})", zone, bias);
}

std::string header_zone(std::string_view cell) {
  // The zone is between the second cell's "(" and the ")(" before the bias.
  const size_t open = cell.find(") (");
  const size_t close = cell.rfind(")(");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open + 3) return "";
  return std::string(cell.substr(open + 3, close - open - 3));
}

std::string format_time(const SystemTime& t) {
  return fmt::format("{:02}/{:02}/{:04} {:02}:{:02}:{:02}.{:03}", t.month, t.day, t.year, t.hour, t.minute, t.second,
                     t.ms);
}

Status parse_time(std::string_view text, int32_t bias, int64_t& filetime) {
  unsigned mo = 0, d = 0, y = 0, h = 0, mi = 0, s = 0, ms = 0;
  int used = 0;
  const std::string t(text);
  const int n = std::sscanf(t.c_str(), "%2u/%2u/%4u %2u:%2u:%2u.%3u%n", &mo, &d, &y, &h, &mi, &s, &ms, &used);
  if (n != 7 || size_t(used) != t.size() || y < 1601 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      s > 60)
    return Status::InvalidArgument(fmt::format("time {} is not MM/DD/YYYY HH:MM:SS.mmm", quote_input(text)));
  SystemTime st;
  st.year = uint16_t(y), st.month = uint16_t(mo), st.day = uint16_t(d);
  st.hour = uint16_t(h), st.minute = uint16_t(mi), st.second = uint16_t(s), st.ms = uint16_t(ms);
  filetime = filetime_of(st) + int64_t(bias) * 60 * 10000000;
  return Status::Ok();
}

Status parse_value(std::string_view text, std::optional<double>& out) {
  out.reset();
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return Status::Ok();
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    return Status::InvalidArgument(fmt::format("value {} is not a number", quote_input(text)));
  out = v;
  return Status::Ok();
}

std::string format_value(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : " "; }

}  // namespace perfsim::perfdata::pdh_csv
