// LodCtr's input files: the counter INI ([info] drivername/symbolfile, [languages], [objects],
// [text] SYMBOL_LANGID_NAME= / SYMBOL_LANGID_HELP=) and the symbol file (#define SYMBOL offset).
//
// Contract: accepts what LodCtr accepts (fixtures/lodctr/README.md): anything before the first
// section (C comments, `;` lines), `;` and `//` comment lines, section names and keys in any case,
// blanks around names and values (trimmed, as GetPrivateProfileString does), a quoted value
// (quotes dropped), any section order, a DOS end-of-file byte (0x1A: the rest is ignored), UTF-16
// files with a BOM, UTF-8 with or without BOM (bytes that are not UTF-8 are read as Windows-1252).
// parse_ini checks the INI alone (drivername, symbolfile, a language and a name present); lines of
// [text]/[objects] that are no SYMBOL_LANGID_NAME/HELP key (a help text continued on the next line)
// are skipped and counted in one warning, as a backup's such lines are (names/README.md; no public
// document says what LodCtr does with a key it cannot parse, so this tolerance is perfsim's choice);
// whether symbols exist and languages are listed is checked at install. A _NAME text past
// PDH_MAX_COUNTER_NAME's 1,024 characters or a _HELP text past 16,384 (perfdata/limits.h: what
// the name tables take) is an error naming its line. The lines go through
// core/ini.h, the reader `lodctr /s` backups use too.
// parse_symbols keeps every `#define NAME <decimal or 0x hex>` and ignores all other lines.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::lodctr {

struct IniText {
  std::string symbol;  // as written
  std::string lang;    // as written, e.g. "009", "00C"
  bool help = false;   // _HELP (else _NAME)
  std::string text;    // trimmed, UTF-8
  size_t line = 0;     // 1-based, for messages
};

struct CounterIni {
  std::string driver;                  // [info] drivername
  std::string symbol_file;             // [info] symbolfile, as written
  std::vector<std::string> languages;  // [languages] keys, in file order (e.g. "009", "00C", "000")
  std::vector<IniText> objects;        // [objects] entries (SYMBOL_LANGID_NAME=...)
  std::vector<IniText> texts;          // [text]
  std::vector<std::string> warnings;   // lines skipped as LodCtr skips them (core/ini.h), said once
};

// Symbol (upper-cased: LodCtr compares symbols case-insensitively) -> offset.
using Symbols = std::map<std::string, uint32_t>;

// File bytes -> UTF-8 lines: core/text.h (BOMs, UTF-16LE without BOM, Windows-1252, DOS EOF byte, CR LF / LF).
std::vector<std::string> text_lines(ByteView file);

Status parse_ini(ByteView file, CounterIni& out);
Status parse_symbols(ByteView file, Symbols& out);
// Offset of `symbol` (case-insensitive); false when undefined.
bool find_symbol(const Symbols& symbols, const std::string& symbol, uint32_t& offset);

// Reads the INI at `path` and the symbol file it names, looked up next to the INI with the file
// name compared case-insensitively (Windows file names are case-insensitive).
Status load_ini(const std::string& path, CounterIni& ini, Symbols& symbols);

}  // namespace perfsim::lodctr
