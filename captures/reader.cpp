#include "captures/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include <lz4.h>

#include "captures/codec.h"
#include "core/utf16.h"
#include "perfdata/names.h"
#include "windows/constants.h"
#include "windows/registry_keys.h"

namespace perfsim::captures {

Status Reader::open(const std::string& path, std::unique_ptr<Reader>& out, const ReaderOptions& opt) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  struct stat sb {};
  const bool stat_ok = ::fstat(fd, &sb) == 0;
  const size_t size = stat_ok ? size_t(sb.st_size) : 0;
  void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  ::close(fd);
  if (!stat_ok || map == MAP_FAILED) return Status::IOError("cannot map " + path + ": " + std::strerror(errno));

  std::unique_ptr<Reader> r(new Reader());
  r->data_ = static_cast<const uint8_t*>(map);
  r->size_ = size;
  const size_t have = std::min(size, sizeof(kFileMagic));
  if (have == 0 || std::memcmp(r->data_, kFileMagic, have) != 0)
    return corruption_at(0, path + " is not a perfsim capture");
  if (size < kFileHeaderSize) return corruption_at(0, "file header cut off (" + std::to_string(size) + " bytes)");
  const uint32_t version = load_le32(r->data_ + 8);
  if (version < kMinFormatVersion || version > kFormatVersion)
    return Status::Unsupported("capture format version " + std::to_string(version) +
                               " (this perfsim reads 1 and 2: a newer perfsim wrote it)");

  std::string why;
  if (opt.use_index && r->load_index(why)) {
    r->used_index_ = true;
  } else {
    if (why.empty() && opt.use_index)
      r->warnings_.push_back("no index trailer (the writer did not close the file); index rebuilt by scanning");
    else if (!why.empty())
      r->note(Status::Corruption("index trailer unusable, " + why + "; index rebuilt by scanning"));
    r->scan();
  }
  r->drop_pages_ = opt.drop_pages;
  if (opt.drop_pages) ::madvise(const_cast<uint8_t*>(r->data_), size, MADV_DONTNEED);  // what open read
  r->cache_.resize(r->index_.queries.size());
  r->verified_.resize(r->index_.records.size(), r->used_index_ ? 0 : 1);
  out = std::move(r);
  return Status::Ok();
}

Reader::~Reader() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void Reader::note(const Status& st) {
  if (damage_.ok()) damage_ = st;
  warnings_.push_back(st.message());
}

void Reader::decoded(RecordType type, uint64_t offset) {
  namespace limits = perfdata::limits;
  const auto bound = [&](Bytes& table, limits::Bound b, const std::string& what) {
    for (perfdata::LongName& n : perfdata::drop_long_names(table, b)) {
      LeftOut l{offset,
                "at offset " + std::to_string(offset) + ": " + what + ", " + n.message + ": left out, the rest kept"};
      warnings_.push_back(l.message);
      left_out_.push_back(std::move(l));
    }
  };
  if (type == RecordType::kNames) {
    NameTable& t = meta_.names.back();
    bound(t.counter, limits::kCounterName, "Counter " + t.lang + " table");
    bound(t.help, limits::kHelpText, "Help " + t.lang + " table");
  } else if (type == RecordType::kRegistry) {
    RegistryValue& v = meta_.registry.back();
    const std::string perflib = std::string(windows::kPerflibKey) + "\\";
    const bool table = v.type == windows::kRegMultiSz && v.key.size() > perflib.size() &&
                       iequals(std::string_view(v.key).substr(0, perflib.size()), perflib) &&
                       v.key.find('\\', perflib.size()) == std::string::npos;
    if (table && (iequals(v.name, "Counter") || iequals(v.name, "Help")))
      bound(v.data, iequals(v.name, "Counter") ? limits::kCounterName : limits::kHelpText,
            "registry value " + v.key + "\\" + v.name);
  }
}

