// encode_shared: the same stub bytes as encode(), with large data buffers referenced, not copied.
#include <catch2/catch.hpp>

#include <memory>

#include "tests/common/byte_views.h"
#include "windows/constants.h"
#include "winreg/codec.h"
#include "rpc/ndr.h"

using namespace perfsim;
using namespace perfsim::winreg;

namespace {

Bytes pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 31 + 5);
  return b;
}

}  // namespace

TEST_CASE("QueryValue response: shared encoding is byte-identical, data referenced from 1 KiB up") {
  for (size_t n : {size_t(0), size_t(1), size_t(3), size_t(1023), size_t(1024), size_t(1025), size_t(3872),
                   size_t(5816), size_t(981656), size_t(1) << 20}) {
    INFO("data bytes " << n);
    QueryValueResponse r;
    r.type = windows::kRegBinary;
    r.data = pattern(n);
    r.data_size = uint32_t(n);
    r.data_length = uint32_t(n);
    const Bytes want = encode(r);
    auto shared = std::make_shared<const QueryValueResponse>(r);
    const ByteChain got = encode_shared(shared);
    CHECK(got.flatten() == want);
    CHECK(testing::referenced_from(got, *shared->data) == (n >= ndr::Writer::kShareMin ? n : 0));
  }
}

TEST_CASE("QueryValue response: shared encoding of error answers and NULL pointers") {
  QueryValueResponse more;  // ERROR_MORE_DATA: no data returned, the needed size
  more.type = windows::kRegBinary;
  more.data = Bytes();
  more.data_size = 981656;
  more.data_length = 0;
  more.result = windows::kErrorMoreData;
  QueryValueResponse none;  // every out pointer NULL, as for a NULL in-pointer
  none.result = windows::kErrorFileNotFound;
  QueryValueResponse big_size_small_data;  // max_count above actual_count
  big_size_small_data.data = pattern(2000);
  big_size_small_data.data_size = 5000;
  big_size_small_data.data_length = 2000;
  for (const QueryValueResponse* r : {&more, &none, &big_size_small_data}) {
    CHECK(encode_shared(std::make_shared<const QueryValueResponse>(*r)).flatten() == encode(*r));
  }
}

TEST_CASE("other messages: shared encoding is byte-identical") {
  EnumValueResponse ev;
  ev.name.text = u"Global";
  ev.name.size = 512;
  ev.type = windows::kRegBinary;
  ev.value = pattern(70000);
  ev.size = 70000;
  ev.length = 70000;
  CHECK(encode_shared(std::make_shared<const EnumValueResponse>(ev)).flatten() == encode(ev));
  OpenHiveResponse oh;
  oh.handle.uuid[3] = 9;
  CHECK(encode_shared(std::make_shared<const OpenHiveResponse>(oh)).flatten() == encode(oh));
  QueryMultipleValues2Response qm;
  qm.values.push_back({StringBuf{u"x", 4, 4}, 3, 0, windows::kRegSz});
  qm.buffer = pattern(4096);
  qm.needed = 4096;
  CHECK(encode_shared(std::make_shared<const QueryMultipleValues2Response>(qm)).flatten() == encode(qm));
}

TEST_CASE("SharedBytes data is referenced from its own buffer, and the stub keeps that buffer alive") {
  const Bytes want = pattern(70000);
  auto buffer = std::make_shared<const Bytes>(want);
  const ByteView whole(*buffer);
  ByteChain stub;
  Bytes flat;
  {
    QueryValueResponse r;
    r.type = windows::kRegBinary;
    r.data = SharedBytes(buffer, whole).first(60000);  // a slice, as a truncated answer is
    r.data_size = 70000;
    r.data_length = 60000;
    flat = encode(r);
    stub = encode_shared(std::make_shared<const QueryValueResponse>(std::move(r)));
  }
  buffer.reset();  // only the stub holds the buffer now
  CHECK(testing::referenced_from(stub, whole) == 60000);
  CHECK(stub.flatten() == flat);
  QueryValueResponse back;
  REQUIRE(decode(flat, back).ok());
  CHECK(*back.data == ByteView(want).first(60000));
}

TEST_CASE("SharedBytes: owning, slicing, comparing") {
  SharedBytes none;
  CHECK(none.empty());
  CHECK(none.first(10).empty());
  const SharedBytes s(pattern(100));
  CHECK(s.size() == 100);
  CHECK(s == pattern(100));
  CHECK_FALSE(s == pattern(99));
  const SharedBytes head = s.first(10);
  CHECK(head.data() == s.data());  // same buffer, no copy
  const Bytes p = pattern(100);
  CHECK(head.to_bytes() == Bytes(p.begin(), p.begin() + 10));
  CHECK(s.first(1000).size() == 100);
  CHECK(&s[7] == s.data() + 7);
}

TEST_CASE("SharedBytes hands its vector back without a copy only when nobody else views it") {
  SharedBytes sole(pattern(5000));
  const uint8_t* where = sole.data();
  Bytes moved = std::move(sole).to_bytes();
  CHECK(moved.data() == where);  // the same buffer: no copy
  CHECK(moved == pattern(5000));
  CHECK(sole.empty());

  SharedBytes a(pattern(5000));
  const SharedBytes b = a;  // a second viewer
  Bytes copied = std::move(a).to_bytes();
  CHECK(copied.data() != b.data());
  CHECK(copied == pattern(5000));
  CHECK(b == pattern(5000));  // the other viewer still sees every byte

  SharedBytes whole(pattern(5000));
  SharedBytes head = whole.first(100);
  whole = SharedBytes();  // head alone views the buffer, but only part of it
  const Bytes part = std::move(head).to_bytes();
  const Bytes p = pattern(100);
  CHECK(part == p);

  QueryValueResponse r;  // decoded data comes back to a client without a second copy
  r.data = pattern(5000);
  r.data_size = r.data_length = 5000;
  QueryValueResponse back;
  REQUIRE(decode(encode(r), back).ok());
  const uint8_t* decoded = back.data->data();
  CHECK(std::move(*back.data).to_bytes().data() == decoded);
}
