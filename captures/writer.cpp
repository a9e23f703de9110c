#include "captures/writer.h"

#include <fcntl.h>

#include <filesystem>

#include "captures/reader.h"
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace perfsim::captures {
namespace {

Status io_error(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// `NAME.tmp.PID` files next to `path` whose writer is gone (killed mid-write: the capture itself
// stayed intact, the rename never happened). A PID that is alive, even if reused by another
// program, keeps its file: better a stale file than another run's half-written one removed.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string prefix = p.filename().string() + ".tmp.";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(p.parent_path().empty() ? "." : p.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    int pid = 0;
    const char* digits = name.data() + prefix.size();
    const auto [end, err] = std::from_chars(digits, name.data() + name.size(), pid);
    if (err != std::errc() || end != name.data() + name.size() || pid <= 0) continue;
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    if (e.is_regular_file(ignored)) fs::remove(e.path(), ignored);
  }
}

}  // namespace

Status Writer::create(const std::string& path, const HostInfo& host, const WriterOptions& opt,
                      std::unique_ptr<Writer>& out) {
  if (opt.keyframe_interval == 0) return Status::InvalidArgument("keyframe_interval must be at least 1");
  if (opt.version < kMinFormatVersion || opt.version > kFormatVersion)
    return Status::InvalidArgument("capture format version " + std::to_string(opt.version) + " is not 1 or 2");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create " + path);
  std::unique_ptr<Writer> w(new Writer(fd, opt));
  Bytes header(std::begin(kFileMagic), std::end(kFileMagic));
  put_le32(header, opt.version);
  put_le32(header, 0);
  Status st = w->write_all(header);
  if (st.ok()) st = w->write_metadata(RecordType::kHost, encode_host(host));
  if (!st.ok()) return st;
  out = std::move(w);
  return Status::Ok();
}

Writer::~Writer() {
  // A destructor cannot report: callers that must know the file is whole call close() themselves.
  if (fd_ >= 0) static_cast<void>(close());
}

Status Writer::write_all(ByteView data) {
  if (!error_.ok()) return error_;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return error_ = io_error("write at offset " + std::to_string(offset_ + done));
    done += size_t(n);
  }
  offset_ += data.size();
  return Status::Ok();
}

Status Writer::write_frame(RecordType type, ByteView body) {
  if (fd_ < 0) return Status::InvalidArgument("capture writer is closed");
  frame_.clear();
  frame_record(frame_, type, body);
  Status st = write_all(frame_);
  if (st.ok() && opt_.sync == SyncPolicy::kEveryRecord) st = sync();
  return st;
}

Status Writer::write_metadata(RecordType type, const Bytes& body) {
  const uint64_t at = offset_;
  Status st = write_frame(type, body);
  if (st.ok()) index_.metadata_offsets.push_back(at);
  return st;
}

Status Writer::add_registry(const RegistryValue& v) {
  return write_metadata(RecordType::kRegistry, encode_registry(v));
}
Status Writer::add_names(const NameTable& t) { return write_metadata(RecordType::kNames, encode_names(t)); }
Status Writer::add_object(const ObjectInfo& o) { return write_metadata(RecordType::kObject, encode_object(o)); }
Status Writer::set_fingerprint(const std::string& json) {
  return write_metadata(RecordType::kFingerprint, encode_fingerprint(json));
}

Codec Writer::encode_delta(ByteView payload, ByteView base) {
  switch (opt_.delta) {
    case DeltaCodec::kXor:
      return encode_payload(payload, base, Codec::kXorLz4, coded_, scratch_);
    case DeltaCodec::kDict:
      return encode_payload(payload, base, Codec::kDictLz4, coded_, scratch_);
    case DeltaCodec::kSmallest: {
      const Codec a = encode_payload(payload, base, Codec::kXorLz4, coded_, scratch_);
      coded_alt_.clear();
      const Codec b = encode_payload(payload, base, Codec::kDictLz4, coded_alt_, scratch_);
      if (coded_alt_.size() >= coded_.size()) return a;
      std::swap(coded_, coded_alt_);
      return b;
    }
    case DeltaCodec::kNone:
      break;
  }
  return encode_payload(payload, base, Codec::kLz4, coded_, scratch_);
}

bool Writer::encode_split(ByteView payload, QueryState& q, bool& keyframe, uint32_t seq, Codec& codec) {
  SplitState& st = q.split;
  if (opt_.version < 2 || !find_layout(payload, layout_)) {
    st.history = 0;  // the next split record starts afresh
    return false;
  }
  make_structure(payload, layout_, structure_);
  const bool same = st.struct_seq != kNoBase && structure_ == st.structure;
  keyframe = keyframe || !same || st.history == 0;
  bool inline_structure = !same;
  if (!same) {
    std::swap(st.structure, structure_);
    std::swap(st.layout, layout_);
  } else if (keyframe && ++q.keyframes_by_ref >= opt_.structure_every) {
    inline_structure = true;
  }
  if (inline_structure) q.keyframes_by_ref = 0;
  codec = split_.encode(payload, st, !keyframe, inline_structure, seq, coded_);
  return true;
}

