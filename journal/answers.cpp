#include "journal/answers.h"

#include <algorithm>

namespace perfsim::journal {

void AnswerStore::keep(uint64_t session, const std::string& host, KeptAnswer a) {
  std::lock_guard lock(mu_);
  SessionAnswers& s = by_session_[session];
  s.session = session;
  if (s.host.empty()) s.host = host;
  // Keep the last two of this value: drop the oldest when a third arrives.
  const auto same = [&](const KeptAnswer& k) { return k.value == a.value; };
  if (std::count_if(s.answers.begin(), s.answers.end(), same) >= 2) {
    const auto oldest = std::find_if(s.answers.begin(), s.answers.end(), same);
    bytes_ -= oldest->data.size();
    s.answers.erase(oldest);
  }
  bytes_ += a.data.size();
  s.answers.push_back(std::move(a));
  // Over the cap: the oldest sessions go first (never the one just kept, which fits by itself or is alone).
  while (bytes_ > max_bytes_ && by_session_.begin()->first != session) {
    for (const KeptAnswer& k : by_session_.begin()->second.answers) bytes_ -= k.data.size();
    by_session_.erase(by_session_.begin());
    ++dropped_;
  }
}

std::vector<SessionAnswers> AnswerStore::sessions() const {
  std::lock_guard lock(mu_);
  std::vector<SessionAnswers> out;
  for (const auto& [id, s] : by_session_) out.push_back(s);
  return out;
}

uint64_t AnswerStore::dropped_sessions() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace perfsim::journal
