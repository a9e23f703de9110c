// Issue 54: the capture reader's name tables (metadata and Perflib\LLL registry values) hold no
// string longer than Windows serves (perfdata/limits.h): each such pair is left out with a
// warning naming its record's offset, the rest of the table and the capture kept, the file no
// damaged one. A 50 MB counter name imported from a perfmon log was served as a 100 MB table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <unistd.h>

#include "captures/reader.h"
#include "captures/writer.h"
#include "perfdata/names.h"
#include "tests/common/test_capture.h"

namespace long_names {

using namespace perfsim;

Bytes table(const std::vector<std::pair<uint32_t, std::string>>& pairs) {
  return perfdata::build_names(perfdata::make_names(pairs));
}

}  // namespace long_names

using namespace long_names;

TEST_CASE("the reader leaves out name-table strings longer than Windows serves and keeps the rest") {
  namespace fs = std::filesystem;
  const std::string path =
      (fs::temp_directory_path() / ("perfsim_long_names_" + std::to_string(::getpid()) + ".perfcap")).string();
  const std::string huge(5'000'000, 'n');
  captures::Capture cap = testing::test_capture();
  cap.names[0].counter = table({{1, "740"}, {2, "System"}, {4, huge}, {238, "Processor"}});
  cap.names[0].help = table({{3, "System help"}, {5, std::string(16385, 'h')}, {239, "Processor help"}});
  const std::string perflib009 = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib\\009";
  cap.registry.push_back({perflib009, "Counter", windows::kRegMultiSz, cap.names[0].counter});
  cap.registry.push_back({perflib009, "Other", windows::kRegMultiSz, cap.names[0].counter});  // not a table
  REQUIRE(captures::write_capture(path, cap).ok());

  for (bool index : {true, false}) {
    INFO("index " << index);
    std::unique_ptr<captures::Reader> r;
    REQUIRE(captures::Reader::open(path, r, captures::ReaderOptions{index}).ok());
    CHECK(r->damage().ok());
    const captures::Capture& m = r->metadata();
    // Compared as one bool: Catch2 would print the megabytes of both sides when they differ.
    CHECK((m.names[0].counter == table({{1, "740"}, {2, "System"}, {238, "Processor"}})));
    CHECK((m.names[0].help == table({{3, "System help"}, {239, "Processor help"}})));
    for (const captures::RegistryValue& v : m.registry)
      if (v.key == perflib009) CHECK((v.data == (v.name == "Counter" ? m.names[0].counter : cap.names[0].counter)));
    REQUIRE(r->left_out().size() == 3);
    CHECK(r->records().size() == cap.records.size());
    for (const auto& l : r->left_out()) {
      INFO(l.message);
      CHECK(l.offset > 0);
      CHECK(l.message.rfind("at offset " + std::to_string(l.offset) + ": ", 0) == 0);
      CHECK(l.message.size() < 400);
      CHECK(std::count(r->warnings().begin(), r->warnings().end(), l.message) == 1);
    }
    const auto said = [&](const std::string& a, const std::string& b = "") {
      return std::any_of(r->left_out().begin(), r->left_out().end(), [&](const captures::Reader::LeftOut& l) {
        return l.message.find(a) != std::string::npos && l.message.find(b) != std::string::npos;
      });
    };
    CHECK(said("Counter 009 table, at byte 34: index 4's text 'nnn",
               "(5000000 characters) is longer than the 1024 characters of PDH_MAX_COUNTER_NAME: left out, the "
               "rest kept"));
    CHECK(said("Help 009 table, at byte 32: index 5's text 'hhh", "(16385 characters)"));
    CHECK(said("registry value " + perflib009 + "\\Counter, at byte 34: index 4's text"));
  }
  fs::remove(path);
}

TEST_CASE("drop_long_names keeps every other byte, a cut last string included") {
  Bytes t = table({{2, "a"}, {4, std::string(11, 'x')}, {6, "b"}});
  const Bytes want = table({{2, "a"}, {6, "b"}});
  const perfdata::limits::Bound ten{10, "ten"};
  CHECK(perfdata::long_names(t, ten).size() == 1);
  CHECK(perfdata::drop_long_names(t, ten).size() == 1);
  CHECK(t == want);
  // A table cut inside a long last string: it goes, with its index; the rest stays.
  Bytes cut = table({{2, "a"}});
  cut.resize(cut.size() - 2);  // no final empty string
  put_utf16le(cut, u"4");
  put_le16(cut, 0);
  put_utf16le(cut, std::u16string(11, u'x'));
  const auto dropped = perfdata::drop_long_names(cut, ten);
  REQUIRE(dropped.size() == 1);
  CHECK(cut == Bytes(want.begin(), want.begin() + 8));  // "2\0a\0"
}
