#include "load/run.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <condition_variable>
#include <fmt/core.h>
#include <mutex>
#include <thread>

#include "windows/constants.h"
#include "winreg/codec.h"

namespace perfsim::load {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

// One host's figures; every session to it adds under the lock.
struct HostState {
  std::mutex mu;
  Figures f;
};

void note_error(Figures& f, const std::string& message) {
  if (f.first_error.empty()) f.first_error = message;
}

// Counts and times every call a session's client makes, whatever it is (OpenHKPD, each QueryValue
// of a buffer's growth, CloseKey), and marks the session when a call got no answer.
class TimedChannel final : public recorder::Channel {
 public:
  TimedChannel(std::unique_ptr<recorder::Channel> inner, HostState& host, std::atomic<uint64_t>& calls,
               std::atomic<uint64_t>& errors, bool& failed)
      : inner_(std::move(inner)), host_(host), calls_(calls), errors_(errors), failed_(failed) {}

  Status call(uint16_t opnum, ByteView stub, Bytes& out) override {
    const auto t0 = Clock::now();
    Status s = inner_->call(opnum, stub, out);
    const uint64_t us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
    calls_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(host_.mu);
    ++host_.f.calls;
    host_.f.latency.add(us);
    if (!s.ok()) {
      failed_ = true;
      ++host_.f.call_errors;
      errors_.fetch_add(1, std::memory_order_relaxed);
      note_error(host_.f, s.message());
    }
    return s;
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<recorder::Channel> inner_;
  HostState& host_;
  std::atomic<uint64_t>& calls_;
  std::atomic<uint64_t>& errors_;
  bool& failed_;
};

struct Session {
  size_t host = 0;
  std::unique_ptr<recorder::WinregClient> client;
  winreg::PolicyHandle hkpd;
  bool call_failed = false;
  std::vector<uint32_t> buffers;  // per value: the buffer that last worked (0: the growth's initial)
  Clock::time_point due;
  asio::steady_timer timer;
  Session(asio::io_context& ioc, size_t h, size_t values) : host(h), buffers(values, 0), timer(ioc) {}
};

class Runner {
 public:
  Runner(const LoadConfig& c, const Connect& connect)
      : cfg_(c),
        connect_(connect),
        hosts_(c.hosts.size()),
        values_(c.values.empty() ? std::vector<std::string>{"Global"} : c.values),
        interval_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.interval_s))) {}

  void run(uint32_t threads, const std::function<void(const Tick&)>& tick, LoadReport& out) {
    const uint64_t n = uint64_t(cfg_.hosts.size()) * cfg_.collectors;
    start_ = Clock::now();
    end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg_.duration_s));
    remaining_ = n;
    // Collector-major, so consecutive start times go to different hosts; with an interval the
    // starts are spread over it, as collectors started at different times are.
    for (uint64_t j = 0; j < n; ++j) {
      sessions_.push_back(std::make_unique<Session>(ioc_, size_t(j % cfg_.hosts.size()), values_.size()));
      Session& s = *sessions_.back();
      s.due = start_ + std::chrono::duration_cast<Clock::duration>(interval_ * (double(j) / double(n)));
      schedule(s);
    }
    std::vector<std::thread> workers;
    for (uint32_t i = 0; i < threads; ++i) workers.emplace_back([this] { ioc_.run(); });
    watch(tick);
    for (std::thread& t : workers) t.join();
    out.sessions = n;
    out.threads = threads;
    out.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
    for (size_t i = 0; i < hosts_.size(); ++i) {
      out.hosts.push_back({cfg_.hosts[i], hosts_[i].f});
      out.overall.merge(hosts_[i].f);
    }
  }

 private:
  void schedule(Session& s) {
    if (s.due >= end_) {  // no poll of it starts within the run: close now, not when it would have been due
      asio::post(ioc_, [this, &s] { finish(s); });
      return;
    }
    if (s.due <= Clock::now()) {
      asio::post(ioc_, [this, &s] { on_due(s); });
      return;
    }
    s.timer.expires_at(s.due);
    s.timer.async_wait([this, &s](const boost::system::error_code&) { on_due(s); });
  }

  void on_due(Session& s) {
    const auto started = Clock::now();
    if (started >= end_) return finish(s);
    {
      std::lock_guard lock(hosts_[s.host].mu);
      ++hosts_[s.host].f.polls;
      if (cfg_.interval_s > 0 && started - s.due > interval_) ++hosts_[s.host].f.late_polls;
    }
    poll(s);
    s.due = std::max(s.due + interval_, started);
    schedule(s);
  }

  void poll(Session& s) {
    if (!s.client && !open(s)) return;
    HostState& h = hosts_[s.host];
    for (size_t i = 0; i < values_.size(); ++i) {
      recorder::Growth g = cfg_.growth;
      if (s.buffers[i]) g.initial = s.buffers[i];
      recorder::ValueResult r;
      s.call_failed = false;
      const Status st = s.client->query_value_growing(s.hkpd, values_[i], g, r);
      if (s.call_failed) return drop(s);  // counted by the channel; made again at the next poll
      if (st.ok() && r.status == 0) {
        s.buffers[i] = r.last_offered;
        std::lock_guard lock(h.mu);
        h.f.bytes += r.data.size();
        continue;
      }
      count_answer_error(h, windows::werror_name(r.status),
                         values_[i] + ": " + (st.ok() ? windows::werror_name(r.status) : st.message()));
    }
    if (cfg_.reconnect) close(s);
  }

  bool open(Session& s) {
    HostState& h = hosts_[s.host];
    std::unique_ptr<recorder::Channel> ch;
    Status st;
    try {
      st = connect_(cfg_.hosts[s.host], cfg_.timeout, ch);
    } catch (const std::exception& e) {  // Asio throws where it cannot make a descriptor (EMFILE)
      st = Status::IOError(std::string("connect: ") + e.what());
    }
    {
      std::lock_guard lock(h.mu);
      ++h.f.connects;
      if (!st.ok()) {
        ++h.f.connect_errors;
        note_error(h.f, st.message());
      }
    }
    if (!st.ok()) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    s.call_failed = false;
    s.client = std::make_unique<recorder::WinregClient>(
        std::make_unique<TimedChannel>(std::move(ch), h, calls_, errors_, s.call_failed));
    const Status o = s.client->open_hive(winreg::kOpenHKPD, s.hkpd);
    if (o.ok()) return true;
    // open_hive says "open hive failed: WERR_..." for an answered refusal.
    if (!s.call_failed) {
      const std::string m = o.message(), prefix = "open hive failed: ";
      count_answer_error(h, m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m, "OpenHKPD: " + m);
    }
    drop(s);
    return false;
  }

  void count_answer_error(HostState& h, const std::string& status, const std::string& message) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(h.mu);
    ++h.f.werr_errors;
    ++h.f.by_status[status];
    note_error(h.f, message);
  }

  void close(Session& s) {
    if (!s.client) return;
    uint32_t werr = 0;
    static_cast<void>(s.client->close_key(s.hkpd, werr));  // counted by the channel; the session ends anyway
    drop(s);
  }
  void drop(Session& s) { s.client.reset(); }

  void finish(Session& s) {
    close(s);
    std::lock_guard lock(done_mu_);
    if (--remaining_ == 0) done_.notify_all();
  }

  // The calling thread: a tick a second until every session has finished.
  void watch(const std::function<void(const Tick&)>& tick) {
    uint64_t last_calls = 0;
    auto last = start_;
    std::unique_lock lock(done_mu_);
    while (!done_.wait_for(lock, std::chrono::seconds(1), [this] { return remaining_ == 0; })) {
      if (!tick) continue;
      const auto now = Clock::now();
      Tick t;
      t.elapsed_s = std::chrono::duration<double>(now - start_).count();
      t.calls = calls_.load(std::memory_order_relaxed);
      t.errors = errors_.load(std::memory_order_relaxed);
      t.calls_per_s = double(t.calls - last_calls) / std::max(1e-9, std::chrono::duration<double>(now - last).count());
      last_calls = t.calls;
      last = now;
      lock.unlock();
      tick(t);
      lock.lock();
    }
  }

  const LoadConfig& cfg_;
  const Connect& connect_;
  std::vector<HostState> hosts_;
  std::vector<std::string> values_;
  Clock::duration interval_;
  asio::io_context ioc_;
  std::vector<std::unique_ptr<Session>> sessions_;
  Clock::time_point start_, end_;
  std::atomic<uint64_t> calls_{0}, errors_{0};
  std::mutex done_mu_;
  std::condition_variable done_;
  uint64_t remaining_ = 0;
};

