// Generated payloads checked by perfdata's own validator and formatter (written independently).
#include <catch2/catch.hpp>

#include "helpers.h"
#include "perfdata/counters.h"
#include "perfdata/validate.h"
#include "perfdata/winperf.h"
#include "synth/profiles.h"
#include "synth/synth.h"

using namespace perfsim;
using namespace perfsim::synth;

TEST_CASE("every generated payload of every profile validates without errors or warnings") {
  for (const std::string& name : windows::os_names()) {
    INFO(name);
    Spec s = test::small_spec(name, 4);
    s.objects.clear();
    REQUIRE(load_spec(test::example("custom-app.toml"), s).ok());  // custom objects too
    s.profile = name;
    s.duration_s = 60;
    captures::Capture c;
    REQUIRE(synthesize(s, c).ok());
    for (const captures::QueryRecord& r : c.records) {
      perfdata::ValidateOptions opt;
      opt.min_severity = perfdata::Severity::kWarning;
      const std::vector<perfdata::Finding> f = perfdata::validate(r.payload, opt);
      for (const perfdata::Finding& x : f) FAIL_CHECK(r.value_name << ": " << perfdata::to_string(x));
    }
  }
}

TEST_CASE("formatted values between two samples are all valid and percentages stay in range") {
  for (const std::string& name : {std::string("2003"), std::string("2016")}) {
    INFO(name);
    captures::Capture c;
    REQUIRE(synthesize(test::small_spec(name, 6), c).ok());
    const perfdata::DataBlock a = test::decode(c.records[6]), b = test::decode(c.records[8]);
    size_t checked = 0;
    for (const perfdata::Object& o : b.objects) {
      std::vector<perfdata::InstanceValues> values;
      REQUIRE(perfdata::format_object(&a, b, o.name_index, values).ok());
      for (const perfdata::InstanceValues& iv : values)
        for (const perfdata::CounterValue& cv : iv.counters) {
          INFO(o.name_index << "/" << iv.name << "/" << cv.name_index << ": " << cv.value.error);
          CHECK(cv.value.status != perfdata::ValueStatus::kInvalid);
          const bool percent = (cv.type & 0xF0000000u) == winperf::PERF_DISPLAY_PERCENT;
          if (o.name_index == 238 && percent && cv.value.valid()) {  // Processor percentages in [0, 100]
            CHECK(cv.value.value >= 0);
            CHECK(cv.value.value <= 100.0000001);
          }
          ++checked;
        }
    }
    CHECK(checked > 500);
  }
}