Status Writer::append(const QueryRecord& r) {
  if (!index_.records.empty() && r.tick < last_tick_)
    return Status::InvalidArgument("tick " + std::to_string(r.tick) + " after tick " + std::to_string(last_tick_));
  if (!index_.records.empty() && r.tick != last_tick_ && opt_.sync == SyncPolicy::kEveryTick) {
    if (Status st = sync(); !st.ok()) return st;
  }
  auto [it, fresh] = queries_.try_emplace(r.value_name);
  QueryState& q = it->second;
  if (fresh) {
    q.id = uint32_t(index_.queries.size());
    index_.queries.push_back(r.value_name);
  }
  bool keyframe =
      q.last_entry == kNoBase || q.since_keyframe + 1 >= opt_.keyframe_interval || opt_.delta == DeltaCodec::kNone;
  coded_.clear();
  QueryHeader h;
  h.seq = uint32_t(index_.records.size());
  if (!encode_split(r.payload, q, keyframe, h.seq, h.codec))
    h.codec = keyframe ? encode_payload(r.payload, {}, Codec::kLz4, coded_, scratch_) : encode_delta(r.payload, q.prev);
  h.base_seq = keyframe ? kNoBase : q.last_entry;
  h.tick = r.tick;
  h.time_100ns = r.time_100ns;
  h.latency_us = r.latency_us;
  h.status = r.status;
  h.reg_type = r.reg_type;
  h.size = r.size;
  h.raw_size = uint32_t(r.payload.size());
  h.value_name = r.value_name;
  body_.clear();
  encode_query_header(body_, h);
  put_bytes(body_, coded_);

  const uint64_t at = offset_;
  if (Status st = write_frame(RecordType::kQuery, body_); !st.ok()) return st;
  index_.records.push_back(RecordInfo{at, r.time_100ns, r.tick, q.id, h.base_seq, h.raw_size});
  q.last_entry = h.seq;
  q.since_keyframe = keyframe ? 0 : q.since_keyframe + 1;
  q.prev.assign(r.payload.begin(), r.payload.end());
  last_tick_ = r.tick;
  raw_bytes_ += r.payload.size();
  return Status::Ok();
}

Status Writer::sync() {
  if (!error_.ok()) return error_;
  if (::fdatasync(fd_) != 0) return error_ = io_error("fdatasync");
  return Status::Ok();
}

Status Writer::close() {
  if (fd_ < 0) return error_;
  const uint64_t index_at = offset_;
  Status st = write_frame(RecordType::kIndex, encode_index(index_));
  if (st.ok()) st = write_all(encode_footer(index_at));
  if (st.ok()) st = sync();
  if (::close(fd_) != 0 && st.ok()) st = error_ = io_error("close");
  fd_ = -1;
  return st;
}

Status add_metadata(Writer& w, const Capture& c) {
  Status st;
  for (const RegistryValue& v : c.registry)
    if (st.ok()) st = w.add_registry(v);
  for (const NameTable& t : c.names)
    if (st.ok()) st = w.add_names(t);
  for (const ObjectInfo& o : c.catalog)
    if (st.ok()) st = w.add_object(o);
  if (st.ok() && !c.fingerprint_json.empty()) st = w.set_fingerprint(c.fingerprint_json);
  return st;
}

Status write_capture(const std::string& path, const Capture& c, const WriterOptions& opt) {
  std::unique_ptr<Writer> w;
  Status st = Writer::create(path, c.host, opt, w);
  if (st.ok()) st = add_metadata(*w, c);
  for (const QueryRecord& r : c.records)
    if (st.ok()) st = w->append(r);
  if (st.ok()) st = w->close();
  return st;
}

Status rewrite_capture(Reader& r, const Capture& m, const RecordEdit& edit, const std::string& out,
                       const WriterOptions& opt, uint64_t* records) {
  if (Status st = r.damage(); !st.ok()) return st;
  std::unique_ptr<Writer> w;
  Status st = Writer::create(out, m.host, opt, w);
  if (st.ok()) st = add_metadata(*w, m);
  QueryRecord rec;
  uint64_t n = 0;
  for (size_t i = 0; st.ok() && i < r.records().size(); ++i) {
    st = r.read_record(i, rec);
    if (st.ok() && edit) edit(rec);
    if (st.ok()) st = w->append(rec);
    n += st.ok();
  }
  if (w) {
    Status closed = w->close();
    if (st.ok()) st = closed;
  }
  if (records) *records = n;
  return st;
}

Status write_replacing(const std::string& path, const std::function<Status(const std::string& tmp)>& write) {
  remove_stale_temporaries(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (Status s = write(tmp); !s.ok()) {
    std::remove(tmp.c_str());
    return s;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const Status s = io_error(path + ": cannot rename " + tmp + " to it");
    std::remove(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

Status convert_capture(const std::string& in, const std::string& out, const WriterOptions& opt, uint64_t* records) {
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && std::filesystem::equivalent(in, out, ec))
    return Status::InvalidArgument("convert: the output " + out + " is the input; write to another file");
  std::unique_ptr<Reader> r;
  if (Status st = Reader::open(in, r, ReaderOptions{true, true}); !st.ok()) return st;
  Status st = rewrite_capture(*r, r->metadata(), nullptr, out, opt, records);
  if (!st.ok()) std::filesystem::remove(out, ec);
  return st;
}

}  // namespace perfsim::captures
