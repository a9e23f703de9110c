// UTF-8 <-> UTF-16LE conversion for the strings Windows puts on the wire (names, REG_SZ, MULTI_SZ).
// Invalid sequences become U+FFFD rather than failing: a collector shows what it got.
#pragma once
#include <string>
#include <string_view>
#include <vector>
#include "core/bytes.h"

namespace perfsim {

std::u16string utf8_to_utf16(std::string_view s);
std::string utf16_to_utf8(std::u16string_view s);
// How many UTF-16 code units utf8_to_utf16(s) makes: a name's length as Windows counts it (PDH's
// bounds are in these "characters", perfdata/limits.h). With `cut`, also the byte offset of the
// first sequence that would take the count past `max_units` (s.size() when none does).
size_t utf16_length(std::string_view s, size_t* cut = nullptr, size_t max_units = 0);
// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF);
// if not, `bad` (when given) gets the offset of the first byte that is not.
bool valid_utf8(std::string_view s, size_t* bad = nullptr);
// Appends the string as UTF-16LE code units (no terminator).
void put_utf16le(Bytes& out, std::u16string_view s);
// Reads n code units of UTF-16LE from p (caller has checked bounds).
std::u16string load_utf16le(const uint8_t* p, size_t units);
// Splits at any of `separators`, dropping empty pieces ("a\\\\b" -> {"a","b"}).
std::vector<std::string> split_nonempty(std::string_view s, std::string_view separators);
// Case-insensitive ASCII compare, for value names (Windows compares them case-insensitively).
bool iequals(std::string_view a, std::string_view b);

}  // namespace perfsim
