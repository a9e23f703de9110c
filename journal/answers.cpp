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
  // Over the cap: the other sessions go, oldest first; then, alone, this session's own older answers
  // (one session asking many values could otherwise hold any amount); never the one just kept.
  for (auto it = by_session_.begin(); bytes_ > max_bytes_ && it != by_session_.end();) {
    if (it->first == session) {
      ++it;
      continue;
    }
    for (const KeptAnswer& k : it->second.answers) bytes_ -= k.data.size();
    it = by_session_.erase(it);
    ++dropped_;
  }
  while (bytes_ > max_bytes_ && s.answers.size() > 1) {
    bytes_ -= s.answers.front().data.size();
    s.answers.erase(s.answers.begin());
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