// Uses the trailer written by close(). Any inconsistency makes the caller scan instead: the
// trailer is an optimisation, never the only way to the records.
bool Reader::load_index(std::string& why) {
  uint64_t at = 0;
  if (size_ < kFileHeaderSize + kFooterSize || !decode_footer(file().subspan(size_ - kFooterSize), at)) {
    return false;  // no trailer at all (why stays empty): a capture whose writer did not close it
  }
  RecordView rec;
  if (at >= size_ || check_record(file(), size_t(at), rec, why) != Check::kOk || rec.type != RecordType::kIndex ||
      rec.end != size_ - kFooterSize) {
    why = "index record at offset " + std::to_string(at) + (why.empty() ? "" : ": " + why);
    return false;
  }
  IndexData ix;
  if (Status st = decode_index(rec.body, ix); !st.ok()) {
    why = st.message();
    return false;
  }
  for (size_t i = 0; i < ix.records.size(); ++i) {
    if (ix.records[i].offset + kRecordHeaderSize > at || (i && ix.records[i].tick < ix.records[i - 1].tick)) {
      why = "index entry " + std::to_string(i) + " out of range or order";
      return false;
    }
  }
  for (uint64_t m : ix.metadata_offsets) {
    RecordView mr;
    std::string w;
    if (m >= at || check_record(file(), size_t(m), mr, w) != Check::kOk || !is_metadata(mr.type)) {
      why = "metadata record at offset " + std::to_string(m) + (w.empty() ? "" : ": " + w);
      meta_ = Capture{};
      // The scan that follows finds them again.
      for (const LeftOut& l : left_out_) std::erase(warnings_, l.message);
      left_out_.clear();
      return false;
    }
    if (Status st = decode_metadata(mr.type, mr.body, meta_); !st.ok())
      note(corruption_at(size_t(m), st.message()));
    else
      decoded(mr.type, m);
  }
  index_ = std::move(ix);
  seqs_.resize(index_.records.size());
  for (size_t i = 0; i < seqs_.size(); ++i) seqs_[i] = uint32_t(i);
  return true;
}

void Reader::scan() {
  struct Last {
    uint32_t id = 0;
    size_t entry = SIZE_MAX;
  };
  std::unordered_map<std::string, Last> last;
  size_t pos = kFileHeaderSize;
  while (pos < size_) {
    uint64_t ignored;
    if (size_ - pos == kFooterSize && decode_footer(file().subspan(pos), ignored)) break;
    RecordView rec;
    std::string why;
    const Check c = check_record(file(), pos, rec, why);
    if (c != Check::kOk) {
      // Resynchronise: the next offset holding a sync marker and a record that checks out.
      size_t next = find_sync(file(), pos + 1);
      std::string ignore;
      while (next < size_ && check_record(file(), next, rec, ignore) != Check::kOk) next = find_sync(file(), next + 1);
      if (next >= size_) {
        note(corruption_at(pos, std::string(c == Check::kTorn ? "torn" : "corrupt") + " tail, " +
                                    std::to_string(size_ - pos) + " bytes ignored: " + why));
        break;
      }
      note(corruption_at(pos, why + "; skipped " + std::to_string(next - pos) + " bytes to the record at offset " +
                                  std::to_string(next)));
      pos = next;
    }
    pos = rec.end;
    if (is_metadata(rec.type)) {
      if (Status st = decode_metadata(rec.type, rec.body, meta_); !st.ok())
        note(corruption_at(rec.offset, st.message()));
      else
        decoded(rec.type, rec.offset);
      continue;
    }
    if (rec.type != RecordType::kQuery) continue;  // an old index, or a type from a later version
    ByteReader br(rec.body);
    QueryHeader h;
    if (!decode_query_header(br, h)) {
      note(corruption_at(rec.offset, "query record header cut short"));
      continue;
    }
    auto [it, fresh] = last.try_emplace(h.value_name);
    if (fresh) {
      it->second.id = uint32_t(index_.queries.size());
      index_.queries.push_back(h.value_name);
    }
    uint32_t base = kNoBase;
    if (h.base_seq != kNoBase)
      base = it->second.entry != SIZE_MAX && seqs_[it->second.entry] == h.base_seq ? uint32_t(it->second.entry)
                                                                                   : kLostBase;
    it->second.entry = index_.records.size();
    index_.records.push_back(RecordInfo{rec.offset, h.time_100ns, h.tick, it->second.id, base, h.raw_size});
    seqs_.push_back(h.seq);
  }
}

