// rewrite_capture and convert_capture (writer.h): a Reader's records into a Writer. Apart from
// writer.cpp so a writer built alone (perfsim-record.exe, windows_recorder/) needs no reader.
#include <filesystem>

#include "captures/reader.h"
#include "captures/writer.h"

namespace perfsim::captures {

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
  Status st = rewrite_capture(*r, r->metadata(), nullptr, out, opt, records);
  if (!st.ok()) std::filesystem::remove(out, ec);
  return st;
}

}  // namespace perfsim::captures
