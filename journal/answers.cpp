#include "journal/answers.h"

#include <algorithm>

namespace perfsim::journal {

void AnswerStore::drop(Session& s, uint64_t seq) {
  const auto at = s.by_seq.find(seq);
  const auto v = s.by_value.find(at->second);
  std::deque<KeptAnswer>& q = v->second;
  const auto it = std::find_if(q.begin(), q.end(), [&](const KeptAnswer& k) { return k.seq == seq; });
  bytes_ -= it->data.size();
  q.erase(it);
  if (q.empty()) s.by_value.erase(v);
  s.by_seq.erase(at);
}

void AnswerStore::keep(uint64_t session, const std::string& host, KeptAnswer a) {
  std::lock_guard lock(mu_);
  Session& s = by_session_[session];
  if (s.host.empty()) s.host = host;
  // Keep the last two of this value: drop the oldest when a third arrives.
  if (auto v = s.by_value.find(a.value); v != s.by_value.end() && v->second.size() >= 2) drop(s, v->second.front().seq);
  const uint64_t seq = a.seq;
  bytes_ += a.data.size();
  s.by_seq[seq] = a.value;
  s.by_value[a.value].push_back(std::move(a));
  // Over the cap: the other sessions go, oldest first; then, alone, this session's own older answers
  // (one session asking many values could otherwise hold any amount); never the one just kept.
  for (auto it = by_session_.begin(); bytes_ > max_bytes_ && it != by_session_.end();) {
    if (it->first == session) {
      ++it;
      continue;
    }
    for (const auto& [value, q] : it->second.by_value)
      for (const KeptAnswer& k : q) bytes_ -= k.data.size();
    it = by_session_.erase(it);
    ++dropped_;
  }
  while (bytes_ > max_bytes_ && s.by_seq.size() > 1) {
    const uint64_t oldest = s.by_seq.begin()->first;
    drop(s, oldest != seq ? oldest : std::next(s.by_seq.begin())->first);
  }
}

std::vector<SessionAnswers> AnswerStore::sessions() const {
  std::lock_guard lock(mu_);
  std::vector<SessionAnswers> out;
  for (const auto& [id, s] : by_session_) {
    SessionAnswers sa{id, s.host, {}};
    for (const auto& [seq, value] : s.by_seq)
      for (const KeptAnswer& k : s.by_value.at(value))
        if (k.seq == seq) sa.answers.push_back(k);
    out.push_back(std::move(sa));
  }
  return out;
}

uint64_t AnswerStore::dropped_sessions() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

}  // namespace perfsim::journal
