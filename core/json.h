// The one way perfsim turns a JSON tree into text. Strings in our output come from files and the
// network (host names, value names, paths), so they may hold any bytes; nlohmann's plain dump()
// throws type_error 316 on invalid UTF-8, which aborted `--json` commands. json_text() never
// throws for that: each byte that is not part of valid UTF-8 becomes U+FFFD (the replacement
// character, "\ufffd" once escaped), so the output always parses; the text output shows the raw
// bytes when a user needs them.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace perfsim {

// indent < 0: one line; otherwise pretty-printed with that many spaces. Non-ASCII stays UTF-8.
std::string json_text(const nlohmann::json& j, int indent = -1);

}  // namespace perfsim
