#include "perfdata/names.h"

#include "core/utf16.h"

namespace perfsim::perfdata {
namespace {

// Splits UTF-16LE data into NUL-terminated strings; `consumed` is the byte count of complete strings.
std::vector<std::u16string> split(ByteView data, size_t& consumed) {
  std::vector<std::u16string> out;
  std::u16string cur;
  consumed = 0;
  for (size_t i = 0; i + 1 < data.size(); i += 2) {
    char16_t c = char16_t(load_le16(&data[i]));
    if (c == 0) {
      out.push_back(std::move(cur));
      cur.clear();
      consumed = i + 2;
    } else {
      cur.push_back(c);
    }
  }
  return out;
}

bool parse_index(const std::u16string& s, uint32_t& v) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t x = 0;
  for (char16_t c : s) {
    if (c < u'0' || c > u'9') return false;
    x = x * 10 + (c - u'0');
  }
  if (x > 0xFFFFFFFFull) return false;
  v = uint32_t(x);
  return true;
}

}  // namespace

uint32_t NameTable::declared_last() const {
  uint32_t v = 0;
  if (entries.empty() || entries[0].index != 1 || !parse_index(entries[0].text, v)) return 0;
  return v;
}

uint32_t NameTable::highest_index() const {
  uint32_t h = 0;
  for (size_t i = 0; i < entries.size(); ++i)
    if (!(i == 0 && entries[i].index == 1) && entries[i].index > h) h = entries[i].index;
  return h;
}

const std::u16string* NameTable::find(uint32_t index) const {
  for (const NameEntry& e : entries)
    if (e.index == index) return &e.text;
  return nullptr;
}

std::map<uint32_t, std::string> NameTable::to_map() const {
  std::map<uint32_t, std::string> m;
  for (const NameEntry& e : entries) m.emplace(e.index, utf16_to_utf8(e.text));
  return m;
}

Status parse_names(ByteView data, NameTable& out) {
  out = NameTable{};
  if (data.size() % 2)
    return Status::Corruption("at offset " + std::to_string(data.size() - 1) +
                              ": odd byte count in a UTF-16 name table");
  size_t consumed = 0;
  std::vector<std::u16string> strings = split(data, consumed);
  size_t pos = 0;  // byte offset of the current string
  size_t i = 0;
  for (; i + 1 < strings.size(); i += 2) {
    NameEntry e;
    if (!parse_index(strings[i], e.index)) {
      if (strings[i].empty()) break;  // the terminating empty string
      return Status::Corruption("at offset " + std::to_string(pos) + ": name table index \"" +
                                utf16_to_utf8(strings[i]) + "\" is not a number");
    }
    e.index_text = strings[i];
    e.text = strings[i + 1];
    pos += (strings[i].size() + 1 + strings[i + 1].size() + 1) * 2;
    out.entries.push_back(std::move(e));
  }
  out.trailer.assign(data.begin() + pos, data.end());
  return Status::Ok();
}

Bytes build_names(const NameTable& t) {
  Bytes b;
  for (const NameEntry& e : t.entries) {
    put_utf16le(b, e.index_text);
    put_le16(b, 0);
    put_utf16le(b, e.text);
    put_le16(b, 0);
  }
  put_bytes(b, t.trailer);
  return b;
}

NameTable make_names(const std::vector<std::pair<uint32_t, std::string>>& pairs) {
  NameTable t;
  for (const auto& [index, text] : pairs) {
    NameEntry e;
    e.index = index;
    e.index_text = utf8_to_utf16(std::to_string(index));
    e.text = utf8_to_utf16(text);
    t.entries.push_back(std::move(e));
  }
  t.trailer = {0, 0};
  return t;
}

void set_declared_last(NameTable& t, uint32_t last) {
  if (!t.entries.empty() && t.entries[0].index == 1) t.entries[0].text = utf8_to_utf16(std::to_string(last));
}

uint32_t last_after_unlodctr(uint32_t last, uint32_t removed_last, uint32_t highest_left) {
  return last == removed_last ? highest_left : last;
}

Bytes build_multisz(const std::vector<std::string>& strings) {
  Bytes b;
  for (const std::string& s : strings) {
    put_utf16le(b, utf8_to_utf16(s));
    put_le16(b, 0);
  }
  put_le16(b, 0);
  return b;
}

std::vector<std::string> parse_multisz(ByteView data) {
  size_t consumed = 0;
  std::vector<std::string> out;
  for (const std::u16string& s : split(data, consumed)) {
    if (s.empty()) break;
    out.push_back(utf16_to_utf8(s));
  }
  return out;
}

std::string name_or_index(const std::map<uint32_t, std::string>& names, uint32_t index) {
  auto it = names.find(index);
  return it != names.end() ? it->second : "#" + std::to_string(index);
}

}  // namespace perfsim::perfdata
