#include "core/utf16.h"

namespace perfsim {

namespace {

// The code point of the UTF-8 sequence at s[i] (U+FFFD for a byte that starts none) and its length:
// the one decoder of utf8_to_utf16 and utf16_length, so both count alike.
size_t decode_utf8(std::string_view s, size_t i, uint32_t& cp) {
  const unsigned char c = s[i];
  cp = 0xFFFD;
  if (c < 0x80) {
    cp = c;
  } else if ((c >> 5) == 6 && i + 1 < s.size()) {
    cp = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F);
    return 2;
  } else if ((c >> 4) == 14 && i + 2 < s.size()) {
    cp = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    return 3;
  } else if ((c >> 3) == 30 && i + 3 < s.size()) {
    cp = ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
    return 4;
  }
  return 1;
}

}  // namespace

size_t utf16_length(std::string_view s, size_t* cut, size_t max_units) {
  size_t units = 0;
  if (cut) *cut = s.size();
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = decode_utf8(s, i, cp);
    const size_t u = cp >= 0x10000 ? 2 : 1;
    if (cut && *cut == s.size() && units + u > max_units) *cut = i;
    units += u;
    i += n;
  }
  return units;
}

std::u16string utf8_to_utf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    i += decode_utf8(s, i, cp);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(char16_t(0xD800 + (cp >> 10)));
      out.push_back(char16_t(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(char16_t(cp));
    }
  }
  return out;
}

std::string utf16_to_utf8(std::u16string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    uint32_t cp = s[i];
    if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] < 0xE000) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
    } else if (cp >= 0xD800 && cp < 0xE000) {
      cp = 0xFFFD;
    }
    if (cp < 0x80)
      out.push_back(char(cp));
    else if (cp < 0x800) {
      out.push_back(char(0xC0 | (cp >> 6)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(char(0xE0 | (cp >> 12)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(char(0xF0 | (cp >> 18)));
      out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

void put_utf16le(Bytes& out, std::u16string_view s) {
  for (char16_t c : s) put_le16(out, uint16_t(c));
}

std::u16string load_utf16le(const uint8_t* p, size_t units) {
  std::u16string s(units, u'\0');
  for (size_t i = 0; i < units; ++i) s[i] = char16_t(load_le16(p + 2 * i));
  return s;
}

std::vector<std::string> split_nonempty(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (separators.find(c) == std::string_view::npos) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

bool valid_utf8(std::string_view s, size_t* bad) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range (Unicode 15, table 3-7)
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = k == 1 ? b >= lo && b <= hi : b >= 0x80 && b <= 0xBF;
    }
    if (!ok) {
      if (bad) *bad = i;
      return false;
    }
    i += n;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x + 32);
    if (y >= 'A' && y <= 'Z') y = char(y + 32);
    if (x != y) return false;
  }
  return true;
}

}  // namespace perfsim
