// core/suggest.h: the edit distance under every "did you mean" and nearest-path message.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/suggest.h"

using perfsim::edit_distance;
using perfsim::nearest_any;
using perfsim::nearest_name;

TEST_CASE("edit distance: inserts and deletes and replacements and a swap of neighbours count one each") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("Processor", "processor") == 0);   // ASCII case ignored
  CHECK(edit_distance("Procesor", "Processor") == 1);    // an insert
  CHECK(edit_distance("Processsor", "Processor") == 1);  // a delete
  CHECK(edit_distance("Prucessor", "Processor") == 1);   // a replacement
  CHECK(edit_distance("Porcessor", "Processor") == 1);   // neighbours swapped: one edit, not two
  CHECK(edit_distance("kitten", "sitting") == 3);
  // Optimal string alignment: a swapped pair is not edited again ("CA" -> "ABC" is 3, not 2).
  CHECK(edit_distance("CA", "ABC") == 3);
  CHECK(edit_distance("ABC", "CA") == 3);
}

TEST_CASE("nearest_name answers only a close name and nearest_any always names one") {
  const std::vector<std::string> objects = {"Processor", "Memory", "PhysicalDisk"};
  CHECK(nearest_name("Procesor", objects) == "Processor");
  CHECK(nearest_name("Network Interface", objects).empty());  // nothing is near enough to be meant
  CHECK(nearest_any("Network Interface", objects) == "Memory");
  CHECK(nearest_any("anything", {}).empty());
  CHECK(nearest_any("Memoru", {"Memory", "Memorx"}) == "Memory");  // equally near: the first wins
  CHECK(nearest_name("--profle", {"--profile", "--profiles"}) == "--profile");
}