Status Reader::read_header(size_t i, QueryHeader& h, ByteView& coded, bool verify) {
  const RecordInfo& e = index_.records[i];
  RecordView rec;
  std::string why;
  if (check_record(file(), size_t(e.offset), rec, why, verify && !verified_[i]) != Check::kOk ||
      rec.type != RecordType::kQuery)
    return corruption_at(size_t(e.offset),
                         "query record " + std::to_string(i) + ": " + (why.empty() ? "not a query" : why));
  ByteReader br(rec.body);
  if (!decode_query_header(br, h)) return corruption_at(size_t(e.offset), "query record header cut short");
  // A structure fetched by seq (fetch_coded) may be a delta whose base was lost (kLostBase).
  if (e.base != kNoBase && e.base >= seqs_.size())
    return corruption_at(size_t(e.offset), "delta record " + std::to_string(i) + " lost its base record");
  const uint32_t want_base = e.base == kNoBase ? kNoBase : seqs_[e.base];
  if (h.seq != seqs_[i] || h.base_seq != want_base || h.raw_size != e.raw_size)
    return corruption_at(size_t(e.offset), "query record " + std::to_string(i) + " does not match the index");
  br.bytes(br.remaining(), coded);
  if (verify) verified_[i] = 1;
  return Status::Ok();
}

// Gives record i's pages back (the mapping stays; a later read faults them in again from the page
// cache). The kernel maps up to 64 KiB around each fault (fault-around), so that whole aligned
// window goes; pages of neighbouring records in it are simply faulted in again when read.
// Sequential reads (open's clock scan, the counter pass) give back 1 MiB at a time: one madvise,
// and one TLB flush, per record cost more than the reads themselves.
void Reader::drop(size_t i) {
  if (!drop_pages_) return;
  constexpr size_t kWindow = 64 * 1024, kBatch = 1024 * 1024;
  const size_t begin = size_t(index_.records[i].offset);
  const size_t end = i + 1 < index_.records.size() ? size_t(index_.records[i + 1].offset) : size_;
  const size_t first = begin / kWindow * kWindow, last = std::min((end + kWindow - 1) / kWindow * kWindow, size_);
  if (last <= first) return;
  if (drop_last_ > drop_first_ && first <= drop_last_ && last >= drop_first_) {
    drop_first_ = std::min(drop_first_, first), drop_last_ = std::max(drop_last_, last);
  } else {
    flush_drops();
    drop_first_ = first, drop_last_ = last;
  }
  if (drop_last_ - drop_first_ >= kBatch) flush_drops();
}

void Reader::flush_drops() {
  if (drop_last_ > drop_first_)
    ::madvise(const_cast<uint8_t*>(data_) + drop_first_, drop_last_ - drop_first_, MADV_DONTNEED);
  drop_first_ = drop_last_ = 0;
}

Status Reader::fetch_coded(uint32_t seq, ByteView& coded) {
  const auto at = std::lower_bound(seqs_.begin(), seqs_.end(), seq);
  if (at == seqs_.end() || *at != seq)
    return Status::Corruption("record " + std::to_string(seq) + " holding the structure was lost");
  QueryHeader h;
  if (Status st = read_header(size_t(at - seqs_.begin()), h, coded); !st.ok()) return st;
  if (!is_split(h.codec)) return Status::Corruption("record " + std::to_string(seq) + " holds no structure");
  return Status::Ok();
}

