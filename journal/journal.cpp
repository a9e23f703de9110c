#include "journal/journal.h"

#include <algorithm>
#include <chrono>

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

Status Journal::open_file(const std::string& path) {
  if (file_) return Status::InvalidArgument("the journal already writes a file");
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) return Status::IOError(path + ": cannot create the journal file (does its directory exist?)");
  written_ = recorded();
  writer_ = std::thread([this] { writer_loop(); });
  return Status::Ok();
}

void Journal::record(CallEvent&& e) {
  const uint64_t seq = next_.fetch_add(1, std::memory_order_relaxed);
  Slot& s = slots_[seq % capacity_];
  s.lock();
  if (s.seq < seq) {  // a newer event that wrapped around first keeps the slot
    e.seq = seq;
    s.ev = std::move(e);
    s.seq = seq;
  }
  s.unlock();
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
  uint64_t lost = 0;
  if (newest >= capacity_ && seq < newest - capacity_ + 1) {  // overwritten before we got to them
    lost += newest - capacity_ + 1 - seq;
    seq = newest - capacity_ + 1;
  }
  CallEvent e;
  std::string line;
  for (; seq <= newest; ++seq) {
    Slot& s = slots_[seq % capacity_];
    s.lock();
    const uint64_t there = s.seq;
    if (there == seq) e = s.ev;
    s.unlock();
    if (there < seq) break;  // taken but not yet written: next round
    if (there > seq) {
      ++lost;
      continue;
    }
    line.clear();
    append_json_line(e, line);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), file_);
  }
  std::fflush(file_);
  drops_.fetch_add(lost, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(mu_);
  written_ = seq - 1;
}

}  // namespace perfsim::journal
