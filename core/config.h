// The one checked reader for perfsim's configuration files (synth specs, collect specs, fault
// plans, serve fleet files) and the one way to turn text into a number.
//
// TOML and JSON are read into the same JSON tree plus a map from key path to line, so every loader
// walks one tree with one schema whatever the file's syntax. A Reader then takes typed values out
// of it. Contract: errors are InvalidArgument "ORIGIN:LINE: key.path: what was wrong" (the line is
// left out when unknown, e.g. for JSON), a wrong type says what was expected and what was found
// ("expected an integer, got string \"5\""), and unknown keys are errors listing the allowed keys:
// a typo must not pass silently as a default.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace perfsim::config {

using Json = nlohmann::json;

// A parsed configuration file: its tree and where each key path ("host.count", "fault[2].every")
// starts in the text.
struct Doc {
  std::string origin;  // the file name (or what the text is) in messages
  Json root;
  std::map<std::string, uint32_t> lines;
};

Status parse_toml(std::string_view text, const std::string& origin, Doc& out);
Status parse_json(std::string_view text, const std::string& origin, Doc& out);
// Reads the file (core/file.h: a regular file of at most 16 MiB, else a clear error); .json is
// JSON, anything else TOML. `what` names the input in errors ("fleet file", "spec").
Status load_file(const std::string& path, Doc& out, std::string_view what = "configuration file");

// Text to number with std::from_chars: the whole text must be digits (base 0: 10, or 16 after
// 0x/0X; no octal, 010 is ten), at most `hi` (parse_int: within [lo, hi]). Rejects "", "-1" for
// unsigned, "+1", " 1", "1x" and overflow. `what` names the value in the message ("port",
// "--growth add:N").
Status parse_uint(std::string_view text, const std::string& what, uint64_t& out, uint64_t hi = UINT64_MAX,
                  int base = 10);
Status parse_int(std::string_view text, const std::string& what, int64_t& out, int64_t lo = INT64_MIN,
                 int64_t hi = INT64_MAX);
template <class T>
Status parse_uint_as(std::string_view text, const std::string& what, T& out, int base = 10) {
  uint64_t v = 0;
  Status s = parse_uint(text, what, v, std::numeric_limits<T>::max(), base);
  if (s.ok()) out = T(v);
  return s;
}
// A finite decimal number (from_chars, so no locale and no leading blanks).
Status parse_double(std::string_view text, const std::string& what, double& out);

// A duration: plain seconds ("15", "0.5") or number-unit pieces ("500ms", "15s", "2m", "1h", "1d",
// "1h30m"), as synth specs write them and every time flag of `perfsim` takes them. Refuses "",
// a negative, an unknown unit ("5x") and a bare number after a unit ("1h30") with "bad duration
// \"TEXT\" (...the forms...)"; the caller puts the key or flag in front.
Status parse_duration_ms(std::string_view text, double& ms);
Status parse_duration(std::string_view text, double& seconds);  // parse_duration_ms / 1000

// The closed range a number from outside (a file, a flag, the admin API) must fall in. Every such
// range check goes through within/bounds_text/check_bounds, so each refusal reads the same and
// names the range: a huge latency or a speed of 5e-324 must not pass because a check said only
// "> 0".
struct Bounds {
  double lo = 0, hi = 0;
};
bool within(double v, Bounds b);  // false for NaN
// "must be between LO and HI, got V" (then `unit`, e.g. " (milliseconds: at most an hour)").
std::string bounds_text(double v, Bounds b, std::string_view unit = {});
// InvalidArgument "WHAT: must be between LO and HI, got V UNIT" unless v is within b.
Status check_bounds(const std::string& what, double v, Bounds b, std::string_view unit = {});
// parse_double, then check_bounds.
Status parse_double(std::string_view text, const std::string& what, double& out, Bounds b, std::string_view unit = {});

// "string \"5\"", "integer -1", "a table": how a value is named in a type error.
std::string describe(const Json& v);
std::string join(const std::string& path, const std::string& key);
std::string index(const std::string& path, size_t i);

// Typed getters over a Doc. A getter leaves `out` alone when the key is absent (its default
// stands; require() makes a key mandatory) and fails on a wrong type or an out-of-range value.
class Reader {
 public:
  explicit Reader(const Doc& doc) : doc_(&doc) {}

  const Json& root() const { return doc_->root; }
  // "ORIGIN:LINE: path: what"; the line is the nearest known one up the path.
  Status fail(const std::string& path, const std::string& what) const;
  Status type_error(const std::string& path, const char* expected, const Json& got) const;

  Status keys(const Json& obj, const std::string& path, std::initializer_list<const char*> allowed) const;
  Status require(const Json& obj, const std::string& path, const char* key) const;

  Status number(const Json& obj, const std::string& path, const char* key, double& out) const;
  // A number within `b`; `unit` follows the range in the message (" (milliseconds)").
  Status number(const Json& obj, const std::string& path, const char* key, double& out, Bounds b,
                std::string_view unit = {}) const;
  Status string(const Json& obj, const std::string& path, const char* key, std::string& out) const;
  Status boolean(const Json& obj, const std::string& path, const char* key, bool& out) const;
  Status strings(const Json& obj, const std::string& path, const char* key, std::vector<std::string>& out) const;

  // An integer in [lo, hi]; floats, strings and booleans are type errors.
  template <class T>
  Status integer_value(const Json& v, const std::string& path, T& out,
                       std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
                       std::type_identity_t<T> hi = std::numeric_limits<T>::max()) const {
    static_assert(std::is_integral_v<T>);
    if (!v.is_number_integer()) return type_error(path, "an integer", v);
    if (!in_range(v, int64_t(lo), uint64_t(hi))) return range_error(path, v, std::to_string(lo), std::to_string(hi));
    out = v.is_number_unsigned() ? T(v.get<uint64_t>()) : T(v.get<int64_t>());
    return Status::Ok();
  }
  template <class T>
  Status integer(const Json& obj, const std::string& path, const char* key, T& out,
                 std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
                 std::type_identity_t<T> hi = std::numeric_limits<T>::max()) const {
    if (!obj.contains(key)) return Status::Ok();
    return integer_value(obj[key], join(path, key), out, lo, hi);
  }
  template <class T>
  Status integers(const Json& obj, const std::string& path, const char* key, std::vector<T>& out,
                  std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
                  std::type_identity_t<T> hi = std::numeric_limits<T>::max()) const {
    if (!obj.contains(key)) return Status::Ok();
    const Json& a = obj[key];
    if (!a.is_array()) return type_error(join(path, key), "an array of integers", a);
    std::vector<T> vals(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (Status s = integer_value(a[i], index(join(path, key), i), vals[i], lo, hi); !s.ok()) return s;
    out = std::move(vals);
    return Status::Ok();
  }

 private:
  static bool in_range(const Json& v, int64_t lo, uint64_t hi);
  Status range_error(const std::string& path, const Json& v, const std::string& lo, const std::string& hi) const;
  uint32_t line_of(const std::string& path) const;
  const Doc* doc_;
};

}  // namespace perfsim::config