Status Reader::decode_one(size_t i, QueryCache& c) {
  QueryHeader h;
  ByteView coded;
  Status st = read_header(i, h, coded);
  if (st.ok() && is_split(h.codec)) {
    auto fetch = [this](uint32_t seq, ByteView& out) { return fetch_coded(seq, out); };
    st = split_->decode(coded, h.codec, h.seq, h.raw_size, h.base_seq != kNoBase, c.split, fetch, c.tmp);
  } else if (st.ok()) {
    c.split.history = 0;  // a split record after this one is a keyframe
    st = decode_payload(h.codec, coded, c.cur, h.raw_size, c.tmp);
  }
  if (!st.ok() && st.message().rfind("at offset", 0) != 0)
    st = corruption_at(size_t(index_.records[i].offset), st.message());
  if (!st.ok()) {
    c.decoded = SIZE_MAX;
    c.split.history = 0;
    return st;
  }
  std::swap(c.cur, c.tmp);
  c.decoded = i;
  drop(i);
  return Status::Ok();
}

Status Reader::prefix_one(size_t i, size_t n, QueryCache& c) {
  QueryHeader h;
  ByteView coded;
  Status st = read_header(i, h, coded, false);
  const size_t want = std::min<size_t>(n, h.raw_size);
  Bytes out(want);
  if (st.ok() && h.codec == Codec::kStored) {
    if (coded.size() < want)
      st = corruption_at(size_t(index_.records[i].offset), "stored payload cut short");
    else if (want)  // an empty payload's buffers may be null: memcpy must not see them
      std::memcpy(out.data(), coded.data(), want);
  } else if (st.ok() && (h.codec == Codec::kLz4 || h.codec == Codec::kXorLz4)) {
    const int got =
        want ? LZ4_decompress_safe_partial(reinterpret_cast<const char*>(coded.data()),
                                           reinterpret_cast<char*>(out.data()), int(coded.size()), int(want), int(want))
             : 0;
    if (got != int(want)) st = corruption_at(size_t(index_.records[i].offset), "LZ4 block does not decode");
    if (st.ok() && h.codec == Codec::kXorLz4) xor_into(out, c.prefix);
  } else if (st.ok() && is_split(h.codec)) {
    auto fetch = [this](uint32_t seq, ByteView& coded_seq) { return fetch_coded(seq, coded_seq); };
    st = split_->prefix(coded, h.raw_size, want, c.prefix_split, fetch, out);
    if (!st.ok()) {
      c.prefix_split.struct_seq = kNoBase;
      st = corruption_at(size_t(index_.records[i].offset), st.message());
    }
  } else if (st.ok()) {
    return Status::Unsupported("codec");  // the caller decodes in full
  }
  if (!st.ok()) {
    c.prefix_of = SIZE_MAX;
    return st;
  }
  c.prefix = std::move(out);
  c.prefix_of = i;
  drop(i);
  return Status::Ok();
}

Status Reader::payload_prefix(size_t i, size_t n, Bytes& out) {
  if (i >= index_.records.size()) return Status::InvalidArgument("record " + std::to_string(i) + " does not exist");
  QueryCache& c = cache_[index_.records[i].query];
  std::vector<size_t> chain{i};
  while (chain.back() != c.prefix_of && index_.records[chain.back()].base != kNoBase) {
    const uint32_t base = index_.records[chain.back()].base;
    if (base == kLostBase)
      return corruption_at(size_t(index_.records[chain.back()].offset),
                           "delta record " + std::to_string(chain.back()) + " lost its base record");
    chain.push_back(base);
  }
  // A cached prefix shorter than asked cannot serve as a base: start again from the keyframe.
  if (chain.back() == c.prefix_of && c.prefix.size() < std::min<size_t>(n, index_.records[c.prefix_of].raw_size)) {
    while (index_.records[chain.back()].base != kNoBase) chain.push_back(index_.records[chain.back()].base);
  } else if (chain.back() == c.prefix_of) {
    chain.pop_back();
  }
  for (auto k = chain.rbegin(); k != chain.rend(); ++k) {
    Status st = prefix_one(*k, n, c);
    if (st.code() == Status::Code::kUnsupported) {
      ByteView p;
      if (Status full = payload(i, p); !full.ok()) return full;
      out.assign(p.begin(), p.begin() + std::min(n, p.size()));
      return Status::Ok();
    }
    if (!st.ok()) return st;
  }
  out.assign(c.prefix.begin(), c.prefix.begin() + std::min(n, c.prefix.size()));
  return Status::Ok();
}

