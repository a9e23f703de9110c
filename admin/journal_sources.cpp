#include "admin/journal_sources.h"

#include <charconv>
#include <utility>

namespace perfsim::admin {

AdminSources journal_sources(std::shared_ptr<journal::Recorder> recorder) {
  AdminSources s;
  if (!recorder) return s;
  if (std::shared_ptr<journal::Metrics> m = recorder->metrics()) {
    s.metrics_text = [m] { return m->render_prometheus(); };
    s.health = [m] { return m->health_json(); };
  }
  std::shared_ptr<journal::Journal> j = recorder->journal();
  if (!j) return s;
  s.journal = [j](const std::string& host, const std::string& session, uint64_t since, uint64_t limit) {
    journal::JournalFilter f;
    f.host = host;
    // The API checked `session` is a number; an empty one means every session.
    (void)std::from_chars(session.data(), session.data() + session.size(), f.session);
    // The API's since is inclusive; the filter's seq bound is exclusive, its time bound inclusive.
    f.set_since(since);
    if (f.since_seq) --f.since_seq;
    f.limit = size_t(limit);
    return j->query_json(f);
  };
  s.clear_journal = [j] { j->clear(); };
  s.sessions = [j] { return j->sessions_json(); };
  return s;
}

}  // namespace perfsim::admin
