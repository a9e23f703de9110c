// Name tables as files: `lodctr /s:FILE` backups (what BackupPerfRegistryToFile writes and
// `lodctr /r:FILE` restores) and raw perfcLLL.dat / perfhLLL.dat, read into a NameSet, written
// back in the backup's layout, and moved in and out of a capture.
//
// Backup layout (names/README.md cites the sources): sections `[Perflib]` (Base Index, Last
// Counter, Last Help), one `[PERF_<service>]` per extensible provider (First Counter, First Help,
// Last Counter, Last Help, and Disable Performance Counters when set) and one `[PerfStrings_LLL]`
// per Perflib language subkey (`CurrentLanguage` included on the OSes that have it), holding
// `index=text` lines: object and counter names at even indices, help texts at odd ones, and `1=`
// the Counter table's first entry (the highest counter index).
//
// Contract:
//  - parse_backup reads every encoding core/text.h decodes, through core/ini.h; section names and
//    keys in any case; blank lines, `;` comments and text before the first section are skipped;
//    unknown sections are skipped with a warning. Lines that are not INDEX=TEXT in
//    `[PerfStrings_*]` (what a help text spanning several lines leaves: Windows' loader reads no
//    string from them) and lines without `=` elsewhere are skipped and counted in one warning. A
//    `[Perflib]`/`[PERF_]` number that is not decimal, or a file with no `[PerfStrings_*]`
//    section, is InvalidArgument naming the line. Texts keep every character after `=` but the
//    line end (round trips are exact); a repeated index keeps its first text
//    (GetPrivateProfileString's answer) and is warned about. A name (even index, and 1) past
//    PDH_MAX_COUNTER_NAME's 1,024 characters or a help text (odd) past 16,384
//    (perfdata/limits.h) is InvalidArgument naming its line (parse_dat: its offset), quoted short.
//  - write_backup writes UTF-16LE with a BOM, CR LF line ends and the sections in the order above,
//    each language's strings by ascending index: parse_backup(write_backup(s)) == s.
//  - to_capture / from_capture: a language's Counter table is `1` first, then the even indices
//    ascending; its Help table the odd indices above 1 ascending; from_capture merges them back,
//    so from_capture(to_capture(s)) has s's strings.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "core/bytes.h"
#include "core/status.h"

namespace perfsim::names {

using Values = std::vector<std::pair<std::string, uint32_t>>;  // key as written, value

struct ServiceRange {
  std::string service;  // as in [PERF_<service>]
  Values values;        // First Counter, First Help, Last Counter, Last Help, ...
};

struct Strings {
  std::string lang;                      // as written: "009", "007", "CurrentLanguage"
  std::map<uint32_t, std::string> text;  // index -> UTF-8
};

struct NameSet {
  Values perflib;  // [Perflib]
  std::vector<ServiceRange> services;
  std::vector<Strings> languages;  // file order

  const Strings* find(const std::string& lang) const;  // case-insensitive
  const ServiceRange* service(const std::string& name) const;
  std::optional<uint32_t> perflib_value(const std::string& key) const;
};
std::optional<uint32_t> value_of(const Values& v, const std::string& key);  // case-insensitive

Status parse_backup(ByteView file, NameSet& out, std::vector<std::string>* warnings = nullptr);

// Gives each language the name Windows gives its table on a host of that version
// (perfdata::perflib_language: a backup's [PerfStrings_0804] is Perflib\804 and `Counter 804`).
// Two sections naming one table (0416 and 0816 before Vista) are InvalidArgument; `renamed` gets
// "0804 -> 804" for each language renamed.
Status to_perflib_languages(NameSet& set, bool vista_or_later, std::vector<std::string>* renamed = nullptr);
Bytes write_backup(const NameSet& set);

// One language from raw perfcLLL.dat (Counter) and perfhLLL.dat (Help) bytes: REG_MULTI_SZ.
Status parse_dat(ByteView counter, ByteView help, const std::string& lang, Strings& out);

// A names file: a backup, or perfcLLL.dat / perfhLLL.dat (either; the other is looked up next to
// it, file names compared case-insensitively, and LLL names the language). Errors name the file.
Status load_names(const std::string& path, NameSet& out, std::vector<std::string>* warnings = nullptr);
// load_names, or a capture file (recognised by its magic): its tables and Perflib/Services values;
// the reader's warnings (damage, names left out for their length) go to `warnings`.
Status load_any(const std::string& path, NameSet& out, std::vector<std::string>* warnings = nullptr);

// A capture's name tables (every language), Perflib Base Index / Last Counter / Last Help and every
// Services\<svc>\Performance with a First Counter.
NameSet from_capture(const captures::Capture& cap);
// Puts `set` into `cap`: its name tables and Perflib\LLL Counter/Help values become the set's (one
// per language, none other left), Perflib's values and each [PERF_] section's values are set.
void to_capture(const NameSet& set, captures::Capture& cap);

// A language's REG_MULTI_SZ tables, as to_capture builds them.
Bytes counter_table(const Strings& s);
Bytes help_table(const Strings& s);

}  // namespace perfsim::names
