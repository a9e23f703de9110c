#include "core/file.h"
#include "lodctr/ini.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/config.h"
#include "core/ini.h"
#include "core/text.h"
#include "core/utf16.h"
#include "perfdata/limits.h"

namespace perfsim::lodctr {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(uint8_t(c)));
  return s;
}

bool lang_id(const std::string& s) {
  if (s.size() < 3 || s.size() > 4) return false;
  for (char c : s)
    if (!std::isxdigit(uint8_t(c))) return false;
  return true;
}

// "SYMBOL_LANGID_NAME" -> parts; false when the key has another shape.
bool split_text_key(const std::string& key, IniText& t) {
  const size_t kind = key.rfind('_');
  if (kind == std::string::npos || kind == 0) return false;
  const std::string suffix = upper(key.substr(kind + 1));
  if (suffix != "NAME" && suffix != "HELP") return false;
  const size_t lang = key.rfind('_', kind - 1);
  if (lang == std::string::npos || lang == 0) return false;
  t.lang = key.substr(lang + 1, kind - lang - 1);
  t.symbol = key.substr(0, lang);
  t.help = suffix == "HELP";
  return lang_id(t.lang);
}

std::string unquote(std::string v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

Status read_file(const std::string& path, std::string_view what, Bytes& out) {
  std::string text;
  if (Status s = read_bounded_file(path, what, text); !s.ok()) return s;
  out.assign(text.begin(), text.end());
  return Status::Ok();
}

}  // namespace

std::vector<std::string> text_lines(ByteView file) { return perfsim::text_lines(file); }

Status parse_ini(ByteView file, CounterIni& out) {
  CounterIni ini;
  std::string section;
  std::vector<IniLine> lines;
  IniSkipped skipped;
  if (Status s = read_ini(file, IniOptions{true}, lines, skipped); !s.ok())
    return Status::InvalidArgument("ini " + s.message());
  for (const IniLine& l : lines) {
    const std::string where = "ini line " + std::to_string(l.line);
    if (l.section) {
      section = upper(l.key);
      continue;
    }
    const std::string& key = l.key;
    const std::string value = unquote(l.value);
    if (section == "INFO") {
      if (iequals(key, "drivername"))
        ini.driver = value;
      else if (iequals(key, "symbolfile"))
        ini.symbol_file = value;
    } else if (section == "LANGUAGES") {
      if (!lang_id(key))
        return Status::InvalidArgument(where + ": language id " + quote_input(key) + " is not 3 or 4 hex digits");
      ini.languages.push_back(key);
    } else if (section == "TEXT" || section == "OBJECTS") {
      IniText t;
      // A key that is no SYMBOL_LANGID_NAME/HELP is skipped and counted with the lines that are no
      // key at all, and the next one read (ini.h: perfsim's choice, no public document says more).
      if (!split_text_key(key, t)) {
        skipped.add(l.line);
        continue;
      }
      // As a name table's entries are bounded (perfdata/limits.h): LodCtr puts these there.
      if (const auto b = t.help ? perfdata::limits::kHelpText : perfdata::limits::kCounterName;
          !perfdata::limits::within(value, b))
        return Status::InvalidArgument(where + ": the text of " + quote_input(key) + ", " +
                                       perfdata::limits::too_long(value, b) + ": no Windows name table holds one");
      t.text = value;
      t.line = l.line;
      (section == "TEXT" ? ini.texts : ini.objects).push_back(std::move(t));
    }
  }
  if (ini.driver.empty()) return Status::InvalidArgument("ini: [info] has no drivername");
  if (ini.symbol_file.empty()) return Status::InvalidArgument("ini: [info] has no symbolfile");
  if (ini.languages.empty()) return Status::InvalidArgument("ini: [languages] lists no language");
  if (ini.texts.empty()) return Status::InvalidArgument("ini: [text] holds no names");
  if (skipped.count)
    ini.warnings.push_back(skipped.warning(
        "not SYMBOL_LANGID_NAME=TEXT or SYMBOL_LANGID_HELP=TEXT (a help text continued on the next line, or a key "
        "of another shape); LodCtr skips them too"));
  out = std::move(ini);
  return Status::Ok();
}

Status parse_symbols(ByteView file, Symbols& out) {
  Symbols syms;
  for (const std::string& raw : text_lines(file)) {
    std::string line = trim(raw);
    if (line.empty() || line[0] != '#') continue;
    line = trim(line.substr(1));
    if (line.rfind("define", 0) != 0 || line.size() < 7 || !blank(line[6])) continue;
    line = trim(line.substr(6));
    size_t name_end = 0;
    while (name_end < line.size() && !blank(line[name_end])) ++name_end;
    const std::string name = line.substr(0, name_end);
    std::string value = trim(line.substr(name_end));
    if (size_t c = value.find("//"); c != std::string::npos) value = trim(value.substr(0, c));
    if (size_t c = value.find("/*"); c != std::string::npos) value = trim(value.substr(0, c));
    if (value.size() >= 2 && value.front() == '(' && value.back() == ')')
      value = trim(value.substr(1, value.size() - 2));
    if (value.empty()) continue;
    uint32_t offset = 0;  // decimal or 0x hex; a define of anything else is not an offset
    if (!config::parse_uint_as(value, name, offset, 0).ok()) continue;
    syms[upper(name)] = offset;
  }
  out = std::move(syms);
  return Status::Ok();
}

bool find_symbol(const Symbols& symbols, const std::string& symbol, uint32_t& offset) {
  auto it = symbols.find(upper(symbol));
  if (it == symbols.end()) return false;
  offset = it->second;
  return true;
}

Status load_ini(const std::string& path, CounterIni& ini, Symbols& symbols) {
  namespace fs = std::filesystem;
  Bytes data;
  if (Status s = read_file(path, "lodctr INI file", data); !s.ok()) return s;
  if (Status s = parse_ini(data, ini); !s.ok()) return Status::InvalidArgument(path + ": " + s.message());
  // The symbol file's name, compared case-insensitively in the directory it names.
  std::string symbol_file = ini.symbol_file;
  for (char& c : symbol_file)
    if (c == '\\') c = '/';  // written for Windows
  const fs::path named = fs::path(path).parent_path() / fs::path(symbol_file).relative_path();
  fs::path found;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::directory_iterator(named.parent_path().empty() ? "." : named.parent_path(), ec))
    if (iequals(e.path().filename().string(), named.filename().string())) found = e.path();
  if (found.empty())
    return Status::NotFound(path + ": symbol file '" + ini.symbol_file + "' not found next to the INI (looked in " +
                            (named.parent_path().empty() ? std::string(".") : named.parent_path().string()) + ")");
  if (Status s = read_file(found.string(), "symbol file", data); !s.ok()) return s;
  return parse_symbols(data, symbols);
}

}  // namespace perfsim::lodctr