Status Reader::head(size_t i, QueryHeader& out) {
  if (i >= index_.records.size()) return Status::InvalidArgument("record " + std::to_string(i) + " does not exist");
  ByteView coded;
  return read_header(i, out, coded, false);
}

Status Reader::payload(size_t i, ByteView& out) {
  if (i >= index_.records.size()) return Status::InvalidArgument("record " + std::to_string(i) + " does not exist");
  QueryCache& c = cache_[index_.records[i].query];
  // Walk back to the keyframe (or to the payload already cached), then decode forward.
  std::vector<size_t> chain{i};
  while (chain.back() != c.decoded && index_.records[chain.back()].base != kNoBase) {
    const uint32_t base = index_.records[chain.back()].base;
    if (base == kLostBase)
      return corruption_at(size_t(index_.records[chain.back()].offset),
                           "delta record " + std::to_string(chain.back()) + " lost its base record");
    chain.push_back(base);
  }
  if (chain.back() == c.decoded) chain.pop_back();
  for (auto k = chain.rbegin(); k != chain.rend(); ++k)
    if (Status st = decode_one(*k, c); !st.ok()) return st;
  out = c.cur;
  return Status::Ok();
}

Status Reader::read_record(size_t i, QueryRecord& out) {
  ByteView p;
  if (Status st = payload(i, p); !st.ok()) return st;
  QueryHeader h;
  ByteView coded;
  if (Status st = read_header(i, h, coded); !st.ok()) return st;
  out.tick = h.tick;
  out.time_100ns = h.time_100ns;
  out.latency_us = h.latency_us;
  out.value_name = std::move(h.value_name);
  out.status = h.status;
  out.reg_type = h.reg_type;
  out.size = h.size;
  out.payload.assign(p.begin(), p.end());
  return Status::Ok();
}

std::pair<size_t, size_t> Reader::tick_range(uint32_t tick) const {
  const auto& r = index_.records;
  auto lo = std::lower_bound(r.begin(), r.end(), tick, [](const RecordInfo& e, uint32_t t) { return e.tick < t; });
  auto hi = std::upper_bound(lo, r.end(), tick, [](uint32_t t, const RecordInfo& e) { return t < e.tick; });
  return {size_t(lo - r.begin()), size_t(hi - r.begin())};
}

Status Reader::read_tick(uint32_t tick, std::vector<QueryRecord>& out) {
  const auto [first, last] = tick_range(tick);
  out.resize(last - first);
  for (size_t i = first; i < last; ++i)
    if (Status st = read_record(i, out[i - first]); !st.ok()) return st;
  return Status::Ok();
}

Status read_capture(const std::string& path, Capture& out, std::vector<std::string>* warnings,
                    const ReaderOptions& opt) {
  std::unique_ptr<Reader> r;
  if (Status st = Reader::open(path, r, opt); !st.ok()) return st;
  out = r->metadata();
  out.records.clear();
  Status first = r->damage();
  std::vector<std::string> problems = r->warnings();
  for (size_t i = 0; i < r->records().size(); ++i) {
    QueryRecord rec;
    if (Status st = r->read_record(i, rec); !st.ok()) {
      if (first.ok()) first = st;
      problems.push_back(st.message());
      continue;
    }
    out.records.push_back(std::move(rec));
  }
  if (warnings) *warnings = std::move(problems);
  return first;
}

}  // namespace perfsim::captures
