#include "journal/recorder.h"

namespace perfsim::journal {

SessionTap::SessionTap(std::shared_ptr<Recorder> r, HostMetrics& m, SharedText host, SharedText peer, Transport t,
                       uint64_t id)
    : rec_(std::move(r)), metrics_(m), host_(std::move(host)), peer_(std::move(peer)), transport_(t), id_(id) {
  metrics_.session_opened(transport_);
}

SessionTap::~SessionTap() { metrics_.session_closed(transport_); }

void SessionTap::record(CallEvent&& e, uint32_t applied_mask, SharedBytes answer) {
  metrics_.count(e, applied_mask);
  if (!rec_->journal_) return;
  e.host = host_;
  e.peer = peer_;
  e.transport = transport_;
  e.session = id_;
  const int64_t time_us = e.time_us;
  std::string value = rec_->answers_ && !answer.empty() ? e.value_name : std::string();
  const uint64_t seq = rec_->journal_->record(std::move(e));
  if (!value.empty()) rec_->answers_->keep(id_, *host_, {seq, time_us, std::move(value), std::move(answer)});
}

void SessionTap::record_host_event(std::string what_json, int64_t time_us) {
  if (!rec_->journal_) return;
  CallEvent e;
  e.host = host_;
  e.time_us = time_us;
  e.host_event = std::move(what_json);
  rec_->journal_->record(std::move(e));
}

Status Recorder::create(const RecorderOptions& o, std::shared_ptr<Recorder>& out) {
  std::shared_ptr<Recorder> r(new Recorder());
  r->metrics_ = std::make_shared<Metrics>(o.applied_names);
  if (o.journal_size) {
    r->journal_ = std::make_shared<Journal>(o.journal_size);
    if (!o.journal_file.empty())
      if (Status s = r->journal_->open_file(o.journal_file, o.journal_limits); !s.ok()) return s;
    std::weak_ptr<Journal> j = r->journal_;
    r->metrics_->set_journal_counters(
        [j] {
          auto p = j.lock();
          return p ? p->drops() : 0;
        },
        [j] {
          auto p = j.lock();
          return p ? p->recorded() : 0;
        });
    if (o.keep_answers) r->answers_ = std::make_shared<AnswerStore>();
  } else if (!o.journal_file.empty()) {
    return Status::InvalidArgument("--journal FILE needs a journal: --journal-size must be at least 1");
  }
  out = std::move(r);
  return Status::Ok();
}

std::unique_ptr<SessionTap> Recorder::open_session(const std::string& host, const std::string& peer, Transport t) {
  return std::make_unique<SessionTap>(
      shared_from_this(), metrics_->host(host), std::make_shared<const std::string>(host),
      std::make_shared<const std::string>(peer), t, next_session_.fetch_add(1, std::memory_order_relaxed));
}

}  // namespace perfsim::journal
