// Shared helpers of the synth tests: small specs and decoding of generated records.
#pragma once
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "captures/capture.h"
#include "perfdata/model.h"
#include "perfdata/names.h"
#include "synth/spec.h"
#include "synth/synth.h"

namespace perfsim::synth::test {

inline Spec small_spec(const std::string& profile, uint32_t ticks = 3) {
  Spec s;
  s.profile = profile;
  s.interval_ms = 15000;
  s.duration_s = 15 * ticks;
  s.process_count = 12;
  s.threads_min = 1;
  s.threads_max = 6;
  s.processors = 2;
  return s;
}

inline std::string example(const std::string& name) {
  return std::string(PERFSIM_SOURCE_DIR) + "/synth/examples/" + name;
}

inline perfdata::DataBlock decode(const captures::QueryRecord& r) {
  perfdata::DataBlock b;
  perfdata::ParseOptions strict;
  strict.tolerant = false;
  const Status s = perfdata::parse(r.payload, b, strict);
  if (!s.ok()) throw std::runtime_error(r.value_name + " tick " + std::to_string(r.tick) + ": " + s.message());
  return b;
}

inline uint64_t value(const perfdata::Object& o, const Bytes& block, uint32_t name_index, int nth = 0) {
  for (size_t i = 0; i < o.counters.size(); ++i)
    if (o.counters[i].name_index == name_index) return perfdata::read_counter(block, o.counters[i + size_t(nth)]);
  throw std::runtime_error("counter " + std::to_string(name_index) + " missing");
}

// The capture `s` makes; a synth error fails the test with its message.
inline captures::Capture make(const Spec& s) {
  captures::Capture c;
  const Status st = synthesize(s, c);
  if (!st.ok()) throw std::runtime_error(st.message());
  return c;
}

// The capture's 009 Counter table, index -> name.
inline std::map<uint32_t, std::string> names_of(const captures::Capture& c) {
  perfdata::NameTable t;
  REQUIRE(perfdata::parse_names(c.names[0].counter, t).ok());
  return t.to_map();
}

}  // namespace perfsim::synth::test
