// A writer process killed in the middle of writing leaves a capture that reads back up to its last
// complete record. The writer is a real separate process (fork + exec). SIGKILL rounds kill it after
// a random delay: most land between records, some inside a write(2). Because a tear by SIGKILL is
// left to chance, file-size-limit rounds make it certain: with RLIMIT_FSIZE set, the kernel cuts the
// write that crosses the limit short and kills the writer with SIGXFSZ on its next write, so the
// file ends inside a record every time (setrlimit(2), "RLIMIT_FSIZE").
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <random>
#include <thread>

#include "captures/reader.h"
#include "captures/writer.h"
#include "sample_data.h"

using namespace perfsim;
using namespace perfsim::captures;

namespace {

constexpr size_t kGlobalSlots = 60000;  // ~480 KB "Global" payloads: writes long enough to be hit

// Starts the writer, waits for `min_records` finished appends, sleeps `delay`, kills it.
// Returns how many appends it had reported.
size_t run_and_kill(const std::string& path, size_t min_records, std::chrono::microseconds delay,
                    rlim_t file_size_limit = RLIM_INFINITY) {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    const rlimit lim{file_size_limit, file_size_limit};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(126);
    ::execl(KILL_WRITER_PATH, KILL_WRITER_PATH, path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  FILE* reports = ::fdopen(out[0], "r");
  size_t reported = 0, n = 0;
  const bool by_limit = file_size_limit != RLIM_INFINITY;
  // Under a file size limit the writer dies by itself: read its reports to the end.
  while ((by_limit || reported < min_records) && std::fscanf(reports, "%zu", &n) == 1) reported = n;
  if (!by_limit) {
    std::this_thread::sleep_for(delay);
    ::kill(pid, SIGKILL);
  }
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  std::fclose(reports);
  REQUIRE(WIFSIGNALED(wstatus));
  REQUIRE(WTERMSIG(wstatus) == (by_limit ? SIGXFSZ : SIGKILL));
  return reported;
}

// Where the last whole record of a scanned capture ends.
uint64_t end_of_last_record(const std::string& path, const Reader& r) {
  std::ifstream f(path, std::ios::binary);
  uint8_t len[4] = {};
  f.seekg(std::streamoff(r.records().back().offset + 8));
  f.read(reinterpret_cast<char*>(len), 4);
  return r.records().back().offset + kRecordHeaderSize + load_le32(len);
}

// Every record read back holds what the generator produced for its tick.
void check_records_match_generator(Reader& r) {
  std::map<std::pair<uint32_t, std::string>, QueryRecord> want;
  for (uint32_t t = 0; t <= r.records().back().tick; ++t)
    for (QueryRecord& q : testdata::tick_records(t, kGlobalSlots)) want[{t, q.value_name}] = std::move(q);
  for (size_t i = 0; i < r.records().size(); ++i) {
    QueryRecord got;
    REQUIRE(r.read_record(i, got).ok());
    const QueryRecord& w = want.at({got.tick, got.value_name});
    CHECK(got.payload == w.payload);
    CHECK(got.size == w.size);
    CHECK(got.status == w.status);
  }
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
    if (!r->damage().ok())
      CHECK(r->damage().message().rfind("at offset " + std::to_string(end_of_last_record(path, *r)) + ": torn tail",
                                        0) == 0);
    check_records_match_generator(*r);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a writer killed inside a write(2) leaves a torn tail that is reported and cut off") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("perfsim_cap_torn_" + std::to_string(::getpid()))).string();
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 4; ++round) {
    const rlim_t limit = std::uniform_int_distribution<rlim_t>(1 << 20, 4 << 20)(rng);
    const size_t reported = run_and_kill(path, 0, {}, limit);
    CAPTURE(round, limit, reported);
    REQUIRE(reported >= 1);
    REQUIRE(std::filesystem::file_size(path) == limit);  // the kernel stopped the write at the limit

    std::unique_ptr<Reader> r;
    REQUIRE(Reader::open(path, r).ok());
    CHECK_FALSE(r->used_index());
    CHECK(r->records().size() == reported);  // every finished append, and not the torn one
    const uint64_t tail = end_of_last_record(path, *r);
    REQUIRE(tail < limit);  // the file does end inside a record
    REQUIRE_FALSE(r->damage().ok());
    CHECK(r->damage().message().rfind("at offset " + std::to_string(tail) + ": torn tail", 0) == 0);
    check_records_match_generator(*r);
  }
  std::filesystem::remove(path);
}

// Issue 44: an exception out of the write (std::bad_alloc importing a huge perfmon log, nlohmann's
// type_error in redact) went past write_replacing and left PATH.tmp.PID behind.
TEST_CASE("write_replacing removes its temporary file when the write throws, and rethrows") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("perfsim-replacing-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "out.perfcap").string();
  std::string tmp;
  CHECK_THROWS_AS(perfsim::captures::write_replacing(out,
                                                     [&](const std::string& t) -> perfsim::Status {
                                                       tmp = t;
                                                       std::ofstream(t) << "half a capture";
                                                       throw std::bad_alloc();
                                                     }),
                  std::bad_alloc);
  CHECK_FALSE(tmp.empty());
  CHECK_FALSE(fs::exists(tmp));
  CHECK_FALSE(fs::exists(out));
  fs::remove_all(dir);
}
