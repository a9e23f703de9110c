#include "core/text.h"

#include <algorithm>

#include "core/utf16.h"

namespace perfsim {
namespace {

bool valid_utf8(ByteView b) {
  for (size_t i = 0; i < b.size();) {
    const uint8_t c = b[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > b.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((b[i + k] & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// UTF-16LE without a BOM: the first code units (up to 8) are ASCII characters, none of them NUL.
bool bomless_utf16le(ByteView f) {
  if (f.size() < 4 || f.size() % 2) return false;
  const size_t units = std::min<size_t>(f.size() / 2, 8);
  for (size_t i = 0; i < units; ++i)
    if (f[2 * i] == 0 || f[2 * i] >= 0x80 || f[2 * i + 1] != 0) return false;
  return true;
}

}  // namespace

const char* encoding_name(TextEncoding e) {
  switch (e) {
    case TextEncoding::kUtf16LeBom:
      return "UTF-16LE with BOM";
    case TextEncoding::kUtf16BeBom:
      return "UTF-16BE with BOM";
    case TextEncoding::kUtf16Le:
      return "UTF-16LE without BOM";
    case TextEncoding::kUtf8Bom:
      return "UTF-8 with BOM";
    case TextEncoding::kUtf8:
      return "UTF-8";
    case TextEncoding::kLatin1:
      return "Latin-1";
  }
  return "?";
}

TextEncoding detect_encoding(ByteView f) {
  if (f.size() >= 2 && f[0] == 0xFF && f[1] == 0xFE) return TextEncoding::kUtf16LeBom;
  if (f.size() >= 2 && f[0] == 0xFE && f[1] == 0xFF) return TextEncoding::kUtf16BeBom;
  if (f.size() >= 3 && f[0] == 0xEF && f[1] == 0xBB && f[2] == 0xBF) return TextEncoding::kUtf8Bom;
  if (bomless_utf16le(f)) return TextEncoding::kUtf16Le;
  return valid_utf8(f) ? TextEncoding::kUtf8 : TextEncoding::kLatin1;
}

std::string decode_text(ByteView f, TextEncoding* used) {
  const TextEncoding e = detect_encoding(f);
  if (used) *used = e;
  switch (e) {
    case TextEncoding::kUtf16LeBom:
      return utf16_to_utf8(load_utf16le(f.data() + 2, (f.size() - 2) / 2));
    case TextEncoding::kUtf16Le:
      return utf16_to_utf8(load_utf16le(f.data(), f.size() / 2));
    case TextEncoding::kUtf16BeBom: {
      std::u16string s;
      for (size_t i = 2; i + 1 < f.size(); i += 2) s.push_back(char16_t((f[i] << 8) | f[i + 1]));
      return utf16_to_utf8(s);
    }
    case TextEncoding::kUtf8Bom:
      return std::string(f.begin() + 3, f.end());
    case TextEncoding::kUtf8:
      return std::string(f.begin(), f.end());
    case TextEncoding::kLatin1:
      break;
  }
  return utf16_to_utf8(std::u16string(f.begin(), f.end()));  // ANSI code page: read as Latin-1
}

std::vector<std::string> text_lines(ByteView file) {
  std::string text = decode_text(file);
  if (size_t eof = text.find('\x1A'); eof != std::string::npos) text.resize(eof);  // DOS end of file
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace perfsim
