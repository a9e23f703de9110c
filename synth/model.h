// Internal to synth: the simulated host's state and how it evolves, written into perf objects.
//
// Contract: advance(now) moves every entity forward by the time since the previous call (the first
// call by one interval) and refreshes the counter blocks; emit() lends the objects of one query
// (Global or Costly) to a DataBlock and restore() takes them back, so nothing is copied per tick.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "perfdata/model.h"
#include "synth/catalog.h"
#include "synth/signal.h"
#include "synth/spec.h"

namespace perfsim::synth {

struct ModelClock {
  int64_t perf_time = 0;  // QPC ticks since boot
  int64_t perf_freq = 0;
};

class Model {
 public:
  Model(const Spec& spec, const Profile& profile, const Catalog& catalog);
  ~Model();
  ModelClock advance(int64_t now_100ns);
  void emit(bool costly, perfdata::DataBlock& block);
  void restore(bool costly, perfdata::DataBlock& block);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace perfsim::synth
