// The one way perfsim reads JSON text and the one way it turns a JSON tree into text.
//
// Reading (parse_json_text): every JSON perfsim reads from a file or the network (fleet and
// scenario files, fault plans and events the admin API takes, a capture's fingerprint, journal
// lines) is nested at most kMaxJsonDepth deep. nlohmann's parser itself keeps its own stack, but
// copying, comparing, dumping and walking a value recurse once a level: a fingerprint 40,000
// levels deep overflowed the stack of `serve`, `diff` and `redact`, a fleet file 200,000 deep that
// of `serve` (issue 44, C1).
//
// Writing (json_text): strings in our output come from files and the network (host names, value
// names, paths), so they may hold any bytes; nlohmann's plain dump() throws type_error 316 on
// invalid UTF-8, which aborted `--json` commands. json_text() never throws for that: each byte
// that is not part of valid UTF-8 becomes U+FFFD (the replacement character, "\ufffd" once
// escaped), so the output always parses; the text output shows the raw bytes when a user needs them.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace perfsim {

// Objects and arrays inside one another, the outermost counting 1: the TOML reader's bound too
// (toml++'s TOML_MAX_NESTED_VALUES), so a file reads the same in either syntax. Real documents
// nest under 10.
inline constexpr int kMaxJsonDepth = 256;

enum class JsonRead { kOk, kSyntax, kTooDeep };

// Parses `text` into out, never throwing and never building a level past kMaxJsonDepth (deeper
// levels are skipped as they are read, so the cost stays linear in the text). Not kOk: out is a
// discarded value.
JsonRead parse_json_text(std::string_view text, nlohmann::json& out);

// The same, a discarded value for anything but kOk: for callers with a fallback of their own.
nlohmann::json parse_json_or_discarded(std::string_view text);

// Why parse_json_text refused `text`, prefixed by `origin` (a path, "request body"): "ORIGIN:
// JSON nested deeper than 256 levels ...", "ORIGIN:LINE: JSON syntax error: ..." (nlohmann's
// message, which names the byte), or a number beyond a double's range with its line.
std::string json_read_error(std::string_view text, const std::string& origin, JsonRead why);

// indent < 0: one line; otherwise pretty-printed with that many spaces. Non-ASCII stays UTF-8.
std::string json_text(const nlohmann::json& j, int indent = -1);

}  // namespace perfsim
