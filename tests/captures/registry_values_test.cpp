#include "captures/registry_values.h"

#include <catch2/catch.hpp>

#include "windows/constants.h"

using namespace perfsim;
using namespace perfsim::captures;

TEST_CASE("registry values are found and replaced by key and name without regard to case", "[captures][registry]") {
  Capture cap;
  set_value(cap, "SOFTWARE\\Perflib", "Last Counter", windows::kRegDword, reg_dword(1846));
  set_value(cap, "software\\PERFLIB", "last counter", windows::kRegDword, reg_dword(0x01020304));
  REQUIRE(cap.registry.size() == 1);
  CHECK(cap.registry[0].name == "Last Counter");  // the first spelling stays, as in the registry
  CHECK(cap.registry[0].data == Bytes{0x04, 0x03, 0x02, 0x01});

  const RegistryValue* v = find_value(cap, "SOFTWARE\\PERFLIB", "LAST COUNTER");
  REQUIRE(v != nullptr);
  CHECK(v == &cap.registry[0]);
  CHECK(find_value(cap, "SOFTWARE\\Perflib", "Last Help") == nullptr);
  CHECK(find_value(cap, "SOFTWARE", "Last Counter") == nullptr);

  remove_value(cap, "Software\\Perflib", "LAST counter");
  CHECK(cap.registry.empty());
}

TEST_CASE("REG_SZ data is UTF-16LE with a NUL and reads back up to the first NUL", "[captures][registry]") {
  const Bytes sz = reg_sz("Zähler");
  CHECK(sz.size() == (6 + 1) * 2);
  CHECK(sz[2] == 0xE4);  // U+00E4, little-endian
  CHECK(sz[sz.size() - 2] == 0);
  CHECK(reg_sz_text(sz) == "Zähler");

  Bytes two = reg_sz("5.2");
  const Bytes tail = reg_sz("junk");
  two.insert(two.end(), tail.begin(), tail.end());
  two.push_back(0x41);  // an odd trailing byte
  CHECK(reg_sz_text(two) == "5.2");
  CHECK(reg_sz_text(Bytes{0x41}) == "");
}
