// A perfmon log's lines as UTF-8, read a chunk at a time (`perfsim import --perfmon`): the one
// place that knows how logs are encoded.
//
// Contract:
//  - Encoding: a UTF-16LE, UTF-16BE or UTF-8 byte order mark decides; without one, UTF-16LE when
//    the first code units are ASCII with NUL high bytes; else UTF-8 when the first chunk is valid
//    UTF-8; else the ANSI code page `ansi` (an iconv name, default CP1252: what relog and typeperf
//    write on a Western Windows; --encoding for another). `forced` (a non-empty --encoding) is
//    used for every file without a byte order mark. Conversion is glibc's iconv.
//  - ansi_high() counts bytes above 0x7F read through the ANSI code page (the caller warns: they
//    may be another code page's); a byte the encoding has no character for is an error naming its
//    offset.
//  - Lines end at LF; a CR before it is dropped. A line longer than kMaxLine is an error (a file
//    without line breaks, /dev/zero, cannot grow a string until memory runs out).
#pragma once
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/status.h"

namespace perfsim::synth {

// Ok when iconv can read `encoding` (a --encoding value); else InvalidArgument saying what to write.
Status check_encoding(const std::string& encoding);

class LogLines {
 public:
  static constexpr size_t kMaxLine = size_t(128) << 20;
  ~LogLines();
  Status open(const std::string& path, const std::string& forced = "", const std::string& ansi = "CP1252");
  // `got` false at the end of the file.
  Status next(std::string& line, bool& got);
  uint64_t number() const { return number_; }
  const std::string& encoding() const { return encoding_; }  // "UTF-8", "UTF-16LE (BOM)", "CP1252", ...
  bool ansi() const { return ansi_; }
  uint64_t ansi_high() const { return ansi_high_; }

 private:
  static constexpr size_t kChunk = size_t(1) << 20;
  Status detect(const std::string& forced, const std::string& ansi);
  Status fill(bool& more);
  Status convert(bool at_end);
  std::ifstream in_;
  std::string raw_;  // bytes read and not yet converted
  std::string buf_;  // UTF-8
  size_t pos_ = 0;
  uint64_t number_ = 0;
  uint64_t offset_ = 0;  // file offset of raw_'s first byte
  void* cd_ = nullptr;   // iconv_t; null: the file is UTF-8 already
  std::string encoding_;
  bool ansi_ = false;
  bool eof_ = false;
  uint64_t ansi_high_ = 0;
};

}  // namespace perfsim::synth
