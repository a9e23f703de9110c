// Text files as people and Windows tools write them, decoded to UTF-8 lines: the one decoder for
// lodctr INI and symbol files and `lodctr /s` name backups.
//
// Contract: a UTF-16LE or UTF-16BE BOM, a UTF-8 BOM, UTF-16LE without a BOM (what
// BackupPerfRegistryToFile writes: the first code units are ASCII, so every odd byte of the first
// few is 0), UTF-8 without a BOM, and anything else as Windows-1252 (a legacy single-byte file
// re-saved in the ANSI code page of a Western Windows; Latin-1 but for 0x80-0x9F). A DOS
// end-of-file byte (0x1A) ends the text; lines end at LF (a CR before it stays, callers trim).
// Never fails: a lone surrogate becomes U+FFFD, a byte 1252 leaves undefined its C1 control.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace perfsim {

enum class TextEncoding { kUtf16LeBom, kUtf16BeBom, kUtf16Le, kUtf8Bom, kUtf8, kWindows1252 };
const char* encoding_name(TextEncoding e);

// What decode_text would read `file` as.
TextEncoding detect_encoding(ByteView file);
// The whole file as UTF-8 (the BOM dropped).
std::string decode_text(ByteView file, TextEncoding* used = nullptr);
// decode_text, cut at a DOS EOF byte and split at LF.
std::vector<std::string> text_lines(ByteView file);
// `s` without the ASCII whitespace (space, tab, CR, LF, VT, FF) at either end: the one trim for
// lines, keys and values people write.
std::string trim(std::string_view s);

}  // namespace perfsim
