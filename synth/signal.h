// Deterministic value generators for synthetic hosts: a seeded PRNG and the time signals a spec
// names (constant, rate, sine, random walk, uniform, fraction of a base).
//
// Contract: the same GeneratorSpec, seed and sequence of at() calls give the same values on every
// platform (own PRNG and own normal approximation; no std:: distributions, whose output the
// standard leaves to the implementation). at() must be called with non-decreasing times.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace perfsim::synth {

// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed = 1);
  uint64_t next();
  double uniform();  // [0, 1)
  double uniform(double lo, double hi);
  uint64_t below(uint64_t n);  // [0, n), n > 0
  double normal();             // mean 0, sd 1 (Irwin-Hall approximation, deterministic)
  bool chance(double p) { return uniform() < p; }

 private:
  uint64_t s_[4];
};

// Mixes several values into one seed, so each signal gets its own independent stream.
uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0);

struct GeneratorSpec {
  enum class Kind { kConstant, kRate, kSine, kRandomWalk, kUniform, kFraction };
  Kind kind = Kind::kConstant;
  double value = 0;                                            // constant
  double start = 0, per_second = 0;                            // rate: start + per_second * t; random_walk: start
  double mean = 0, amplitude = 0, period_s = 3600, phase = 0;  // sine (phase in fractions of a period)
  double step = 1;                                             // random_walk: sd of each step
  double min = 0, max = 0;                 // random_walk/uniform bounds (max <= min: unbounded walk)
  double base = 0;                         // fraction: base * ratio
  std::shared_ptr<GeneratorSpec> ratio;    // fraction
  double noise = 0;                        // sd of relative noise added to the result
  double floor = -1e300, ceiling = 1e300;  // clamp of the result

  static GeneratorSpec constant(double v) {
    GeneratorSpec g;
    g.value = v;
    return g;
  }
};

const char* kind_name(GeneratorSpec::Kind k);

class Signal {
 public:
  Signal() = default;
  Signal(const GeneratorSpec& spec, uint64_t seed);
  double at(double t_seconds);  // value at t seconds from the capture start

 private:
  double raw(double t);
  GeneratorSpec spec_;
  Rng rng_;
  double walk_ = 0;
  bool started_ = false;
  std::unique_ptr<Signal> ratio_;
};

}  // namespace perfsim::synth
