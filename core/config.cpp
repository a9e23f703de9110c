// TOML -> JSON tree (+ key path -> line), JSON with a line for syntax errors, typed getters.
#include "core/file.h"
#include "core/json.h"
#include "core/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

namespace perfsim::config {
namespace {

std::string two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

// TOML dates become the UTC time strings a JSON file would hold, so one schema reads both.
Json date_value(const toml::node& n) {
  if (const auto* dt = n.as_date_time()) {
    const toml::date_time& d = dt->get();
    return std::to_string(d.date.year) + "-" + two(d.date.month) + "-" + two(d.date.day) + "T" + two(d.time.hour) +
           ":" + two(d.time.minute) + ":" + two(d.time.second) + "Z";
  }
  if (const auto* d = n.as_date()) {
    const toml::date& x = d->get();
    return std::to_string(x.year) + "-" + two(x.month) + "-" + two(x.day) + "T00:00:00Z";
  }
  return nullptr;
}

void note_line(std::map<std::string, uint32_t>& lines, const std::string& path, const toml::source_region& where) {
  if (where.begin.line) lines[path] = where.begin.line;
}

Json toml_to_json(const toml::node& n, const std::string& path, std::map<std::string, uint32_t>& lines) {
  note_line(lines, path, n.source());
  if (const toml::table* t = n.as_table()) {
    Json j = Json::object();
    for (auto&& [k, v] : *t) {
      const std::string child = join(path, std::string(k.str()));
      j[std::string(k.str())] = toml_to_json(v, child, lines);
      note_line(lines, child, k.source());  // the key's line, not its value's (a table's header)
    }
    return j;
  }
  if (const toml::array* a = n.as_array()) {
    Json j = Json::array();
    for (size_t i = 0; i < a->size(); ++i) j.push_back(toml_to_json((*a)[i], index(path, i), lines));
    return j;
  }
  if (n.is_boolean()) return *n.value<bool>();
  if (n.is_integer()) return *n.value<int64_t>();
  if (n.is_floating_point()) return *n.value<double>();
  if (n.is_string()) return *n.value<std::string>();
  return date_value(n);
}

Status number_error(std::string_view text, const std::string& what, const std::string& range) {
  return Status::InvalidArgument(what + ": expected " + range + ", got " + quote_input(text, kQuoteChars, '"'));
}

}  // namespace

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

Status parse_toml(std::string_view text, const std::string& origin, Doc& out) {
  toml::table tbl;
  try {
    tbl = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(origin + ":" + std::to_string(e.source().begin.line) +
                                   ": TOML syntax error at column " + std::to_string(e.source().begin.column) + ": " +
                                   std::string(e.description()));
  }
  Doc doc;
  doc.origin = origin;
  doc.root = toml_to_json(tbl, "", doc.lines);
  out = std::move(doc);
  return Status::Ok();
}

Status parse_json(std::string_view text, const std::string& origin, Doc& out) {
  Doc doc;
  doc.origin = origin;
  if (const JsonRead r = parse_json_text(text, doc.root); r != JsonRead::kOk)
    return Status::InvalidArgument(json_read_error(text, origin, r));
  out = std::move(doc);
  return Status::Ok();
}

Status load_file(const std::string& path, Doc& out, std::string_view what) {
  std::string text;
  if (Status s = read_bounded_file(path, what, text); !s.ok()) return s;
  const bool is_json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return is_json ? parse_json(text, path, out) : parse_toml(text, path, out);
}

Status parse_uint(std::string_view text, const std::string& what, uint64_t& out, uint64_t hi, int base) {
  std::string_view digits = text;
  if (base == 0 || base == 16) {
    const bool prefixed = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    if (prefixed) digits.remove_prefix(2);
    base = prefixed || base == 16 ? 16 : 10;
  }
  const std::string range = "a whole number from 0 to " + std::to_string(hi);
  uint64_t v = 0;
  // from_chars takes no sign for unsigned types, but check anyway: "-1" must never wrap around.
  if (digits.empty() || digits[0] == '-' || digits[0] == '+') return number_error(text, what, range);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || end != digits.data() + digits.size() || v > hi) return number_error(text, what, range);
  out = v;
  return Status::Ok();
}

Status parse_int(std::string_view text, const std::string& what, int64_t& out, int64_t lo, int64_t hi) {
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    return number_error(text, what, range);
  out = v;
  return Status::Ok();
}

Status parse_double(std::string_view text, const std::string& what, double& out) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    return number_error(text, what, "a number");
  out = v;
  return Status::Ok();
}

Status parse_duration_ms(std::string_view text, double& ms) {
  const auto bad = [&] {
    return Status::InvalidArgument("bad duration " + quote_input(text, kQuoteChars, '"') +
                                   " (seconds, or e.g. 500ms, 15s, 2m, 1h, 1d, 1h30m)");
  };
  double plain = 0;
  if (parse_double(text, "duration", plain).ok()) {
    if (plain < 0) return bad();
    ms = plain * 1000;
    return Status::Ok();
  }
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(uint8_t(text[j])) || text[j] == '.')) ++j;
    size_t k = j;
    while (k < text.size() && std::isalpha(uint8_t(text[k]))) ++k;
    double n = 0;
    if (!parse_double(text.substr(i, j - i), "duration", n).ok()) return bad();
    const std::string_view unit = text.substr(j, k - j);
    const double scale = unit == "ms"  ? 1
                         : unit == "s" ? 1e3
                         : unit == "m" ? 6e4
                         : unit == "h" ? 3.6e6
                         : unit == "d" ? 8.64e7
                                       : -1;
    if (scale < 0) return bad();
    total += n * scale;
    i = k;
  }
  if (text.empty() || !std::isfinite(total)) return bad();
  ms = total;
  return Status::Ok();
}

