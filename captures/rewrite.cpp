// rewrite_capture and convert_capture (writer.h): a Reader's records into a Writer; and
// write_replacing, how a command replaces a file. Apart from writer.cpp so a writer built alone
// (perfsim-record.exe, windows_recorder/) needs no reader and no POSIX process calls.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "captures/reader.h"
#include "captures/writer.h"

namespace perfsim::captures {
namespace {

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

Status check_replaceable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::Ok();  // a missing one is made
  const char* what = S_ISCHR(st.st_mode)    ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                                            : "not a regular file";
  return Status::InvalidArgument(path + " is " + what +
                                 ": perfsim writes its output to a new file and renames it into place, which "
                                 "would replace it; name a regular file (e.g. out.perfcap) and copy it from there");
}

Status write_replacing(const std::string& path, const std::function<Status(const std::string& tmp)>& write) {
  if (Status s = check_replaceable(path); !s.ok()) return s;
  remove_stale_temporaries(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Status written;
  try {
    written = write(tmp);
  } catch (...) {  // std::bad_alloc and the like: the temp file goes, the caller reports it
    std::remove(tmp.c_str());
    throw;
  }
  if (!written.ok()) {
    std::remove(tmp.c_str());
    return written;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const Status s = Status::IOError(path + ": cannot rename " + tmp + " to it: " + std::strerror(errno));
    std::remove(tmp.c_str());
    return s;
  }
  return Status::Ok();
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

Status convert_capture(const std::string& in, const std::string& out, const WriterOptions& opt, uint64_t* records) {
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && std::filesystem::equivalent(in, out, ec))
    return Status::InvalidArgument("convert: the output " + out + " is the input; write to another file");
  std::unique_ptr<Reader> r;
  if (Status st = Reader::open(in, r, ReaderOptions{true, true}); !st.ok()) return st;
  return write_replacing(
      out, [&](const std::string& tmp) { return rewrite_capture(*r, r->metadata(), nullptr, tmp, opt, records); });
}

}  // namespace perfsim::captures
