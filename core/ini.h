// INI text (sections and KEY=VALUE lines, the form of Windows' profile files): the one line
// reader of `lodctr /s` backups (names/backup.h) and LodCtr's counter INI (lodctr/ini.h).
//
// Contract: the file is decoded by core/text.h and split into lines; blank lines and `;` comment
// lines are skipped (with IniOptions::c_comments also `//`, `/*` and `*` lines, as counter INIs
// carry C comments); anything before the first `[section]` is skipped. A line inside a section
// that has no `=` is not a key: what a help text spilling onto further lines leaves behind (they
// begin with blanks or commas in real XP-era backups). Such a line names no index or symbol, so it
// is skipped and counted in IniSkipped, never an error (perfsim's choice: no public document says
// how Windows reads it); readers add the entries they skip for their own reasons (a key that is
// not an index) to the same count, and report the whole count once. A `[` line without `]` is the only error.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim {

struct IniLine {
  size_t line = 0;        // 1-based
  bool section = false;   // a `[name]` line: the name (trimmed) is in `key`
  std::string key;        // trimmed text before the first `=`
  std::string value;      // trimmed text after it
  std::string raw_value;  // every character after it but the line end (CR), for exact round trips
};

struct IniOptions {
  bool c_comments = false;  // `//`, `/*` and `*` lines are comments too (counter INIs)
};

// Lines a reader skipped as not being entries, reported once for the whole file.
struct IniSkipped {
  size_t count = 0;
  size_t first_line = 0;
  void add(size_t line);
  // "N lines that are not KEY=VALUE skipped (first at line L): <why>", or "" when none.
  std::string warning(std::string_view why) const;
};

Status read_ini(ByteView file, const IniOptions& options, std::vector<IniLine>& out, IniSkipped& skipped);

}  // namespace perfsim
