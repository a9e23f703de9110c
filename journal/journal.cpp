#include "journal/journal.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace perfsim::journal {

void Journal::Slot::lock() {
  while (busy.exchange(true, std::memory_order_acquire))
    while (busy.load(std::memory_order_relaxed)) std::this_thread::yield();
}

Journal::Journal(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)), slots_(new Slot[capacity_]) {}

Journal::~Journal() {
  if (writer_.joinable()) {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    writer_.join();
  }
  if (file_) std::fclose(file_);
}

Status Journal::open_file(const std::string& path, const FileLimits& limits) {
  if (file_) return Status::InvalidArgument("the journal already writes a file");
  if (limits.max_bytes == 0 || limits.files == 0 || limits.files > FileLimits::kMaxFiles)
    return Status::InvalidArgument("a journal file needs max_bytes of at least 1 and 1 to 1000 files");
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) return Status::IOError(path + ": cannot create the journal file (does its directory exist?)");
  // An earlier run's rotated files would read as older parts of this run (perfsim journal FILE).
  // Gaps included: a new run's rotations would fill them and join the leftovers to its set.
  std::error_code ec;
  for (uint32_t k = 1; k < FileLimits::kMaxFiles; ++k)
    if (std::filesystem::is_regular_file(rotated_name(path, k), ec)) std::filesystem::remove(rotated_name(path, k), ec);
  path_ = path;
  limits_ = limits;
  file_bytes_ = 0;
  written_ = recorded();
  writer_ = std::thread([this] { writer_loop(); });
  return Status::Ok();
}

uint64_t Journal::record(CallEvent&& e) {
  const uint64_t seq = next_.fetch_add(1, std::memory_order_relaxed);
  Slot& s = slots_[seq % capacity_];
  s.lock();
  if (s.seq < seq) {  // a newer event that wrapped around first keeps the slot
    e.seq = seq;
    s.ev = std::move(e);
    s.seq = seq;
  }
  s.unlock();
  return seq;
}

bool Journal::copy(uint64_t seq, CallEvent& out) const {
  Slot& s = slots_[seq % capacity_];
  s.lock();
  const bool there = s.seq == seq;
  if (there) out = s.ev;
  s.unlock();
  return there;
}

namespace {

bool matches(const JournalFilter& f, const CallEvent& e) {
  return (f.host.empty() || text(e.host) == f.host) && (!f.session || e.session == f.session) &&
         (!f.since_ms || e.time_us >= f.since_ms * 1000);
}

}  // namespace

std::vector<CallEvent> Journal::query(const JournalFilter& f) const {
  const uint64_t newest = recorded();
  uint64_t first = newest >= capacity_ ? newest - capacity_ + 1 : 1;
  first = std::max({first, hidden_.load(std::memory_order_relaxed) + 1, f.since_seq + 1});
  std::vector<CallEvent> out;
  CallEvent e;
  for (uint64_t seq = first; seq <= newest; ++seq)
    if (copy(seq, e) && matches(f, e)) out.push_back(e);
  if (f.limit && out.size() > f.limit) out.erase(out.begin(), out.end() - std::ptrdiff_t(f.limit));
  return out;
}

nlohmann::json Journal::query_json(const JournalFilter& f) const {
  const std::vector<CallEvent> events = query(f);
  nlohmann::json list = nlohmann::json::array();
  for (const CallEvent& e : events) list.push_back(to_json(e));
  return {{"entries", std::move(list)},
          {"next_since", events.empty() ? f.since_seq : events.back().seq},
          {"recorded", recorded()},
          {"capacity", capacity_},
          {"drops", drops()}};
}

void Journal::clear() { hidden_.store(recorded(), std::memory_order_relaxed); }

nlohmann::json Journal::sessions_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const SessionDiagnosis& d : sessions()) out.push_back(to_json(d));
  return out;
}

void Journal::flush() {
  if (!writer_.joinable()) return;
  std::unique_lock<std::mutex> l(mu_);
  flush_to_ = std::max(flush_to_, recorded());
  cv_.notify_all();
  cv_.wait(l, [&] { return written_ >= flush_to_ || stop_; });
}

void Journal::writer_loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait_for(l, std::chrono::milliseconds(50), [&] { return stop_ || flush_to_ > written_; });
    const bool last = stop_;
    l.unlock();
    drain();
    l.lock();
    cv_.notify_all();
    if (last) return;
  }
}

void Journal::drain() {
  const uint64_t newest = recorded();
  uint64_t seq = written_ + 1;
  if (newest >= capacity_ && seq < newest - capacity_ + 1) {  // overwritten before we got to them
    note_dropped(newest - capacity_ + 1 - seq);
    seq = newest - capacity_ + 1;
  }
  CallEvent e;
  std::string line;
  uint64_t lost = 0;
  for (; seq <= newest; ++seq) {
    Slot& s = slots_[seq % capacity_];
    s.lock();
    const uint64_t there = s.seq;
    if (there == seq) e = s.ev;
    s.unlock();
    if (there < seq) break;  // taken but not yet written: next round
    line.clear();
    if (there == seq) append_json_line(e, line);
    if (there > seq || !write_line(line)) ++lost;
  }
  note_dropped(lost);
  if (file_) std::fflush(file_);
  std::lock_guard<std::mutex> g(mu_);
  written_ = seq - 1;
}

void Journal::note_dropped(uint64_t n) {
  if (n == 0) return;
  drops_.fetch_add(n, std::memory_order_relaxed);
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  // Best effort: when the disk refused the events it likely refuses this line too.
  (void)write_line(fmt::format("{{\"events\":{},\"journal\":\"dropped\",\"time_us\":{}}}", n, now_us));
}

bool Journal::write_line(const std::string& line) {
  if (file_ && file_bytes_ > 0 && file_bytes_ + line.size() + 1 > limits_.max_bytes) rotate();
  if (!file_) file_ = std::fopen(path_.c_str(), "a");  // a rotation that could not reopen: try again
  if (!file_) return false;
  const bool whole = std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fputc('\n', file_) != EOF;
  file_bytes_ += line.size() + 1;
  return whole;
}

// FILE.K-2 -> FILE.K-1 (replacing the oldest), ..., FILE -> FILE.1, then a new FILE. Renames are
// atomic, so a reader sees each file either whole or not at all.
void Journal::rotate() {
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  for (uint32_t k = limits_.files - 1; k >= 1; --k)
    std::filesystem::rename(rotated_name(path_, k - 1), rotated_name(path_, k), ec);
  file_ = std::fopen(path_.c_str(), "w");
  file_bytes_ = 0;
  rotations_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace perfsim::journal
