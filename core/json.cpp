#include "core/json.h"

#include <algorithm>

namespace perfsim {

JsonRead parse_json_text(std::string_view text, nlohmann::json& out) {
  bool too_deep = false;
  // The callback sees each object and array as it opens, with the number of levels around it;
  // false discards it and everything inside without building it.
  const auto bound = [&too_deep](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    const bool opens =
        event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) too_deep = true;
    return !too_deep;
  };
  out = nlohmann::json::parse(text, bound, /*allow_exceptions=*/false);
  if (out.is_discarded()) return JsonRead::kSyntax;
  if (!too_deep) return JsonRead::kOk;
  out = nlohmann::json(nlohmann::json::value_t::discarded);
  return JsonRead::kTooDeep;
}

nlohmann::json parse_json_or_discarded(std::string_view text) {
  nlohmann::json j;
  parse_json_text(text, j);
  return j;
}

namespace {

size_t line_at(std::string_view text, size_t at) {
  return 1 + size_t(std::count(text.begin(), text.begin() + long(std::min(at, text.size())), '\n'));
}

// nlohmann names the number ("... number overflow parsing '1e400'") but not where it is.
std::string number_out_of_range(std::string_view text, const std::string& origin, const std::string& what) {
  const size_t open = what.find('\''), close = what.rfind('\'');
  std::string where = origin;
  if (open != std::string::npos && close > open) {
    const size_t at = text.find(std::string_view(what).substr(open + 1, close - open - 1));
    if (at != std::string_view::npos) where += ":" + std::to_string(line_at(text, at));
  }
  return where + ": JSON number out of range (beyond a double): " + what;
}

}  // namespace

std::string json_read_error(std::string_view text, const std::string& origin, JsonRead why) {
  if (why == JsonRead::kOk) return "";
  if (why == JsonRead::kTooDeep)
    return origin + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
           " levels of objects and arrays (perfsim reads at most that many)";
  try {  // parsed again, keeping nothing (the callback discards every value), to learn where it broke
    const nlohmann::json ignored =
        nlohmann::json::parse(text, [](int, nlohmann::json::parse_event_t, nlohmann::json&) { return false; });
    (void)ignored;
  } catch (const nlohmann::json::parse_error& e) {
    return origin + ":" + std::to_string(line_at(text, e.byte)) + ": JSON syntax error: " + e.what();
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond a double's range ("1e400")
    return number_out_of_range(text, origin, e.what());
  }
  return origin + ": JSON syntax error";
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace perfsim
