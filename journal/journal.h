// The call journal: the last N winreg calls of a serve run in a bounded ring, optionally also
// written to a JSON-lines file.
//
// Contract:
//  - record() is the hot path: one atomic increment picks the event's slot, whose own tiny lock
//    (contended only by a reader copying that slot) guards the move. No global lock, no I/O, no
//    allocation beyond the event's own strings.
//  - The ring keeps the newest `capacity` events; older ones are overwritten (not "drops").
//  - The file (open_file) is written by a background thread that follows the ring every 50 ms:
//    the ring is its bounded queue. Events overwritten before it wrote them, or that the disk
//    refused, are counted in drops() and are missing from the file, which says so in a marker line
//    ({"journal":"dropped","events":N,...}); nothing ever waits for the disk.
//  - The file is bounded (FileLimits): when the next line would take it past max_bytes it is
//    rotated (FILE -> FILE.1 -> ... -> FILE.K-1, the oldest removed) between two lines, so every
//    file holds whole lines and the set never exceeds K x max_bytes (plus one line, for a single
//    line larger than max_bytes, which gets a file of its own).
//  - clear() hides the events so far from query() and sessions(); the file still gets them.
//  - Everything is safe from any thread.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "journal/diagnosis.h"
#include "journal/event.h"

namespace perfsim::journal {

struct JournalFilter {
  std::string host;        // the host's system name; empty: all
  uint64_t session = 0;    // 0: all
  uint64_t since_seq = 0;  // only events with seq > since_seq (a client's last seen seq)
  int64_t since_ms = 0;    // only events at or after this wall-clock time (ms since 1970); 0: all
  size_t limit = 0;        // the newest `limit` of the matches; 0: all
  // The admin API's single `since=`: values below 10^12 are event seqs, larger ones ms since 1970
  // (10^12 ms is September 2001, and a run's seqs stay far below it).
  void set_since(uint64_t v) {
    if (v >= 1000000000000ull)
      since_ms = int64_t(v);
    else
      since_seq = v;
  }
};

// How much disk a journal file may take: `max_bytes` per file, `files` files in all (FILE and
// FILE.1 .. FILE.K-1). The defaults (100 MiB x 5) cannot fill a laptop's disk.
struct FileLimits {
  inline static constexpr uint64_t kDefaultMaxMib = 100;
  inline static constexpr uint32_t kDefaultFiles = 5;
  inline static constexpr uint32_t kMaxFiles = 1000;  // --journal-files' bound
  uint64_t max_bytes = kDefaultMaxMib << 20;
  uint32_t files = kDefaultFiles;
};

class Journal {
 public:
  inline static constexpr size_t kDefaultCapacity = 10000;
  explicit Journal(size_t capacity = kDefaultCapacity);
  ~Journal();  // writes what the file has not got yet, then closes it
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Starts writing every recorded event to `path` (created or truncated; rotated files an earlier
  // run left, path.1 .. path.999, are removed so the set is this run's alone).
  Status open_file(const std::string& path, const FileLimits& limits = {});
  uint64_t record(CallEvent&& e);  // its seq

  // Matching events, oldest first.
  std::vector<CallEvent> query(const JournalFilter& f) const;
  // {"entries": [...] (the dashboard reads this key), "next_since": seq of the newest event returned (or the filter's since_seq),
  //  "recorded": events recorded so far, "capacity": N, "drops": drops()}
  nlohmann::json query_json(const JournalFilter& f) const;
  void clear();
  // Per-session diagnosis of the events the ring holds (diagnosis.h).
  std::vector<SessionDiagnosis> sessions() const { return diagnose(query({})); }
  nlohmann::json sessions_json() const;

  uint64_t drops() const { return drops_.load(std::memory_order_relaxed); }
  uint64_t rotations() const { return rotations_.load(std::memory_order_relaxed); }
  uint64_t recorded() const { return next_.load(std::memory_order_relaxed) - 1; }
  size_t capacity() const { return capacity_; }
  // Waits until the file has every event recorded before the call (tests, shutdown).
  void flush();

 private:
  struct Slot {
    std::atomic<bool> busy{false};
    uint64_t seq = 0;  // the event's seq; 0: never written
    CallEvent ev;
    void lock();
    void unlock() { busy.store(false, std::memory_order_release); }
  };
  bool copy(uint64_t seq, CallEvent& out) const;  // false: not there (overwritten or not yet written)
  void writer_loop();
  void drain();  // writer thread: the file gets events up to the newest written one
  // Writer thread: one whole line into the file, rotating first when it would pass the cap.
  // false: the disk refused it (the caller counts it as dropped).
  bool write_line(const std::string& line);
  void rotate();
  void note_dropped(uint64_t n);  // counts them and leaves a marker line in the file

  const size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{1};
  std::atomic<uint64_t> hidden_{0};  // clear(): seqs up to this are hidden from queries
  std::atomic<uint64_t> drops_{0};

  std::atomic<uint64_t> rotations_{0};

  // The file writer (not on the hot path).
  std::string path_;
  FileLimits limits_;
  uint64_t file_bytes_ = 0;  // bytes written to the current file
  std::FILE* file_ = nullptr;
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  uint64_t written_ = 0;   // events up to this seq are in the file or counted as dropped
  uint64_t flush_to_ = 0;  // flush() asked for this seq
};

}  // namespace perfsim::journal