// Descriptors a session holds while connected: its socket and its channel's own event loop (an
// epoll, an eventfd and a timerfd: recorder/tcp_channel.cpp); 2,000 sessions held 8,008 (issue 57).
constexpr uint64_t kFilesPerSession = 4;

// Kept sessions hold kFilesPerSession each: the soft open-file limit is raised to the hard one, and
// a run that still would not fit is refused before it starts rather than failing connects half-way.
Status check_open_files(uint64_t needed) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return Status::Ok();
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < needed && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, needed);
    static_cast<void>(::setrlimit(RLIMIT_NOFILE, &lim));
    static_cast<void>(::getrlimit(RLIMIT_NOFILE, &lim));
  }
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < needed)
    return Status::InvalidArgument(fmt::format(
        "this run needs about {} open files ({} per kept session) but the limit is {}: raise it (ulimit -n), "
        "poll fewer hosts or collectors, or give --reconnect (a socket per thread)",
        needed, kFilesPerSession, uint64_t(lim.rlim_cur)));
  return Status::Ok();
}

}  // namespace

void Figures::merge(const Figures& o) {
  calls += o.calls;
  polls += o.polls;
  late_polls += o.late_polls;
  bytes += o.bytes;
  connects += o.connects;
  connect_errors += o.connect_errors;
  call_errors += o.call_errors;
  werr_errors += o.werr_errors;
  for (const auto& [k, v] : o.by_status) by_status[k] += v;
  latency.merge(o.latency);
  if (first_error.empty()) first_error = o.first_error;
}

