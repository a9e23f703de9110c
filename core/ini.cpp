#include "core/ini.h"

#include "core/text.h"

namespace perfsim {
namespace {

bool comment(const std::string& line, const IniOptions& o) {
  if (line[0] == ';') return true;
  return o.c_comments && (line.rfind("//", 0) == 0 || line.rfind("/*", 0) == 0 || line[0] == '*');
}

}  // namespace

void IniSkipped::add(size_t line) {
  if (count++ == 0 || line < first_line) first_line = line;  // readers add theirs after read_ini's
}

std::string IniSkipped::warning(std::string_view why) const {
  if (count == 0) return "";
  return std::to_string(count) + (count == 1 ? " line" : " lines") + " skipped (first at line " +
         std::to_string(first_line) + "): " + std::string(why);
}

Status read_ini(ByteView file, const IniOptions& options, std::vector<IniLine>& out, IniSkipped& skipped) {
  std::vector<IniLine> lines;
  bool in_section = false;
  const std::vector<std::string> text = text_lines(file);
  for (size_t n = 0; n < text.size(); ++n) {
    const std::string line = trim(text[n]);
    if (line.empty() || comment(line, options)) continue;
    IniLine l;
    l.line = n + 1;
    if (line[0] == '[') {
      const size_t close = line.find(']');
      if (close == std::string::npos)
        return Status::InvalidArgument("line " + std::to_string(n + 1) + ": section name without ']'");
      l.section = true;
      l.key = trim(line.substr(1, close - 1));
      in_section = true;
      lines.push_back(std::move(l));
      continue;
    }
    if (!in_section) continue;  // before the first section: a file's own header, anything
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {  // a continuation of the previous value, not a key
      skipped.add(n + 1);
      continue;
    }
    l.key = trim(line.substr(0, eq));
    l.value = trim(line.substr(eq + 1));
    const std::string& raw = text[n];
    l.raw_value = raw.substr(raw.find('=') + 1);
    if (!l.raw_value.empty() && l.raw_value.back() == '\r') l.raw_value.pop_back();
    lines.push_back(std::move(l));
  }
  out = std::move(lines);
  return Status::Ok();
}

}  // namespace perfsim
