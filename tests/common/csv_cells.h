// The tests' own reader of one CSV line (quoted cells, doubled quotes, a trailing '\r' dropped), so
// that checks of what perfsim writes in relog's layout do not go through perfsim's own parser.
#pragma once

#include <string>
#include <vector>

namespace perfsim::testing {

inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cur += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace perfsim::testing
