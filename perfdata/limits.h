// How long a name may be, in the one place each bound is defined. Each is checked where names
// enter perfsim (issue 54: a 50 MB counter name imported from a perfmon log came back as a
// 100 MB Counter table): `import --perfmon`'s counter paths, lodctr INIs and `lodctr /s` backups,
// synth specs, the capture reader's name tables and validate's instance names. Lengths are
// characters as Windows counts them, UTF-16 code units (core/utf16.h utf16_length).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/utf16.h"

namespace perfsim::perfdata::limits {

struct Bound {
  size_t max;        // characters
  const char* name;  // where it comes from, for messages
};

// Microsoft's pdh.h (Windows SDK, from Windows Server 2003 on): "#define PDH_MAX_COUNTER_PATH
// 2048 // Maximum full counter path length"; PdhMakeCounterPath's documentation: "The maximum
// length of a counter path is PDH_MAX_COUNTER_PATH" (\\machine\object(parent/instance#index)\counter,
// "Specifying a Counter Path").
inline constexpr Bound kCounterPath{2048, "PDH_MAX_COUNTER_PATH"};
// pdh.h: "#define PDH_MAX_INSTANCE_NAME 1024 // Maximum counter instance name length".
inline constexpr Bound kInstanceName{1024, "PDH_MAX_INSTANCE_NAME"};
// pdh.h: "#define PDH_MAX_COUNTER_NAME 1024 // Maximum counter name length". Object names too:
// they are entries of the same Counter name table.
inline constexpr Bound kCounterName{1024, "PDH_MAX_COUNTER_NAME"};
// Help (explain) texts: no Microsoft document bounds them, so this is perfsim's own, 16 times
// PDH_MAX_COUNTER_NAME: a runaway string is refused, any plausible text is not. Windows' longest
// help text was not measured (no real name table is at hand; the bundled hosts' longest is 90).
inline constexpr Bound kHelpText{16384, "perfsim's bound on help texts"};

// Whether `text` (UTF-8) has at most b.max characters.
inline bool within(std::string_view text, Bound b) {
  // A UTF-16 code unit takes at least one byte: most texts are decided without counting.
  return text.size() <= b.max || utf16_length(text) <= b.max;
}

// For the message refusing `text`: "'aaaa…' (50000000 characters) is longer than the 2048
// characters of PDH_MAX_COUNTER_PATH".
inline std::string too_long(std::string_view text, Bound b) {
  return quote_input(text) + " is longer than the " + std::to_string(b.max) + " characters of " + b.name;
}

}  // namespace perfsim::perfdata::limits
