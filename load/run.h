// A load run: N collectors polling every host of a fleet the way monitoring collectors do, with
// the recorder's own winreg client (recorder/client.h over any Channel: ncacn_ip_tcp or SMB), and
// what it measured per host and overall.
//
// Model (README.md): each collector keeps a session to each host (collectors x hosts sessions):
// connect and bind, OpenHKPD, then every `interval` one poll = a QueryValue of each value in order,
// its buffer grown after ERROR_MORE_DATA by `growth` and remembered for the next poll, as PDH
// does; `reconnect` opens and closes the session around every poll instead. A session whose call
// fails (a fault, a time-out, a reset) is dropped and made again at its next poll, as a collector
// reconnects. Polls are timers on one Boost.Asio io_context; `threads` workers run them, each poll's
// calls blocking its worker (so at most `threads` calls are in flight). Interval 0: every session
// polls again as soon as its poll ends (closed loop, for saturating a server).
//
// Bounds: sessions, threads, values and the duration are capped (kMax*); every network wait is
// bounded by `timeout`; memory is per host (a LatencyHistogram) and per session (a connection),
// never per call. After `duration` no poll starts; polls in flight finish, then each kept
// session's HKPD handle is closed (CloseKey, counted) and its connection dropped.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "recorder/channel.h"
#include "recorder/client.h"
#include "load/latency.h"
#include "load/targets.h"

namespace perfsim::load {

inline constexpr uint32_t kMaxSessions = 100000;
inline constexpr uint32_t kMaxThreads = 1024;
inline constexpr size_t kMaxValues = 16;
inline constexpr double kMaxDurationS = 86400;  // a day

// Makes a bound winreg channel to a host (cli/target.h's connect_target over TCP or SMB): the
// caller decides transport and credentials, this library only counts and schedules.
using Connect = std::function<Status(const LoadHost&, std::chrono::milliseconds, std::unique_ptr<recorder::Channel>&)>;

struct LoadConfig {
  std::vector<LoadHost> hosts;
  uint32_t collectors = 1;                   // sessions per host
  double interval_s = 0;                     // between a session's poll starts; 0: back to back
  double duration_s = 10;                    // no poll starts after this
  std::vector<std::string> values;           // empty: Global
  recorder::Growth growth;                   // initial buffer, growth, tries
  bool reconnect = false;                    // a new session for every poll
  uint32_t threads = 0;                      // 0: default_threads()
  std::chrono::milliseconds timeout{10000};  // every connect and call
};

// min(sessions, max(4, 4 x cores), 256): enough calls in flight to keep a server's cores busy.
uint32_t default_threads(uint64_t sessions);
// InvalidArgument naming the option and what to write (a usage error).
Status check_config(const LoadConfig& c);

struct Figures {
  uint64_t calls = 0;  // winreg calls made (answered or failed), every opnum
  uint64_t polls = 0;
  uint64_t late_polls = 0;  // started more than an interval after they were due: the collector fell behind
  uint64_t bytes = 0;       // value bytes answered
  uint64_t connects = 0;    // sessions made (connect + bind)
  uint64_t connect_errors = 0;
  uint64_t call_errors = 0;                   // faults, time-outs, resets: the call got no answer
  uint64_t werr_errors = 0;                   // answered with an error status (ERROR_MORE_DATA not counted)
  std::map<std::string, uint64_t> by_status;  // werr_errors by WERROR name
  LatencyHistogram latency;                   // every call, answered or not
  std::string first_error;                    // the first failure's message
  uint64_t errors() const { return connect_errors + call_errors + werr_errors; }
  void merge(const Figures& o);
};

struct HostFigures {
  LoadHost host;
  Figures f;
};

struct LoadReport {
  uint64_t sessions = 0;
  uint32_t threads = 0;
  double elapsed_s = 0;  // start to the last close
  Figures overall;
  std::vector<HostFigures> hosts;  // in the configuration's order
};

struct Tick {
  double elapsed_s = 0;
  uint64_t calls = 0, errors = 0;
  double calls_per_s = 0;  // over the last tick
};

// Runs the load; `tick` (may be empty) is called about once a second from the calling thread.
// Fails only for a configuration check_config refuses or a machine limit (open files); hosts that
// cannot be reached or answer errors are counted, not failures.
Status run_load(const LoadConfig& c, const Connect& connect, const std::function<void(const Tick&)>& tick,
                LoadReport& out);

// --json's document and the text report (README.md shows both); `per_host_lines` bounds the
// text's host table (the hosts with errors first, then the slowest p99).
nlohmann::json report_json(const LoadConfig& c, const LoadReport& r);
std::string report_text(const LoadConfig& c, const LoadReport& r, size_t per_host_lines = 20);

}  // namespace perfsim::load
