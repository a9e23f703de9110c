#include <catch2/catch.hpp>

#include "windows/constants.h"
#include "winreg/codec.h"
#include "rpc/ndr.h"

using namespace perfsim;
using namespace perfsim::winreg;

TEST_CASE("writer aligns, numbers referents, writes conformant-varying strings") {
  ndr::Writer w;
  uint8_t b = 1;
  uint32_t v = 0xa1b2c3d4;
  bool present = true, absent = false;
  w.u8(b);
  w.u32(v);  // 3 pad bytes first
  w.pointer(present);
  w.pointer(absent);
  w.pointer(present);
  std::u16string s = u"ab";
  ndr::cv_string(w, s);
  const Bytes& d = w.data();
  REQUIRE(d.size() == 4 + 4 + 12 + 12 + 6);
  CHECK(load_le32(&d[4]) == 0xa1b2c3d4u);
  CHECK(load_le32(&d[8]) == 0x00020000u);
  CHECK(load_le32(&d[12]) == 0u);
  CHECK(load_le32(&d[16]) == 0x00020004u);
  CHECK(load_le32(&d[20]) == 3u);  // max_count incl. NUL
  CHECK(load_le32(&d[28]) == 3u);  // actual_count
  CHECK(d[32] == 'a');
  CHECK(load_le16(&d[36]) == 0);
}

TEST_CASE("reader rejects truncation, huge counts and offsets with the stub offset") {
  QueryValueRequest q;
  q.value_name = u"Global";
  q.type = 0;
  q.data = Bytes{};
  q.data_size = 1000;
  q.data_length = 0;
  Bytes stub = encode(q);
  QueryValueRequest back;
  REQUIRE(decode(stub, back).ok());
  CHECK(back.value_name == u"Global");
  CHECK(back.data_size == 1000u);
  for (size_t cut : {size_t(0), size_t(10), stub.size() - 1}) {
    Status s = decode(ByteView(stub).first(cut), back);
    CHECK_FALSE(s.ok());
    CHECK(s.message().find("at stub offset") != std::string::npos);
  }
  // Claim a 2^31-unit string: must fail without allocating it.
  Bytes huge = stub;
  store_le32(&huge[28], 0x80000000u);  // max_count of the name
  store_le32(&huge[36], 0x7fffffffu);  // actual_count
  CHECK_FALSE(decode(huge, back).ok());
  Bytes offset = stub;
  store_le32(&offset[32], 1);  // non-zero array offset
  CHECK_FALSE(decode(offset, back).ok());
  // Trailing bytes (e.g. a verification trailer) are ignored.
  Bytes trailer = stub;
  put_bytes(trailer, Bytes{0x8a, 0xe3, 0x13, 0x71, 0x02, 0xf4, 0x36, 0x71});
  CHECK(decode(trailer, back).ok());
}

TEST_CASE("QueryValue response with 64 MiB of data round-trips") {
  QueryValueResponse r;
  r.type = windows::kRegBinary;
  Bytes data(64u << 20, 0x5a);
  data[12345] = 1;
  r.data = std::move(data);
  r.data_size = r.data_length = 64u << 20;
  Bytes stub = encode(r);
  CHECK(stub.size() == 4 + 8 + 12 + (64u << 20) + 8 + 8 + 4);
  QueryValueResponse back;
  REQUIRE(decode(stub, back).ok());
  CHECK(back.data->size() == 64u << 20);
  CHECK((*back.data)[12345] == 1);
  CHECK(back.data_length == 64u << 20);
}

TEST_CASE("opnum names") {
  CHECK(std::string(opnum_name(kQueryValue)) == "QueryValue");
  CHECK(std::string(opnum_name(kSetValue)) == "SetValue");
  CHECK(opnum_name(0x0b) == nullptr);  // FlushKey: not covered
}
