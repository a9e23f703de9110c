#include "synth/perfmon_text.h"

#include <errno.h>
#include <fmt/core.h>
#include <iconv.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/utf16.h"

namespace perfsim::synth {
namespace {

iconv_t as_cd(void* p) { return static_cast<iconv_t>(p); }

// UTF-16LE without a BOM: the first code units (up to 8) are ASCII, none NUL (core/text.h's rule).
bool bomless_utf16le(const std::string& f) {
  if (f.size() < 4) return false;
  const size_t units = std::min<size_t>(f.size() / 2, 8);
  for (size_t i = 0; i < units; ++i) {
    const auto lo = static_cast<unsigned char>(f[2 * i]);
    if (lo == 0 || lo >= 0x80 || f[2 * i + 1] != 0) return false;
  }
  return true;
}

// The chunk is UTF-8 up to its last line break (a character may be cut at the chunk's end).
bool looks_utf8(const std::string& f) {
  const size_t nl = f.rfind('\n');
  return valid_utf8(std::string_view(f).substr(0, nl == std::string::npos ? f.size() : nl));
}

}  // namespace

Status check_encoding(const std::string& encoding) {
  const iconv_t cd = iconv_open("UTF-8", encoding.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1))
    return Status::InvalidArgument(fmt::format(
        "encoding '{}' is not one iconv knows: write a code page such as CP1252, CP1250, CP1251, CP850 or UTF-8 "
        "(iconv -l lists them)",
        encoding));
  iconv_close(cd);
  return Status::Ok();
}

LogLines::~LogLines() {
  if (cd_) iconv_close(as_cd(cd_));
}

Status LogLines::open(const std::string& path, const std::string& forced, const std::string& ansi) {
  in_.open(path, std::ios::binary);
  if (!in_) return Status::NotFound(path + ": cannot open it");
  raw_.resize(kChunk);
  in_.read(raw_.data(), std::streamsize(kChunk));
  raw_.resize(size_t(in_.gcount()));
  eof_ = raw_.empty();
  return detect(forced, ansi);
}

Status LogLines::detect(const std::string& forced, const std::string& ansi) {
  std::string from;
  size_t bom = 0;
  if (raw_.rfind("\xFF\xFE", 0) == 0) {
    from = "UTF-16LE", bom = 2, encoding_ = "UTF-16LE (BOM)";
  } else if (raw_.rfind("\xFE\xFF", 0) == 0) {
    from = "UTF-16BE", bom = 2, encoding_ = "UTF-16BE (BOM)";
  } else if (raw_.rfind("\xEF\xBB\xBF", 0) == 0) {
    bom = 3, encoding_ = "UTF-8 (BOM)";
  } else if (!forced.empty()) {
    from = forced, encoding_ = forced;
    ansi_ = true;
  } else if (bomless_utf16le(raw_)) {
    from = "UTF-16LE", encoding_ = "UTF-16LE";
  } else if (looks_utf8(raw_)) {
    encoding_ = "UTF-8";
  } else {
    from = ansi, encoding_ = ansi;
    ansi_ = true;
  }
  raw_.erase(0, bom);
  offset_ = bom;
  // An explicit UTF-8 reads as it is (and is checked as UTF-8 by the caller).
  std::string upper = from;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "UTF-8" || upper == "UTF8") {
    ansi_ = false;
    return Status::Ok();
  }
  if (from.empty()) return Status::Ok();
  if (Status s = check_encoding(from); !s.ok()) return s;
  cd_ = iconv_open("UTF-8", from.c_str());
  return Status::Ok();
}

Status LogLines::convert(bool at_end) {
  if (!cd_) {
    buf_ += raw_;
    offset_ += raw_.size();
    raw_.clear();
    return Status::Ok();
  }
  const size_t old = buf_.size();
  buf_.resize(old + raw_.size() * 3 + 16);  // at most 3 UTF-8 bytes per input byte
  char* in = raw_.data();
  size_t in_left = raw_.size();
  char* out = buf_.data() + old;
  size_t out_left = buf_.size() - old;
  const size_t r = iconv(as_cd(cd_), &in, &in_left, &out, &out_left);
  const size_t used = raw_.size() - in_left;
  if (ansi_)
    ansi_high_ += uint64_t(std::count_if(raw_.begin(), raw_.begin() + ptrdiff_t(used),
                                         [](char c) { return static_cast<unsigned char>(c) >= 0x80; }));
  buf_.resize(buf_.size() - out_left);
  const int err = r == size_t(-1) ? errno : 0;
  const uint64_t at = offset_ + used;
  raw_.erase(0, used);
  offset_ += used;
  if (err == EILSEQ)
    return Status::InvalidArgument(fmt::format("byte {} (0x{:02X}) is not {} (--encoding names the file's code page)",
                                               at, static_cast<unsigned char>(raw_[0]), encoding_));
  if (err == EINVAL && at_end)
    return Status::InvalidArgument(fmt::format("the file ends inside a {} character", encoding_));
  return Status::Ok();
}

// Appends what the next chunk decodes to (dropping what was consumed); `more` false when nothing
// was added and the file is at its end.
Status LogLines::fill(bool& more) {
  buf_.erase(0, pos_);
  pos_ = 0;
  const size_t before = buf_.size();
  while (buf_.size() == before) {
    if (!eof_ && raw_.size() < kChunk) {
      const size_t old = raw_.size();
      raw_.resize(old + kChunk);
      in_.read(raw_.data() + old, std::streamsize(kChunk));
      raw_.resize(old + size_t(in_.gcount()));
      eof_ = raw_.size() == old;
    }
    if (raw_.empty()) break;
    if (Status s = convert(eof_); !s.ok()) return s;
    if (eof_) break;
  }
  more = buf_.size() > before;
  return Status::Ok();
}

Status LogLines::next(std::string& line, bool& got) {
  got = false;
  size_t scanned = 0;  // bytes after pos_ known to hold no line break
  for (;;) {
    const char* from = buf_.data() + pos_ + scanned;
    if (const void* nl = std::memchr(from, '\n', buf_.size() - pos_ - scanned)) {
      const size_t end = size_t(static_cast<const char*>(nl) - buf_.data());
      line.assign(buf_, pos_, end - pos_);
      pos_ = end + 1;
      break;
    }
    scanned = buf_.size() - pos_;
    if (scanned > kMaxLine)
      return Status::InvalidArgument(fmt::format("a line longer than {} MiB: not a perfmon log", kMaxLine >> 20));
    bool more = false;
    if (Status s = fill(more); !s.ok()) return s;
    if (!more) {
      if (scanned == 0) return Status::Ok();
      line.assign(buf_, pos_, scanned);
      pos_ = buf_.size();
      break;
    }
  }
  got = true;
  ++number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return Status::Ok();
}

}  // namespace perfsim::synth