uint32_t default_threads(uint64_t sessions) {
  const uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return uint32_t(std::max<uint64_t>(1, std::min<uint64_t>({sessions, std::max<uint64_t>(4, 4 * cores), 256})));
}

Status check_config(const LoadConfig& c) {
  if (c.hosts.empty()) return Status::InvalidArgument("no hosts to poll: give a fleet file or ADDR-ADDR:PORT");
  if (c.collectors == 0) return Status::InvalidArgument("--collectors must be at least 1, e.g. --collectors 4");
  const uint64_t sessions = uint64_t(c.hosts.size()) * c.collectors;
  if (sessions > kMaxSessions)
    return Status::InvalidArgument(
        fmt::format("{} hosts x {} collectors = {} sessions; at most {}: poll fewer hosts "
                    "or give fewer --collectors",
                    c.hosts.size(), c.collectors, sessions, kMaxSessions));
  if (c.threads > kMaxThreads)
    return Status::InvalidArgument(fmt::format("--threads {}: at most {}", c.threads, kMaxThreads));
  if (!(c.duration_s > 0 && c.duration_s <= kMaxDurationS))
    return Status::InvalidArgument(
        fmt::format("--duration must be more than 0 and at most {} s (a day), e.g. --duration 30s", kMaxDurationS));
  if (!(c.interval_s >= 0 && c.interval_s <= kMaxDurationS))
    return Status::InvalidArgument("--interval must be 0 (back to back) up to a day, e.g. --interval 15s");
  if (c.values.size() > kMaxValues)
    return Status::InvalidArgument(fmt::format("{} --query values; at most {}", c.values.size(), kMaxValues));
  for (const std::string& v : c.values)
    if (v.empty()) return Status::InvalidArgument("--query needs a value name: Global, Costly, 238, \"238 230\"");
  if (c.timeout.count() <= 0) return Status::InvalidArgument("--timeout must be more than 0, e.g. --timeout 10s");
  return Status::Ok();
}

Status run_load(const LoadConfig& c, const Connect& connect, const std::function<void(const Tick&)>& tick,
                LoadReport& out) {
  if (Status s = check_config(c); !s.ok()) return s;
  const uint64_t sessions = uint64_t(c.hosts.size()) * c.collectors;
  const uint32_t threads = c.threads ? uint32_t(std::min<uint64_t>(c.threads, sessions)) : default_threads(sessions);
  if (Status s = check_open_files((c.reconnect ? threads : sessions) * kFilesPerSession + threads + 64); !s.ok())
    return s;
  out = LoadReport{};
  Runner(c, connect).run(threads, tick, out);
  return Status::Ok();
}

}  // namespace perfsim::load
