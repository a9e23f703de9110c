#include "synth/signal.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace perfsim::synth {
namespace {

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed) {
  for (uint64_t& s : s_) s = splitmix(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }
double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
uint64_t Rng::below(uint64_t n) { return n ? next() % n : 0; }
double Rng::normal() {
  double s = 0;
  for (int i = 0; i < 12; ++i) s += uniform();
  return s - 6.0;
}

uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a;
  uint64_t h = splitmix(x);
  x = h ^ b;
  h = splitmix(x);
  x = h ^ c;
  return splitmix(x);
}

const char* kind_name(GeneratorSpec::Kind k) {
  switch (k) {
    case GeneratorSpec::Kind::kConstant:
      return "constant";
    case GeneratorSpec::Kind::kRate:
      return "rate";
    case GeneratorSpec::Kind::kSine:
      return "sine";
    case GeneratorSpec::Kind::kRandomWalk:
      return "random_walk";
    case GeneratorSpec::Kind::kUniform:
      return "uniform";
    case GeneratorSpec::Kind::kFraction:
      return "fraction";
  }
  return "?";
}

Signal::Signal(const GeneratorSpec& spec, uint64_t seed) : spec_(spec), rng_(seed) {
  if (spec_.ratio) ratio_ = std::make_unique<Signal>(*spec_.ratio, mix_seed(seed, 0x7261746Full));
}

double Signal::raw(double t) {
  using K = GeneratorSpec::Kind;
  const GeneratorSpec& g = spec_;
  switch (g.kind) {
    case K::kConstant:
      return g.value;
    case K::kRate:
      return g.start + g.per_second * t;
    case K::kSine:
      return g.mean + g.amplitude * std::sin(2 * std::numbers::pi * (t / std::max(g.period_s, 1e-9) + g.phase));
    case K::kRandomWalk:
      if (!started_) {
        walk_ = g.start;
        started_ = true;
      } else {
        walk_ += g.step * rng_.normal();
      }
      if (g.max > g.min) walk_ = std::clamp(walk_, g.min, g.max);
      return walk_;
    case K::kUniform:
      return rng_.uniform(g.min, g.max);
    case K::kFraction:
      return g.base * (ratio_ ? ratio_->at(t) : 0.0);
  }
  return 0;
}

double Signal::at(double t) {
  double v = raw(t);
  if (spec_.noise > 0) v *= 1.0 + spec_.noise * rng_.normal();
  return std::clamp(v, spec_.floor, spec_.ceiling);
}

}  // namespace perfsim::synth
