// Custom objects alone, as a provider DLL's Collect function would return them: a spec's
// [[objects]] laid out (counter sizes from their types, base counters after their counter) and
// driven by the same value generators and dynamics as in a full synthetic host, at times the
// caller picks. The built-in host (processors, processes, disks, ...) is left out, and so are the
// objects its OS comes with as a role would add them (the .NET CLR objects, roles.h host_roles).
//
// Contract: the same spec (seed included) and the same sequence of advance() times give the same
// objects. Title indices are the spec's (an object or counter without one is InvalidArgument);
// a base counter carries its counter's index. Object PerfTime/PerfFreq follow the caller's clock
// (perf_time, perf_freq) unless the object has a PERF_ELAPSED_TIME counter (100 ns object timer).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "perfdata/model.h"
#include "synth/spec.h"

namespace perfsim::synth {

class ObjectSource {
 public:
  // Uses spec.objects, seed, start_100ns and interval_ms; perf_freq drives timer counters.
  static Status create(const Spec& spec, int64_t perf_freq, std::unique_ptr<ObjectSource>& out);
  ~ObjectSource();
  ObjectSource(const ObjectSource&) = delete;
  ObjectSource& operator=(const ObjectSource&) = delete;

  // The objects at `now_100ns` (non-decreasing between calls), in spec order; `costly` tells
  // which the spec marked costly.
  const std::vector<perfdata::Object>& advance(int64_t now_100ns, int64_t perf_time, int64_t perf_freq);
  bool costly(size_t object) const;

 private:
  struct Impl;
  explicit ObjectSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfsim::synth
