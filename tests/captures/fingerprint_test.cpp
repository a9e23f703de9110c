// captures/fingerprint.h: one typed fingerprint, written and read back byte for byte.
#include <catch2/catch.hpp>

#include <filesystem>

#include "captures/fingerprint.h"
#include "captures/reader.h"

namespace perfsim::captures {
namespace {

std::string round_trip(const std::string& text) {
  Fingerprint fp;
  REQUIRE(from_json(text, fp).ok());
  return to_json(fp);
}

TEST_CASE("every bundled capture's fingerprint reads into the struct and writes back the same bytes") {
  size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(PERFSIM_SOURCE_DIR) + "/captures")) {
    if (e.path().extension() != ".perfcap") continue;
    Capture cap;
    REQUIRE(read_capture(e.path().string(), cap).ok());
    INFO(e.path());
    REQUIRE_FALSE(cap.fingerprint_json.empty());
    CHECK(round_trip(cap.fingerprint_json) == cap.fingerprint_json);
    Fingerprint fp;
    REQUIRE(from_json(cap.fingerprint_json, fp).ok());
    CHECK(fp.other.empty());  // synth's keys are all typed
    CHECK(fp.source == "synth");
    ++seen;
  }
  CHECK(seen >= 5);
}

TEST_CASE("a recorded fingerprint round-trips, typed") {
  const std::string text =
      R"({"errors":{"5":2},"findings":["a NULL-buffer size probe gets ERROR_MORE_DATA with size 0, not the size needed"],)"
      R"("latency_us":{"max":900,"p50":120,"p99":800},"more_data":"win2000-echo-oversize","null_probe":{"size":0,"status":234},)"
      R"("params":{"overhead":"1024"},"queries":{"238":{"calls":3,"max_failed_buffer":1024,"min_buffer":65536,"objects":[238],)"
      R"("returned":4000,"status":0,"type":3},"Counter 009":{"calls":1,"status":0,"type":7}},)"
      R"("short_probe":{"offered":1024,"size":1024,"status":234}})";
  CHECK(round_trip(text) == text);
  Fingerprint fp;
  REQUIRE(from_json(text, fp).ok());
  CHECK(fp.more_data == "win2000-echo-oversize");
  CHECK(fp.params.at("overhead") == "1024");
  REQUIRE(fp.short_probe);
  CHECK(fp.short_probe->offered == 1024u);
  CHECK(fp.queries->at("238").objects == std::vector<uint32_t>{238});
  CHECK(fp.errors->at("5") == 2);
  CHECK(fp.latency_us->p99 == 800);
  CHECK(fp.other.empty());
}

TEST_CASE("unknown keys and values of another shape are kept as read") {
  const std::string text = R"({"latency_ms":12,"min_buffer":{"Global":524288},"more_data":"rrp-exact","seed":-3})";
  CHECK(round_trip(text) == text);
  Fingerprint fp;
  REQUIRE(from_json(text, fp).ok());
  CHECK(fp.more_data == "rrp-exact");
  CHECK_FALSE(fp.seed);  // negative: not a seed this struct can hold, so it stays in other
  CHECK(fp.other.size() == 3);
  CHECK(round_trip("") == "{}");
  CHECK_FALSE(from_json("[1]", fp).ok());
  CHECK_FALSE(from_json("{", fp).ok());
}

}  // namespace
}  // namespace perfsim::captures