Status parse_duration(std::string_view text, double& seconds) {
  double ms = 0;
  if (Status s = parse_duration_ms(text, ms); !s.ok()) return s;
  seconds = ms / 1000;
  return Status::Ok();
}

bool within(double v, Bounds b) { return v >= b.lo && v <= b.hi; }

std::string bounds_text(double v, Bounds b, std::string_view unit) {
  return fmt::format("must be between {} and {}, got {}{}", b.lo, b.hi, v, unit);
}

Status check_bounds(const std::string& what, double v, Bounds b, std::string_view unit) {
  if (within(v, b)) return Status::Ok();
  return Status::InvalidArgument(what + ": " + bounds_text(v, b, unit));
}

Status parse_double(std::string_view text, const std::string& what, double& out, Bounds b, std::string_view unit) {
  double v = 0;
  if (Status s = parse_double(text, what, v); !s.ok()) return s;
  if (Status s = check_bounds(what, v, b, unit); !s.ok()) return s;
  out = v;
  return Status::Ok();
}

std::string describe(const Json& v) {
  if (v.is_string()) {  // as JSON writes it; a long one cut (quoted)
    const std::string text = json_text(v);
    return "string " +
           (text.size() <= kQuoteChars ? text : quote_input(v.get_ref<const std::string&>(), kQuoteChars, '"'));
  }
  if (v.is_boolean()) return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
  if (v.is_number_integer()) return "integer " + json_text(v);
  if (v.is_number()) return "number " + json_text(v);
  if (v.is_object()) return "a table";
  if (v.is_array()) return "an array";
  return "nothing";
}

Status Reader::fail(const std::string& path, const std::string& what) const {
  std::string where = doc_->origin;
  if (const uint32_t line = line_of(path)) where += ":" + std::to_string(line);
  return Status::InvalidArgument(where + ": " + (path.empty() ? std::string("(top level)") : path) + ": " + what);
}

Status Reader::type_error(const std::string& path, const char* expected, const Json& got) const {
  return fail(path, std::string("expected ") + expected + ", got " + describe(got));
}

Status Reader::keys(const Json& obj, const std::string& path, std::initializer_list<const char*> allowed) const {
  if (!obj.is_object()) return type_error(path, "a table", obj);
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; })) continue;
    return fail(join(path, it.key()), fmt::format("unknown key (allowed: {})", fmt::join(allowed, ", ")));
  }
  return Status::Ok();
}

Status Reader::require(const Json& obj, const std::string& path, const char* key) const {
  return obj.contains(key) ? Status::Ok() : fail(join(path, key), "missing (this key is required)");
}

Status Reader::number(const Json& obj, const std::string& path, const char* key, double& out) const {
  if (!obj.contains(key)) return Status::Ok();
  const Json& v = obj[key];
  if (!v.is_number()) return type_error(join(path, key), "a number", v);
  if (!std::isfinite(v.get<double>())) return fail(join(path, key), "expected a finite number");
  out = v.get<double>();
  return Status::Ok();
}

Status Reader::number(const Json& obj, const std::string& path, const char* key, double& out, Bounds b,
                      std::string_view unit) const {
  double v = out;
  if (Status s = number(obj, path, key, v); !s.ok()) return s;
  if (obj.contains(key) && !within(v, b)) return fail(join(path, key), bounds_text(v, b, unit));
  out = v;
  return Status::Ok();
}

Status Reader::string(const Json& obj, const std::string& path, const char* key, std::string& out) const {
  if (!obj.contains(key)) return Status::Ok();
  if (!obj[key].is_string()) return type_error(join(path, key), "a string", obj[key]);
  out = obj[key].get<std::string>();
  return Status::Ok();
}

Status Reader::boolean(const Json& obj, const std::string& path, const char* key, bool& out) const {
  if (!obj.contains(key)) return Status::Ok();
  if (!obj[key].is_boolean()) return type_error(join(path, key), "true or false", obj[key]);
  out = obj[key].get<bool>();
  return Status::Ok();
}

Status Reader::strings(const Json& obj, const std::string& path, const char* key, std::vector<std::string>& out) const {
  if (!obj.contains(key)) return Status::Ok();
  const Json& v = obj[key];
  if (!v.is_array()) return type_error(join(path, key), "an array of strings", v);
  std::vector<std::string> vals;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return type_error(index(join(path, key), i), "a string", v[i]);
    vals.push_back(v[i].get<std::string>());
  }
  out = std::move(vals);
  return Status::Ok();
}

bool Reader::in_range(const Json& v, int64_t lo, uint64_t hi) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= hi && (lo <= 0 || v.get<uint64_t>() >= uint64_t(lo));
  const int64_t x = v.get<int64_t>();
  return x >= lo && (x < 0 || uint64_t(x) <= hi);
}

Status Reader::range_error(const std::string& path, const Json& v, const std::string& lo, const std::string& hi) const {
  return fail(path, "must be between " + lo + " and " + hi + ", got " + json_text(v));
}

uint32_t Reader::line_of(const std::string& path) const {
  for (std::string p = path;;) {
    if (auto it = doc_->lines.find(p); it != doc_->lines.end()) return it->second;
    const size_t cut = p.find_last_of(".[");
    if (cut == std::string::npos) return 0;
    p.resize(cut);
  }
}

}  // namespace perfsim::config
