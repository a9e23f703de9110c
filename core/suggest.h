// "Did you mean": the known name nearest to a misspelt one, so a typo in a flag, subcommand or quirk
// name is answered with what to write instead of a list to read through.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace perfsim {

// The name in `known` with the fewest single-character edits (insert, delete, replace, swap of two
// neighbours; ASCII case ignored) from `word`, when it is close enough to be the one meant: at most
// 1 edit for a word of up to 4 characters, 2 up to 8, else a third of its length. Empty otherwise;
// the first of equally near names wins.
std::string nearest_name(std::string_view word, const std::vector<std::string>& known);
// The name in `known` with the fewest such edits from `word`, however many: "" only when `known`
// is empty; the first of equally near names wins (a value path's nearest existing object or
// counter, scenarios/values.cpp, where something must be named).
std::string nearest_any(std::string_view word, const std::vector<std::string>& known);
// The optimal string alignment distance of `a` and `b` (Damerau-Levenshtein in which no piece is
// edited twice), ASCII case ignored. O(|a| x |b|) time, O(|b|) memory.
size_t edit_distance(std::string_view a, std::string_view b);
// "; did you mean NAME?" with nearest_name's answer, or "" when none is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& known);

}  // namespace perfsim
