// A writer process killed with SIGKILL in the middle of writing leaves a capture that reads back
// up to its last complete record. The writer is a real separate process (fork + exec); each round
// kills it after a different random delay so some kills land inside a write(2) (a torn tail) and
// some between records. Every round must read back correctly either way.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "captures/reader.h"
#include "sample_data.h"

using namespace perfsim;
using namespace perfsim::captures;

namespace {

constexpr size_t kGlobalSlots = 60000;  // ~480 KB "Global" payloads: writes long enough to be hit

// Starts the writer, waits for `min_records` finished appends, sleeps `delay`, kills it.
// Returns how many appends it had reported.
size_t run_and_kill(const std::string& path, size_t min_records, std::chrono::microseconds delay) {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    ::execl(KILL_WRITER_PATH, KILL_WRITER_PATH, path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  FILE* reports = ::fdopen(out[0], "r");
  size_t reported = 0, n = 0;
  while (reported < min_records && std::fscanf(reports, "%zu", &n) == 1) reported = n;
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  std::fclose(reports);
  REQUIRE(WIFSIGNALED(wstatus));
  REQUIRE(WTERMSIG(wstatus) == SIGKILL);
  return reported;
}

}  // namespace

TEST_CASE("a capture whose writer was SIGKILLed reads up to its last complete record") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("perfsim_cap_killed_" + std::to_string(::getpid()))).string();
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 12; ++round) {
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 20000)(rng));
    const size_t reported = run_and_kill(path, 20, delay);
    CAPTURE(round, delay.count(), reported);
    REQUIRE(reported >= 20);

    std::unique_ptr<Reader> r;
    REQUIRE(Reader::open(path, r).ok());
    CHECK_FALSE(r->used_index());
    // Every append the writer finished before the kill is in the file.
    REQUIRE(r->records().size() >= reported);
    // A kill inside a write leaves a torn tail, reported at the offset where the last whole record ends.
    if (!r->damage().ok()) {
      std::ifstream f(path, std::ios::binary);
      uint8_t len[4] = {};
      f.seekg(std::streamoff(r->records().back().offset + 8));
      f.read(reinterpret_cast<char*>(len), 4);
      const uint64_t tail = r->records().back().offset + kRecordHeaderSize + load_le32(len);
      CHECK(r->damage().message().rfind("at offset " + std::to_string(tail) + ": torn tail", 0) == 0);
    }
    // Each record holds what the generator produced for its tick.
    std::map<std::pair<uint32_t, std::string>, QueryRecord> want;
    for (uint32_t t = 0; t <= r->records().back().tick; ++t)
      for (QueryRecord& q : testdata::tick_records(t, kGlobalSlots)) want[{t, q.value_name}] = std::move(q);
    for (size_t i = 0; i < r->records().size(); ++i) {
      QueryRecord got;
      REQUIRE(r->read_record(i, got).ok());
      const QueryRecord& w = want.at({got.tick, got.value_name});
      CHECK(got.payload == w.payload);
      CHECK(got.size == w.size);
      CHECK(got.status == w.status);
    }
  }
  std::filesystem::remove(path);
}
