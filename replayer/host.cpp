#include "replayer/host.h"

#include <chrono>

#include "core/utf16.h"
#include "perfdata/names.h"
#include "perfdata/select.h"
#include "perfdata/winperf.h"

namespace perfsim::replayer {
namespace {

const char* kPerflib = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib";

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ValueAnswer rrp_exact(ValueContent c, BufferOffer offer) {
  ValueAnswer a;
  a.status = c.status;
  a.type = c.type;
  if (c.status != werr::kOk) return a;
  a.size = uint32_t(c.data.size());
  if (!offer.has_buffer) return a;
  if (offer.size < c.data.size()) {
    a.status = werr::kMoreData;
    return a;
  }
  a.data = std::move(c.data);
  return a;
}

Status SimulatedHost::load(const captures::Capture& cap, const HostOptions& opt, std::shared_ptr<SimulatedHost>& out) {
  auto h = std::shared_ptr<SimulatedHost>(new SimulatedHost());
  h->cap_ = cap;
  h->opt_ = opt;
  for (const captures::RegistryValue& v : h->cap_.registry) h->registry_.set(v.key, RegValue{v.name, v.type, v.data});
  for (const captures::NameTable& t : h->cap_.names) {
    const std::string key = std::string(kPerflib) + "\\" + t.lang;
    const RegKey* k = h->registry_.open(h->registry_.root(), key);
    if (!k || !k->value("Counter")) h->registry_.set(key, RegValue{"Counter", regtype::kMultiSz, t.counter});
    k = h->registry_.open(h->registry_.root(), key);
    if (!k->value("Help")) h->registry_.set(key, RegValue{"Help", regtype::kMultiSz, t.help});
  }
  h->registry_.set_last_write(h->cap_.host.start_time_100ns);

  for (const captures::QueryRecord& r : h->cap_.records) {
    if (r.tick >= h->ticks_.size()) h->ticks_.resize(r.tick + 1);
    Tick& t = h->ticks_[r.tick];
    SampleView* view = nullptr;
    if (iequals(r.value_name, "Global")) view = &t.global;
    else if (iequals(r.value_name, "Costly")) view = &t.costly;
    else { t.others.push_back(&r); continue; }
    view->record = &r;
    if (r.status != werr::kOk || r.payload.size() < winperf::kDataBlockSize) continue;
    // Object slices, bounded by TotalByteLength and the payload: a damaged sample serves no slices.
    const Bytes& p = r.payload;
    const size_t total = std::min<size_t>(load_le32(&p[20]), p.size());
    const uint32_t count = load_le32(&p[28]);
    size_t pos = load_le32(&p[24]);
    view->header_length = pos;
    for (uint32_t i = 0; i < count && pos + winperf::kObjectTypeSize <= total; ++i) {
      const uint32_t len = load_le32(&p[pos]);
      if (len < winperf::kObjectTypeSize || pos + len > total) break;
      view->objects.push_back({load_le32(&p[pos + 12]), pos, len});
      pos += len;
    }
  }
  if (h->ticks_.empty()) return Status::InvalidArgument("capture of host '" + cap.host.name + "' holds no samples");
  h->epoch_ns_ = steady_ns();
  out = std::move(h);
  return Status::Ok();
}

uint32_t SimulatedHost::current_tick() const {
  const uint32_t n = ticks();
  switch (opt_.mode) {
    case TimelineMode::kFrozen: return std::min(opt_.frozen_tick, n - 1);
    case TimelineMode::kStep: return step_.load(std::memory_order_relaxed) % n;
    case TimelineMode::kRealtime: {
      const int64_t interval_ns = int64_t(std::max<uint32_t>(cap_.host.interval_ms, 1)) * 1000000;
      return uint32_t(((steady_ns() - epoch_ns_) / interval_ns) % n);
    }
  }
  return 0;
}

const captures::NameTable* SimulatedHost::names(const std::string& lang) const {
  for (const captures::NameTable& t : cap_.names)
    if (iequals(t.lang, lang)) return &t;
  return nullptr;
}

Bytes SimulatedHost::assemble(const Tick& t, const std::vector<uint32_t>& indices) const {
  const SampleView& base = t.global.record ? t.global : t.costly;
  Bytes out;
  if (!base.record || base.header_length == 0) return out;
  const Bytes& hp = base.record->payload;
  out.assign(hp.begin(), hp.begin() + base.header_length);
  uint32_t count = 0;
  for (uint32_t idx : indices) {
    for (const SampleView* v : {&t.global, &t.costly}) {
      if (!v->record) continue;
      bool found = false;
      for (const ObjectSlice& s : v->objects) {
        if (s.index != idx) continue;
        out.insert(out.end(), v->record->payload.begin() + s.offset, v->record->payload.begin() + s.offset + s.length);
        ++count;
        found = true;
        break;
      }
      if (found) break;
    }
  }
  store_le32(&out[20], uint32_t(out.size()));
  store_le32(&out[28], count);
  return out;
}

ValueContent SimulatedHost::content(PerfKey key, std::string_view value_name, uint32_t tick) const {
  ValueContent c;
  const Tick& t = ticks_[std::min<size_t>(tick, ticks_.size() - 1)];
  // A value recorded under exactly this name is answered as recorded (real hosts' oddities).
  for (const captures::QueryRecord* r : t.others) {
    if (iequals(r->value_name, value_name)) {
      c.status = r->status;
      c.type = r->reg_type;
      c.data = r->payload;
      return c;
    }
  }
  const perfdata::Query q = perfdata::parse_query(value_name);
  switch (q.kind) {
    case perfdata::QueryKind::kCounter:
    case perfdata::QueryKind::kHelp: {
      // Bare "Counter"/"Help" (HKPT/HKPN) answer in the host's default language.
      const captures::NameTable* nt = names(q.lang.empty() ? "009" : q.lang);
      if (!nt) { c.status = werr::kFileNotFound; return c; }
      c.type = regtype::kMultiSz;
      c.data = q.kind == perfdata::QueryKind::kCounter ? nt->counter : nt->help;
      return c;
    }
    case perfdata::QueryKind::kExplain:
      c.status = werr::kFileNotFound;  // no Explain texts are recorded
      return c;
    default:
      break;
  }
  if (key != PerfKey::kData) { c.status = werr::kFileNotFound; return c; }
  if (q.kind == perfdata::QueryKind::kGlobal && t.global.record) { c.status = t.global.record->status; c.type = t.global.record->reg_type; c.data = t.global.record->payload; return c; }
  if (q.kind == perfdata::QueryKind::kCostly && t.costly.record) { c.status = t.costly.record->status; c.type = t.costly.record->reg_type; c.data = t.costly.record->payload; return c; }
  std::vector<uint32_t> indices;
  const bool foreign_self = q.kind == perfdata::QueryKind::kForeign && iequals(q.foreign_host, cap_.host.name);
  if (q.kind != perfdata::QueryKind::kForeign || foreign_self) indices = perfdata::select_objects(q, cap_.catalog);
  c.data = assemble(t, indices);
  return c;
}

ValueAnswer SimulatedHost::query(PerfKey key, std::string_view value_name, BufferOffer offer) {
  uint32_t tick = current_tick();
  ValueAnswer a = rrp_exact(content(key, value_name, tick), offer);
  // A stepping timeline moves on after each completed data answer.
  if (opt_.mode == TimelineMode::kStep && a.status == werr::kOk && offer.has_buffer && a.type == regtype::kBinary)
    step_.fetch_add(1, std::memory_order_relaxed);
  return a;
}

}  // namespace perfsim::replayer
