#include "core/text.h"

#include <errno.h>
#include <iconv.h>

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

// A single-byte file in the ANSI code page of a Western Windows, Windows-1252, through glibc's
// iconv. It differs from Latin-1 in 0x80-0x9F (the euro sign, curly quotes, dashes, the ellipsis),
// which French and German help texts use ("l’utilisation"). The five bytes 1252 leaves
// undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) become U+0081 ... U+009D, as Windows' own conversion
// makes them (unicode.org MICSFT/WindowsBestFit/bestfit1252.txt).
std::string windows1252_to_utf8(ByteView f) {
  const iconv_t cd = iconv_open("UTF-8", "WINDOWS-1252");
  if (cd == reinterpret_cast<iconv_t>(-1)) return utf16_to_utf8(std::u16string(f.begin(), f.end()));  // Latin-1
  std::string out(f.size() * 3, '\0');  // at most 3 UTF-8 bytes per input byte (U+20AC)
  char* in = reinterpret_cast<char*>(const_cast<uint8_t*>(f.data()));
  size_t in_left = f.size();
  char* o = out.data();
  size_t out_left = out.size();
  while (in_left > 0 && iconv(cd, &in, &in_left, &o, &out_left) == static_cast<size_t>(-1)) {
    if (errno != EILSEQ && errno != EINVAL) break;
    const auto b = static_cast<uint8_t>(*in);  // undefined in 1252: the C1 control of that number
    *o++ = static_cast<char>(0xC0 | (b >> 6));
    *o++ = static_cast<char>(0x80 | (b & 0x3F));
    out_left -= 2;
    ++in;
    --in_left;
  }
  iconv_close(cd);
  out.resize(out.size() - out_left);
  return out;
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
    case TextEncoding::kWindows1252:
      return "Windows-1252";
  }
  return "?";
}

TextEncoding detect_encoding(ByteView f) {
  if (f.size() >= 2 && f[0] == 0xFF && f[1] == 0xFE) return TextEncoding::kUtf16LeBom;
  if (f.size() >= 2 && f[0] == 0xFE && f[1] == 0xFF) return TextEncoding::kUtf16BeBom;
  if (f.size() >= 3 && f[0] == 0xEF && f[1] == 0xBB && f[2] == 0xBF) return TextEncoding::kUtf8Bom;
  if (bomless_utf16le(f)) return TextEncoding::kUtf16Le;
  return valid_utf8(f) ? TextEncoding::kUtf8 : TextEncoding::kWindows1252;
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
    case TextEncoding::kWindows1252:
      break;
  }
  return windows1252_to_utf8(f);
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

std::string trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; };
  size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace perfsim
