#include "core/suggest.h"

#include <algorithm>
#include <cctype>

namespace perfsim {
namespace {

char lower(char c) { return char(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one piece).
size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(std::string_view word, const std::vector<std::string>& known) {
  const size_t limit = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : word.size() / 3;
  std::string best;
  size_t best_edits = limit + 1;
  for (const std::string& k : known)
    if (const size_t e = edits(word, k); e < best_edits) {
      best_edits = e;
      best = k;
    }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& known) {
  const std::string near = nearest_name(word, known);
  return near.empty() ? "" : "; did you mean " + near + "?";
}

}  // namespace perfsim
