#include "core/suggest.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace perfsim {
namespace {

char lower(char c) { return char(std::tolower(static_cast<unsigned char>(c))); }

// The first of the names in `known` nearest to `word` within `limit` edits; "" when none is.
std::string nearest_within(std::string_view word, const std::vector<std::string>& known, size_t limit) {
  const std::string* best = nullptr;
  size_t best_edits = 0;
  for (const std::string& k : known)
    if (const size_t e = edit_distance(word, k); e <= limit && (!best || e < best_edits)) {
      best = &k;
      best_edits = e;
    }
  return best ? *best : "";
}

}  // namespace

// Three rows (two back for a swap of neighbours) instead of the whole table: a long name asked
// against a host's thousand counter names stays at one row of memory.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> two_back(b.size() + 1), back(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) back[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({back[j] + 1, row[j - 1] + 1, back[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        row[j] = std::min(row[j], two_back[j - 2] + 1);
    }
    std::swap(two_back, back);
    std::swap(back, row);
  }
  return back[b.size()];
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& known) {
  return nearest_within(word, known, word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : word.size() / 3);
}

std::string nearest_any(std::string_view word, const std::vector<std::string>& known) {
  return nearest_within(word, known, SIZE_MAX);
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& known) {
  const std::string near = nearest_name(word, known);
  return near.empty() ? "" : "; did you mean " + near + "?";
}

}  // namespace perfsim
