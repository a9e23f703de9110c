#include "perfdata/names.h"

#include <algorithm>

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

namespace {

// A UTF-16LE table's strings as byte ranges [begin, end) without their NULs; `terminated` false
// for a last one the table cuts off. Linear in the table; nothing is copied.
struct Piece {
  size_t begin = 0, end = 0;
  bool terminated = true;
};

std::vector<Piece> pieces(ByteView t) {
  std::vector<Piece> out;
  size_t begin = 0;
  for (size_t i = 0; i + 1 < t.size(); i += 2)
    if (t[i] == 0 && t[i + 1] == 0) {
      out.push_back({begin, i, true});
      begin = i + 2;
    }
  if (begin < t.size()) out.push_back({begin, t.size() - (t.size() - begin) % 2, false});
  return out;
}

std::string text_of(ByteView t, const Piece& p) {
  return utf16_to_utf8(load_utf16le(t.data() + p.begin, (p.end - p.begin) / 2));
}

// The long strings of `t`, and for each the byte range of its pair ([index, text] with their NULs).
std::vector<std::pair<LongName, std::pair<size_t, size_t>>> find_long(ByteView t, limits::Bound bound) {
  std::vector<std::pair<LongName, std::pair<size_t, size_t>>> out;
  const std::vector<Piece> ps = pieces(t);
  for (size_t k = 0; k < ps.size(); k += 2) {
    const size_t last = std::min(k + 1, ps.size() - 1);
    const size_t span_end = ps[last].terminated ? ps[last].end + 2 : t.size();
    for (size_t j = k; j <= last; ++j) {
      if ((ps[j].end - ps[j].begin) / 2 <= bound.max) continue;
      std::string what = "a text ";
      if (j == k)
        what = "an index string ";
      else if (ps[k].end - ps[k].begin <= 20)  // an index of up to 10 digits
        what = "index " + text_of(t, ps[k]) + "'s text ";
      LongName n;
      n.offset = ps[j].begin;
      n.message = "at byte " + std::to_string(ps[j].begin) + ": " + what + limits::too_long(text_of(t, ps[j]), bound);
      out.push_back({std::move(n), {ps[k].begin, span_end}});
      break;  // the pair goes as one
    }
  }
  return out;
}

}  // namespace

std::vector<LongName> long_names(ByteView table, limits::Bound bound) {
  std::vector<LongName> out;
  for (auto& [n, span] : find_long(table, bound)) out.push_back(std::move(n));
  return out;
}

std::vector<LongName> drop_long_names(Bytes& table, limits::Bound bound) {
  auto found = find_long(table, bound);
  std::vector<LongName> out;
  if (found.empty()) return out;
  Bytes kept;
  size_t from = 0;
  for (auto& [n, span] : found) {
    kept.insert(kept.end(), table.begin() + std::ptrdiff_t(from), table.begin() + std::ptrdiff_t(span.first));
    from = span.second;
    out.push_back(std::move(n));
  }
  kept.insert(kept.end(), table.begin() + std::ptrdiff_t(from), table.end());
  table = std::move(kept);
  return out;
}

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
