// CRC-32C of capture records: the published check values, and agreement with a bit-at-a-time
// reference over every length and alignment the hardware path splits differently.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "captures/format.h"

using namespace perfsim;

namespace {

// CRC-32C one bit at a time, straight from the definition (reflected polynomial 0x82F63B78).
uint32_t reference_crc32c(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

}  // namespace

TEST_CASE("crc32c gives the check values of RFC 3720 B.4 and the CRC catalogue") {
  std::vector<uint8_t> b(32);
  CHECK(captures::crc32c(b) == 0x8A9136AAu);  // 32 zero bytes
  std::fill(b.begin(), b.end(), 0xFF);
  CHECK(captures::crc32c(b) == 0x62A8AB43u);  // 32 bytes of 0xFF
  for (size_t i = 0; i < 32; ++i) b[i] = uint8_t(i);
  CHECK(captures::crc32c(b) == 0x46DD794Eu);  // 0x00..0x1F
  for (size_t i = 0; i < 32; ++i) b[i] = uint8_t(31 - i);
  CHECK(captures::crc32c(b) == 0x113FDB5Cu);  // 0x1F..0x00
  const std::string check = "123456789";
  CHECK(captures::crc32c(ByteView(reinterpret_cast<const uint8_t*>(check.data()), check.size())) == 0xE3069283u);
  CHECK(captures::crc32c(ByteView()) == 0u);
}

TEST_CASE("crc32c agrees with a bitwise reference at every length and alignment") {
  std::mt19937 rng(20261123);
  std::vector<uint8_t> buf(70000);
  for (auto& x : buf) x = uint8_t(rng());
  // Short lengths cover the byte-wise head and tail; the long ones the folded 8-byte lanes.
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (size_t n : {1023u, 1024u, 4095u, 4096u, 4097u, 65536u, 69000u}) lengths.push_back(n);
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n : lengths) {
      INFO("offset " << align << ", length " << n);
      REQUIRE(captures::crc32c(ByteView(buf).subspan(align, n)) == reference_crc32c(buf.data() + align, n));
    }
  }
}
