#include "replayer/host.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <tuple>

#include <fmt/core.h>

#include "captures/registry_values.h"
#include "core/utf16.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "perfdata/view.h"
#include "perfdata/winperf.h"
#include "replayer/limits.h"
#include "replayer/quirk_engine.h"
#include "windows/constants.h"

namespace perfsim::replayer {
namespace {

namespace wp = perfsim::winperf;
namespace pd = perfsim::perfdata;
constexpr int64_t kFiletimeUnixEpoch = 116444736000000000;  // 1970-01-01 as FILETIME

int64_t wall_filetime() {
  const auto since = std::chrono::system_clock::now().time_since_epoch();
  return kFiletimeUnixEpoch + std::chrono::duration_cast<std::chrono::microseconds>(since).count() * 10;
}

// Ticks of a `freq` Hz clock in `t100` units of 100 ns (double: freq * t overflows int64).
// Saturates: a recorded PerfFreq may be any 64-bit value (outside input).
int64_t ticks_of(int64_t t100, uint64_t freq) {
  const double v = double(t100) * double(freq) / 1e7;
  return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : int64_t(v);
}

}  // namespace

const char* between_name(Between b) { return b == Between::kStep ? "step" : "interpolate"; }

void store_systemtime(uint8_t* out, int64_t ft) {
  const int64_t ms_total = ft / 10000;
  int64_t days = ms_total / 86400000;  // since 1601-01-01, a Monday
  const int64_t ms = ms_total % 86400000;
  const int dow = int((days + 1) % 7);
  // Civil date from days (Howard Hinnant's algorithm), shifted to the 0000-03-01 era base.
  days += 584694;  // 1601-01-01 -> days since 0000-03-01
  const int64_t era = days / 146097, doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  const uint16_t f[8] = {uint16_t(y),
                         uint16_t(m),
                         uint16_t(dow),
                         uint16_t(d),
                         uint16_t(ms / 3600000),
                         uint16_t(ms / 60000 % 60),
                         uint16_t(ms / 1000 % 60),
                         uint16_t(ms % 1000)};
  for (int i = 0; i < 8; ++i) store_le16(out + 2 * i, f[i]);
}

ValueAnswer rrp_exact(ValueContent c, BufferOffer offer) {
  ValueAnswer a;
  a.status = c.status;
  a.type = c.type;
  if (c.status != windows::kErrorSuccess) return a;
  a.size = uint32_t(c.data.size());
  if (!offer.has_buffer) return a;
  if (offer.size < c.data.size()) {
    a.status = windows::kErrorMoreData;
    return a;
  }
  a.data = std::move(c.data);
  return a;
}

Status SimulatedHost::load(const captures::Capture& cap, const HostOptions& opt, std::shared_ptr<SimulatedHost>& out) {
  std::shared_ptr<const Recording> rec;
  if (Status s = build_recording(cap, rec); !s.ok()) return s;
  return create(std::move(rec), opt, out);
}

std::string SimulatedHost::netbios_name() const {
  std::string n = name_;
  for (char& c : n) c = char(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

Status SimulatedHost::create(std::shared_ptr<const Recording> rec, const HostOptions& opt,
                             std::shared_ptr<SimulatedHost>& out) {
  if (!rec || rec->tick_count() == 0) return Status::InvalidArgument("recording holds no samples");
  if (opt.quirks.content.any()) {  // this host's own rewritten copy (content_quirks.h), in memory
    captures::Capture cap;
    if (Status s = rec->load_capture(cap); !s.ok()) return s;
    if (Status s = apply_content_quirks(opt.quirks.content, cap); !s.ok()) return s;
    if (Status s = build_recording(std::move(cap), rec); !s.ok()) return s;
  }
  if (Status s = config::check_bounds("timeline speed", opt.speed, limits::kSpeed, limits::kSpeedUnit); !s.ok())
    return s;
  auto h = std::shared_ptr<SimulatedHost>(new SimulatedHost());
  h->rec_ = std::move(rec);
  static std::atomic<uint64_t> next_id{1};
  h->id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  h->opt_ = opt;
  h->name_ = opt.identity.system_name.empty() ? h->rec_->cap.host.name : opt.identity.system_name;
  h->computer_name_ = captures::reg_sz(h->netbios_name());
  if (!opt.identity.system_name.empty()) {
    for (char16_t c : utf8_to_utf16(opt.identity.system_name)) put_le16(h->name_region_, c);
    put_le16(h->name_region_, 0);
    pad_to(h->name_region_, 8);
  }
  if (opt.identity.variation > 0) {
    const double u = double(splitmix(opt.identity.seed) >> 11) / double(1ull << 53);
    h->scale_ppm_ = uint64_t(1e6 * (1.0 - std::min(opt.identity.variation, 1.0) * u));
  }
  const Registry& reg = h->rec_->registry;
  if (const RegKey* k = reg.open(reg.root(), windows::kPerflibKey))
    h->perflib_values_ = {k->value("Last Counter"), k->value("Last Help"), nullptr, nullptr};
  if (const RegKey* k = reg.open(reg.root(), std::string(windows::kPerflibKey) + "\\009")) {
    h->perflib_values_[2] = k->value("Counter");
    h->perflib_values_[3] = k->value("Help");
  }
  h->wall_shift_100ns_ = wall_filetime() + opt.identity.clock_offset_100ns - h->rec_->start_100ns;
  h->epoch_ns_ = steady_ns();
  h->quirk_versions_.push_back(std::make_unique<const Quirks>(opt.quirks));
  h->quirks_.store(h->quirk_versions_.back().get());
  h->frozen_tick_.store(opt.frozen_tick);
  h->set_realtime_clock(RealtimeClock{false, h->epoch_ns_, 0, opt.speed});
  for (const HostEvent& e : opt.events)
    if (Status s = h->add_event(e); !s.ok()) return s;
  out = std::move(h);
  return Status::Ok();
}

int64_t SimulatedHost::position_of(const Moment& m) const {
  const int64_t loop_len = std::max<int64_t>(rec_->loop_100ns, 1);
  return int64_t(m.loop) * loop_len + rec_->offsets()[std::min(m.tick, ticks() - 1)] + m.extra_100ns;
}

SimulatedHost::BootState SimulatedHost::boot_state() const {
  const std::shared_ptr<const EventTimeline> ev = events_.load();
  if (!ev) return {};
  const EventState st = ev->state_at(position_of(now()));
  return {st.boots, st.down};
}

Bytes SimulatedHost::data_at(const Quirks& q, std::string_view value, int64_t position) const {
  const ValueContent c = content(q, PerfKey::kData, value, realtime_moment(std::max<int64_t>(position, 0)));
  if (c.status != windows::kErrorSuccess || c.type != windows::kRegBinary) return {};
  return c.data.to_bytes();
}

Status SimulatedHost::add_event(HostEvent e, bool* over_budget) {
  if (over_budget) *over_budget = false;
  const std::lock_guard<std::mutex> lock(control_mu_);
  if (opt_.mode == TimelineMode::kFrozen)
    return Status::InvalidArgument(
        "a frozen timeline never reaches an event: serve the host on a realtime or step timeline");
  if (e.sample && *e.sample >= ticks())
    return Status::InvalidArgument("event sample=" + std::to_string(*e.sample) + ": the timeline has " +
                                   std::to_string(ticks()) + " samples, 0.." + std::to_string(ticks() - 1));
  if (event_list_.size() >= limits::kMaxEventsPerHost)
    return Status::InvalidArgument("a host keeps at most " + std::to_string(limits::kMaxEventsPerHost) +
                                   " events: serve it again to start a new timeline");
  if (!e.at_s && !e.sample) e.at_s = double(position_of(now())) / 1e7;  // now
  std::vector<HostEvent> list = event_list_;
  list.push_back(e);
  std::shared_ptr<EventTimeline> tl;
  if (Status s = prepare_events(list, tl); !s.ok()) return s;
  if (Status s = charge_events(*tl); !s.ok()) {
    if (over_budget) *over_budget = true;
    return s;
  }
  events_.store(std::move(tl));
  has_events_.store(true, std::memory_order_release);
  event_list_ = std::move(list);
  const std::lock_guard<std::mutex> handed(happened_mu_);
  handed_out_.push_back(false);
  for (const PreparedEvent& p : events_.load()->events)
    if (p.id + 1 == handed_out_.size()) unhanded_at_.store(std::min(unhanded_at_.load(), p.at_100ns));
  return Status::Ok();
}

// The new timeline's events against the host's and the process's bounds (limits.h); charged when
// within them. The old timeline's charge goes when it is freed (answers in flight may hold it).
Status SimulatedHost::charge_events(EventTimeline& tl) const {
  size_t bytes = 0;
  for (const PreparedEvent& p : tl.events) bytes += event_bytes(p);
  const auto mib = [](size_t n) { return fmt::format("{:.1f} MiB", double(n) / double(1 << 20)); };
  const EventBudget budget = event_budget();
  if (bytes > budget.per_host)
    return Status::InvalidArgument("the host's events would keep " + mib(bytes) + ", over the " + mib(budget.per_host) +
                                   " a host may keep (each lodctr or unlodctr keeps the name tables)");
  const std::shared_ptr<const EventTimeline> old = events_.load();
  const size_t in_use = event_bytes_in_use() - (old ? old->charge.bytes() : 0);
  if (in_use + bytes > budget.fleet)
    return Status::InvalidArgument("the events and boot tables of this run's hosts keep " + mib(in_use) +
                                   "; this one would take them past the " + mib(budget.fleet) +
                                   " they may keep together");
  tl.charge.set(bytes);
  return Status::Ok();
}
std::vector<SimulatedHost::Happened> SimulatedHost::take_happened() {
  const int64_t v = position_of(now());
  if (v < unhanded_at_.load(std::memory_order_relaxed)) return {};
  const std::lock_guard<std::mutex> lock(happened_mu_);
  const std::shared_ptr<const EventTimeline> tl = events_.load();  // under the lock: add_event updates after
  if (!tl) return {};
  const int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const double speed = opt_.mode == TimelineMode::kRealtime ? realtime_clock().speed : 0;
  std::vector<Happened> out;
  int64_t next = INT64_MAX;
  for (const PreparedEvent& p : tl->events) {
    if (p.id >= handed_out_.size() || handed_out_[p.id]) continue;
    if (p.at_100ns > v) {
      next = std::min(next, p.at_100ns);
      continue;
    }
    handed_out_[p.id] = true;
    Happened h{p.event, now_us};
    h.event.at_s = double(p.at_100ns) / 1e7;
    if (speed > 0) h.wall_us -= int64_t(double(v - p.at_100ns) / 10.0 / speed);  // recorded 100 ns -> real us
    out.push_back(std::move(h));
  }
  unhanded_at_.store(next);
  return out;
}

// Each event in position order, with what the earlier ones did in force: a reboot takes the raw
// counters at its moment (answers after it subtract them); a wrap takes the counters as served
// at its moment and one interval later (its offsets put each 32-bit one half that growth below
// 2^32).
Status SimulatedHost::prepare_events(const std::vector<HostEvent>& list, std::shared_ptr<EventTimeline>& out) {
  auto tl = std::make_shared<EventTimeline>();
  if (const captures::NameTable* nt = names("009")) {
    perfdata::NameTable t;
    if (perfdata::parse_names(nt->counter, t).ok())
      for (const perfdata::NameEntry& n : t.entries)
        if (n.text == u"ID Process" || n.text == u"Creating Process ID") tl->pid_counters.push_back(n.index);
    // The first of each: names repeat (a counter and an object may share one), the indices do not.
    for (const perfdata::NameEntry& n : t.entries) {
      if (n.text == u"ID Process" && !tl->id_process) tl->id_process = n.index;
      if (n.text == u"Process" && !tl->process_object) tl->process_object = n.index;
    }
  }
  // The names until the first lodctr/unlodctr: the English tables and Perflib's values as recorded
  // (Last Counter missing: the table's highest index; Last Help missing: one above it, as lodctr).
  NameVersion version;
  const captures::NameTable* english = names("009");
  if (english) {
    version.counter = english->counter;
    version.help = english->help;
    perfdata::NameTable t;
    if (perfdata::parse_names(english->counter, t).ok()) version.last_counter = t.highest_index();
  }
  auto dword = [](const RegValue* v, uint32_t fallback) {
    return v && v->data.size() >= 4 ? load_le32(v->data.data()) : fallback;
  };
  version.last_counter = dword(perflib_values_[0], version.last_counter);
  version.last_help = dword(perflib_values_[1], version.last_counter + 1);
  if (perflib_values_[2]) version.reg_counter = perflib_values_[2]->data;
  if (perflib_values_[3]) version.reg_help = perflib_values_[3]->data;
  std::vector<PreparedEvent> sorted;
  for (const HostEvent& e : list) {
    PreparedEvent p;
    p.event = e;
    p.id = uint32_t(sorted.size());
    p.at_100ns = e.sample ? rec_->offsets()[*e.sample] : int64_t(std::llround(e.at_s.value_or(0) * 1e7));
    // A step timeline moves only with answers, and a down host answers none: it comes straight back.
    const bool downs = e.kind == EventKind::kReboot && opt_.mode == TimelineMode::kRealtime;
    p.down_100ns = downs ? int64_t(std::llround(e.down_s * 1e7)) : 0;
    sorted.push_back(std::move(p));
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const PreparedEvent& a, const PreparedEvent& b) { return a.at_100ns < b.at_100ns; });
  const Quirks& q = quirks();
  for (PreparedEvent& p : sorted) {
    // A reboot's and a wrap's tables are made when answers need them (boot_values).
    if (p.event.kind == EventKind::kChurn) {
      Bytes b = data_at(q, "Global", p.at_100ns);
      std::shared_ptr<const BootValues> hold;
      apply_events(b, state_for(*tl, p.at_100ns, hold), *tl);
      if (Status s = plan_churn(b, p.event, *tl, p.churn); !s.ok()) return s;
    } else if (p.event.kind == EventKind::kLodctr || p.event.kind == EventKind::kUnlodctr) {
      if (!english) return Status::InvalidArgument("lodctr/unlodctr: the host has no English (009) name table");
      if (Status s = next_names(version, p.event, p.at_100ns, p.names); !s.ok()) return s;
      version = p.names;
    }
    tl->events.push_back(std::move(p));  // in position order: the next ones see it
  }
  tl->values.store(nullptr);  // made for a prefix of the events: answers see them all
  out = std::move(tl);
  return Status::Ok();
}

std::shared_ptr<const BootValues> SimulatedHost::make_boot_values(const EventTimeline& tl, size_t boot) const {
  auto bv = std::make_shared<BootValues>();
  bv->boot = boot;
  bv->events = tl.events.size();
  const Quirks& q = quirks();
  int64_t start = INT64_MIN, end = INT64_MAX;  // the boot, as state_at finds it
  if (boot != kNoBoot) {
    start = tl.events[boot].at_100ns;
    for (const char* v : {"Global", "Costly"}) collect_counters(data_at(q, v, start), bv->rebase);
  }
  for (const PreparedEvent& e : tl.events)
    if (e.event.kind == EventKind::kReboot && e.at_100ns > start) end = std::min(end, e.at_100ns);
  for (size_t i = 0; i < tl.events.size(); ++i) {
    const PreparedEvent& p = tl.events[i];
    if (p.event.kind != EventKind::kWrap || p.at_100ns < start || p.at_100ns >= end) continue;
    // One interval on: to the next recorded sample (at least a second).
    const Moment m = realtime_moment(p.at_100ns);
    const std::vector<int64_t>& t = rec_->offsets();
    const int64_t next = m.tick + 1 < ticks() ? t[m.tick + 1] : rec_->loop_100ns;
    const int64_t later = p.at_100ns + std::max<int64_t>(next - t[m.tick] - m.extra_100ns, 10000000);
    CounterValues at, then;
    for (const char* v : {"Global", "Costly"}) {
      for (auto [pos, out] : {std::pair{p.at_100ns, &at}, std::pair{later, &then}}) {
        Bytes b = data_at(q, v, pos);
        EventState st = tl.state_at(pos, i);  // the events before this one, its boot's earlier wraps
        st.values = bv.get();
        apply_events(b, st, tl);
        collect_counters(b, *out);
      }
    }
    add_wrap_offsets(bv->wraps, wrap_offsets(at, then));
  }
  bv->charge.set(counter_values_bytes(bv->rebase) + counter_values_bytes(bv->wraps));
  return bv;
}

std::shared_ptr<const BootValues> SimulatedHost::boot_values(const EventTimeline& tl, size_t boot) const {
  const auto fits = [&](const std::shared_ptr<const BootValues>& v) {
    return v && v->boot == boot && v->events == tl.events.size();
  };
  if (std::shared_ptr<const BootValues> v = tl.values.load(); fits(v)) return v;
  const std::lock_guard<std::mutex> lock(tl.values_mu);  // the first answer of a boot makes them
  std::shared_ptr<const BootValues> v = tl.values.load();
  if (!fits(v)) {
    v = make_boot_values(tl, boot);
    tl.values.store(v);
  }
  return v;
}

EventState SimulatedHost::state_for(const EventTimeline& tl, int64_t position,
                                    std::shared_ptr<const BootValues>& hold) const {
  EventState st = tl.state_at(position);
  if (st.boot || !st.wraps.empty()) {
    hold = boot_values(tl, st.boot_index);
    st.values = hold.get();
  }
  return st;
}

SimulatedHost::RealtimeClock SimulatedHost::realtime_clock() const {
  for (;;) {
    const uint64_t seq = clock_seq_.load(std::memory_order_acquire);
    const RealtimeClock c{paused_.load(std::memory_order_relaxed), base_ns_.load(std::memory_order_relaxed),
                          base_v_.load(std::memory_order_relaxed), speed_.load(std::memory_order_relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!(seq & 1) && clock_seq_.load(std::memory_order_relaxed) == seq) return c;
  }
}

void SimulatedHost::set_realtime_clock(const RealtimeClock& c) {
  const uint64_t seq = clock_seq_.load(std::memory_order_relaxed);
  clock_seq_.store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  paused_.store(c.paused, std::memory_order_relaxed);
  base_ns_.store(c.base_ns, std::memory_order_relaxed);
  base_v_.store(c.base_v, std::memory_order_relaxed);
  speed_.store(c.speed, std::memory_order_relaxed);
  clock_seq_.store(seq + 2, std::memory_order_release);
}

int64_t SimulatedHost::position(const RealtimeClock& c, int64_t now_ns) {
  return c.paused ? c.base_v : c.base_v + int64_t(double(now_ns - c.base_ns) / 100.0 * c.speed);
}

Moment SimulatedHost::now() const {
  const uint32_t n = ticks();
  switch (opt_.mode) {
    case TimelineMode::kFrozen:
      return Moment{std::min(frozen_tick_.load(std::memory_order_relaxed), n - 1), 0, 0, true};
    case TimelineMode::kStep: {
      const uint64_t s = step_.load(std::memory_order_relaxed);
      return Moment{uint32_t(s % n), s / n, 0, false};
    }
    case TimelineMode::kRealtime:
      break;
  }
  return realtime_moment(position(realtime_clock(), steady_ns()));
}

Moment SimulatedHost::realtime_moment(int64_t v) const {
  const uint32_t n = ticks();
  const std::vector<int64_t>& t = rec_->offsets();  // non-decreasing, t[0] = 0
  if (!opt_.loop && v >= t.back()) return Moment{n - 1, 0, v - t.back(), false};
  const int64_t loop_len = std::max<int64_t>(rec_->loop_100ns, 1);
  const int64_t r = v % loop_len;
  const uint32_t k = uint32_t(std::upper_bound(t.begin() + 1, t.end(), r) - t.begin()) - 1;
  return Moment{k, uint64_t(v / loop_len), r - t[k], false};
}

uint64_t SimulatedHost::between_fraction(const Moment& m) const {
  if (m.recorded || m.extra_100ns <= 0 || !interpolates()) return 0;
  const std::vector<int64_t>& t = rec_->offsets();
  const uint32_t n = ticks();
  if (m.tick + 1 >= n && !opt_.loop) return 0;  // no next tick: the last values hold
  // The interval to the next tick; after the last, the loop's wrap (as long as the first interval).
  const int64_t interval = m.tick + 1 < n ? t[m.tick + 1] - t[m.tick] : rec_->loop_100ns - t[m.tick];
  if (interval <= 0) return 0;
  constexpr uint64_t kOne = uint64_t(1) << 32;
  if (m.extra_100ns >= interval) return kOne - 1;  // a rounding at the tick's end: not past it
  return uint64_t((unsigned __int128)uint64_t(m.extra_100ns) * kOne / uint64_t(interval));
}

bool SimulatedHost::served(const Quirks& q, uint32_t index) const {
  if (!q.process_v1_disabled && q.timed_out_providers.empty()) return true;
  for (const perfdata::ObjectInfo& o : rec_->cap.catalog) {
    if (o.index != index) continue;
    if (q.process_v1_disabled && iequals(o.provider, "PerfProc")) return false;
    for (const std::string& p : q.timed_out_providers)
      if (iequals(o.provider, p)) return false;
  }
  return true;
}

// The objects a Global answer holds when quirks change it: the recorded ones (plus the costly
// sample's when the costly quirk is off), minus hidden providers.
std::vector<uint32_t> SimulatedHost::sample_objects(const Quirks& q, const Sample* global, const Sample* costly) const {
  std::vector<uint32_t> out;
  for (const ObjectSlice& s : global->objects) out.push_back(s.index);
  if (!q.costly && costly)
    for (const ObjectSlice& s : costly->objects) out.push_back(s.index);
  std::erase_if(out, [&](uint32_t i) { return !served(q, i); });
  return out;
}

const captures::NameTable* SimulatedHost::names(const std::string& lang) const {
  for (const captures::NameTable& t : rec_->cap.names)
    if (iequals(t.lang, lang)) return &t;
  return nullptr;
}

const captures::NameTable* SimulatedHost::names_for(PerfKey key, const perfdata::Query& q) const {
  return !q.lang.empty() ? names(q.lang) : key == PerfKey::kNlsText ? ui_names() : names("009");
}

bool SimulatedHost::event_names(const std::shared_ptr<const EventTimeline>& tl, const NameVersion& v, PerfKey key,
                                std::string_view value, ValueContent& c) const {
  const perfdata::Query q = perfdata::parse_query(value);
  if (q.kind != perfdata::QueryKind::kCounter && q.kind != perfdata::QueryKind::kHelp) return false;
  const captures::NameTable* nt = names_for(key, q);
  if (!nt || nt != names("009")) return false;  // lodctr events name in English only
  const Bytes& table = q.kind == perfdata::QueryKind::kCounter ? v.counter : v.help;
  c.status = windows::kErrorSuccess;
  c.type = windows::kRegMultiSz;
  c.data = SharedBytes(tl, table);
  return true;
}

SharedBytes SimulatedHost::value_data(const RegValue& v) const {
  if (v.host_name) return computer_name_;  // a copy: a few bytes
  const auto live = std::find(perflib_values_.begin(), perflib_values_.end(), &v);
  if (live != perflib_values_.end()) {
    const std::shared_ptr<const EventTimeline> tl = events_.load();
    if (const PreparedEvent* p = tl ? tl->names_at(position_of(now())) : nullptr) {
      const NameVersion& n = p->names;
      switch (live - perflib_values_.begin()) {
        case 0:
          return captures::reg_dword(n.last_counter);
        case 1:
          return captures::reg_dword(n.last_help);
        case 2:
          return SharedBytes(tl, n.reg_counter);
        default:
          return SharedBytes(tl, n.reg_help);
      }
    }
  }
  return SharedBytes(rec_, v.data);
}

const captures::NameTable* SimulatedHost::ui_names() const {
  if (const captures::NameTable* t = names("CurrentLanguage")) return t;
  const captures::NameTable* localized = nullptr;
  for (const captures::NameTable& t : rec_->cap.names) {
    if (t.lang == "009") continue;
    if (localized) return names("009");  // several languages: which is the user's is not recorded
    localized = &t;
  }
  return localized ? localized : names("009");
}

Bytes SimulatedHost::header(const Sample& base, const SeriesClock& c, const Moment& m) const {
  const ByteView p = base.payload;
  Bytes out;
  if (name_region_.empty()) {
    out.assign(p.begin(), p.begin() + base.header_length);
  } else {
    out.assign(p.begin(), p.begin() + wp::kDataBlockSize);
    out.insert(out.end(), name_region_.begin(), name_region_.end());
    size_t name_bytes = 0;
    while (name_bytes + 2 <= name_region_.size() && load_le16(&name_region_[name_bytes])) name_bytes += 2;
    const pd::MutableBlock b{out.data()};
    b.set_system_name(wp::kDataBlockSize, uint32_t(name_bytes + 2));
    b.set_header_length(uint32_t(out.size()));
  }
  if (m.recorded) return out;
  const pd::MutableBlock h{out.data()};
  h.set_perf_time(h.perf_time() + m.loop * c.perf_time_span + ticks_of(m.extra_100ns, h.perf_freq()));
  // Wrapping, as the clocks do (a recorded clock may be anything).
  const int64_t t100 = int64_t(h.perf_time_100ns() + uint64_t(wall_shift_100ns_) + m.loop * uint64_t(c.time100_span) +
                               uint64_t(m.extra_100ns));
  h.set_perf_time_100ns(uint64_t(t100));
  store_systemtime(h.system_time(), t100);
  return out;
}

namespace {

// How one answer moves its counters (see append_object).
struct Motion {
  uint64_t loop;   // completed loops of the timeline
  uint64_t frac;   // share of the step to the next tick, of 2^32
  uint64_t scale;  // the host's variation, ppm
};

// Moves the counters of one width from patch i on, while their bytes lie in the first `copied`
// bytes of the object copy at o; returns the first patch not applied (its bytes are not copied
// yet). The step's share is rounded down, so a counter stays an integer, never passes the next
// tick's value and never goes back as the fraction grows; the sum is taken in 64 bits and scaled
// before it is cut to the counter's width, as the answers have always been.
template <class T>
size_t move_counters(uint8_t* o, size_t copied, const PatchColumn<T>& c, size_t i, const Motion& mv) {
  const size_t n = c.offset.size();
  if (mv.loop == 0 && mv.scale == 1000000) {
    // Between two ticks of the first pass, unscaled: what a live host serves nearly always, so it
    // gets a loop of its own with nothing but the share. A 4-byte counter's step and the fraction
    // (at most 2^32) multiply within 64 bits; adding in T wraps as the 64-bit sum cut to T does.
    for (; i < n && c.offset[i] + sizeof(T) <= copied; ++i) {
      uint8_t* p = o + c.offset[i];
      const T share =
          sizeof(T) == 4 ? T((uint64_t(c.step[i]) * mv.frac) >> 32) : T(((unsigned __int128)c.step[i] * mv.frac) >> 32);
      store_le<T>(p, T(load_le<T>(p) + share));
    }
    return i;
  }
  for (; i < n && c.offset[i] + sizeof(T) <= copied; ++i) {
    uint8_t* p = o + c.offset[i];
    uint64_t v = load_le<T>(p) + uint64_t(((unsigned __int128)c.step[i] * mv.frac) >> 32);
    if (mv.loop) v += mv.loop * c.per_loop[i];
    if (mv.scale != 1000000) v = uint64_t((unsigned __int128)v * mv.scale / 1000000);
    store_le<T>(p, T(v));
  }
  return i;
}

}  // namespace

// Appends object `s` (its recorded bytes at src) to out, moved to m. When counters move, the
// copy goes a chunk at a time and each chunk's counters are patched right after it is copied,
// while it is in L1: patching after copying the whole (1 MB) answer reloaded every counter from
// memory, and those misses were most of an interpolated answer's time (bench/README.md (f)).
void SimulatedHost::append_object(Bytes& out, const uint8_t* src, const ObjectSlice& s, const Moment& m,
                                  uint64_t frac) const {
  constexpr size_t kChunk = 8192;  // a fraction of any L1d (32-48 KiB): the chunk is still there
  const size_t at = out.size();
  const bool moves = !m.recorded && (m.loop || scale_ppm_ != 1000000 || frac) && !s.counters.empty();
  const Motion mv{m.loop, frac, scale_ppm_};
  size_t narrow = 0, wide = 0;
  for (size_t done = 0; done < s.length;) {
    const size_t end = moves ? std::min<size_t>(s.length, done + kChunk) : s.length;
    out.insert(out.end(), src + done, src + end);
    if (moves) {
      uint8_t* o = out.data() + at;
      narrow = move_counters(o, end, s.counters.narrow, narrow, mv);
      wide = move_counters(o, end, s.counters.wide, wide, mv);
    }
    done = end;
  }
  if (m.recorded) return;
  const pd::MutableObject obj{out.data() + at};
  if (const uint64_t freq = obj.perf_freq())
    obj.set_perf_time(obj.perf_time() + m.loop * uint64_t(s.time_span) + ticks_of(m.extra_100ns, freq));
}

SharedBytes SimulatedHost::serve_sample(const SampleRef& v, const SeriesClock& clock, const Moment& m,
                                        uint64_t frac) const {
  const ByteView p = v->payload;
  if (!v->header_length || (m.recorded && name_region_.empty())) return share(v);
  Bytes out = header(*v, clock, m);
  out.reserve(out.size() + (p.size() - v->header_length));  // no reallocation while objects are appended
  const int64_t delta = int64_t(out.size()) - int64_t(v->header_length);
  // The objects lie one after another from HeaderLength (walk_sample); any bytes around them are
  // copied as recorded.
  size_t from = v->header_length;
  for (const ObjectSlice& s : v->objects) {
    out.insert(out.end(), p.begin() + from, p.begin() + s.offset);
    append_object(out, p.data() + s.offset, s, m, frac);
    from = s.offset + s.length;
  }
  out.insert(out.end(), p.begin() + from, p.end());
  const pd::MutableBlock b{out.data()};  // its TotalByteLength is still the recorded one
  b.set_total_byte_length(uint32_t(int64_t(b.total_byte_length()) + delta));
  return out;
}

Bytes SimulatedHost::assemble(const SampleRef& global, const SampleRef& costly, const std::vector<uint32_t>& indices,
                              const Moment& m, uint64_t frac) const {
  const Sample* base = global ? global.get() : costly.get();
  if (!base || base->header_length == 0) return {};
  Bytes out = header(*base, global ? rec_->global_clock : rec_->costly_clock, m);
  // Each object found once (Global's before Costly's), then their recorded sizes reserved at once:
  // appending them one by one reallocated the answer several times a call (bench/README.md, (b)).
  std::vector<std::pair<const Sample*, const ObjectSlice*>> found;
  found.reserve(indices.size());
  size_t total = out.size();
  for (uint32_t idx : indices) {
    for (const Sample* v : {global.get(), costly.get()}) {
      if (!v) continue;
      auto s = std::find_if(v->objects.begin(), v->objects.end(), [&](const ObjectSlice& o) { return o.index == idx; });
      if (s == v->objects.end()) continue;
      found.emplace_back(v, &*s);
      total += s->length;
      break;
    }
  }
  out.reserve(total);
  for (const auto& [v, s] : found) append_object(out, v->payload.data() + s->offset, *s, m, frac);
  const uint32_t count = uint32_t(found.size());
  const pd::MutableBlock b{out.data()};
  b.set_total_byte_length(uint32_t(out.size()));
  b.set_num_object_types(count);
  return out;
}

// object-count-lies: NumObjectTypes claims more objects than the answer holds.
ValueContent SimulatedHost::count_lies(const Quirks& q, ValueContent& c) const {
  if (q.object_count_extra && c.status == windows::kErrorSuccess && c.data.size() >= winperf::kDataBlockSize) {
    Bytes b = c.data.to_bytes();  // the shared bytes stay as recorded
    const pd::MutableBlock block{b.data()};
    block.set_num_object_types(block.num_object_types() + q.object_count_extra);
    c.data = std::move(b);
  }
  return std::move(c);
}

ValueContent SimulatedHost::content(PerfKey key, std::string_view value_name, const Moment& m) const {
  return content(quirks(), key, value_name, m);
}

ValueContent SimulatedHost::content(const Quirks& qk, PerfKey key, std::string_view value_name, const Moment& m) const {
  ValueContent c;
  const uint32_t pos = std::min(m.tick, ticks() - 1);
  // A value recorded under exactly this name is answered as recorded (real hosts' oddities); one
  // recorded only with the first sample (an odd name table) answers so at every tick. Only
  // HKEY_PERFORMANCE_DATA serves every recorded name: _TEXT and _NLSTEXT answer their name tables
  // (Counter, Help) and nothing else (Microsoft, RegQueryValueEx remarks; issue 54).
  const Selection& sel = selection(qk, value_name);
  const perfdata::Query& q = sel.query;
  const bool names_query = q.kind == perfdata::QueryKind::kCounter || q.kind == perfdata::QueryKind::kHelp;
  if (SampleRef r = key == PerfKey::kData || names_query ? rec_->other(pos, value_name) : nullptr) {
    c.status = r->status;
    c.type = r->reg_type;
    c.data = share(r);
    return c;
  }
  switch (q.kind) {
    case perfdata::QueryKind::kCounter:
    case perfdata::QueryKind::kHelp: {
      // A bare "Counter"/"Help" is English, except over HKEY_PERFORMANCE_NLSTEXT, which answers in
      // the user's UI language (Microsoft, "Retrieving Counter Names and Help Text").
      const captures::NameTable* nt = names_for(key, q);
      if (!nt) {
        c.status = windows::kErrorFileNotFound;
        return c;
      }
      c.type = windows::kRegMultiSz;
      c.data = share(q.kind == perfdata::QueryKind::kCounter ? nt->counter : nt->help);
      return c;
    }
    case perfdata::QueryKind::kExplain:
      c.status = windows::kErrorFileNotFound;  // no Explain texts are recorded
      return c;
    default:
      break;
  }
  if (key != PerfKey::kData) {
    c.status = windows::kErrorFileNotFound;
    return c;
  }
  // Samples are decoded (or found in the cache) only when the answer needs them.
  const uint64_t frac = between_fraction(m);
  const Patches need = patches_needed(m, frac);
  std::optional<SampleRef> global_s, costly_s;
  auto global = [&]() -> const SampleRef& {
    if (!global_s) global_s = rec_->sample(pos, Series::kGlobal, need);
    return *global_s;
  };
  auto costly = [&]() -> const SampleRef& {
    if (!costly_s) costly_s = rec_->sample(pos, Series::kCostly, need);
    return *costly_s;
  };
  const bool reshaped = !qk.costly || qk.process_v1_disabled || !qk.timed_out_providers.empty();
  if (q.kind == perfdata::QueryKind::kGlobal && reshaped && global() && global()->header_length) {
    // With the costly quirk on every index comes from Global: Costly is not decoded.
    const SampleRef extra = qk.costly ? nullptr : costly();
    c.data = assemble(global(), extra, sample_objects(qk, global().get(), extra.get()), m, frac);
    return count_lies(qk, c);
  }
  // A disabled or timed-out provider's objects vanish from Costly too, not only from Global.
  const bool hides = qk.process_v1_disabled || !qk.timed_out_providers.empty();
  if (q.kind == perfdata::QueryKind::kCostly && hides && costly() && costly()->header_length &&
      costly()->status == windows::kErrorSuccess) {
    std::vector<uint32_t> indices;
    for (const ObjectSlice& s : costly()->objects)
      if (served(qk, s.index)) indices.push_back(s.index);
    c.data = assemble(SampleRef{}, costly(), indices, m, frac);
    return count_lies(qk, c);
  }
  for (auto [kind, series, clock] : {std::tuple{perfdata::QueryKind::kGlobal, Series::kGlobal, &rec_->global_clock},
                                     std::tuple{perfdata::QueryKind::kCostly, Series::kCostly, &rec_->costly_clock}}) {
    if (q.kind != kind) continue;
    const SampleRef& view = series == Series::kGlobal ? global() : costly();
    if (!view) continue;
    c.status = view->status;
    c.type = view->reg_type;
    c.data = c.status == windows::kErrorSuccess ? serve_sample(view, *clock, m, frac) : share(view);
    return count_lies(qk, c);
  }
  c.data = assemble(global(), costly(), sel.indices, m, frac);
  return count_lies(qk, c);
}

void SimulatedHost::select(const Quirks& qk, std::string_view value_name, Selection& out) const {
  out.query = perfdata::parse_query(value_name);
  out.indices.clear();
  const perfdata::Query& q = out.query;
  if (q.kind == perfdata::QueryKind::kForeign && !iequals(q.foreign_host, name_)) return;
  out.indices = perfdata::select_objects(q, rec_->cap.catalog);
  // Without extra-objects only the named objects come back, not their provider's others.
  if (!qk.extra_objects && (q.kind == perfdata::QueryKind::kIndexList || q.kind == perfdata::QueryKind::kForeign))
    std::erase_if(out.indices,
                  [&](uint32_t i) { return std::find(q.indices.begin(), q.indices.end(), i) == q.indices.end(); });
  std::erase_if(out.indices, [&](uint32_t i) { return !served(qk, i); });
}

// selection()'s per-thread cache: direct-mapped, a slot per hash of host and name. Names longer
// than kSelectionMaxName are selected afresh each time, so the cache stays a few KiB per thread.
constexpr size_t kSelectionSlots = 64;
constexpr size_t kSelectionMaxName = 256;

const SimulatedHost::Selection& SimulatedHost::selection(const Quirks& qk, std::string_view value_name) const {
  struct Slot {
    uint64_t host = 0;  // 0: empty
    const void* quirks = nullptr;
    std::string name;
    Selection selection;
  };
  thread_local std::array<Slot, kSelectionSlots> slots;
  thread_local Selection uncached;
  if (value_name.size() > kSelectionMaxName) {
    select(qk, value_name, uncached);
    return uncached;
  }
  const size_t at = (std::hash<std::string_view>{}(value_name) ^ (id_ * 0x9E3779B97F4A7C15ull)) % kSelectionSlots;
  Slot& slot = slots[at];
  if (slot.host != id_ || slot.quirks != &qk || slot.name != value_name) {
    select(qk, value_name, slot.selection);
    slot.host = id_;
    slot.quirks = &qk;
    slot.name.assign(value_name);
  }
  return slot.selection;
}

ValueAnswer SimulatedHost::query(PerfKey key, std::string_view value_name, BufferOffer offer) {
  const Quirks& q = quirks();  // one snapshot for the whole call
  QuirkCall call;
  call.key = key;
  call.value_name = value_name;
  call.offer = offer;
  call.call = calls_.fetch_add(1, std::memory_order_relaxed);
  call.seed = opt_.identity.seed;
  if (refuse_call(q, call)) return std::move(call.answer);
  const Moment m = now();
  call.recording = rec_.get();
  call.position = std::min(m.tick, ticks() - 1);
  call.content = content(q, key, value_name, m);
  uint32_t event_bits = 0;
  if (const std::shared_ptr<const EventTimeline> ev = events()) {
    std::shared_ptr<const BootValues> hold;
    const EventState es = state_for(*ev, position_of(m), hold);
    ValueContent& c = call.content;
    if (es.any() && key == PerfKey::kData && c.status == windows::kErrorSuccess && c.type == windows::kRegBinary &&
        c.data.size()) {
      Bytes b = c.data.to_bytes();
      if (apply_events(b, es, *ev, value_name)) {
        c.data = std::move(b);
        event_bits = es.applied;
      }
    } else if (es.names && event_names(ev, es.names->names, key, value_name, c)) {
      event_bits = 1u << event_row(es.names->event.kind).applied_bit;
    }
  }
  shape_answer(q, call);
  if (const std::shared_ptr<const FaultPlan> plan = faults()) inject_faults(*plan, name_, call);
  ValueAnswer& a = call.answer;
  a.applied |= event_bits;
  if (a.status == windows::kErrorSuccess && a.type == windows::kRegBinary && a.data.size() && between_fraction(m))
    a.applied |= 1u << kAppliedBetween;
  // The next sample is decoded ahead, so a moving timeline does not wait on it.
  if (!m.recorded) {
    const bool wraps = m.tick + 1 >= ticks();
    const Moment next{wraps ? 0 : m.tick + 1, m.loop + (wraps && opt_.loop), 0, false};
    rec_->prefetch(next.tick, patches_needed(next, interpolates() ? 1 : 0));  // answers there will move
  }
  // A stepping timeline moves on after each completed data answer.
  if (opt_.mode == TimelineMode::kStep && a.status == windows::kErrorSuccess && offer.has_buffer &&
      a.type == windows::kRegBinary && !paused_.load(std::memory_order_relaxed))
    step_.fetch_add(1, std::memory_order_relaxed);
  return std::move(a);
}

Status SimulatedHost::set_quirks(const Quirks& q) {
  const std::lock_guard<std::mutex> lock(control_mu_);
  const ContentQuirks &a = quirks().content, &b = q.content;
  const bool same = a.duplicate_counter_object == b.duplicate_counter_object &&
                    a.duplicate_instances_object == b.duplicate_instances_object &&
                    a.duplicate_instances_count == b.duplicate_instances_count &&
                    a.name_table_gaps == b.name_table_gaps && a.type_change_counter == b.type_change_counter &&
                    a.type_change_type == b.type_change_type && a.perf_freq == b.perf_freq &&
                    a.localized_lang == b.localized_lang && a.localized_share == b.localized_share;
  if (!same)
    return Status::InvalidArgument(
        "content quirks (duplicate-counter-defs, duplicate-instances, name-table-gaps, counter-type-change, "
        "perffreq, localized-partial) rewrite the capture when the host is made and cannot change while it "
        "serves; restart perfsim serve with --quirk for them");
  quirk_versions_.push_back(std::make_unique<const Quirks>(q));
  quirks_.store(quirk_versions_.back().get(), std::memory_order_release);
  return Status::Ok();
}

bool SimulatedHost::timeline_paused() const {
  return opt_.mode == TimelineMode::kFrozen || paused_.load(std::memory_order_relaxed);
}

double SimulatedHost::timeline_speed() const {
  return opt_.mode == TimelineMode::kRealtime ? realtime_clock().speed : 0.0;
}

Status SimulatedHost::control(const TimelineOp& op) {
  const std::lock_guard<std::mutex> lock(control_mu_);
  const uint32_t n = ticks();
  if (op.kind == TimelineOpKind::kSeek && op.tick >= n)
    return Status::InvalidArgument("seek=" + std::to_string(op.tick) + ": the timeline has " + std::to_string(n) +
                                   " samples, 0.." + std::to_string(n - 1));
  if (op.kind == TimelineOpKind::kSpeed)
    if (Status s = config::check_bounds("speed", op.speed, limits::kSpeed, limits::kSpeedUnit); !s.ok()) return s;
  const char* mode = opt_.mode == TimelineMode::kStep ? "step" : "frozen";
  switch (opt_.mode) {
    case TimelineMode::kRealtime:
      return control_realtime(op);
    case TimelineMode::kStep:
      switch (op.kind) {
        case TimelineOpKind::kPause:
        case TimelineOpKind::kResume:
          paused_.store(op.kind == TimelineOpKind::kPause);
          return Status::Ok();
        case TimelineOpKind::kStep:
          step_.fetch_add(1);
          return Status::Ok();
        case TimelineOpKind::kSeek:
          step_.store(step_.load() / n * n + op.tick);
          return Status::Ok();
        case TimelineOpKind::kSpeed:
          break;
      }
      break;
    case TimelineMode::kFrozen:
      switch (op.kind) {
        case TimelineOpKind::kPause:  // already still
          return Status::Ok();
        case TimelineOpKind::kStep:
          frozen_tick_.store((std::min(frozen_tick_.load(), n - 1) + 1) % n);
          return Status::Ok();
        case TimelineOpKind::kSeek:
          frozen_tick_.store(op.tick);
          return Status::Ok();
        case TimelineOpKind::kResume:
          return Status::InvalidArgument("a frozen timeline does not run: use step or seek=K to move it");
        case TimelineOpKind::kSpeed:
          break;
      }
      break;
  }
  return Status::InvalidArgument(std::string("speed applies to realtime timelines; this host's timeline is ") + mode);
}

// Every change re-bases the clock at now, so the position is continuous except where asked.
Status SimulatedHost::control_realtime(const TimelineOp& op) {
  const int64_t now_ns = steady_ns();
  RealtimeClock c = realtime_clock();
  const int64_t v = position(c, now_ns);
  const Moment m = realtime_moment(v);
  const std::vector<int64_t>& t = rec_->offsets();
  const int64_t loop_len = std::max<int64_t>(rec_->loop_100ns, 1);
  const int64_t loop_base = opt_.loop ? int64_t(m.loop) * loop_len : 0;
  c.base_ns = now_ns;
  c.base_v = v;
  switch (op.kind) {
    case TimelineOpKind::kPause:
      c.paused = true;
      break;
    case TimelineOpKind::kResume:
      c.paused = false;
      break;
    case TimelineOpKind::kStep:  // to the next sample, and stay there
      c.paused = true;
      if (m.tick + 1 < ticks())
        c.base_v = loop_base + t[m.tick + 1];
      else
        c.base_v = opt_.loop ? loop_base + loop_len : t.back();
      break;
    case TimelineOpKind::kSeek:
      c.base_v = loop_base + t[op.tick];
      break;
    case TimelineOpKind::kSpeed:
      c.speed = op.speed;
      break;
  }
  set_realtime_clock(c);
  return Status::Ok();
}

}  // namespace perfsim::replayer
