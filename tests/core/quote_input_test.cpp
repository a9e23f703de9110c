// core/status.h quote_input() and core/utf16.h utf16_length (issue 54): input quoted into a message is
// cut at ~100 characters with the whole's length, never inside a UTF-8 sequence, so a message
// never grows with its input.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "core/status.h"
#include "core/utf16.h"

using perfsim::quote_input;
using perfsim::utf16_length;

TEST_CASE("quote_input: a short text whole, a long one cut and its length said") {
  CHECK(quote_input("svchost") == "'svchost'");
  CHECK(quote_input("") == "''");
  CHECK(quote_input("5", perfsim::kQuoteChars, '"') == "\"5\"");
  const std::string exact(perfsim::kQuoteChars, 'a');
  CHECK(quote_input(exact) == "'" + exact + "'");
  const std::string huge(50'000'000, 'a');
  const std::string q = quote_input(huge);
  REQUIRE(q.size() < 200);  // before the comparison, which would print both when it fails
  CHECK(q == "'" + exact + "\u2026' (50000000 characters)");
}

TEST_CASE("quote_input: characters are UTF-16 code units and the cut keeps UTF-8 whole") {
  std::string e, smile;
  for (int i = 0; i < 300; ++i) e += "\xC3\xA9", smile += "\xF0\x9F\x98\x80";  // é, U+1F600
  CHECK(utf16_length(e) == 300);
  CHECK(utf16_length(smile) == 600);  // a surrogate pair each
  const std::string qe = quote_input(e), qs = quote_input(smile);
  CHECK(perfsim::valid_utf8(qe));
  CHECK(perfsim::valid_utf8(qs));
  CHECK(qe == "'" + e.substr(0, 200) + "\u2026' (300 characters)");
  CHECK(qs == "'" + smile.substr(0, 200) + "\u2026' (600 characters)");  // 50 pairs: 100 units
  // utf16_length counts what utf8_to_utf16 makes, valid or not.
  std::mt19937 rng(54);
  for (int n = 0; n < 2000; ++n) {
    std::string bytes(std::uniform_int_distribution<size_t>(0, 12)(rng), '\0');
    for (char& c : bytes) c = char(std::uniform_int_distribution<int>(0, 255)(rng));
    REQUIRE(utf16_length(bytes) == perfsim::utf8_to_utf16(bytes).size());
  }
}
